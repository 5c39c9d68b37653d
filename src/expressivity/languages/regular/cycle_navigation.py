"""Cycle navigation (Delétang et al. 2023, regular): the final position on a cycle.

Definition: an agent starts at position 0 of a cycle of ``modulus`` positions (5 in the
benchmark) and reads moves: ``-`` one step left, ``0`` stay, ``+`` one step right.
f(s) = (#₊(s) − #₋(s)) mod modulus; classification with C = modulus.
Alphabet ``-0+`` (symbol index − 1 is the move, as in the benchmark's actions 0, 1, 2).
Example (modulus 5): ``+-0--`` → 1 − 1 + 0 − 1 − 1 = −2 → class 3; ``+++-`` → class 2.
Length n = number of moves, n ≥ 1; moves uniform and independent.
"""

from __future__ import annotations

from ..function import Classification, check_int, uniform_ids


class CycleNavigation(Classification):
    name = "cycle_navigation"
    alphabet = "-0+"

    def __init__(self, modulus: int = 5) -> None:
        self.modulus = check_int(self.name, "modulus", modulus, 2)
        self.n_classes = self.modulus

    def output(self, s: str) -> int:
        self.to_ids(s)
        return (s.count("+") - s.count("-")) % self.modulus

    def _sample_ids(self, rng, count, length):
        return uniform_ids(rng, count, length, 3)

    def outputs_ids(self, ids):
        return (ids - 1).sum(axis=1) % self.modulus

    def __repr__(self) -> str:
        return f"CycleNavigation(modulus={self.modulus})"
