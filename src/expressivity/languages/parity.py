"""PARITY: bit strings with an ODD number of 1s.

Convention (as in Chiang & Cholak 2022): s ∈ PARITY ⇔ #₁(s) ≡ 1 (mod 2).
Example: 1010100 has three 1s → odd → in PARITY; 1001 has two → not in PARITY.
Positives of length n are uniform over the 2^(n−1) odd-weight strings (n ≥ 1).
Generative process: see :mod:`.binary` (state = the parity bit).
"""

from __future__ import annotations

import numpy as np

from .binary import BinaryLanguage
from .regular.automaton import DFA


class Parity(BinaryLanguage):
    name = "parity"

    def accepts(self, s: str) -> bool:
        return s.count("1") % 2 == 1 and set(s) <= {"0", "1"}

    def accepts_ids(self, ids: np.ndarray) -> np.ndarray:
        return ids.sum(axis=1) % 2 == 1

    def supports(self, length: int, positive: bool) -> bool:
        return length >= 1 if positive else length >= 0

    def _sample_positive_ids(self, rng, count, length):
        ids = rng.integers(0, 2, size=(count, length))
        even = ids.sum(axis=1) % 2 == 0
        pos = rng.integers(0, length, size=count)  # flipping one bit of an even string: a bijection
        rows = np.arange(count)[even]
        ids[rows, pos[even]] ^= 1
        return ids

    @property
    def dfa(self):
        """Its DFA: state = the parity bit, accepting when odd."""
        return DFA(self.alphabet, [[0, 1], [1, 0]], [False, True])

    def _initial_state(self, count):
        return np.zeros(count, dtype=np.int64)

    def _advance(self, state, sym):
        return state ^ (sym == 1)

    def _accepting(self, state):
        return state == 1
