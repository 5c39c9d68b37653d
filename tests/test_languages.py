"""Languages against independent brute-force definitions and their generative processes."""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict

import numpy as np
import pytest
from scipy.stats import chisquare

from expressivity import languages as L
from expressivity.languages import EOS


# ---------------------------------------------------------------- independent references
def ref_parity(s):  # odd number of ones
    return sum(1 for c in s if c == "1") % 2 == 1


def ref_first(s):
    return len(s) > 0 and s[0] == "1"


def ref_majority(s):  # strictly more ones than zeros; ties out
    return sum(c == "1" for c in s) > sum(c == "0" for c in s)


def ref_dyck(s, pairs, max_depth=None):
    """Counting definition: repeatedly delete adjacent matched pairs; check depth via counts."""
    depth = 0
    for c in s:  # depth bound by counting, independent of bracket types
        depth += 1 if any(c == p[0] for p in pairs) else -1
        if depth < 0 or (max_depth is not None and depth > max_depth):
            return False
    w = s
    while True:
        v = w
        for p in pairs:
            v = v.replace(p, "")
        if v == w:
            return w == ""
        w = v


CASES = [
    ("parity", {}, ref_parity),
    ("first", {}, ref_first),
    ("majority", {}, ref_majority),
    ("dyck", {"k": 1}, lambda s: ref_dyck(s, ["()"])),
    ("dyck", {"k": 2}, lambda s: ref_dyck(s, ["()", "[]"])),
    ("dyck", {"k": 2, "max_depth": 2}, lambda s: ref_dyck(s, ["()", "[]"], 2)),
    ("dyck", {"k": 3}, lambda s: ref_dyck(s, ["()", "[]", "{}"])),
    ("dyck", {"k": 4, "max_depth": 2}, lambda s: ref_dyck(s, ["()", "[]", "{}", "<>"], 2)),
]
MAX_LEN = {1: 12, 2: 12, 4: 8, 6: 6, 8: 5}  # all strings up to this length, by alphabet size


def all_strings(alphabet, max_len):
    for n in range(max_len + 1):
        for t in itertools.product(alphabet, repeat=n):
            yield "".join(t)


@pytest.mark.parametrize("name,params,ref", CASES, ids=[f"{c[0]}{c[1]}" for c in CASES])
def test_membership_matches_brute_force_on_all_short_strings(name, params, ref):
    lang = L.get(name, **params)
    max_len = MAX_LEN[len(lang.alphabet)]  # 4^8 = 65536 strings for Dyck-2
    by_len = defaultdict(list)
    for s in all_strings(lang.alphabet, max_len):
        by_len[len(s)].append(s)
    for n, strings in by_len.items():
        expected = np.array([ref(s) for s in strings])
        assert [lang.accepts(s) for s in strings] == expected.tolist(), n
        if n:
            assert (lang.accepts_batch(strings) == expected).all(), n


def test_dyck2_known_examples():
    d = L.get("dyck", k=2)
    assert d.alphabet == "()[]"
    for s in ["", "()", "([])", "[()]", "()[]"]:
        assert d.accepts(s)
    for s in ["(][)", "([)]", ")(", "(", "(x)"]:
        assert not d.accepts(s)


def test_dyck_larger_k_alphabet():
    assert L.get("dyck", k=4).alphabet == "()[]{}<>"
    assert L.get("dyck", k=5).alphabet == "()[]{}<>aA"


@pytest.mark.parametrize("name,params,ref", CASES, ids=[f"{c[0]}{c[1]}" for c in CASES])
@pytest.mark.parametrize("length", [1, 2, 9, 30])
def test_samplers_give_length_and_class(name, params, ref, length):
    lang = L.get(name, **params)
    rng = np.random.default_rng(length)
    if lang.supports(length, True):
        pos = lang.sample(rng, 40, length, True)
        assert len(pos) == 40 and all(len(s) == length and ref(s) for s in pos)
    else:
        with pytest.raises(ValueError, match="no positive"):
            lang.sample(rng, 4, length, True)
    neg = lang.sample(rng, 40, length, False)
    assert len(neg) == 40 and all(len(s) == length and not ref(s) for s in neg)


