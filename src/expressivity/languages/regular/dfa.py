"""Languages given by a deterministic finite automaton (the Tomita grammars build on this).

A DFA (Q, Σ, δ, q₀, F) is a transition table ``delta`` (|Q|, |Σ|), a start state and an
accepting mask. A state is *live* if some accepting state is reachable from it.

- Membership: run δ (vectorised over strings, one step per position).
- Fixed-length samplers: uniform over L ∩ Σⁿ (positives) and over Σⁿ \\ L (negatives, half
  of them near-misses) from the counting table N[q, r] = #{w ∈ Σ^r : δ(q, w) ∈ F} (kept as
  logs): at state q with r symbols left, emit a with probability N[δ(q, a), r−1] / N[q, r]
  (:func:`.binning.uniform_table`; FLaRe's length-controlled sampler of the same DFA is
  :class:`.binning.LengthControlledSampler` on ``self.dfa``).
- Generative process for positives (parameter q_end = ``p_end``): in an accepting state end
  with probability q_end, otherwise emit a symbol uniformly among those that lead to a live
  state (probability 1 − q_end split evenly; end with probability 1 if there is none); in a
  non-accepting state emit uniformly among the symbols leading to a live state. Only live
  states are visited, so every generated string is in L.
"""

from __future__ import annotations

import numpy as np

from ..base import Language
from .automaton import DFA
from .binning import WeightedLengthTable, uniform_table


class DFALanguage(Language):
    """A regular language from a DFA; subclasses set ``alphabet``, ``delta``, ``accepting``."""

    delta: np.ndarray  # (|Q|, |Σ|) next state
    accepting: np.ndarray  # (|Q|,) bool
    start: int = 0

    def __init__(self, p_end: float = 0.5) -> None:
        if not (0.0 < float(p_end) < 1.0):
            raise ValueError(f"{self.name}: p_end must lie in (0, 1), got {p_end!r}")
        self.p_end = float(p_end)
        self.delta = np.asarray(self.delta, dtype=np.int64)
        self.accepting = np.asarray(self.accepting, dtype=bool)
        self.dfa = DFA(self.alphabet, self.delta, self.accepting, self.start)
        self.live = self.dfa.live  # backward reachability of F
        self._tables: dict[bytes, WeightedLengthTable] = {}  # accept mask -> log counts, grown on demand

    def __repr__(self) -> str:
        return f"{type(self).__name__}(p_end={self.p_end})"

    # ------------------------------------------------------------------ membership
    def run(self, ids: np.ndarray) -> np.ndarray:
        """State after reading each string: ids (count, n) -> (count,)."""
        return self.dfa.run(ids)

    def accepts(self, s: str) -> bool:
        index = {c: i for i, c in enumerate(self.alphabet)}
        q = self.start
        for c in s:
            if c not in index:
                return False
            q = int(self.delta[q, index[c]])
        return bool(self.accepting[q])

    def accepts_ids(self, ids: np.ndarray) -> np.ndarray:
        return self.accepting[self.run(ids)]

    # ------------------------------------------------------------- fixed-length samplers
    def _log_counts(self, length: int, accept: np.ndarray) -> np.ndarray:
        """L[q, r] = log #{w ∈ Σ^r : δ(q, w) ∈ accept}: (|Q|, ≥ length + 1); cached."""
        return self._table(accept).ensure(length)

    def _table(self, accept: np.ndarray) -> WeightedLengthTable:
        key = accept.tobytes()
        if key not in self._tables:
            self._tables[key] = uniform_table(self.dfa, accept)
        return self._tables[key]

    def _uniform_ids(self, rng, count: int, length: int, accept: np.ndarray) -> np.ndarray:
        """Uniform over {w ∈ Σ^length : δ(q₀, w) ∈ accept}: ids (count, length)."""
        return self._table(accept).sample(rng, count, length, self.start)

    def supports(self, length: int, positive: bool) -> bool:
        accept = self.accepting if positive else ~self.accepting
        return bool(np.isfinite(self._log_counts(length, accept)[self.start, length]))

    def _sample_positive_ids(self, rng, count, length):
        return self._uniform_ids(rng, count, length, self.accepting)

    def _uniform_negative_ids(self, rng, count, length):
        return self._uniform_ids(rng, count, length, ~self.accepting)

    # ------------------------------------------------------------ generative process
    def _initial_state(self, count):
        return np.full(count, self.start, dtype=np.int64)

    def _advance(self, state, sym):
        return self.delta[state, sym]

    def _probs(self, state):
        allowed = self.live[self.delta[state]].astype(float)  # (count, |Σ|)
        n_allowed = allowed.sum(axis=1, keepdims=True)
        acc = self.accepting[state][:, None]
        end = np.where(acc, np.where(n_allowed > 0, self.p_end, 1.0), 0.0)  # (count, 1)
        emit = (1.0 - end) * allowed / np.maximum(n_allowed, 1)
        dead = (n_allowed == 0) & ~acc  # probability-0 prefix: any distribution that sums to 1
        emit = np.where(dead, 1.0 / len(self.alphabet), emit)
        return np.concatenate([emit, end], axis=1)
