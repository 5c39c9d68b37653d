"""Length-controlled sampling from a DFA (Butoi et al. 2025, §3 and App. B; after Snæbjarnarson et al.).

Their method, in three steps, for a DFA A and a longest length n_max:

1. **A PDFA with uniform probabilities.** Trim A to its live states; at a live state q the
   *actions* are the transitions a with δ(q, a) live, plus accepting if q ∈ F; each action
   has probability 1/#actions(q). Every string this PDFA ends on is in L.
2. **Weights in the binning semiring.** Lift every weight w to a vector over the lengths
   0 … n_max (the n_max-th order binning semiring over the log semiring): a transition is
   w shifted one bin up (it emits a symbol), accepting is w in bin 0; ⊕ is ⊕ per bin, ⊗ is
   convolution. The backward allsum of the lifted automaton is the table

       W[q, r] = log P(the PDFA, now in q, emits exactly r more symbols and accepts)
               = log Σ_a p(q, a) · exp W[δ(q, a), r − 1],      W[q, 0] = log p(q, accept),

   one DP over r (|Q|·|Σ|·n_max work, shared by every length).
3. **Sampling a length, then a string of that length.** The length n is uniform over the
   *valid* lengths of the range (those with W[q₀, n] > −∞: L has strings there); the string is
   the PDFA conditioned on emitting exactly n symbols: at q with r symbols left, action a has
   probability p(q, a) · exp(W[δ(q, a), r − 1] − W[q, r]) (weight pushing).

The probability FLaRe records for a positive s of length n drawn from the range [lo, hi] is
``log P(s) = log P_PDFA(s) − W[q₀, n] − log #valid lengths`` (:meth:`log_probability`).

:class:`WeightedLengthTable` is the engine for any transition weights, so the uniform
fixed-length samplers of :class:`~.dfa.DFALanguage` (weight 1 per transition: uniform over
L ∩ Σⁿ) use the same code. Sampling is sequential in the position and vectorised over the
strings; a table is computed once per (DFA, n_max) and grown on demand.
"""

from __future__ import annotations

import math

import numpy as np

from ...memory import check_memory
from .automaton import DFA


class WeightedLengthTable:
    """W[q, r] = log Σ over the accepting runs of exactly r symbols from q of the product of
    their weights: transition log-weights ``log_w`` (|Q|, |Σ|) (−∞ = no move) and accepting
    log-weights ``log_accept`` (|Q|,)."""

    def __init__(self, delta: np.ndarray, log_w: np.ndarray, log_accept: np.ndarray) -> None:
        self.delta = np.asarray(delta, dtype=np.int64)
        self.log_w = np.asarray(log_w, dtype=float)
        self.log_accept = np.asarray(log_accept, dtype=float)
        self._W = self.log_accept[:, None].copy()  # (|Q|, n + 1), grown by ensure()

    def ensure(self, n_max: int) -> np.ndarray:
        """The table up to length ``n_max``: (|Q|, ≥ n_max + 1)."""
        have = self._W.shape[1] - 1
        if n_max > have:
            check_memory(8.0 * self.delta.shape[0] * (n_max + 1), f"a length table to length {n_max}",
                                hint="use shorter lengths")
            W = np.concatenate([self._W, np.full((self._W.shape[0], n_max - have), -np.inf)], axis=1)
            for r in range(have + 1, n_max + 1):
                W[:, r] = np.logaddexp.reduce(self.log_w + W[self.delta, r - 1], axis=1)
            self._W = W
        return self._W

    def total(self, q: int, n: int) -> float:
        """W[q, n]."""
        return float(self.ensure(n)[q, n])

    def sample(self, rng: np.random.Generator, count: int, n: int, start: int) -> np.ndarray:
        """``count`` strings of exactly n symbols from ``start``, each with probability ∝ the
        product of its weights: ids (count, n). ValueError if there is none."""
        return self.sample_lengths(rng, np.full(count, n, dtype=np.int64), start)

    def sample_lengths(self, rng: np.random.Generator, lengths: np.ndarray, start: int) -> np.ndarray:
        """One string per entry of ``lengths`` (each with probability ∝ its weights among the
        strings of its length), all at once: ids (count, max length), each row padded with 0
        after its length."""
        lengths = np.asarray(lengths, dtype=np.int64)
        count, n = len(lengths), int(lengths.max(initial=0))
        W = self.ensure(n)
        if not np.isfinite(W[start, lengths]).all():
            raise ValueError(f"no accepted string of length {int(lengths[~np.isfinite(W[start, lengths])][0])}")
        K = self.delta.shape[1]
        q = np.full(count, start, dtype=np.int64)
        out = np.zeros((count, n), dtype=np.int64)
        u = rng.random((count, n))
        rows = np.arange(count)
        # done rows read column n + 1 (−∞) for the next state and n + 2 (0) for their own: p = 0, never NaN
        W = np.concatenate([W[:, : n + 1], np.full((W.shape[0], 1), -np.inf), np.zeros((W.shape[0], 1))], axis=1)
        for t in range(n):  # sequential in t, vectorised over strings
            live = t < lengths
            r = np.where(live, lengths - t, n + 2)  # symbols left
            p = np.exp(self.log_w[q] + W[self.delta[q], (r - 1)[:, None]] - W[q, r][:, None])  # rows sum to 1
            sym = (u[:, t, None] > np.cumsum(p, axis=1)).sum(axis=1).clip(max=K - 1)
            sym = np.where(p[rows, sym] > 0, sym, p.argmax(axis=1))  # guard round-off
            out[:, t] = np.where(live, sym, 0)
            q = np.where(live, self.delta[q, sym], q)
        return out


