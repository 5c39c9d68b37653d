"""Compute sqrt (Delétang et al. 2023, context-sensitive): ⌊√x⌋ in binary.

Definition: s is a big-endian binary number x of n bits (leading zeros allowed);
f(s) = ⌊√x⌋ in big-endian binary, zero-padded to ⌈n/2⌉ bits (x < 2ⁿ, so ⌊√x⌋ < 2^⌈n/2⌉);
transduction with output alphabet ``01``, output_length(n) = ⌈n/2⌉.
Alphabet ``01``. Examples: ``100101`` = 37 → ⌊6.08⌋ = 6 → ``110``; ``111`` = 7 → 2 → ``10``;
``0000`` → ``00``.
Length n = number of bits, n ≥ 1; x uniform over 1 … 2ⁿ − 1 (as in the benchmark).
"""

from __future__ import annotations

import math
import re

from ..function import Transduction


class ComputeSqrt(Transduction):
    name = "compute_sqrt"
    alphabet = "01"
    output_alphabet = "01"

    def output_length(self, length: int) -> int:
        return (length + 1) // 2

    def output(self, s: str) -> str:
        self.to_ids(s)  # ValueError on foreign symbols
        if re.fullmatch(r"[01]+", s) is None:
            raise ValueError(f"{self.name}: {s!r} is not a non-empty binary number")
        return format(math.isqrt(int(s, 2)), "b").zfill(self.output_length(len(s)))

    def _sample_ids(self, rng, count, length):
        ids = rng.integers(0, 2, size=(count, length))
        while True:  # uniform over the non-zero numbers: resample all-zero rows
            zero = ~ids.any(axis=1)
            if not zero.any():
                return ids
            ids[zero] = rng.integers(0, 2, size=(int(zero.sum()), length))
