"""Dyck-(k, D) with D + 1 hard-attention layers (method="yao") against a brute-force stack."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from expressivity import constructions
from expressivity.languages import PAIRS


def member(s: str, k: int, D: int) -> bool:
    """Brute force: push on open, pop a matching open on close, height ≤ D, empty at the end."""
    opens = {p[0]: t for t, p in enumerate(PAIRS[:k])}
    closes = {p[1]: t for t, p in enumerate(PAIRS[:k])}
    stack: list[int] = []
    for ch in s:
        if ch in opens:
            stack.append(opens[ch])
            if len(stack) > D:
                return False
        elif not stack or stack.pop() != closes[ch]:
            return False
    return not stack


def all_strings(alphabet: str, max_len: int) -> list[str]:
    return ["".join(p) for n in range(max_len + 1) for p in itertools.product(alphabet, repeat=n)]


def balanced_words(k: int, n: int, max_height: int) -> list[str]:
    """Every balanced word over k pair types of length n with stack height ≤ max_height."""
    out = []
    for shape in itertools.product((0, 1), repeat=n):  # 0 = open, 1 = close
        h, ok = 0, True
        for x in shape:
            h += 1 if x == 0 else -1
            if h < 0 or h > max_height:
                ok = False
                break
        if not ok or h != 0:
            continue
        n_pairs = n // 2
        for types in itertools.product(range(k), repeat=n_pairs):
            stack, it, word = [], iter(types), []
            for x in shape:
                if x == 0:
                    t = next(it)
                    stack.append(t)
                    word.append(PAIRS[t][0])
                else:
                    word.append(PAIRS[stack.pop()][1])
            out.append("".join(word))
    return out


def yao(k: int, D: int, **kw):
    return constructions.get("dyck", k=k, max_depth=D, method="yao", **kw)


@pytest.mark.parametrize("D", [1, 2, 3])
def test_k1_exact_on_all_strings_up_to_12(D):
    c = yao(1, D, max_length=12)
    assert c.attention == "hardmax" and c.transformer.cfg.attention == "hardmax"
    assert c.transformer.cfg.n_layers == D + 1
    strings = all_strings(c.alphabet, 12)
    truth = np.array([member(s, 1, D) for s in strings])
    assert truth.sum() > 1
    assert np.array_equal(c.predict(strings), truth)


@pytest.mark.parametrize("D", [1, 2, 3])
def test_k2_exact_on_all_strings_up_to_7_and_balanced_words_up_to_12(D):
    rng = np.random.default_rng(10 + D)
    c = yao(2, D, max_length=12)
    assert c.transformer.cfg.n_layers == D + 1
    strings = all_strings(c.alphabet, 7)
    for n in range(8, 13, 2):
        words = balanced_words(2, n, D + 1)  # members and one-too-deep words
        strings += words
        for w in rng.choice(len(words), size=min(len(words), 400), replace=False):  # one substitution each
            s = list(words[w])
            s[rng.integers(n)] = rng.choice(list(c.alphabet))
            strings.append("".join(s))
    for n in range(8, 13):
        strings += ["".join(r) for r in rng.choice(list(c.alphabet), size=(100, n))]
    truth = np.array([member(s, 2, D) for s in strings])
    assert truth.sum() > 10 and (~truth).sum() > 1000
    assert np.array_equal(c.predict(strings), truth)


def test_sampled_strings_up_to_length_1000():
    rng = np.random.default_rng(7)
    for k, D in ((1, 3), (2, 3)):
        c = yao(k, D)
        for n, count in ((20, 40), (100, 10), (1000, 3)):
            pos = c.language.sample(rng, count, n, positive=True)
            neg = c.language.sample(rng, count, n, positive=False)
            truth = np.array([member(s, k, D) for s in pos + neg])
            assert truth[:count].all() and not truth[count:].any()  # the sampler agrees with brute force
            assert np.array_equal(c.predict(pos + neg), truth), (k, D, n)


def test_sizes_logits_and_default_method():
    for D in (1, 2, 3, 5):
        cfg = yao(2, D, max_length=32).transformer.cfg
        assert (cfg.n_layers, cfg.attention, cfg.causal) == (D + 1, "hardmax", True)
    assert constructions.get("dyck", k=2, max_depth=5).transformer.cfg.n_layers == 4  # default: depth lookup
    c = yao(1, 2, scale=3.0, max_length=8)
    assert c.params["method"] == "yao"
    z = c.logits(["()", "(", "(())", "((()))", ")(", ""])
    np.testing.assert_allclose(z, [3.0, -3.0, 3.0, -3.0, -3.0, 3.0], atol=1e-9)


def test_bad_input():
    with pytest.raises(ValueError, match="method"):
        constructions.get("dyck", method="cancel")
    with pytest.raises(ValueError, match="max_depth"):
        yao(2, 0)
    c = yao(1, 1, max_length=4)
    with pytest.raises(ValueError, match="max_length"):
        c.logits(["()()()"])
    with pytest.raises(ValueError, match="alphabet"):
        c.logits(["(]"])


_BIG: dict = {}


@st.composite
def near_dyck(draw):
    """A random Dyck-(k, D+1) word with a few random edits: members and near misses."""
    k = draw(st.integers(1, 3))
    D = draw(st.integers(1, 5))
    alphabet = "".join(PAIRS[:k])
    stack, out = [], []
    for _ in range(draw(st.integers(0, 24))):
        if stack and (len(stack) > D or draw(st.booleans())):
            out.append(PAIRS[stack.pop()][1])
        else:
            t = draw(st.integers(0, k - 1))
            stack.append(t)
            out.append(PAIRS[t][0])
    out += [PAIRS[t][1] for t in reversed(stack)]
    for _ in range(draw(st.integers(0, 2))):
        if out:
            out[draw(st.integers(0, len(out) - 1))] = draw(st.sampled_from(alphabet))
    return k, D, "".join(out)


@settings(max_examples=30, deadline=None)
@given(near_dyck())
def test_property_matches_brute_force(case):
    k, D, s = case
    if (k, D) not in _BIG:
        _BIG[k, D] = yao(k, D, max_length=64)
    assert _BIG[k, D].predict([s]).tolist() == [member(s, k, D)]