def edit_distance_one_or_swap(a, b):
    diff = [i for i in range(len(a)) if a[i] != b[i]]
    return len(diff) <= 2


def test_negatives_include_near_misses():
    """At least a third of the negatives are one substitution/transposition from a positive."""
    rng = np.random.default_rng(1)
    for name, params, ref in CASES:
        lang = L.get(name, **params)
        neg = lang.sample(rng, 60, 10, False)
        near = 0
        for s in neg:  # a near-miss has a positive neighbour under one substitution or swap
            nbrs = {s[:i] + c + s[i + 1:] for i in range(len(s)) for c in lang.alphabet}
            nbrs |= {s[:i] + s[j] + s[i + 1:j] + s[i] + s[j + 1:] for i in range(len(s)) for j in range(i + 1, len(s))}
            near += any(ref(t) for t in nbrs)
        assert near >= 20, (name, near)


def test_dyck_negatives_include_swapped_types():
    rng = np.random.default_rng(2)
    d = L.get("dyck", k=2)
    neg = d.sample(rng, 300, 12, False)
    swapped = [s for s in neg if s.count("(") == s.count(")") and s.count("[") == s.count("]")
               and ref_dyck(s.replace("[", "(").replace("]", ")"), ["()"])]
    assert len(swapped) >= 30  # balanced as Dyck-1 but with bracket types crossed


def test_recognition_batches_are_balanced():
    for name, params, _ in CASES:
        task = L.get_task(name, "recognition", **params)
        rng = np.random.default_rng(0)
        batch = task.sample_batch(rng, 32, 8)
        assert batch["input"].shape == (32, 9) and batch["mask"].sum() == 32
        labels = batch["output"][:, -1].argmax(-1)
        assert int(labels.sum()) == 16
        strings = task.vocab.decode(batch["input"])
        assert [task.language.accepts(s) for s in strings] == labels.bool().tolist()


def test_bad_input():
    with pytest.raises(ValueError, match="unknown language"):
        L.get("palindrome")
    with pytest.raises(ValueError, match="k must be"):
        L.get("dyck", k=0)
    with pytest.raises(ValueError, match="no positive"):
        L.get("dyck").sample(np.random.default_rng(0), 3, 7, True)
    with pytest.raises(ValueError, match="kind"):
        L.get_task("parity", "translation")


# ------------------------------------------------------------------ generative processes
PROCESS_CASES = [("parity", {}), ("first", {}), ("majority", {}), ("dyck", {"k": 2}),
                 ("dyck", {"k": 2, "max_depth": 2, "p_open": 0.6}), ("dyck", {"k": 3})]


@pytest.mark.parametrize("name,params", PROCESS_CASES)
def test_next_symbol_distributions_sum_to_one_and_only_continue_to_members(name, params):
    lang = L.get(name, **params)
    rng = np.random.default_rng(3)
    for s in lang.generate(rng, 30, max_length=20):
        assert lang.accepts(s) or len(s) == 20
        for t in range(len(s) + 1):
            dist = lang.next_symbol_distribution(s[:t])
            assert set(dist) == set(lang.alphabet) | {EOS}
            assert abs(sum(dist.values()) - 1) < 1e-12
            assert (dist[EOS] > 0) == lang.accepts(s[:t])  # can end exactly at members


@pytest.mark.parametrize("name,params", PROCESS_CASES)
def test_generator_matches_next_symbol_distribution(name, params):
    """Empirical next-symbol frequencies of the generator vs p*: chi-square per frequent prefix."""
    lang = L.get(name, **params)
    rng = np.random.default_rng(4)
    counts: dict[str, Counter] = defaultdict(Counter)
    for s in lang.generate(rng, 6000, max_length=12):
        ended = len(s) < 12
        for t in range(len(s)):
            counts[s[:t]][s[t]] += 1
        if ended:
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
            obs = [c[a] for a in support]
            exp = [p[a] * n for a in support]
            assert chisquare(obs, exp).pvalue > 1e-4, (prefix, c, p)
        tested += 1
    assert tested >= 3


