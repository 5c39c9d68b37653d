"""The FLaRe recognizers' common part: next-symbol sets, probabilities, FLaRe's negatives.

A :class:`FlareLanguage` is a :class:`~expressivity.languages.base.Language` (exact
``accepts``/``accepts_ids``, fixed-length samplers, a generative process) with, in addition,

- ``next_symbol_sets(ids)`` → (count, n + 1, |Σ| + 1) bool: row t is the set of valid next
  symbols after s₁…s_t — a ∈ Σ is valid iff s₁…s_t a starts a member, EOS iff s₁…s_t ∈ L —
  the targets of FLaRe's next-symbol objective; after a prefix that starts no member, rows
  are empty;
- ``positive_lengths(lo, hi)``: the lengths of [lo, hi] at which their positive sampler
  draws strings (uniformly over these lengths, except stack manipulation — see there);
- ``log_probability(ids, lo, hi)``: log P(s) of a positive of the range [lo, hi] under their
  sampler, for the languages where they define one (the regular ones, the reversals, marked
  copy, odds first, bucket sort); a ``ValueError`` otherwise;
- ``sample_negatives(rng, count, n)`` → (ids, num_edits): FLaRe's negatives at length n:
  every proposal is, with probability ½ each, a uniform string of Σⁿ or a positive perturbed
  by k ~ Geometric(½) random edits (:mod:`.perturb`, conditioned on ending at length n), and
  proposals still in L are rejected and re-drawn (mode included), as their sampler does;
  ``num_edits`` is k, or −1 for a uniform string. For a regular language the uniform
  proposals come from the complement DFA: a proposal is negative with probability
  |Σⁿ \\ L| / |Σ|ⁿ (the counting table) and is then uniform over Σⁿ \\ L — the same law as
  drawing and testing, without the rejection loop.

``sample(rng, count, n, positive=False)`` (what recognition batches draw) returns these
negatives; the generative process is FLaRe's PDFA generalised: after each prefix, every valid
next symbol (EOS included) has probability 1 / |valid set| — for the regular languages this
*is* their uniform-action PDFA, for the others a process whose support is the next-symbol
sets (it need not end with probability 1: e.g. unmarked reversal).
"""

from __future__ import annotations

import math
from abc import abstractmethod

import numpy as np

from ...memory import check_memory
from ...rules import check_int
from ..base import Language
from ..regular.automaton import DFA
from ..regular.binning import LengthControlledSampler, uniform_table
from ..regular.edit_distance import edit_distance
from . import perturb

LEVELS = {"R": "regular", "DCF": "deterministic context-free", "CF": "context-free", "CS": "context-sensitive"}
PERTURBATION_PROBABILITY = 0.5  # their --perturbation-probability default
MAX_ROUNDS = 100  # proposals per negative before falling back to a uniform non-member (theirs: 100 tries)


def uniform_over(sets: np.ndarray) -> np.ndarray:
    """Next-symbol distributions uniform over valid sets (…, |Σ| + 1) (EOS last); uniform over Σ
    where a set is empty (a probability-0 prefix: any distribution that sums to 1)."""
    sets = sets.astype(float)
    total = sets.sum(axis=-1, keepdims=True)
    dead = np.r_[np.ones(sets.shape[-1] - 1), 0.0] / (sets.shape[-1] - 1)
    return np.where(total > 0, sets / np.maximum(total, 1), dead)


