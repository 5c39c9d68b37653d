"""Parity check (Delétang et al. 2023, regular): the number of 1s modulo 2.

Definition: f(s) = #₁(s) mod 2 for s ∈ {0, 1}ⁿ; classification with C = 2.
Alphabet ``01``. Example: ``1010100`` has three 1s → odd → class 1; ``01111`` → class 0.
Length n = number of bits, n ≥ 1; inputs are uniform over {0, 1}ⁿ (so the classes are
balanced only in expectation, as in the benchmark). The language PARITY (``"parity"``,
recognition / next-symbol) is the set of strings of class 1.
"""

from __future__ import annotations

from ..function import Classification, uniform_ids


class ParityCheck(Classification):
    name = "parity_check"
    alphabet = "01"
    n_classes = 2

    def output(self, s: str) -> int:
        self.to_ids(s)  # ValueError on foreign symbols
        return s.count("1") % 2

    def _sample_ids(self, rng, count, length):
        return uniform_ids(rng, count, length, 2)

    def outputs_ids(self, ids):
        return ids.sum(axis=1) % 2
