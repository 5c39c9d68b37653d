"""FIRST: bit strings whose first bit is 1.

s ∈ FIRST ⇔ s ≠ ε and s₁ = 1. Example: 100 ∈ FIRST, 011 ∉ FIRST.
Positives of length n: 1 followed by n−1 uniform bits. Near-misses flip the first bit.
Generative process: see :mod:`.binary` (the first symbol is 1 with probability 1).
"""

from __future__ import annotations

import numpy as np

from .binary import BinaryLanguage
from .regular.automaton import DFA

_EMPTY, _IN, _DEAD = 0, 1, 2


class First(BinaryLanguage):
    name = "first"

    def accepts(self, s: str) -> bool:
        return s[:1] == "1" and set(s) <= {"0", "1"}

    def accepts_ids(self, ids: np.ndarray) -> np.ndarray:
        if ids.shape[1] == 0:
            return np.zeros(len(ids), dtype=bool)
        return ids[:, 0] == 1

    def supports(self, length: int, positive: bool) -> bool:
        return length >= 1 if positive else length >= 0  # ε is a negative

    def _sample_positive_ids(self, rng, count, length):
        ids = rng.integers(0, 2, size=(count, length))
        ids[:, 0] = 1
        return ids

    def _near_miss_ids(self, rng, pos):
        out = pos.copy()
        out[:, 0] = 0  # the only one-symbol edit that leaves FIRST
        return out

    @property
    def dfa(self):
        """Its DFA: empty prefix, in (first bit 1), dead (first bit 0)."""
        return DFA(self.alphabet, [[_DEAD, _IN], [_IN, _IN], [_DEAD, _DEAD]], [False, True, False], _EMPTY)

    def _initial_state(self, count):
        return np.full(count, _EMPTY, dtype=np.int64)

    def _advance(self, state, sym):
        return np.where(state == _EMPTY, np.where(sym == 1, _IN, _DEAD), state)

    def _accepting(self, state):
        return state == _IN

    def _probs(self, state):
        p = super()._probs(state)
        p[state == _EMPTY] = [0.0, 1.0, 0.0]  # only "1" keeps FIRST reachable
        return p
