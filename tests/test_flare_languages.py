"""The 18 FLaRe languages (Butoi et al. 2025) as recognizers, each against an independent
definition on every short string: membership, next-symbol sets, their samplers and
probabilities, their negatives; and the reuse of our own oracles where a definition agrees."""

from __future__ import annotations

import math
import re
from collections import Counter

import numpy as np
import pytest
from _brute import members, words

from expressivity import languages as L
from expressivity.languages.flare import FLARE, ORDER
from expressivity.languages.flare.perturb import random_edits


def _left_to_right(s: str) -> bool:
    m = re.fullmatch(r"([0-4](?:[-+*][0-4])*)=([0-4])", s)
    if m is None:
        return False
    expr = m.group(1)
    v = int(expr[0])
    for op, d in zip(expr[1::2], expr[2::2]):
        v = {"+": v + int(d), "-": v - int(d), "*": v * int(d)}[op] % 5
    return v == int(m.group(2))


def _dyck23(s: str) -> bool:
    stack = []
    for c in s:
        if c in "([":
            stack.append(c)
            if len(stack) > 3:
                return False
        elif not stack or {"(": ")", "[": "]"}[stack.pop()] != c:
            return False
    return not stack


def _stack(s: str) -> bool:
    m = re.fullmatch(r"([01]*)((?:\+[01]|-)*)#([01]*)", s)
    if m is None:
        return False
    stack = list(m.group(1))
    ops = re.findall(r"\+[01]|-", m.group(2))
    for op in ops:
        if op == "-":
            if not stack:
                return False
            stack.pop()
        else:
            stack.append(op[1])
    return m.group(3) == "".join(reversed(stack))


def _marked(g):
    def accepts(s: str) -> bool:
        if s.count("#") != 1:
            return False
        w, v = s.split("#")
        return v == g(w)
    return accepts


def _equation(op, f):
    def accepts(s: str) -> bool:
        pat = rf"([01]+){re.escape(op)}([01]+)=([01]+)" if op else r"([01]+)=([01]+)"
        m = re.fullmatch(pat, s)
        if m is None:
            return False
        nums = [int(x[::-1], 2) for x in m.groups()]
        return nums[-1] == f(*nums[:-1])
    return accepts


