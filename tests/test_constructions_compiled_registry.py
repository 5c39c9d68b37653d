"""parity-compiled (exact for every n ≤ N, size grows with N) and the constructions registry."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from expressivity import constructions
from expressivity.transformer import Transformer


def odd(s: str) -> bool:
    return s.count("1") % 2 == 1


@pytest.mark.parametrize("method", ["interpolate", "sawtooth"])
def test_exact_on_all_strings_up_to_12(method):
    c = constructions.get("parity-compiled", max_length=12, method=method)
    assert c.attention == "hardmax" and c.transformer.cfg.attention == "hardmax"
    strings = ["".join(p) for n in range(13) for p in itertools.product("01", repeat=n)]
    z = c.logits(strings)
    truth = np.array([odd(s) for s in strings])
    assert np.array_equal(c.accept_probability(strings) > 0.5, truth)
    np.testing.assert_allclose(z, np.where(truth, 1.0, -1.0), atol=1e-9)  # g(k/T) = ±1 exactly


@pytest.mark.parametrize("method", ["interpolate", "sawtooth"])
def test_exact_on_random_longer_strings(method):
    rng = np.random.default_rng(3)
    N = 48
    c = constructions.get("parity-compiled", max_length=N, method=method)
    strings = ["".join(rng.choice(["0", "1"], size=n)) for n in rng.integers(13, N + 1, size=60)] + ["1" * N, "0" * N]
    assert c.predict(strings).tolist() == [odd(s) for s in strings]
    with pytest.raises(ValueError, match="max_length"):
        c.logits(["1" * (N + 1)])


def test_growth_width_vs_depth():
    from expressivity.constructions.parity_compiled import growth_table

    Ns = [1, 2, 3, 4, 7, 8, 16, 31]
    wide = growth_table(Ns, "interpolate")
    deep = growth_table(Ns, "sawtooth")
    for row in wide:  # one ReLU layer of N + 1 units: 2 blocks, one head per unit
        assert row["blocks"] == 2 and row["heads"] == row["N"] + 1
    for row in deep:  # one tent map per layer: ⌈log2(N+1)⌉ maxout layers + 1 block, 1 head
        assert row["blocks"] == max(1, math.ceil(math.log2(row["N"] + 1))) + 1 and row["heads"] == 1
    for table in (wide, deep):
        params = [r["params"] for r in table]
        assert all(a <= b for a, b in itertools.pairwise(params)) and params[-1] > params[0]


# ---------------------------------------------------------------------------- registry
EXPECTED = {
    "parity": ("softmax", {"layer_norm", "eps", "scale"}),
    "first": ("softmax", {"layer_norm", "eps", "scale"}),
    "parity-compiled": ("hardmax", {"max_length", "method"}),
    "dyck": ("hardmax", {"k", "max_depth", "max_length", "scale", "method"}),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_registry_builds_each_construction(name):
    attention, params = EXPECTED[name]
    c = constructions.get(name)
    assert isinstance(c.transformer, Transformer)
    assert c.attention == attention == c.transformer.cfg.attention
    assert set(constructions.allowed_params(name)) == params
    assert c.name == name and set(c.summary()) >= {"n_layers", "n_params", "attention"}
    s = c.alphabet[0] * 2
    p = c.accept_probability([s])
    assert p.shape == (1,) and 0.0 < p[0] < 1.0
    assert (p[0] > 0.5) == c.language.accepts(s)


def test_unknown_name_and_params_list_allowed():
    with pytest.raises(ValueError, match="choose one of"):
        constructions.get("majority")
    with pytest.raises(ValueError, match=r"allowed parameters: \['layer_norm', 'eps', 'scale'\]"):
        constructions.get("parity", max_length=3)
    with pytest.raises(ValueError, match="allowed parameters"):
        constructions.get("dyck", depth=2)


@pytest.mark.parametrize("name, params, match", [
    ("parity", {"layer_norm": 1}, "layer_norm"),
    ("first", {"eps": -1.0}, "eps"),
    ("parity-compiled", {"max_length": 0}, "max_length"),
    ("parity-compiled", {"method": "spline"}, "method"),
    ("dyck", {"k": 0}, "k"),
    ("dyck", {"max_depth": 0}, "max_depth"),
])
def test_bad_parameter_values(name, params, match):
    with pytest.raises(ValueError, match=match):
        constructions.get(name, **params)


def test_bad_strings():
    c = constructions.get("parity")
    with pytest.raises(ValueError, match="alphabet"):
        c.accept_probability(["012"])
    with pytest.raises(ValueError, match="list of strings"):
        c.accept_probability("0101")
