"""Shared generative process of the binary languages (alphabet "01").

Process for positives (parameter q = ``p_end``): emit bits one at a time; after a prefix
that is in L, end (EOS) with probability q, otherwise emit 0 or 1 with probability (1−q)/2
each; after a prefix not in L, emit a bit uniformly among the bits that keep L reachable.
Every generated string is positive. For PARITY and MAJORITY both bits always keep L
reachable; for FIRST the empty prefix must be followed by 1.
"""

from __future__ import annotations

import numpy as np

from ..rules import check_float
from .base import Language


class BinaryLanguage(Language):
    alphabet = "01"

    def __init__(self, p_end: float = 0.5) -> None:
        p_end = check_float(p_end, f"{self.name}: p_end")
        if not 0.0 < p_end < 1.0:
            raise ValueError(f"{self.name}: p_end must lie in (0, 1), got {p_end!r}")
        self.p_end = p_end

    def _accepting(self, state: np.ndarray) -> np.ndarray:
        """Whether the prefix with this state is in L: bool (count,)."""
        raise NotImplementedError

    def _probs(self, state: np.ndarray) -> np.ndarray:
        q = self.p_end
        acc = self._accepting(state)[:, None]  # (count, 1)
        inside = np.array([(1 - q) / 2, (1 - q) / 2, q])
        outside = np.array([0.5, 0.5, 0.0])
        return np.where(acc, inside, outside)  # (count, 3)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(p_end={self.p_end})"
