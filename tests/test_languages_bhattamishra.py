"""Bhattamishra et al. 2020's languages (Tomita 1–7, aⁿbⁿ…, Shuffle-Dyck-k) and Dyck with up to
256 bracket types: membership against independent definitions on all short strings, samplers,
next-symbol distributions, and the conditioned fixed-length samplers."""

from __future__ import annotations

import itertools
import re
from collections import Counter, defaultdict

import numpy as np
import pytest
from scipy.stats import chisquare

from expressivity import languages as L
from expressivity.languages import EOS, PAIRS


def runs(s):
    return [(c, len(list(g))) for c, g in itertools.groupby(s)]


def ref_tomita3(s):  # no odd run of 1s directly followed by an odd run of 0s (maximal runs)
    r = runs(s)
    return not any(a == ("1", a[1]) and a[1] % 2 and b[0] == "0" and b[1] % 2 for a, b in zip(r, r[1:]))


def ref_blocks(letters):
    def ref(s):
        m = len(s) // len(letters)
        return len(s) % len(letters) == 0 and all(s[i * m:(i + 1) * m] == c * m for i, c in enumerate(letters))
    return ref


def ref_shuffle(k):
    def ref(s):  # each type's subsequence, with its brackets renamed to (), is Dyck-1 by pair deletion
        for j in range(k):
            sub = "".join("(" if c == PAIRS[j][0] else ")" for c in s if c in PAIRS[j])
            while "()" in sub:
                sub = sub.replace("()", "")
            if sub:
                return False
        return all(any(c in p for p in PAIRS[:k]) for c in s)
    return ref


CASES = [
    ("tomita1", {}, lambda s: "0" not in s),
    ("tomita2", {}, lambda s: re.fullmatch("(10)*", s) is not None),
    ("tomita3", {}, ref_tomita3),
    ("tomita4", {}, lambda s: "000" not in s),
    ("tomita5", {}, lambda s: s.count("0") % 2 == 0 and s.count("1") % 2 == 0),
    ("tomita6", {}, lambda s: (s.count("0") - s.count("1")) % 3 == 0),
    ("tomita7", {}, lambda s: re.fullmatch("0*1*0*1*", s) is not None),
    ("anbn", {}, ref_blocks("ab")),
    ("anbncn", {}, ref_blocks("abc")),
    ("anbncndn", {}, ref_blocks("abcd")),
    ("shuffle_dyck", {"k": 1}, ref_shuffle(1)),
    ("shuffle_dyck", {"k": 2}, ref_shuffle(2)),
    ("shuffle_dyck", {"k": 3, "p_open": 0.4}, ref_shuffle(3)),
]
IDS = [f"{c[0]}{c[1] or ''}" for c in CASES]
MAX_LEN = {2: 12, 3: 8, 4: 7, 6: 6}


def all_strings(alphabet, n):
    return ["".join(t) for t in itertools.product(alphabet, repeat=n)]


@pytest.mark.parametrize("name,params,ref", CASES, ids=IDS)
def test_membership_and_support_match_the_definition_on_all_short_strings(name, params, ref):
    lang = L.get(name, **params)
    for n in range(MAX_LEN[len(lang.alphabet)] + 1):
        strings = all_strings(lang.alphabet, n)
        expected = [ref(s) for s in strings]
        assert [lang.accepts(s) for s in strings] == expected, n
        if n:
            assert lang.accepts_batch(strings).tolist() == expected, n
        assert lang.supports(n, True) == any(expected) and lang.supports(n, False) == (not all(expected)), n


def test_worked_examples():
    inside = {"tomita1": ["111"], "tomita2": ["1010"], "tomita3": ["1100", "100"], "tomita4": ["1001"],
              "tomita5": ["0110"], "tomita6": ["000", "01"], "tomita7": ["0110"], "anbn": ["aabb", ""],
              "anbncn": ["aabbcc"], "anbncndn": ["abcd"], "shuffle_dyck": ["([)]", "([])", ""]}
    outside = {"tomita1": ["101"], "tomita2": ["1001"], "tomita3": ["10", "11101"], "tomita4": ["10001"],
               "tomita5": ["011"], "tomita6": ["0"], "tomita7": ["1010"], "anbn": ["aab", "abab", "ba"],
               "anbncn": ["aabbc", "abcabc"], "anbncndn": ["abc"], "shuffle_dyck": [")(", "([)"]}
    for name, strings in inside.items():
        assert all(L.get(name).accepts(s) for s in strings), name
    for name, strings in outside.items():
        assert not any(L.get(name).accepts(s) for s in strings), name


@pytest.mark.parametrize("name,params,ref", CASES, ids=IDS)
@pytest.mark.parametrize("length", [1, 2, 6, 12, 30])
def test_samplers_give_length_and_class(name, params, ref, length):
    lang = L.get(name, **params)
    rng = np.random.default_rng(length)
    for positive in (True, False):
        if not lang.supports(length, positive):
            with pytest.raises(ValueError, match="no (positive|negative)"):
                lang.sample(rng, 4, length, positive)
            continue
        got = lang.sample(rng, 40, length, positive)
        assert len(got) == 40 and all(len(s) == length and ref(s) == positive for s in got)