def uniform_table(dfa: DFA, accept: np.ndarray | None = None) -> WeightedLengthTable:
    """Weight 1 per transition, accepting ``accept`` (default F): W[q, r] = log #{w ∈ Σ^r :
    δ(q, w) ∈ accept}, so sampling is uniform over the accepted strings of length n."""
    accept = dfa.accepting if accept is None else np.asarray(accept, dtype=bool)
    return WeightedLengthTable(dfa.delta, np.zeros(dfa.delta.shape), np.where(accept, 0.0, -np.inf))


class LengthControlledSampler:
    """Butoi et al.'s length-controlled sampler of a DFA (see the module docstring)."""

    def __init__(self, dfa: DFA) -> None:
        if not isinstance(dfa, DFA):
            raise ValueError(f"LengthControlledSampler needs a DFA, got {type(dfa).__name__}")
        self.dfa = dfa
        live = dfa.live
        moves = live[dfa.delta] & live[:, None]  # (|Q|, |Σ|): the PDFA's transitions
        n_actions = moves.sum(axis=1) + (dfa.accepting & live)
        log_p = np.where(n_actions > 0, -np.log(np.maximum(n_actions, 1)), -np.inf)  # (|Q|,)
        self.log_move = np.where(moves, log_p[:, None], -np.inf)  # log p(q, a)
        self.log_stop = np.where(dfa.accepting & live, log_p, -np.inf)  # log p(q, accept)
        self.table = WeightedLengthTable(dfa.delta, self.log_move, self.log_stop)

    def valid_lengths(self, lo: int, hi: int) -> list[int]:
        """The lengths in [lo, hi] at which L has strings."""
        W = self.table.ensure(hi)
        return [n for n in range(lo, hi + 1) if np.isfinite(W[self.dfa.start, n])]

    def sample(self, rng: np.random.Generator, count: int, n: int) -> np.ndarray:
        """``count`` members of length n, the PDFA conditioned on length n: ids (count, n)."""
        return self.table.sample(rng, count, n, self.dfa.start)

    def sample_lengths(self, rng: np.random.Generator, count: int, lo: int, hi: int) -> np.ndarray:
        """Lengths uniform over the valid lengths of [lo, hi]; ValueError if there are none."""
        valid = self.valid_lengths(lo, hi)
        if not valid:
            raise ValueError(f"no strings of the language have a length in {lo}-{hi}")
        return np.asarray(valid)[rng.integers(0, len(valid), size=count)]

    def pdfa_log_probability(self, ids: np.ndarray) -> np.ndarray:
        """log P_PDFA(s) of each string (−∞ for non-members): (count,)."""
        states = self.dfa.states_along(ids)  # (count, n + 1)
        lp = self.log_move[states[:, :-1], ids].sum(axis=1) if ids.shape[1] else np.zeros(len(ids))
        return lp + self.log_stop[states[:, -1]]

    def log_probability(self, ids: np.ndarray, lo: int, hi: int) -> np.ndarray:
        """log P(s) of FLaRe's positives of the range [lo, hi]: the PDFA conditioned on the
        length, times 1/#valid lengths (natural log; −∞ outside L or the range)."""
        n = ids.shape[1]
        valid = self.valid_lengths(lo, hi)
        if n not in valid:
            return np.full(len(ids), -np.inf)
        return self.pdfa_log_probability(ids) - self.table.total(self.dfa.start, n) - math.log(len(valid))
