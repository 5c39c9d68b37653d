"""DFAs of the regular languages, FLaRe's length-controlled sampler (binning semiring) and the
edit distance to a regular language, each against brute force on all short strings."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from _brute import distance_to, members, pdfa_probability, valid_next, words

from expressivity import languages as L
from expressivity.languages.regular.automaton import DFA, dfa_of, stack_dfa
from expressivity.languages.regular.binning import LengthControlledSampler
from expressivity.languages.regular.edit_distance import edit_distance

# name, params, how far a member can be from a live prefix (symbols), longest brute-forced length
REGULAR = [(f"tomita{i}", {}, 4, 6) for i in range(1, 8)] + [
    ("parity", {}, 2, 7), ("first", {}, 2, 7), ("dyck", {"k": 2, "max_depth": 3}, 3, 6)]
IDS = [f"{n}{p or ''}" for n, p, _, _ in REGULAR]


@pytest.mark.parametrize(("name", "params", "reach", "max_len"), REGULAR, ids=IDS)
def test_dfa_membership_and_next_symbols_match_the_language(name, params, reach, max_len):
    lang = L.get(name, **params)
    dfa = dfa_of(lang)
    for n in range(max_len + 1):
        strings = list(words(lang.alphabet, n))
        ids = lang.to_ids(strings) if n else np.zeros((len(strings), 0), dtype=np.int64)
        assert dfa.accepts_ids(ids).tolist() == [lang.accepts(s) for s in strings]
        if n <= 4:
            sets = dfa.next_symbols(dfa.run(ids))
            for s, row in zip(strings, sets):
                got = {a for a, ok in zip(lang.alphabet + "$", row) if ok}
                assert got == valid_next(lang.accepts, lang.alphabet, s, reach), s


@pytest.mark.parametrize(("name", "params", "reach", "max_len"), REGULAR, ids=IDS)
def test_length_controlled_probabilities_are_the_pdfa_conditioned_on_length(name, params, reach, max_len):
    """log_probability equals FLaRe's distribution computed by brute force: the uniform-action
    PDFA of the language, conditioned on the length, times 1/#valid lengths of the range."""
    lang = L.get(name, **params)
    sampler = LengthControlledSampler(dfa_of(lang))
    lo, hi = 0, 5
    pool = members(lang.accepts, lang.alphabet, hi)
    valid = sorted({len(w) for w in pool})
    assert sampler.valid_lengths(lo, hi) == valid
    for n in valid:
        strings = sorted(w for w in pool if len(w) == n)
        p = np.array([pdfa_probability(lang.accepts, lang.alphabet, w, reach) for w in strings])
        exact = p / p.sum() / len(valid)
        ids = lang.to_ids(strings) if n else np.zeros((len(strings), 0), dtype=np.int64)
        got = np.exp(sampler.log_probability(ids, lo, hi))
        np.testing.assert_allclose(got, exact, rtol=1e-9, atol=0)
    outside = lang.to_ids(["0" * 4] if "0" in lang.alphabet else ["((()"])
    if not lang.accepts(lang.to_strings(outside)[0]):
        assert sampler.log_probability(outside, lo, hi)[0] == -math.inf


@pytest.mark.parametrize(("name", "params", "reach", "max_len"), REGULAR, ids=IDS)
def test_sampler_draws_the_conditioned_pdfa(name, params, reach, max_len):
    lang = L.get(name, **params)
    sampler = LengthControlledSampler(dfa_of(lang))
    n = max(sampler.valid_lengths(4, 6))
    pool = sorted(w for w in members(lang.accepts, lang.alphabet, n) if len(w) == n)
    p = np.array([pdfa_probability(lang.accepts, lang.alphabet, w, reach) for w in pool])
    exact = dict(zip(pool, p / p.sum()))
    ids = sampler.sample(np.random.default_rng(1), 20_000, n)
    counts = Counter(lang.to_strings(ids))
    assert set(counts) <= set(pool)
    tv = 0.5 * sum(abs(counts.get(w, 0) / 20_000 - q) for w, q in exact.items())
    assert tv < 0.03, tv
    lengths = sampler.sample_lengths(np.random.default_rng(2), 6000, 0, 6)
    valid = sampler.valid_lengths(0, 6)
    assert set(lengths.tolist()) == set(valid)
    assert max(abs(np.mean(lengths == v) - 1 / len(valid)) for v in valid) < 0.03


@pytest.mark.parametrize(("name", "params", "reach", "max_len"), REGULAR, ids=IDS)
def test_edit_distance_matches_brute_force(name, params, reach, max_len):
    lang = L.get(name, **params)
    dfa = dfa_of(lang)
    pool = members(lang.accepts, lang.alphabet, 8)
    for n in range(0, 5):
        strings = list(words(lang.alphabet, n))
        ids = lang.to_ids(strings) if n else np.zeros((len(strings), 0), dtype=np.int64)
        got = edit_distance(dfa, ids)
        want = [distance_to(s, {w for w in pool if abs(len(w) - n) <= 4}) for s in strings]
        assert got.tolist() == want, name


def test_tomita_uniform_samplers_are_unchanged_by_the_shared_engine():
    """The DFA languages' fixed-length samplers now run on the shared length table; they stay
    uniform over L ∩ Σⁿ and deterministic given the generator."""
    lang = L.get("tomita3")
    a = lang.sample(np.random.default_rng(3), 4000, 6, True)
    assert a == lang.sample(np.random.default_rng(3), 4000, 6, True)
    pool = [w for w in words("01", 6) if lang.accepts(w)]
    counts = Counter(a)
    assert set(counts) == set(pool)
    assert max(abs(c / 4000 - 1 / len(pool)) for c in counts.values()) < 0.02


def test_stack_dfa_counts_states_and_refuses_huge_ones():
    assert stack_dfa(["()", "[]"], 3).n_states == 1 + 2 + 4 + 8 + 1  # stacks plus the dead state
    with pytest.raises(ValueError, match="stacks, over the"):
        stack_dfa(["()", "[]", "{}", "<>"], 12)
    assert L.get("dyck", k=2).dfa is None
    with pytest.raises(ValueError, match="has no DFA here"):
        dfa_of(L.get("majority"))


def test_dfa_rejects_malformed_tables():
    with pytest.raises(ValueError, match="delta must have shape"):
        DFA("01", np.zeros((2, 3)), [True, False])
    with pytest.raises(ValueError, match="transitions must name states"):
        DFA("01", [[0, 5], [0, 0]], [True, False])
    with pytest.raises(ValueError, match="accepting must have shape"):
        DFA("01", [[0, 1], [0, 0]], [True])
    with pytest.raises(ValueError, match="no strings of the language"):
        LengthControlledSampler(dfa_of(L.get("tomita2"))).sample_lengths(np.random.default_rng(0), 3, 3, 3)