def _missing(s: str) -> bool:
    if len(s) % 2 or s.count("_") != 1:
        return False
    full = s.replace("_", "1")
    return full[: len(s) // 2] == full[len(s) // 2:]


# name → (independent definition, longest string enumerated, longest prefix whose next set is checked: short
# enough that a member extending it by one symbol is among the enumerated ones)
DEFINITIONS = {
    "flare.even_pairs": (lambda s: s == "" or s[0] == s[-1], 10, 8),
    "flare.repeat_01": (lambda s: s == "01" * (len(s) // 2), 10, 8),
    "flare.parity": (lambda s: s.count("1") % 2 == 1, 10, 8),
    "flare.cycle_navigation": (lambda s: len(s) >= 1 and set(s[:-1]) <= set("<=>")
                               and s[-1] == str((s.count(">") - s.count("<")) % 5), 5, 3),
    "flare.modular_arithmetic_simple": (_left_to_right, 5, 2),
    "flare.dyck_k_m": (_dyck23, 8, 4),
    "flare.first": (lambda s: s[:1] == "1", 10, 9),
    "flare.majority": (lambda s: s.count("1") > s.count("0"), 12, 4),
    "flare.stack_manipulation": (_stack, 8, 2),
    "flare.marked_reversal": (_marked(lambda w: "" if set(w) - set("01") else w[::-1]), 9, 3),
    "flare.unmarked_reversal": (lambda s: len(s) % 2 == 0 and s == s[::-1], 12, 5),
    "flare.marked_copy": (_marked(lambda w: "" if set(w) - set("01") else w), 9, 3),
    "flare.missing_duplicate_string": (_missing, 9, 2),
    "flare.odds_first": (_marked(lambda w: "" if set(w) - set("01") else w[0::2] + w[1::2]), 9, 3),
    "flare.binary_addition": (_equation("+", lambda x, y: x + y), 9, 2),
    "flare.binary_multiplication": (_equation("×", lambda x, y: x * y), 9, 2),
    "flare.compute_sqrt": (_equation("", math.isqrt), 9, 4),
    "flare.bucket_sort": (_marked(lambda w: "" if set(w) - set("12345") else "".join(sorted(w))), 7, 2),
}
assert set(DEFINITIONS) == set(FLARE)

_POOLS: dict[str, set[str]] = {}


def pool(name: str) -> set[str]:
    """Every member up to the enumerated length (cached per session)."""
    if name not in _POOLS:
        accepts, max_len, _ = DEFINITIONS[name]
        _POOLS[name] = members(accepts, L.get(name).alphabet, max_len)
    return _POOLS[name]


def _ids(lang, strings: list[str], n: int) -> np.ndarray:
    return lang.to_ids(strings) if n else np.zeros((len(strings), 0), dtype=np.int64)


@pytest.mark.parametrize("name", ORDER)
def test_membership_matches_the_definition_on_every_short_string(name):
    lang = L.get(name)
    accepts, max_len, _ = DEFINITIONS[name]
    expected = pool(name)
    for n in range(max_len + 1):
        strings = list(words(lang.alphabet, n))
        got = lang.accepts_ids(_ids(lang, strings, n))
        assert {s for s, ok in zip(strings, got) if ok} == {s for s in expected if len(s) == n}, n
        if n <= 5:
            assert [lang.accepts(s) for s in strings] == got.tolist()
    assert lang.accepts("?") is False or "?" in lang.alphabet


@pytest.mark.parametrize("name", ORDER)
def test_next_symbol_sets_are_the_valid_continuations(name):
    """Row t of next_symbol_sets is {a : s₁…s_t a starts a member} ∪ {EOS if s₁…s_t ∈ L},
    against the prefixes of every enumerated member."""
    lang = L.get(name)
    _, max_len, check = DEFINITIONS[name]
    members_ = pool(name)
    prefixes = {w[:t] for w in members_ for t in range(len(w) + 1)}
    for n in range(check + 1):
        strings = list(words(lang.alphabet, n))
        sets = lang.next_symbol_sets(_ids(lang, strings, n))
        for s, rows in zip(strings, sets):
            for t in range(n + 1):
                if t < n and s[:t + 1] not in prefixes and rows[t + 1:].any():
                    raise AssertionError(f"{name}: rows after the dead prefix {s[:t + 1]!r} are not empty")
                p = s[:t]
                if p not in prefixes:
                    break
                want = {a for a in lang.alphabet if p + a in prefixes} | ({"$"} if p in members_ else set())
                got = {a for a, ok in zip(lang.alphabet + "$", rows[t]) if ok}
                assert got == want, (name, p)


@pytest.mark.parametrize("name", ORDER)
def test_positives_are_members_and_their_symbols_are_in_the_next_sets(name):
    lang = L.get(name)
    accepts = DEFINITIONS[name][0]
    rng = np.random.default_rng(0)
    for n in lang.positive_lengths(0, 24)[::3]:
        ids = lang.sample_ids(rng, 8, n, True)
        assert all(accepts(s) for s in lang.to_strings(ids)), n
        sets = lang.next_symbol_sets(ids)
        assert sets[np.arange(8)[:, None], np.arange(n)[None, :], ids].all()  # every symbol was valid
        assert sets[:, n, -1].all()  # and EOS at the end (their check_next_symbols)
        table = lang.next_symbol_table(ids)
        np.testing.assert_allclose(table.sum(axis=-1), 1.0)


@pytest.mark.parametrize("name", ORDER)
def test_negatives_are_non_members_with_their_edit_counts(name):
    lang = L.get(name)
    accepts = DEFINITIONS[name][0]
    rng = np.random.default_rng(1)
    n = next(m for m in range(6, 14) if lang.supports(m, True) and lang.supports(m, False))
    ids, edits = lang.sample_negatives(rng, 400, n)
    assert ids.shape == (400, n) and not any(accepts(s) for s in lang.to_strings(ids))
    assert set(edits.tolist()) <= {-1} | set(range(1, 65))
    assert 0.1 < np.mean(edits > 0) < 0.95  # perturbed and uniform ones both occur
    if isinstance(lang, L.flare.FlareDFALanguage):  # k random edits: the distance to L is 1 … k
        dist = lang.edit_distance(ids)
        assert (dist >= 1).all() and (dist[edits > 0] <= edits[edits > 0]).all()


@pytest.mark.parametrize("name", [n for n in ORDER if FLARE[n].has_probability])
def test_probabilities_sum_to_one_over_the_range(name):
    """Σ P(s) over the members with a length in [lo, hi] is 1, and every member of that range
    has P(s) > 0 (their sampler reaches it)."""
    lang = L.get(name)
    lo, hi = 0, min(DEFINITIONS[name][1], 8)
    by_len: dict[int, list[str]] = {}
    for w in pool(name):
        if lo <= len(w) <= hi:
            by_len.setdefault(len(w), []).append(w)
    total = 0.0
    for n, strings in by_len.items():
        lp = lang.log_probability(_ids(lang, strings, n), lo, hi)
        assert np.isfinite(lp).all(), n
        total += np.exp(lp).sum()
    assert total == pytest.approx(1.0, abs=1e-9)
    non = [s for s in words(lang.alphabet, 3) if s not in pool(name)][:5]
    assert (lang.log_probability(lang.to_ids(non), lo, hi) == -np.inf).all()


@pytest.mark.parametrize("name", [n for n in ORDER if not FLARE[n].has_probability])
def test_languages_without_a_probability_say_so(name):
    lang = L.get(name)
    n = lang.positive_lengths(0, 9)[-1]
    with pytest.raises(ValueError, match="FLaRe defines no string probability"):
        lang.log_probability(lang.sample_ids(np.random.default_rng(0), 2, n, True), 0, 9)


def test_majority_and_marked_samplers_follow_their_distributions():
    rng = np.random.default_rng(2)
    maj = L.get("flare.majority")
    ones = maj.sample_ids(rng, 6000, 9, True).sum(axis=1)  # #1 uniform in 5 … 9
    assert set(ones.tolist()) == {5, 6, 7, 8, 9} and max(abs(np.mean(ones == k) - 0.2) for k in range(5, 10)) < 0.03
    copy = L.get("flare.marked_copy")
    counts = Counter(copy.sample(rng, 8000, 7, True))
    assert len(counts) == 8 and max(abs(c / 8000 - 1 / 8) for c in counts.values()) < 0.02
    md = L.get("flare.missing_duplicate_string")
    for s in md.sample(rng, 300, 8, True):
        assert s.count("_") == 1 and _missing(s)


def test_arithmetic_positives_follow_their_split():
    """x is never the longer operand; z has all the bits the split gave it; the square root's
    x ≤ 2^(2·bits of z) − 1."""
    rng = np.random.default_rng(3)
    add = L.get("flare.binary_addition")
    widths = Counter()
    for s in add.sample(rng, 2000, 14, True):
        x, y, z = re.fullmatch(r"([01]+)\+([01]+)=([01]+)", s).groups()
        widths[(min(len(x), len(y)), max(len(x), len(y)))] += 1
        assert int(z[::-1], 2) == int(x[::-1], 2) + int(y[::-1], 2)
    assert len(widths) > 5
    for s in L.get("flare.compute_sqrt").sample(rng, 500, 11, True):
        x, z = s.split("=")
        assert int(x[::-1], 2) <= 2 ** (2 * len(z)) - 1 and math.isqrt(int(x[::-1], 2)) == int(z[::-1], 2)


def test_range_positives_draw_lengths_as_their_sampler_does():
    rng = np.random.default_rng(4)
    copy = L.get("flare.marked_copy")
    lengths = Counter(len(p) for p in copy.sample_range_positives(rng, 6000, 0, 10))
    assert set(lengths) == {1, 3, 5, 7, 9} and max(abs(c / 6000 - 0.2) for c in lengths.values()) < 0.03
    stack = L.get("flare.stack_manipulation")  # (stack size, pushes) uniform over the bounds: not uniform lengths
    got = stack.sample_range_positives(rng, 3000, 0, 10)
    assert all(stack.accepts(stack.to_strings(p[None])[0]) for p in got)
    a_values = Counter(int(np.flatnonzero(np.r_[p, 4] >= 2)[0]) for p in got)  # initial stack sizes
    assert set(a_values) == {0, 1, 2, 3, 4} and max(abs(c / 3000 - 0.2) for c in a_values.values()) < 0.04


def test_fixed_length_perturbations_are_their_process_conditioned_on_the_length():
    """The batch negatives' edit counts at length n against their one-string process (positive
    of a uniform valid length, k ~ Geom(½) edits) kept when it ends at length n and is negative."""
    lang = L.get("flare.even_pairs")
    rng = np.random.default_rng(5)
    n, lo, hi = 6, 0, 14
    ref = Counter()
    starts = lang.sample_range_positives(rng, 150_000, lo, hi)
    for start, k in zip(starts, rng.geometric(0.5, size=len(starts))):
        s = random_edits(rng, start.tolist(), int(k), lo, hi, 2)
        if len(s) == n and not lang.accepts("".join(map(str, s))):
            ref[min(int(k), 6)] += 1
    assert sum(ref.values()) > 2500
    _, edits = lang.sample_negatives(np.random.default_rng(6), 12_000, n)
    got = Counter(min(int(k), 6) for k in edits if k > 0)
    tv = 0.5 * sum(abs(ref[k] / sum(ref.values()) - got[k] / sum(got.values())) for k in set(ref) | set(got))
    assert tv < 0.05, (ref, got)


def test_reuse_of_our_own_oracles_where_the_definitions_agree():
    """flare.parity/first/majority/dyck_k_m are ours; even pairs is our class 0; cycle
    navigation's last digit is our cycle_navigation of the moves; the marked languages' second
    half is our reverse_string / odds_first (paper order) / bucket_sort output."""
    for n in range(1, 9):
        for s in words("01", n):
            assert L.get("flare.parity").accepts(s) == L.get("parity").accepts(s)
            assert L.get("flare.first").accepts(s) == L.get("first").accepts(s)
            assert L.get("flare.majority").accepts(s) == L.get("majority").accepts(s)
            assert L.get("flare.even_pairs").accepts(s) == (L.get("even_pairs").output(s) == 0)
    for n in range(0, 7):
        for s in words("()[]", n):
            assert L.get("flare.dyck_k_m").accepts(s) == L.get("dyck", k=2, max_depth=3).accepts(s)
    cyc = L.get("cycle_navigation")
    for n in range(1, 6):
        for moves in words("<=>", n):
            final = cyc.output(moves.translate(str.maketrans("<=>", "-0+")))
            assert L.get("flare.cycle_navigation").accepts(moves + str(final))
    for w in words("01", 5):
        assert L.get("flare.marked_reversal").accepts(w + "#" + L.get("reverse_string").output(w))
        assert L.get("flare.odds_first").accepts(w + "#" + L.get("odds_first", order="paper").output(w))
        assert not L.get("flare.odds_first").accepts(w + "#" + L.get("odds_first").output(w)) or \
            L.get("odds_first").output(w) == L.get("odds_first", order="paper").output(w)


def test_dyck_k_m_parameters_and_bad_input():
    d = L.get("flare.dyck_k_m", k=3, m=2)
    assert d.alphabet == "()[]{}" and d.accepts("({})[]") and not d.accepts("(({}))")
    assert d.tokens["(2"] == "{" and d.flare_dir == "dyck-3-2"
    with pytest.raises(ValueError, match="unknown FLaRe language 'flare.palindrome'; choose one of: flare.even_pairs"):
        L.get("flare.palindrome")
    with pytest.raises(ValueError, match="unknown FLaRe language"):
        L.get_task("flare.copy", "recognition")
    with pytest.raises(ValueError, match=r"unknown parameters \['k'\]"):
        L.get("flare.parity", k=2)
    with pytest.raises(ValueError, match="no positive strings of length 4"):
        L.get("flare.marked_copy").sample(np.random.default_rng(0), 2, 4, True)
    with pytest.raises(ValueError, match="no strings of the language have a length in 2-2"):
        L.get("flare.marked_copy").sample_range_positives(np.random.default_rng(0), 2, 2, 2)
    assert L.LEVELS["flare.majority"] == "context-free" and L.LEVELS["flare.marked_copy"] == "context-sensitive"
    assert L.kinds_of("flare.parity") == ("recognition", "next_symbol")
