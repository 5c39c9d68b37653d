"""Dyck-(k, D) with D + 1 hard-attention layers (method="yao") against a brute-force stack."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from _dyck_reference import (
    all_strings,
    assert_rejects_too_long_and_foreign,
    assert_sampled_strings_match,
    balanced_words,
    member,
    near_dyck,
)
from hypothesis import given, settings

from expressivity import constructions


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
        assert_sampled_strings_match(yao(k, D), k, D, rng)


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
    assert_rejects_too_long_and_foreign(yao(1, 1, max_length=4))


@functools.cache
def _big(k: int, D: int):
    return yao(k, D, max_length=64)


@settings(max_examples=30, deadline=None)
@given(near_dyck(max_k=3, max_steps=24))
def test_property_matches_brute_force(case):
    k, D, s = case
    assert _big(k, D).predict([s]).tolist() == [member(s, k, D)]
