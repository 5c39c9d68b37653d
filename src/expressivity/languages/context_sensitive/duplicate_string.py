"""Duplicate string (Delétang et al. 2023, context-sensitive): output s twice.

Definition: f(s) = s s for s over the first ``vocab_size`` digits (2 in the benchmark, at
most 10); transduction with output alphabet = input alphabet, output_length(n) = 2n.
Alphabet ``01``. Examples: ``101`` → ``101101``; ``111111`` → ``111111111111``.
Length n = number of input symbols, n ≥ 1; inputs uniform over Σⁿ.
"""

from __future__ import annotations

import numpy as np

from ..function import Transduction, check_int, uniform_ids


class DuplicateString(Transduction):
    name = "duplicate_string"

    def __init__(self, vocab_size: int = 2) -> None:
        self.vocab_size = check_int(self.name, "vocab_size", vocab_size, 2, 10)
        self.alphabet = self.output_alphabet = "0123456789"[: self.vocab_size]

    def output_length(self, length: int) -> int:
        return 2 * length

    def output(self, s: str) -> str:
        self.to_ids(s)
        return s + s

    def _sample_ids(self, rng, count, length):
        return uniform_ids(rng, count, length, self.vocab_size)

    def outputs_ids(self, ids):
        return np.concatenate([ids, ids], axis=1)

    def __repr__(self) -> str:
        return f"DuplicateString(vocab_size={self.vocab_size})"