def test_dyck_fixed_length_positives_uniform():
    """With unbounded depth the process conditioned on length n is uniform over Dyck-2 ∩ Σ^n."""
    d = L.get("dyck", k=2)
    rng = np.random.default_rng(5)
    support = [s for s in all_strings(d.alphabet, 6) if len(s) == 6 and ref_dyck(s, ["()", "[]"])]
    assert len(support) == 5 * 8  # Catalan(3) · 2^3
    c = Counter(d.sample(rng, 8000, 6, True))
    assert set(c) == set(support)
    assert chisquare([c[s] for s in support]).pvalue > 1e-4


def test_bounded_dyck_fixed_length_matches_conditioned_process():
    """Dyck-(2, 2) positives of length 6 have the process probabilities, renormalised."""
    d = L.get("dyck", k=2, max_depth=2, p_open=0.6)
    rng = np.random.default_rng(6)
    support = [s for s in all_strings(d.alphabet, 6) if len(s) == 6 and ref_dyck(s, ["()", "[]"], 2)]

    def prob(s):
        p = 1.0
        for t in range(len(s) + 1):
            p *= d.next_symbol_distribution(s[:t])[s[t] if t < len(s) else EOS]
        return p

    w = np.array([prob(s) for s in support])
    c = Counter(d.sample(rng, 8000, 6, True))
    assert set(c) <= set(support)
    assert chisquare([c[s] for s in support], w / w.sum() * 8000).pvalue > 1e-4


def stack_reference_batch(ids, k):
    """Independent vectorised stack machine: push opens (even ids), pop on closes (odd ids)."""
    count, n = ids.shape
    stack = np.zeros((count, n + 1), dtype=np.int64)
    depth = np.zeros(count, dtype=np.int64)
    ok = np.ones(count, dtype=bool)
    rows = np.arange(count)
    for t in range(n):
        sym = ids[:, t]
        opening = sym % 2 == 0
        stack[rows[opening], depth[opening]] = sym[opening]
        top = stack[rows, np.maximum(depth - 1, 0)]
        ok &= opening | ((depth > 0) & (top + 1 == sym))
        depth = np.where(opening, depth + 1, np.maximum(depth - 1, 0))
    return ok & (depth == 0)


def test_dyck2_vectorised_membership_all_strings_to_9_and_hard_cases_at_12():
    """All 4^n strings for n <= 9; at n = 12 every type assignment of every Dyck-1 path
    (132 paths × 2^12 types), i.e. all strings whose bracket *shape* is balanced."""
    d = L.get("dyck", k=2)
    for n in range(1, 10):
        ids = (np.arange(4 ** n)[:, None] // 4 ** np.arange(n)[::-1]) % 4  # all of {0..3}^n
        assert (d.accepts_ids(ids) == stack_reference_batch(ids, 2)).all(), n
    shapes = [p for p in itertools.product((0, 1), repeat=12) if ref_dyck("".join("()"[c] for c in p), ["()"])]
    assert len(shapes) == 132
    types = np.array(list(itertools.product((0, 1), repeat=12)), dtype=np.int64)  # (4096, 12)
    ids = (np.array(shapes)[:, None, :] + 2 * types[None, :, :]).reshape(-1, 12)
    got = d.accepts_ids(ids)
    assert (got == stack_reference_batch(ids, 2)).all()
    assert got.sum() == 132 * 2 ** 6  # each of the 6 pairs picks its type freely


@pytest.mark.parametrize("name,params,ref", CASES, ids=[f"{c[0]}{c[1]}" for c in CASES])
def test_support_matches_brute_force(name, params, ref):
    """supports(n, positive) is True exactly when a string of that class and length exists."""
    lang = L.get(name, **params)
    for n in range(0, min(7, MAX_LEN[len(lang.alphabet)] + 1)):
        members = [ref(s) for s in all_strings(lang.alphabet, n) if len(s) == n]
        assert lang.supports(n, True) == any(members), (n, "positive")
        assert lang.supports(n, False) == (not all(members)), (n, "negative")
