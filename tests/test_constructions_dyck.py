"""Dyck-(k, D) hard-attention recogniser against a brute-force stack membership test."""

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


@pytest.mark.parametrize("D", [1, 2, 3])
def test_k1_exact_on_all_strings_up_to_12(D):
    c = constructions.get("dyck", k=1, max_depth=D, max_length=16)
    assert c.attention == "hardmax" and c.transformer.cfg.attention == "hardmax"
    strings = all_strings(c.alphabet, 12)
    truth = np.array([member(s, 1, D) for s in strings])
    assert truth.sum() > 1
    assert np.array_equal(c.accept_probability(strings) > 0.5, truth)


@pytest.mark.parametrize("D", [1, 2, 3])
def test_k2_exact_on_all_short_strings_and_hard_cases_up_to_12(D):
    rng = np.random.default_rng(D)
    c = constructions.get("dyck", k=2, max_depth=D, max_length=16)
    strings = all_strings(c.alphabet, 6)
    # lengths 7..12: every Dyck-1 shape of depth ≤ D + 1 with random bracket types, plus random strings
    for n in range(7, 13):
        for shape in itertools.product("()", repeat=n):
            s = "".join(shape)
            if member(s, 1, D + 1):
                for _ in range(3):
                    types = rng.integers(0, 2, size=n)
                    strings.append("".join(PAIRS[t][0 if ch == "(" else 1] for ch, t in zip(s, types)))
                strings.append("".join(PAIRS[1][0 if ch == "(" else 1] if i % 2 else ch for i, ch in enumerate(s)))
        strings += ["".join(r) for r in rng.choice(list(c.alphabet), size=(100, n))]
    truth = np.array([member(s, 2, D) for s in strings])
    assert truth.sum() > 10 and (~truth).sum() > 1000
    assert np.array_equal(c.predict(strings), truth)


def test_sampled_strings_up_to_length_1000():
    rng = np.random.default_rng(5)
    k, D = 2, 3
    c = constructions.get("dyck", k=k, max_depth=D)
    lang = c.language
    for n, count in ((20, 40), (100, 10), (1000, 3)):
        strings = lang.sample(rng, count, n, positive=True) + lang.sample(rng, count, n, positive=False)
        truth = np.array([member(s, k, D) for s in strings])
        assert truth[:count].all() and not truth[count:].any()  # the sampler agrees with brute force
        assert np.array_equal(c.predict(strings), truth), n


def test_logit_is_plus_minus_scale():
    c = constructions.get("dyck", k=1, max_depth=2, scale=3.0)
    z = c.logits(["()", "(", "(())", "((()))", ")("])
    assert z.tolist() == [3.0, -3.0, 3.0, -3.0, -3.0]


def test_too_long_and_foreign_symbols_rejected():
    c = constructions.get("dyck", k=1, max_depth=1, max_length=4)
    with pytest.raises(ValueError, match="max_length"):
        c.logits(["()()()"])
    with pytest.raises(ValueError, match="alphabet"):
        c.logits(["(]"])


# ------------------------------------------------------------------ property test, larger k and D

_BIG: dict = {}


def _big(k: int, D: int):
    if (k, D) not in _BIG:
        _BIG[k, D] = constructions.get("dyck", k=k, max_depth=D, max_length=64)
    return _BIG[k, D]


@st.composite
def near_dyck(draw):
    """A random Dyck-(k, D+1) word with a few random edits: members and near-misses."""
    k = draw(st.integers(1, 4))
    D = draw(st.integers(1, 5))
    alphabet = "".join(PAIRS[:k])
    stack, out = [], []
    for _ in range(draw(st.integers(0, 30))):
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


@settings(max_examples=40, deadline=None)
@given(near_dyck())
def test_property_matches_brute_force(case):
    k, D, s = case
    assert _big(k, D).predict([s]).tolist() == [member(s, k, D)]
