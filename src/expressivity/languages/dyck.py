"""Dyck-k and bounded-depth Dyck-(k, D): balanced strings over k bracket pairs.

Pairs, in order: ``()``, ``[]``, ``{}``, ``<>``, then ``aA``, ``bB``, … ``zZ`` (30 pairs), then
consecutive code points from U+0100 (``Āā``, ``Ăă``, … up to U+02C3), so k ≤ 256 and every
symbol stays one character (token ids are the alphabet indices, see :mod:`.vocab`). The
alphabet is the pairs concatenated, so Dyck-2 has alphabet ``()[]``. Symbol 2j opens type
j, symbol 2j+1 closes it. s ∈ Dyck-k ⇔ reading s with a stack (push on an open bracket, pop
a matching open on a close bracket) never fails and ends empty; Dyck-(k, D) further bounds
the stack height (depth) by D. Example: ``([])`` and ``[()]`` are in Dyck-2, ``(][)`` and
``([)]`` are not.

Generative process (Hahn 2020, §5; parameter p = ``p_open``): at depth d,

- d = 0: open a bracket of a uniformly chosen type with probability p (p/k per type),
  end (EOS) with probability 1 − p;
- 0 < d < D: open a bracket (p/k per type) with probability p, close the top bracket with
  probability 1 − p;
- d = D: close the top bracket (probability 1).

With D = ∞ a Dyck string w of length 2m has probability (p/k)^m (1−p)^(m+1), so the process
conditioned on length n is *uniform* over Dyck-k strings of length n. ``sample(positive=True)``
draws exactly that conditional (for finite D too) with a backward table
G[d, r] = log P(the process, now at depth d, ends after exactly r more symbols).
Near-miss negatives: one-symbol substitutions, adjacent transpositions (``()`` → ``)(``) and
swapped closing-bracket types (``([])`` → ``([)]``).

Distances (Hewitt et al. 2020; Yao et al. 2021, their closing-bracket accuracy by distance):
:func:`match_distance` gives, at each closing bracket s_j, the distance j − i to the open
bracket s_i it closes (the last open bracket before j that is not yet closed); 0 elsewhere.
Example: ``([]())`` → 0 0 1 0 1 5 (``]`` closes ``[`` one step back, the last ``)`` closes
``(`` five steps back).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..rules import check_float
from .base import Language, _substitute
from .regular.automaton import stack_dfa

PAIRS = (["()", "[]", "{}", "<>"] + [c + c.upper() for c in "abcdefghijklmnopqrstuvwxyz"]
         + [chr(0x100 + 2 * i) + chr(0x101 + 2 * i) for i in range(226)])  # 256 pairs


@dataclass
class _Stack:
    depth: np.ndarray  # (count,) current stack height
    stack: np.ndarray  # (count, capacity) bracket types, valid below depth
    dead: np.ndarray  # (count,) a close bracket did not match (prefix has probability 0)


class Dyck(Language):
    name = "dyck"

    def __init__(self, k: int = 2, max_depth: int | None = None, p_open: float = 0.5) -> None:
        if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or not 1 <= k <= len(PAIRS):
            raise ValueError(f"dyck: k must be an int in [1, {len(PAIRS)}], got {k!r}")
        if max_depth is not None and (not isinstance(max_depth, (int, np.integer)) or isinstance(max_depth, bool)
                                      or max_depth < 1):
            raise ValueError(f"dyck: max_depth must be an int >= 1 or None, got {max_depth!r}")
        if not 0.0 < check_float(p_open, "dyck: p_open") < 1.0:
            raise ValueError(f"dyck: p_open must lie in (0, 1), got {p_open!r}")
        self.k = int(k)
        self.max_depth = None if max_depth is None else int(max_depth)
        self.p_open = float(p_open)
        self.alphabet = "".join(PAIRS[: self.k])

    def __repr__(self) -> str:
        return f"Dyck(k={self.k}, max_depth={self.max_depth}, p_open={self.p_open})"

    @property
    def dfa(self):
        """The DFA of Dyck-(k, D) (states = stacks of depth ≤ D); None when the depth is unbounded."""
        return None if self.max_depth is None else stack_dfa(list(PAIRS[: self.k]), self.max_depth)

    @property
    def _D(self) -> float:
        return math.inf if self.max_depth is None else self.max_depth

    # ------------------------------------------------------------------ membership
    def accepts(self, s: str) -> bool:
        opens = {pair[0]: pair[1] for pair in PAIRS[: self.k]}
        closes = set(opens.values())
        stack: list[str] = []
        for c in s:
            if c in opens:
                stack.append(opens[c])
                if len(stack) > self._D:
                    return False
            elif c in closes:
                if not stack or stack.pop() != c:
                    return False
            else:
                return False
        return not stack

    def accepts_ids(self, ids: np.ndarray) -> np.ndarray:
        """Vectorised: the depth path stays in [0, D] and ends at 0, and pairing brackets by
        (level, position) — see :meth:`_pair_order` — matches every open with its own close."""
        count, n = ids.shape
        if n == 0:
            return np.ones(count, dtype=bool)
        is_open = ids % 2 == 0
        after = np.cumsum(np.where(is_open, 1, -1), axis=1)  # depth after each symbol
        ok = (after.min(axis=1) >= 0) & (after[:, -1] == 0) & (after.max(axis=1) <= self._D)
        order = self._pair_order(is_open)
        flat = ids.ravel()
        first, second = flat[order[0::2]], flat[order[1::2]]
        good = ((first % 2 == 0) & (second == first + 1)).reshape(count, n // 2) if n % 2 == 0 else \
            np.zeros((count, 0), dtype=bool)
        return ok & good.all(axis=1) & (n % 2 == 0)

    def supports(self, length: int, positive: bool) -> bool:
        return length % 2 == 0 if positive else length >= 1

    # ------------------------------------------------------------ generative process
    def _initial_state(self, count: int, capacity: int = 16) -> _Stack:
        return _Stack(np.zeros(count, dtype=np.int64), np.zeros((count, capacity), dtype=np.int64),
                      np.zeros(count, dtype=bool))

    def _advance(self, st: _Stack, sym: np.ndarray) -> _Stack:
        """Push / pop in place (states are never reused after advancing)."""
        depth, stack, dead = st.depth, st.stack, st.dead
        is_open = sym % 2 == 0
        typ = sym // 2
        if is_open.any() and depth.max() + 1 >= stack.shape[1]:
            stack = np.concatenate([stack, np.zeros_like(stack)], axis=1)  # grow capacity
        rows = np.arange(len(sym))
        top = stack[rows, np.maximum(depth - 1, 0)]
        bad_close = ~is_open & ((depth == 0) | (top != typ))
        dead |= bad_close
        stack[rows[is_open], depth[is_open]] = typ[is_open]
        depth += np.where(is_open, 1, np.where(depth > 0, -1, 0))
        return _Stack(depth, stack, dead)

    def _probs(self, st: _Stack) -> np.ndarray:
        k, p, D = self.k, self.p_open, self._D
        count = len(st.depth)
        d = st.depth
        probs = np.zeros((count, 2 * k + 1))
        can_open = d < D
        probs[:, 0:2 * k:2] = np.where(can_open, p / k, 0.0)[:, None]
        close_p = np.where(d == 0, 0.0, np.where(can_open, 1.0 - p, 1.0))
        rows = np.arange(count)
        top = st.stack[rows, np.maximum(d - 1, 0)]
        probs[rows, 2 * top + 1] += close_p
        probs[:, 2 * k] = np.where(d == 0, 1.0 - p, 0.0)
        return probs

    # -------------------------------------------------------- fixed-length positives
    def _sample_positive_ids(self, rng, count, length):
        n = length
        G = _log_completion(n, self.p_open, self.max_depth)  # (D_eff + 2, n + 1)
        lp = math.log(self.p_open)
        u = rng.random((count, n))
        is_open = np.zeros((count, n), dtype=bool)
        d = np.zeros(count, dtype=np.int64)
        for t in range(n):  # depth path, sequential in t, vectorised over strings
            r = n - t
            p = np.exp(lp + G[d + 1, r - 1] - G[d, r])  # P(open | depth d, r symbols left)
            op = (u[:, t] < p) | (d == 0)  # at depth 0 only opening continues
            is_open[:, t] = op
            d += np.where(op, 1, -1)
        return self._assign_types(rng, is_open)

    @staticmethod
    def _pair_order(is_open: np.ndarray) -> np.ndarray:
        """Flat indices of (count, n) sorted by (string, level, position), level = depth below
        the bracket; on a Dyck path entries 2m, 2m+1 are an open bracket and its match."""
        count, n = is_open.shape
        step = np.where(is_open, 1, -1)
        before = np.cumsum(step, axis=1) - step  # depth before each symbol
        level = np.where(is_open, before, before - 1)
        key = (level * n + np.arange(n)).astype(np.int64)  # (count, n), distinct within a row
        return (np.argsort(key, axis=1) + (np.arange(count) * n)[:, None]).ravel()

    def _assign_types(self, rng, is_open: np.ndarray) -> np.ndarray:
        """Uniform bracket types on Dyck paths is_open (count, n): each open draws a type, its
        matching close copies it. Brackets of one level of one string alternate open, close in
        position order, so sorting by (string, level, position) puts every pair side by side."""
        count, n = is_open.shape
        order = self._pair_order(is_open)
        typ = rng.integers(0, self.k, size=count * n // 2)
        flat = np.empty(count * n, dtype=np.int64)
        flat[order[0::2]] = 2 * typ  # opens
        flat[order[1::2]] = 2 * typ + 1  # their matching closes
        return flat.reshape(count, n)

    def _near_miss_ids(self, rng, pos):
        count, n = pos.shape
        out = _substitute(rng, pos, len(self.alphabet))
        kind = rng.integers(0, 3, size=count)
        rows = np.arange(count)
        # adjacent transposition
        i = rng.integers(0, max(n - 1, 1), size=count)
        swapped = pos.copy()
        a, b = swapped[rows, i].copy(), swapped[rows, np.minimum(i + 1, n - 1)].copy()
        swapped[rows, i], swapped[rows, np.minimum(i + 1, n - 1)] = b, a
        # swap two closing brackets (of different types, when they differ)
        keys = np.where(pos % 2 == 1, rng.random(pos.shape), -1.0)
        j1 = keys.argmax(axis=1)
        keys[rows, j1] = -1.0
        keys = np.where((pos % 2 == 1) & (pos != pos[rows, j1][:, None]), keys, -1.0)
        j2 = keys.argmax(axis=1)
        crossed = pos.copy()
        crossed[rows, j1], crossed[rows, j2] = pos[rows, j2], pos[rows, j1]
        out = np.where((kind == 1)[:, None], swapped, out)
        out = np.where((kind == 2)[:, None], crossed, out)
        still = self.accepts_ids(out)
        out[still] = _substitute(rng, pos[still], len(self.alphabet))  # substitutions always leave Dyck
        return out


def match_distance(ids: np.ndarray) -> np.ndarray:
    """Distance j − i from each closing bracket s_j to the open bracket s_i it closes: ids
    (count, n) alphabet indices of Dyck strings (symbol 2t opens type t, 2t + 1 closes it) →
    (count, n) int64, 0 at open brackets and at a close with nothing open before it. The match
    is by stack height only (types are not checked), which on Dyck strings is the match."""
    ids = np.asarray(ids)
    if ids.ndim != 2:
        raise ValueError(f"match_distance: ids must have shape (count, n), got {ids.shape}")
    count, n = ids.shape
    out = np.zeros((count, n), dtype=np.int64)
    opened = np.zeros((count, n + 1), dtype=np.int64)  # positions of the open brackets on the stack
    depth = np.zeros(count, dtype=np.int64)
    rows = np.arange(count)
    for j in range(n):  # sequential in j, vectorised over strings
        is_open = ids[:, j] % 2 == 0
        closes = ~is_open & (depth > 0)
        top = opened[rows, np.maximum(depth - 1, 0)]
        out[closes, j] = j - top[closes]
        opened[rows[is_open], depth[is_open]] = j
        depth += np.where(is_open, 1, np.where(closes, -1, 0))
    return out


@lru_cache(maxsize=64)
def _log_completion(n: int, p: float, max_depth: int | None) -> np.ndarray:
    """G[d, r] = log P(process at depth d emits exactly r more symbols, then EOS).

    G[0, 0] = log(1 − p); G[d, r] = logaddexp(log p + G[d+1, r−1], log c_d + G[d−1, r−1]) with
    c_d = 1 − p (d < D) or 1 (d = D); rows above D (or n/2) are −∞.
    """
    D = n // 2 + 1 if max_depth is None else min(max_depth, n // 2 + 1)
    G = np.full((D + 2, n + 1), -np.inf)
    G[0, 0] = math.log(1 - p)
    d = np.arange(D + 1)
    log_close = np.where(d < (max_depth if max_depth is not None else math.inf), math.log(1 - p), 0.0)
    for r in range(1, n + 1):
        up = math.log(p) + G[1:D + 2, r - 1]  # open: depth d -> d + 1
        down = np.concatenate([[-np.inf], log_close[1:] + G[0:D, r - 1]])  # close: d -> d - 1
        up = np.where(d < (max_depth if max_depth is not None else math.inf), up, -np.inf)
        G[: D + 1, r] = np.logaddexp(up, down)
    return G
