"""aⁿbⁿ (Bhattamishra et al. 2020, context-free counter language) and its block generalisation.

Definition: for letters ℓ₁ … ℓ_k (``ab`` here; ``abc`` and ``abcd`` in
:mod:`..context_sensitive.anbncn`), L = {ℓ₁^m ℓ₂^m … ℓ_k^m : m ≥ 0}; ε ∈ L.
Alphabet ``ab``. Examples: ``aabb`` ∈ L; ``aab``, ``abab``, ``ba`` ∉ L.
Length n = number of symbols; positives exist only for n divisible by k (exactly one per
such n); negatives: half near-misses (one substitution, e.g. ``aaab`` from ``aabb``), half
uniform over Σⁿ \\ L.
Generative process (parameter p = ``p_a``): before any b, emit ``a`` with probability p and
otherwise end (no a yet) or start the b block; from then on the rest is forced (m of each
later letter, then end).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..base import Language


@dataclass
class _Blocks:
    m: np.ndarray  # (count,) number of first letters read
    phase: np.ndarray  # (count,) index of the current block
    c: np.ndarray  # (count,) letters read in the current block (phase ≥ 1)
    dead: np.ndarray  # (count,) prefix outside every member's prefixes


class BlockCounting(Language):
    """ℓ₁^m … ℓ_k^m for the letters of ``alphabet`` (k = len(alphabet))."""

    name = "anbn"
    alphabet = "ab"

    def __init__(self, p_a: float = 0.5) -> None:
        if not (0.0 < float(p_a) < 1.0):
            raise ValueError(f"{self.name}: p_a must lie in (0, 1), got {p_a!r}")
        self.p_a = float(p_a)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(p_a={self.p_a})"

    @property
    def k(self) -> int:
        return len(self.alphabet)

    def accepts(self, s: str) -> bool:
        m, r = divmod(len(s), self.k)
        return r == 0 and s == "".join(c * m for c in self.alphabet)

    def accepts_ids(self, ids: np.ndarray) -> np.ndarray:
        count, n = ids.shape
        if n % self.k:
            return np.zeros(count, dtype=bool)
        member = np.repeat(np.arange(self.k), n // self.k)  # the one member of length n
        return (ids == member).all(axis=1)

    def supports(self, length: int, positive: bool) -> bool:
        return length % self.k == 0 if positive else length >= 1

    def _sample_positive_ids(self, rng, count, length):
        return np.tile(np.repeat(np.arange(self.k), length // self.k), (count, 1))

    # ------------------------------------------------------------ generative process
    def _initial_state(self, count):
        z = np.zeros(count, dtype=np.int64)
        return _Blocks(z.copy(), z.copy(), z.copy(), np.zeros(count, dtype=bool))

    def _advance(self, st: _Blocks, sym):
        m, phase, c = st.m, st.phase, st.c
        more_a = (phase == 0) & (sym == 0)
        same = (phase >= 1) & (sym == phase) & (c < m)
        nxt = (sym == phase + 1) & (m >= 1) & ((phase == 0) | (c == m))
        dead = st.dead | ~(more_a | same | nxt)
        return _Blocks(m + more_a, np.where(nxt, phase + 1, phase), np.where(nxt, 1, c + same), dead)

    def _probs(self, st: _Blocks):
        count, k, p = len(st.m), self.k, self.p_a
        probs = np.zeros((count, k + 1))
        rows = np.arange(count)
        start = (st.phase == 0) & (st.m == 0)
        in_a = (st.phase == 0) & (st.m >= 1)
        done = (st.phase == k - 1) & (st.c == st.m) & (st.m >= 1)
        forced = ~start & ~in_a & ~done  # the next letter is determined
        probs[start, 0], probs[start, k] = p, 1 - p
        probs[in_a, 0], probs[in_a, 1] = p, 1 - p
        probs[done, k] = 1.0
        nxt = np.where(st.c < st.m, st.phase, st.phase + 1).clip(max=k)
        probs[rows[forced], nxt[forced]] = 1.0
        probs[st.dead] = np.full(k + 1, 1.0 / k) * (np.arange(k + 1) < k)  # probability-0 prefix
        return probs


class AnBn(BlockCounting):
    name = "anbn"
    alphabet = "ab"
