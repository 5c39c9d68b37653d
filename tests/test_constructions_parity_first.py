"""PARITY and FIRST constructions (Chiang & Cholak 2022 style): accuracy and cross-entropy.

Reference membership is brute force below; cross-entropy is checked against the closed
forms of our weights: without layer norm |z| = 1/(2(n+1)²) (PARITY) and 1/(n+1) (FIRST);
with post-LN ε = 0 on the doubled stream |z| = √(d/2): log2(1 + e^−√10) = 0.0598 bits
(PARITY, d = 20) and log2(1 + e^−√6) = 0.1195 bits (FIRST, d = 12), the shared note's values.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from expressivity import constructions

LENGTHS = (10, 100, 1000)
VARIANTS = [{"layer_norm": False}, {"layer_norm": True, "eps": 0.0}, {"layer_norm": True, "eps": 1e-5}]


def in_parity(s: str) -> bool:
    return sum(c == "1" for c in s) % 2 == 1


def in_first(s: str) -> bool:
    return len(s) > 0 and s[0] == "1"


ORACLE = {"parity": in_parity, "first": in_first}


def ce_bits(margin: float) -> float:
    return math.log2(1.0 + math.exp(-margin))


def random_strings(rng, n: int, count: int) -> list[str]:
    return ["".join(row) for row in rng.choice(["0", "1"], size=(count, n))]


def balanced(rng, name: str, n: int, per_class: int) -> list[str]:
    """per_class members and per_class non-members of length n (rejection sampling)."""
    pos, neg = [], []
    while len(pos) < per_class or len(neg) < per_class:
        for s in random_strings(rng, n, 4 * per_class):
            (pos if ORACLE[name](s) else neg).append(s)
    return pos[:per_class] + neg[:per_class]


@pytest.fixture(scope="module")
def models():
    return {(name, i): constructions.get(name, **v) for name in ORACLE for i, v in enumerate(VARIANTS)}


@pytest.mark.parametrize("name", ["parity", "first"])
@pytest.mark.parametrize("variant", range(len(VARIANTS)))
def test_exact_on_all_short_strings(models, name, variant):
    c = models[name, variant]
    strings = ["".join(p) for n in range(1, 11) for p in itertools.product("01", repeat=n)]
    truth = np.array([ORACLE[name](s) for s in strings])
    p = c.accept_probability(strings)
    assert np.array_equal(p > 0.5, truth)


@pytest.mark.parametrize("name", ["parity", "first"])
@pytest.mark.parametrize("variant", range(len(VARIANTS)))
def test_accuracy_one_at_long_lengths(models, name, variant):
    rng = np.random.default_rng(1000 + variant)
    c = models[name, variant]
    for n, per_class in zip(LENGTHS, (40, 10, 3)):
        strings = balanced(rng, name, n, per_class)
        truth = np.array([ORACLE[name](s) for s in strings])
        assert np.array_equal(c.predict(strings), truth), (name, VARIANTS[variant], n)


@pytest.mark.parametrize("name, margin", [
    ("parity", lambda n: 1.0 / (2 * (n + 1) ** 2)),
    ("first", lambda n: 1.0 / (n + 1)),
])
def test_without_layer_norm_margin_and_cross_entropy_go_to_one_bit(models, name, margin):
    rng = np.random.default_rng(7)
    c = models[name, 0]
    ces = []
    for n, per_class in zip(LENGTHS, (40, 10, 3)):
        strings = balanced(rng, name, n, per_class)
        z = c.logits(strings)
        truth = np.array([ORACLE[name](s) for s in strings])
        np.testing.assert_allclose(np.abs(z), margin(n), rtol=1e-6)
        ce = c.cross_entropy_bits(strings, truth)
        assert ce == pytest.approx(ce_bits(margin(n)), abs=1e-9)
        ces.append(ce)
    assert ces[0] < ces[1] < ces[2] < 1.0
    assert ces[2] > 0.999  # Hahn: confidence → 1/2 as n grows


@pytest.mark.parametrize("name, d, note_bits", [("parity", 20, 0.0598), ("first", 12, 0.1195)])
def test_layer_norm_eps0_is_length_independent(models, name, d, note_bits):
    rng = np.random.default_rng(11)
    c = models[name, 1]
    assert c.transformer.cfg.d_model == d and c.transformer.cfg.ln_eps == 0.0
    expected = ce_bits(math.sqrt(d / 2))
    assert expected == pytest.approx(note_bits, abs=5e-5)
    for n, per_class in zip(LENGTHS, (40, 10, 3)):
        strings = balanced(rng, name, n, per_class)
        truth = np.array([ORACLE[name](s) for s in strings])
        np.testing.assert_allclose(np.abs(c.logits(strings)), math.sqrt(d / 2), rtol=1e-8)
        assert c.cross_entropy_bits(strings, truth) == pytest.approx(expected, abs=1e-8)


@pytest.mark.parametrize("name, floor", [("parity", 0.99), ("first", 0.5)])
def test_layer_norm_eps_positive_brings_back_length_dependence(models, name, floor):
    rng = np.random.default_rng(13)
    c = models[name, 2]
    ces = []
    for n, per_class in zip(LENGTHS, (40, 10, 3)):
        strings = balanced(rng, name, n, per_class)
        ces.append(c.cross_entropy_bits(strings, np.array([ORACLE[name](s) for s in strings])))
    assert ces[0] < ces[1] < ces[2]
    assert ces[0] > ce_bits(math.sqrt(c.transformer.cfg.d_model / 2))  # ε only lowers |z|
    assert ces[2] > floor


def test_first_rejects_empty_string(models):
    with pytest.raises(ValueError, match="length n >= 1"):
        models["first", 0].logits([""])


def test_parity_empty_string_is_even(models):
    assert models["parity", 0].predict([""]).tolist() == [False]


def test_mixed_lengths_in_one_call(models):
    strings = ["1", "10", "0110", "111", "0" * 37 + "1"]
    for name, oracle in ORACLE.items():
        assert models[name, 1].predict(strings).tolist() == [oracle(s) for s in strings]