@pytest.mark.parametrize("name", [f"tomita{i}" for i in range(1, 8)])
def test_dfa_fixed_length_samplers_are_uniform(name):
    """Positives uniform over L ∩ Σ⁶, negatives' uniform half over Σ⁶ \\ L (χ²)."""
    lang = L.get(name)
    rng = np.random.default_rng(7)
    strings = all_strings("01", 6)
    for positive in (True, False):
        support = [s for s in strings if lang.accepts(s) == positive]
        if len(support) < 2:
            continue
        ids = lang._sample_positive_ids(rng, 3000, 6) if positive else lang._uniform_negative_ids(rng, 3000, 6)
        got = Counter(lang.to_strings(ids))
        assert set(got) == set(support)
        assert chisquare([got[s] for s in support]).pvalue > 1e-4


@pytest.mark.parametrize("name,params,ref", CASES, ids=IDS)
def test_next_symbol_distributions_sum_to_one_and_end_only_at_members(name, params, ref):
    lang = L.get(name, **params)
    rng = np.random.default_rng(3)
    for s in lang.generate(rng, 25, max_length=16):
        assert ref(s) or len(s) == 16
        for t in range(len(s) + 1):
            dist = lang.next_symbol_distribution(s[:t])
            assert abs(sum(dist.values()) - 1) < 1e-12
            assert (dist[EOS] > 0) == ref(s[:t])


@pytest.mark.parametrize("name,params", [("tomita3", {}), ("tomita6", {"p_end": 0.3}), ("anbncn", {}),
                                         ("shuffle_dyck", {"k": 2})])
def test_generator_matches_next_symbol_distribution(name, params):
    lang = L.get(name, **params)
    rng = np.random.default_rng(4)
    counts: dict[str, Counter] = defaultdict(Counter)
    for s in lang.generate(rng, 4000, max_length=10):
        for t in range(len(s)):
            counts[s[:t]][s[t]] += 1
        if len(s) < 10:
            counts[s][EOS] += 1
    tested = 0
    for prefix, c in counts.items():
        n = sum(c.values())
        if n < 300:
            continue
        p = lang.next_symbol_distribution(prefix)
        support = [a for a in p if p[a] > 0]
        assert set(c) <= set(support), (prefix, c, p)
        if len(support) > 1:
            assert chisquare([c[a] for a in support], [p[a] * n for a in support]).pvalue > 1e-4, (prefix, c, p)
        tested += 1
    assert tested >= 3


@pytest.mark.parametrize("k,p_open", [(2, 0.5), (3, 0.6)])
def test_shuffle_dyck_fixed_length_positives_follow_the_conditioned_process(k, p_open):
    lang = L.get("shuffle_dyck", k=k, p_open=p_open)
    rng = np.random.default_rng(6)
    n = 6 if k == 2 else 4
    support = [s for s in all_strings(lang.alphabet, n) if lang.accepts(s)]

    def prob(s):
        p = 1.0
        for t in range(len(s) + 1):
            p *= lang.next_symbol_distribution(s[:t])[s[t] if t < len(s) else EOS]
        return p

    w = np.array([prob(s) for s in support])
    got = Counter(lang.sample(rng, 6000, n, True))
    assert set(got) == set(support)
    assert chisquare([got[s] for s in support], w / w.sum() * 6000).pvalue > 1e-4
    assert any(lang.accepts(s) and not L.get("dyck", k=k).accepts(s) for s in got)  # crossing strings occur


def test_dyck_up_to_256_types():
    assert len(PAIRS) == 256 and len(set("".join(PAIRS))) == 512
    assert all(len(p) == 2 for p in PAIRS)
    assert L.get("dyck", k=2).alphabet == "()[]" and L.get("dyck", k=30).alphabet.endswith("zZ")
    d = L.get("dyck", k=256)
    assert len(d.alphabet) == 512
    rng = np.random.default_rng(8)
    pos, neg = d.sample(rng, 50, 40, True), d.sample(rng, 50, 40, False)

    def stack_ref(s):
        stack = []
        for c in s:
            i = d.alphabet.index(c)
            if i % 2 == 0:
                stack.append(i + 1)
            elif not stack or stack.pop() != i:
                return False
        return not stack

    assert all(stack_ref(s) for s in pos) and not any(stack_ref(s) for s in neg)
    assert d.accepts_batch(pos).all() and not d.accepts_batch(neg).any()
    assert max(d.alphabet.index(c) for s in pos for c in s) > 60  # high types really occur
    task = L.get_task("dyck", "next_symbol", k=256)
    b = task.sample_batch(rng, 4, 20)
    assert b["output"].shape == (4, 21, 513)
    assert all(d.accepts(s) for s in task.vocab.decode(b["input"]))
    with pytest.raises(ValueError, match="k must be an int in"):
        L.get("dyck", k=257)
    with pytest.raises(ValueError, match="shuffle_dyck: k must be an integer"):
        L.get("shuffle_dyck", k=0.5)
