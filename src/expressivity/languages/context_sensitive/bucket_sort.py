"""Bucket sort (Delétang et al. 2023, context-sensitive): sort the symbols.

Definition: f(s) = the symbols of s in increasing order, for s over the first
``vocab_size`` digits (5 in the benchmark, at most 10); transduction with output alphabet =
input alphabet, output_length(n) = n.
Alphabet ``01234``. Examples: ``10204112`` → ``00111224``; ``1110001`` → ``0001111``.
Length n = number of input symbols, n ≥ 1; inputs uniform over Σⁿ.
"""

from __future__ import annotations

import numpy as np

from ..function import DigitRearrangement


class BucketSort(DigitRearrangement):
    name = "bucket_sort"

    default_vocab_size = 5

    def output(self, s: str) -> str:
        self.to_ids(s)
        return "".join(sorted(s))

    def rearrange_ids(self, ids):
        return np.sort(ids, axis=1)
