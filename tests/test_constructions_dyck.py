"""Dyck-(k, D) hard-attention recogniser against a brute-force stack membership test."""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest
from _dyck_reference import (
    all_strings,
    assert_rejects_too_long_and_foreign,
    assert_sampled_strings_match,
    member,
    near_dyck,
)
from hypothesis import given, settings

from expressivity import constructions
from expressivity.languages import PAIRS


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
    k, D = 2, 3
    assert_sampled_strings_match(constructions.get("dyck", k=k, max_depth=D), k, D, np.random.default_rng(5))


def test_logit_is_plus_minus_scale():
    c = constructions.get("dyck", k=1, max_depth=2, scale=3.0)
    z = c.logits(["()", "(", "(())", "((()))", ")("])
    assert z.tolist() == [3.0, -3.0, 3.0, -3.0, -3.0]


def test_too_long_and_foreign_symbols_rejected():
    assert_rejects_too_long_and_foreign(constructions.get("dyck", k=1, max_depth=1, max_length=4))


# ------------------------------------------------------------------ property test, larger k and D

@functools.cache
def _big(k: int, D: int):
    return constructions.get("dyck", k=k, max_depth=D, max_length=64)


@settings(max_examples=40, deadline=None)
@given(near_dyck(max_k=4, max_steps=30))
def test_property_matches_brute_force(case):
    k, D, s = case
    assert _big(k, D).predict([s]).tolist() == [member(s, k, D)]
