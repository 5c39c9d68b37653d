"""Shuffle-Dyck-k (Bhattamishra et al. 2020): interleavings of k Dyck-1 languages.

Definition: over the bracket pairs of :data:`..dyck.PAIRS` (``()``, ``[]``, …; alphabet =
the first k pairs, ``()[]`` for k = 2), s ∈ Shuffle-Dyck-k ⇔ for every type j, the
subsequence of s made of type-j brackets is a balanced Dyck-1 word: no prefix has more
closes than opens of type j, and s ends with equal counts. Crossing is allowed; ε ∈ L.
Examples (k = 2): ``([)]`` and ``([])`` ∈ L; ``)(``, ``([)`` ∉ L. Shuffle-Dyck-1 = Dyck-1
(context-free); for k ≥ 2 the language is not context-free (a multi-counter language).
Length n = number of symbols; positives only for even n.

Generative process (parameter p = ``p_open``): with open-bracket counts c₁ … c_k, open a
bracket with probability p (p/k per type); otherwise, if some c_j > 0, close one of the open
types chosen uniformly, and if all c_j = 0, end. The total depth Σ c_j then moves exactly
like Dyck-1's process, so the fixed-length sampler draws the depth path from Dyck-1
conditioned on length n (:class:`..dyck.Dyck`'s exact backward table) and then the types
position by position as the process does (the types do not affect the length).
Negatives: half near-misses (one substitution), half uniform over Σⁿ \\ L.
"""

from __future__ import annotations

import numpy as np

from ..base import Language
from ..dyck import PAIRS, Dyck
from ..function import check_int


class ShuffleDyck(Language):
    name = "shuffle_dyck"

    def __init__(self, k: int = 2, p_open: float = 0.5) -> None:
        self.k = check_int(self.name, "k", k, 1, len(PAIRS))
        if not (0.0 < float(p_open) < 1.0):
            raise ValueError(f"{self.name}: p_open must lie in (0, 1), got {p_open!r}")
        self.p_open = float(p_open)
        self.alphabet = "".join(PAIRS[: self.k])

    def __repr__(self) -> str:
        return f"ShuffleDyck(k={self.k}, p_open={self.p_open})"

    def accepts(self, s: str) -> bool:
        counts = [0] * self.k
        index = {c: i for i, c in enumerate(self.alphabet)}
        for c in s:
            if c not in index:
                return False
            j, closing = divmod(index[c], 2)
            counts[j] += -1 if closing else 1
            if counts[j] < 0:
                return False
        return not any(counts)

    def accepts_ids(self, ids: np.ndarray) -> np.ndarray:
        """Per type: the running count of opens minus closes stays ≥ 0 and ends at 0."""
        count, n = ids.shape
        ok = np.ones(count, dtype=bool)
        for j in range(self.k):
            step = (ids == 2 * j).astype(np.int64) - (ids == 2 * j + 1)
            run = np.cumsum(step, axis=1)
            ok &= (run.min(axis=1, initial=0) >= 0) & ((run[:, -1] if n else 0) == 0)
        return ok

    def supports(self, length: int, positive: bool) -> bool:
        return length % 2 == 0 if positive else length >= 1

    # ------------------------------------------------------------ generative process
    def _initial_state(self, count):
        return np.zeros((count, self.k + 1), dtype=np.int64)  # counts c_1 … c_k, dead flag

    def _advance(self, state, sym):
        state = state.copy()
        rows = np.arange(len(sym))
        j, closing = sym // 2, sym % 2 == 1
        state[rows, j] += np.where(closing, -1, 1)
        state[:, self.k] |= (state[rows, j] < 0)
        return state

    def _probs(self, state):
        counts, dead = state[:, : self.k], state[:, self.k] > 0
        count, k, p = len(state), self.k, self.p_open
        probs = np.zeros((count, 2 * k + 1))
        probs[:, 0:2 * k:2] = p / k
        open_types = counts > 0
        n_open = open_types.sum(axis=1, keepdims=True)
        probs[:, 1:2 * k:2] = np.where(n_open > 0, (1 - p) * open_types / np.maximum(n_open, 1), 0.0)
        probs[:, 2 * k] = np.where(n_open[:, 0] == 0, 1 - p, 0.0)
        probs[dead] = np.r_[np.full(2 * k, 1.0 / (2 * k)), 0.0]  # probability-0 prefix
        return probs

    def _sample_positive_ids(self, rng, count, length):
        path = Dyck(k=1, p_open=self.p_open)._sample_positive_ids(rng, count, length)  # 0 = open, 1 = close
        counts = np.zeros((count, self.k), dtype=np.int64)
        out = np.empty((count, length), dtype=np.int64)
        rows = np.arange(count)
        for t in range(length):  # types in order, vectorised over strings
            opening = path[:, t] == 0
            new = rng.integers(0, self.k, size=count)  # an open picks its type uniformly
            keys = np.where(counts > 0, rng.random((count, self.k)), -1.0)
            close = keys.argmax(axis=1)  # a close picks uniformly among the open types
            j = np.where(opening, new, close)
            counts[rows, j] += np.where(opening, 1, -1)
            out[:, t] = 2 * j + ~opening
        return out
