"""The one weight builder on named channels (``transformer.Weights``): what each piece writes,
how the model grows by name, and the docstring examples (run as doctests)."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from expressivity.transformer import ChannelMap, Weights, builder, channels, each


@pytest.mark.parametrize("module", [channels, builder], ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_docstring_examples_hold(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 1 and result.failed == 0


def test_build_names_bare_and_indexed_groups():
    ch = ChannelMap.build(("x", 2), ("one!", 1), ("z", 1))
    assert ch.names == ("x[0]", "x[1]", "one", "z[0]")
    assert ch.names_of("x") == ["x[0]", "x[1]"] and ch.group("z") == [3]


def _small() -> Weights:
    ch = ChannelMap.build(("bit", 2), ("one!", 1), ("frac!", 1), ("out!", 1))
    w = Weights(ch, n_layers=1, d_vocab=2, n_ctx=4)
    w.embed(0, {"bit[0]": 1.0})
    w.embed(1, {"bit[1]": 1.0})
    w.position("one", 1.0)
    w.head(0, 0, value={"bit[1]": 1.0}, out={"frac": 1.0})  # uniform: frac = #1s / T
    w.unit(0, {"frac": 2.0, "one": -1.0}, {"out": 1.0})  # out = ReLU(2·frac − 1)
    w.readout({"out": 3.0}, bias=-0.5)
    return w


def _reference(ids: list[int]) -> float:
    """The small model by hand: z = 3·ReLU(2·k/T − 1) − 0.5 at every token."""
    k, T = sum(ids), len(ids)
    return 3.0 * max(2.0 * k / T - 1.0, 0.0) - 0.5


@pytest.mark.parametrize("ids", [[0, 0, 1], [1, 1, 1, 0], [1], [0, 1, 1, 1]])
def test_pieces_compute_what_they_name(ids):
    model = _small().transformer(positional="learned", attention="hardmax", dtype="float64")
    with torch.no_grad():
        z = model(torch.tensor([ids]))[0, :, 0].numpy()
    np.testing.assert_allclose(z, _reference(ids), rtol=0, atol=1e-12)
    assert model.cfg.d_mlp == 1 and model.cfg.d_model == 5


def test_relabel_moves_weights_by_name_and_keeps_outputs():
    w = _small()
    bigger = ChannelMap(("pad",) + tuple(reversed(w.channels.names)) + ("extra",))
    model = w.transformer(positional="learned", attention="hardmax", dtype="float64")
    moved = w.relabel(bigger).transformer(positional="learned", attention="hardmax", dtype="float64")
    ids = torch.tensor([[1, 0, 1, 1]])
    assert torch.equal(model(ids), moved(ids))
    i_old, i_new = w.channels.index("frac"), bigger.index("frac")
    assert torch.equal(model.blocks[0].attn.W_O[0, 0, i_old], moved.blocks[0].attn.W_O[0, 0, i_new])
    assert not moved.W_E[:, bigger.index("extra")].any()
    with pytest.raises(ValueError, match="lacks"):
        w.relabel(ChannelMap(("one",)))


def test_doubled_reads_the_first_copy_and_writes_plus_minus():
    w = _small().doubled()
    assert w.channels.names[5:] == tuple("−" + n for n in w.channels.names[:5])
    model = w.transformer(positional="learned", attention="hardmax", dtype="float64")
    with torch.no_grad():
        y = model.residuals(torch.tensor([[1, 1, 0]]))  # (L + 1, B, T, d_model)
    np.testing.assert_array_equal(y[..., :5].numpy(), -y[..., 5:].numpy())
    assert y[..., :5].abs().sum() > 0
    W_in = model.blocks[0].mlp.W_in.detach().numpy()
    assert not W_in[5:].any() and W_in[:5].any()


def test_ramp_is_the_exact_step_on_integer_gaps():
    ch = ChannelMap.build(("x!", 1), ("one!", 1), ("s!", 1))
    w = Weights(ch, n_layers=1, d_input=2)
    w.embed(0, {"x": 1.0})
    w.embed(1, {"one": 1.0})
    w.ramp(0, {"x": 1.0}, -2.0, {"s": 5.0})  # s = 5·[x ≥ 2] for integer x
    model = w.transformer(d_mlp=4, n_ctx=8, positional="none", attention="hardmax", dtype="float64")
    xs = torch.tensor([[[v, 1.0]] for v in range(-3, 6)], dtype=torch.float64)
    with torch.no_grad():
        s = model.residuals(xs)[-1][:, 0, 2].numpy()
    np.testing.assert_array_equal(s, [5.0 * (v >= 2) for v in range(-3, 6)])
    assert model.cfg.d_mlp == 4 and not model.blocks[0].mlp.W_in[:, 2:].any()


def test_units_beyond_a_fixed_width_and_unknown_names_are_refused():
    w = _small()
    with pytest.raises(ValueError, match="below the 1 FFN units"):
        w.transformer(d_mlp=0, positional="learned", attention="hardmax", dtype="float64")
    with pytest.raises(KeyError, match="nope"):
        w.unit(0, {"nope": 1.0}, {"out": 1.0})
    with pytest.raises(ValueError, match="exactly one"):
        Weights(w.channels, n_layers=1)


def test_from_model_round_trips_and_each_sums_a_group():
    w = _small()
    model = w.transformer(positional="learned", attention="hardmax", dtype="float64")
    again = Weights.from_model(model).transformer(positional="learned", attention="hardmax", dtype="float64")
    for (n, p), (_, q) in zip(model.named_parameters(), again.named_parameters()):
        assert torch.equal(p, q), n
    assert each(w.channels.names_of("bit"), -2.0) == {"bit[0]": -2.0, "bit[1]": -2.0}


def _permuted_logits(name: str, params: dict, perm_seed: int, strings: list[str]):
    from expressivity import constructions

    c = constructions.get(name, **params)
    names = list(c.transformer.channels.names)
    order = np.random.default_rng(perm_seed).permutation(len(names))
    moved = Weights.from_model(c.transformer).relabel(ChannelMap(tuple(names[i] for i in order)))
    cfg = c.transformer.cfg
    fields = {k: getattr(cfg, k) for k in ("positional", "attention", "causal", "lam", "dtype")}
    if cfg.positional != "learned":
        fields["n_ctx"] = cfg.n_ctx
    model = moved.transformer(d_mlp=cfg.d_mlp, **fields)
    with torch.no_grad():
        z = []
        for s in strings:
            enc = c.encode([s])
            z.append(float(model(enc.inputs, key_mask=enc.key_mask)[0, enc.read[0], 0]))
    return np.array(z), c.logits(strings)


@pytest.mark.parametrize("name, params, strings", [
    ("dyck", {"k": 2, "max_depth": 2, "max_length": 12}, ["", "()", "([])", "(]", "(()())", "((()))", "())("]),
    ("dyck", {"k": 2, "max_depth": 3, "max_length": 12, "method": "yao"}, ["", "[()]", "[(])", "((()))", "(("]),
    ("parity", {}, ["0110", "1", "10101", ""]),
    ("parity-compiled", {"max_length": 6, "method": "sawtooth"}, ["0110", "1", "101011"]),
])
@pytest.mark.parametrize("perm_seed", [0, 1])
def test_a_permutation_of_the_channels_by_name_keeps_every_logit(name, params, strings, perm_seed):
    """Weights written by name do not depend on where a channel sits: relabelling a
    construction onto a random order of its own channel names gives the same logits."""
    moved, original = _permuted_logits(name, params, perm_seed, strings)
    np.testing.assert_allclose(moved, original, rtol=0, atol=1e-12)


_NAMES = ("a", "b", "c[0]", "c[1]", "one")
_form = st.dictionaries(st.sampled_from(_NAMES), st.integers(-3, 3).map(float), max_size=3)


def _numpy_block(x, forms):
    """An independent reference of one softmax block (λ = 1, no mask) from the linear forms:
    each form is the vector of its coefficients over the channel names."""
    vec = lambda f: np.array([f.get(n, 0.0) for n in _NAMES])  # noqa: E731
    q, k, v = x @ vec(forms["query"]), x @ vec(forms["key"]), x @ vec(forms["value"])
    s = q[:, None] * k[None, :]
    p = np.exp(s - s.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    y = x + np.outer(p @ v, vec(forms["out"]))
    ffn = sum((np.outer(np.maximum(y @ vec(read) + bias, 0.0), vec(write))  # units read the same y
               for read, write, bias in forms["units"]), np.zeros_like(y))
    return (y + ffn) @ vec(forms["readout"])


@settings(max_examples=40, deadline=None)
@given(query=_form, key=_form, value=_form, out=_form, readout=_form,
       units=st.lists(st.tuples(_form, _form, st.integers(-2, 2).map(float)), max_size=3),
       seed=st.integers(0, 2**16))
def test_builder_forms_match_an_independent_numpy_block(query, key, value, out, readout, units, seed):
    forms = {"query": query, "key": key, "value": value, "out": out, "units": units, "readout": readout}
    w = Weights(ChannelMap(_NAMES), n_layers=1, d_input=len(_NAMES))
    for i, n in enumerate(_NAMES):
        w.embed(i, {n: 1.0})
    w.head(0, 0, query=query, key=key, value=value, out=out)
    for read, write, bias in units:
        w.unit(0, read, write, bias)
    w.readout(readout)
    model = w.transformer(n_ctx=8, positional="none", attention="softmax", lam=1.0, dtype="float64")
    x = np.random.default_rng(seed).normal(size=(5, len(_NAMES)))
    with torch.no_grad():
        z = model(torch.from_numpy(x)[None])[0, :, 0].numpy()
    np.testing.assert_allclose(z, _numpy_block(x, forms), rtol=1e-10, atol=1e-10)
