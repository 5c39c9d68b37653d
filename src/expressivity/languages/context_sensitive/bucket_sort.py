"""Bucket sort (Delétang et al. 2023, context-sensitive): sort the symbols.

Definition: f(s) = the symbols of s in increasing order, for s over the first
``vocab_size`` digits (5 in the benchmark, at most 10); transduction with output alphabet =
input alphabet, output_length(n) = n.
Alphabet ``01234``. Examples: ``10204112`` → ``00111224``; ``1110001`` → ``0001111``.
Length n = number of input symbols, n ≥ 1; inputs uniform over Σⁿ.
"""

from __future__ import annotations

import numpy as np

from ..function import Transduction, check_int, uniform_ids


class BucketSort(Transduction):
    name = "bucket_sort"

    def __init__(self, vocab_size: int = 5) -> None:
        self.vocab_size = check_int(self.name, "vocab_size", vocab_size, 2, 10)
        self.alphabet = self.output_alphabet = "0123456789"[: self.vocab_size]

    def output_length(self, length: int) -> int:
        return length

    def output(self, s: str) -> str:
        self.to_ids(s)
        return "".join(sorted(s))

    def _sample_ids(self, rng, count, length):
        return uniform_ids(rng, count, length, self.vocab_size)

    def outputs_ids(self, ids):
        return np.sort(ids, axis=1)

    def __repr__(self) -> str:
        return f"BucketSort(vocab_size={self.vocab_size})"
