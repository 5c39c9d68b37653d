"""MAJORITY: bit strings with strictly more 1s than 0s.

s ∈ MAJORITY ⇔ #₁(s) > #₀(s). Tie rule: a tie (equal counts, even length) is NOT in the
language, so ε ∉ MAJORITY. Example: 110 ∈ MAJORITY, 1100 ∉ MAJORITY.
Positives of length n are uniform over MAJORITY ∩ {0,1}^n: the number of ones k is drawn with
P(k) ∝ C(n, k) for k > n/2, then the ones are placed uniformly. Near-misses take a positive
with the smallest margin (k = ⌊n/2⌋ + 1) and turn one 1 into 0.
Generative process: see :mod:`.binary` (state = the margin #₁ − #₀).
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln

from .binary import BinaryLanguage


class Majority(BinaryLanguage):
    name = "majority"

    def accepts(self, s: str) -> bool:
        return s.count("1") > s.count("0") and set(s) <= {"0", "1"}

    def accepts_ids(self, ids: np.ndarray) -> np.ndarray:
        ones = ids.sum(axis=1)
        return 2 * ones > ids.shape[1]

    def supports(self, length: int, positive: bool) -> bool:
        return length >= 1 if positive else length >= 0

    def _place_ones(self, rng, k: np.ndarray, length: int) -> np.ndarray:
        rank = np.argsort(rng.random((len(k), length)), axis=1).argsort(axis=1)  # uniform permutation
        return (rank < k[:, None]).astype(np.int64)

    def _sample_positive_ids(self, rng, count, length):
        k = np.arange(length // 2 + 1, length + 1)
        logw = gammaln(length + 1) - gammaln(k + 1) - gammaln(length - k + 1)
        w = np.exp(logw - logw.max())
        ks = rng.choice(k, size=count, p=w / w.sum())
        return self._place_ones(rng, ks, length)

    def _near_miss_ids(self, rng, pos):
        count, n = pos.shape
        border = self._place_ones(rng, np.full(count, n // 2 + 1), n)  # smallest-margin positives
        ones = np.argsort(-border + rng.random(border.shape) * 0.5, axis=1)[:, 0]  # a random 1
        border[np.arange(count), ones] = 0
        return border

    def _initial_state(self, count):
        return np.zeros(count, dtype=np.int64)

    def _advance(self, state, sym):
        return state + 2 * sym - 1

    def _accepting(self, state):
        return state > 0