class FlareLanguage(Language):
    """A FLaRe language (Butoi et al. 2025, Table 1); see the module docstring."""

    name = "flare"
    level = "R"  # their class: R | DCF | CF | CS
    flare_dir = ""  # the language's directory in the FLaRe repository, e.g. "marked-copy"
    tokens: dict[str, str] = {}  # their token → our symbol, where they differ (e.g. "PUSH" → "+")
    has_probability = False  # whether their sampler defines log P(s)

    def __init__(self) -> None:
        """FLaRe's languages take no parameters (but Dyck-(k, m))."""

    # ------------------------------------------------------------------ to implement
    @abstractmethod
    def next_symbol_sets(self, ids: np.ndarray) -> np.ndarray:
        """Valid next symbols after every prefix: (count, n + 1, |Σ| + 1) bool."""

    @abstractmethod
    def positive_lengths(self, lo: int, hi: int) -> list[int]:
        """The lengths in [lo, hi] their positive sampler draws."""

    def _log_probability_at_length(self, ids: np.ndarray) -> np.ndarray:
        raise ValueError(f"{self.name}: FLaRe defines no string probability for this language")

    # ------------------------------------------------------------------ provided
    def supports(self, length: int, positive: bool) -> bool:
        if positive:
            return bool(self.positive_lengths(length, length))
        return length >= 1 or not self.accepts("")

    def log_probability(self, ids: np.ndarray, lo: int, hi: int) -> np.ndarray:
        """log P(s) (natural log) of positives of the range [lo, hi] under their sampler: the
        length uniform over :meth:`positive_lengths`, then the string given its length;
        −∞ for a non-member or a length outside the range."""
        ids = np.asarray(ids)
        n = ids.shape[1]
        valid = self.positive_lengths(lo, hi)
        if n not in valid:
            return np.full(len(ids), -np.inf)
        lp = self._log_probability_at_length(ids)
        return np.where(self.accepts_ids(ids), lp - math.log(len(valid)), -np.inf)

    def sample_range_positives(self, rng: np.random.Generator, count: int, lo: int, hi: int) -> list[np.ndarray]:
        """``count`` positives of their sampler on the range [lo, hi] (variable lengths), one
        1-D id array each, in the order drawn."""
        valid = self.positive_lengths(lo, hi)
        if not valid:
            raise ValueError(f"{self.name}: no strings of the language have a length in {lo}-{hi}")
        lengths = np.asarray(valid)[rng.integers(0, len(valid), size=count)]
        return self._by_length(rng, lengths)

    def _by_length(self, rng: np.random.Generator, lengths: np.ndarray) -> list[np.ndarray]:
        """One positive per entry of ``lengths``, drawn length by length (vectorised within one)."""
        out: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * len(lengths)
        for n in np.unique(lengths):
            where = np.flatnonzero(lengths == n)
            for i, row in zip(where, self._sample_positive_ids(rng, len(where), int(n))):
                out[i] = row
        return out

    def sample_ids(self, rng, count, length, positive):
        if positive:
            return super().sample_ids(rng, count, length, positive)
        return self.sample_negatives(rng, count, length)[0]

    def sample_negatives(self, rng: np.random.Generator, count: int, length: int) -> tuple[np.ndarray, np.ndarray]:
        """FLaRe's negatives of length n (module docstring): (ids (count, n), num_edits (count,),
        −1 for a uniform string). Proposals are drawn as one i.i.d. stream, in chunks, and the
        negatives among them fill the slots in order — the same law as re-drawing per slot."""
        self._check_length(length, False)
        count, n = check_int(count, f"{self.name}: count", min=0), int(length)
        check_memory(6 * 8.0 * count * n, f"{self.name}: {count} negatives of length {n}",
                     hint="use a smaller count or length")  # the slots and a chunk of proposals
        out = np.zeros((count, n), dtype=np.int64)
        edits = np.full(count, -1, dtype=np.int64)
        filled, proposed = 0, 0
        while filled < count and proposed < MAX_ROUNDS * count:
            m = max(8, 2 * (count - filled))
            pert = rng.random(m) < PERTURBATION_PROBABILITY
            ids = np.zeros((m, n), dtype=np.int64)
            k = np.full(m, -1, dtype=np.int64)
            neg = np.zeros(m, dtype=bool)
            if pert.any():
                ids[pert], k[pert], neg[pert] = self._perturbed_proposals(rng, int(pert.sum()), n)
            if (~pert).any():
                ids[~pert], neg[~pert] = self._uniform_proposals(rng, int((~pert).sum()), n)
            take = np.flatnonzero(neg)[: count - filled]
            out[filled:filled + len(take)], edits[filled:filled + len(take)] = ids[take], k[take]
            filled += len(take)
            proposed += m
        if filled < count:  # the proposals stayed in L (rare): uniform non-members
            out[filled:] = self._uniform_negative_ids(rng, count - filled, n)
        order = rng.permutation(count)  # the chunks' mode mix is exchangeable: keep no order
        return out[order], edits[order]

    def _perturbed_proposals(self, rng, count: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(ids (count, n), k (count,), negative (count,)): perturbed positives ending at length n."""
        k, types, n0, ok = perturb.fixed_length_plans(
            rng, count, n, lambda lengths: np.array([self.supports(int(m), True) for m in lengths], dtype=bool))
        ids = np.zeros((count, n), dtype=np.int64)
        idx = np.flatnonzero(ok)
        if len(idx):
            starts = self._by_length(rng, n0[idx])
            ids[idx] = perturb.apply_edits(rng, starts, k[idx], types[idx], len(self.alphabet), n)
        neg = ok & ~self.accepts_ids(ids)
        return ids, k, neg

    def _uniform_proposals(self, rng, count: int, n: int) -> tuple[np.ndarray, np.ndarray]:
        """(ids, negative): uniform strings of Σⁿ and whether each is a non-member."""
        ids = rng.integers(0, len(self.alphabet), size=(count, n))
        return ids, ~self.accepts_ids(ids)

    def num_edits_label(self, k: int) -> str:
        return "uniform" if k < 0 else f"{k} edit{'s' if k != 1 else ''}"

    # ------------------------------------------------------------ generative process
    def next_symbol_table(self, ids: np.ndarray) -> np.ndarray:
        """p*(· | s₁…s_t): uniform over the valid next symbols (EOS included); uniform over Σ
        after a prefix that starts no member (a probability-0 prefix)."""
        return uniform_over(self.next_symbol_sets(np.asarray(ids)))

    def _initial_state(self, count):
        return np.zeros((count, 0), dtype=np.int64)  # the prefix read so far

    def _advance(self, state, sym):
        return np.concatenate([state, np.asarray(sym)[:, None]], axis=1)

    def _probs(self, state):
        return self.next_symbol_table(state)[:, -1]

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class FlareDFALanguage(FlareLanguage):
    """A regular FLaRe language given by its DFA (``_make_dfa``): membership, next-symbol sets,
    Butoi et al.'s length-controlled positives, probabilities and exact edit distances."""

    has_probability = True

    def __init__(self) -> None:
        self.dfa: DFA = self._make_dfa()
        self.sampler = LengthControlledSampler(self.dfa)
        self._negatives = uniform_table(self.dfa, ~self.dfa.accepting)
        self._everything = uniform_table(self.dfa, np.ones(self.dfa.n_states, dtype=bool))

    @abstractmethod
    def _make_dfa(self) -> DFA:
        ...

    def accepts(self, s: str) -> bool:
        if set(s) - set(self.alphabet):
            return False
        return bool(self.dfa.accepts_ids(self.to_ids([s]) if s else np.zeros((1, 0), dtype=np.int64))[0])

    def accepts_ids(self, ids):
        return self.dfa.accepts_ids(ids)

    def next_symbol_sets(self, ids):
        return self.dfa.next_symbols(self.dfa.states_along(np.asarray(ids)))

    def positive_lengths(self, lo, hi):
        return self.sampler.valid_lengths(max(lo, 0), hi) if hi >= 0 else []

    def supports(self, length, positive):
        if positive:
            return super().supports(length, positive)
        return bool(np.isfinite(self._negatives.total(self.dfa.start, length)))

    def _sample_positive_ids(self, rng, count, length):
        return self.sampler.sample(rng, count, length)

    def _by_length(self, rng, lengths):
        """All lengths in one pass of the length-controlled sampler."""
        ids = self.sampler.table.sample_lengths(rng, np.asarray(lengths), self.dfa.start)
        return [row[:n] for row, n in zip(ids, lengths)]

    def _log_probability_at_length(self, ids):
        return self.sampler.pdfa_log_probability(ids) - self.sampler.table.total(self.dfa.start, ids.shape[1])

    def _uniform_proposals(self, rng, count, n):
        """A uniform string of Σⁿ is a non-member with probability |Σⁿ \\ L| / |Σ|ⁿ; given that,
        it is uniform over Σⁿ \\ L: drawn from the complement DFA."""
        q = math.exp(self._negatives.total(self.dfa.start, n) - self._everything.total(self.dfa.start, n))
        neg = rng.random(count) < q
        ids = np.zeros((count, n), dtype=np.int64)
        if neg.any():
            ids[neg] = self._negatives.sample(rng, int(neg.sum()), n, self.dfa.start)
        return ids, neg

    def _uniform_negative_ids(self, rng, count, length):
        return self._negatives.sample(rng, count, length, self.dfa.start)

    def edit_distance(self, ids: np.ndarray) -> np.ndarray:
        """The exact edit distance of each string to L (0 for members): (count,)."""
        return edit_distance(self.dfa, np.asarray(ids))

    def _initial_state(self, count):
        return np.full(count, self.dfa.start, dtype=np.int64)

    def _advance(self, state, sym):
        return self.dfa.delta[state, sym]

    def _probs(self, state):
        return uniform_over(self.dfa.next_symbols(state))
