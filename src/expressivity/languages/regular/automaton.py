"""A deterministic finite automaton as data, and the DFA of every regular language we have.

A :class:`DFA` (Q, Σ, δ, q₀, F) holds a complete transition table ``delta`` (|Q|, |Σ|) — a
partial automaton gets an absorbing dead state (:meth:`DFA.from_partial`) — a start state
and an accepting mask. A state is *live* when some accepting state is reachable from it;
from a dead (non-live) state no continuation is ever accepted.

- ``run(ids)``, ``accepts_ids(ids)``: vectorised membership (one step per position).
- ``next_symbols(states)``: the valid next symbols after a prefix that ends in each state,
  the sets FLaRe's next-symbol objective predicts: a ∈ Σ is valid iff δ(q, a) is live, EOS
  iff q ∈ F. (count, |Σ| + 1) bool, last column EOS.
- ``complement()``: the DFA of Σ* \\ L (same table, accepting mask flipped).
- ``gaps()``: G[p, q] = the fewest symbols that take p to q (∞ if none) — the cost of
  insertions in :mod:`.edit_distance`.

:func:`dfa_of` gives the DFA of a regular language of the registry: the Tomita grammars
(every :class:`~.dfa.DFALanguage`), PARITY, FIRST, bounded-depth Dyck-(k, D), and the regular
FLaRe languages — whatever has a ``dfa`` attribute.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

MAX_STATES = 200_000  # the tables here are (|Q|, |Σ|) and, for insertions, (|Q|, |Q|)


@dataclass(frozen=True, eq=False)
class DFA:
    """A complete DFA over ``alphabet`` (one character per symbol); see the module docstring."""

    alphabet: str
    delta: np.ndarray  # (|Q|, |Σ|) int64: next state
    accepting: np.ndarray  # (|Q|,) bool
    start: int = 0

    def __post_init__(self) -> None:
        delta = np.asarray(self.delta, dtype=np.int64)
        accepting = np.asarray(self.accepting, dtype=bool)
        if delta.ndim != 2 or delta.shape[1] != len(self.alphabet) or not len(self.alphabet):
            raise ValueError(f"DFA: delta must have shape (states, {len(self.alphabet)}) for alphabet "
                             f"{self.alphabet!r}, got {delta.shape}")
        Q = delta.shape[0]
        if not 1 <= Q <= MAX_STATES:
            raise ValueError(f"DFA: the number of states must lie in [1, {MAX_STATES:,}], got {Q:,}")
        if accepting.shape != (Q,):
            raise ValueError(f"DFA: accepting must have shape ({Q},), got {accepting.shape}")
        if delta.min() < 0 or delta.max() >= Q:
            raise ValueError(f"DFA: transitions must name states 0 … {Q - 1}")
        if not 0 <= int(self.start) < Q:
            raise ValueError(f"DFA: start must be a state in [0, {Q}), got {self.start!r}")
        object.__setattr__(self, "delta", delta)
        object.__setattr__(self, "accepting", accepting)
        object.__setattr__(self, "start", int(self.start))

    @classmethod
    def from_partial(cls, alphabet: str, transitions: dict[tuple[int, str], int], accepting, n_states: int,
                     start: int = 0) -> DFA:
        """A DFA from a partial table {(state, symbol): state}; missing moves go to an added dead state."""
        dead = n_states
        delta = np.full((n_states + 1, len(alphabet)), dead, dtype=np.int64)
        index = {c: i for i, c in enumerate(alphabet)}
        for (q, a), r in transitions.items():
            delta[q, index[a]] = r
        acc = np.zeros(n_states + 1, dtype=bool)
        acc[list(accepting)] = True
        return cls(alphabet, delta, acc, start)

    @property
    def n_states(self) -> int:
        return self.delta.shape[0]

    @cached_property
    def live(self) -> np.ndarray:
        """(|Q|,) bool: an accepting state is reachable (backward closure of F)."""
        live = self.accepting.copy()
        for _ in range(self.n_states):
            grown = live | live[self.delta].any(axis=1)
            if (grown == live).all():
                break
            live = grown
        return live

    def run(self, ids: np.ndarray) -> np.ndarray:
        """The state after each string: ids (count, n) → (count,)."""
        q = np.full(len(ids), self.start, dtype=np.int64)
        for t in range(ids.shape[1]):  # sequential in t, vectorised over strings
            q = self.delta[q, ids[:, t]]
        return q

    def states_along(self, ids: np.ndarray) -> np.ndarray:
        """The state after every prefix: (count, n + 1), column 0 the start state."""
        count, n = ids.shape
        out = np.empty((count, n + 1), dtype=np.int64)
        out[:, 0] = self.start
        for t in range(n):
            out[:, t + 1] = self.delta[out[:, t], ids[:, t]]
        return out

    def accepts_ids(self, ids: np.ndarray) -> np.ndarray:
        return self.accepting[self.run(ids)]

    def next_symbols(self, states: np.ndarray) -> np.ndarray:
        """Valid next symbols after a prefix ending in each state: (…, |Σ| + 1) bool, last = EOS."""
        states = np.asarray(states)
        return np.concatenate([self.live[self.delta[states]], self.accepting[states][..., None]], axis=-1)

    def complement(self) -> DFA:
        """The DFA of Σ* \\ L."""
        return DFA(self.alphabet, self.delta, ~self.accepting, self.start)

    @cached_property
    def _gaps(self) -> np.ndarray:
        Q = self.n_states
        inf = np.iinfo(np.int64).max // 4
        G = np.full((Q, Q), inf, dtype=np.int64)
        np.fill_diagonal(G, 0)
        frontier = np.eye(Q, dtype=bool)
        seen = frontier.copy()
        for d in range(1, Q):  # breadth-first, all sources at once
            nxt = np.zeros((Q, Q), dtype=bool)
            for a in range(self.delta.shape[1]):
                np.logical_or.at(nxt, (slice(None), self.delta[:, a]), frontier)
            nxt &= ~seen
            if not nxt.any():
                break
            G[nxt] = d
            seen |= nxt
            frontier = nxt
        return G

    def gaps(self) -> np.ndarray:
        """G[p, q]: the fewest symbols taking p to q (a large sentinel, ≥ 2⁶⁰, when none do)."""
        return self._gaps

    def __repr__(self) -> str:
        return f"DFA(alphabet={self.alphabet!r}, states={self.n_states}, accepting={int(self.accepting.sum())})"


def dfa_of(language) -> DFA:
    """The DFA of a regular language of the registry (anything with a ``dfa`` attribute: the
    Tomita grammars, PARITY, FIRST, Dyck-(k, D) with a finite depth, the regular FLaRe
    languages); a one-line ValueError otherwise."""
    dfa = getattr(language, "dfa", None)
    if not isinstance(dfa, DFA):
        name = getattr(language, "name", type(language).__name__)
        raise ValueError(f"{name} has no DFA here (it is not one of the regular languages: tomita1 … tomita7, "
                         "parity, first, dyck with a finite max_depth, the regular flare.* languages)")
    return dfa


def stack_dfa(pairs: list[str], max_depth: int) -> DFA:
    """The DFA of Dyck-(k, D) over the bracket ``pairs`` (k = len(pairs)): one state per stack
    of at most D open brackets (Σ_{d ≤ D} k^d states, the empty stack first and accepting)."""
    k = len(pairs)
    if sum(k ** d for d in range(max_depth + 1)) > MAX_STATES:
        raise ValueError(f"Dyck-({k}, {max_depth}) has {sum(k ** d for d in range(max_depth + 1)):,} stacks, over "
                         f"the {MAX_STATES:,} states a DFA may have here; use a smaller k or depth")
    stacks: list[tuple[int, ...]] = [()]
    index = {(): 0}
    for st in stacks:  # breadth-first over the stacks, growing the list while reading it
        if len(st) < max_depth:
            for t in range(k):
                index[st + (t,)] = len(stacks)
                stacks.append(st + (t,))
    moves: dict[tuple[int, str], int] = {}
    for st, q in index.items():
        if len(st) < max_depth:
            for t in range(k):
                moves[(q, pairs[t][0])] = index[st + (t,)]
        if st:
            moves[(q, pairs[st[-1]][1])] = index[st[:-1]]
    return DFA.from_partial("".join(pairs), moves, [0], len(stacks))
