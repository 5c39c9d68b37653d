"""The one Transformer: behaviour against a slow per-head reference written here."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from expressivity.transformer import (
    ChannelMap,
    Transformer,
    TransformerConfig,
    load_transformer,
    save_transformer,
)


def reference_forward(model: Transformer, inputs: torch.Tensor, key_mask=None) -> torch.Tensor:
    """Slow, explicit re-implementation: loops over blocks, heads and query positions."""
    cfg = model.cfg
    if cfg.d_vocab is not None:
        y = model.W_E[inputs]
    else:
        y = inputs.to(model.dtype) @ model.W_E
    B, T, _ = y.shape
    if model.W_pos is not None:
        y = y + model.W_pos[:T]

    def ln(mod, t):
        mu = t.mean(-1, keepdim=True)
        var = ((t - mu) ** 2).mean(-1, keepdim=True)
        return (t - mu) / torch.sqrt(var + cfg.ln_eps) * mod.w + mod.b

    for blk in model.blocks:
        src = ln(blk.ln1, y) if cfg.layer_norm == "pre" else y
        out = torch.zeros_like(y) + blk.attn.b_O
        for h in range(cfg.n_heads):
            q = src @ blk.attn.W_Q[h] + blk.attn.b_Q[h]
            k = src @ blk.attn.W_K[h] + blk.attn.b_K[h]
            v = src @ blk.attn.W_V[h] + blk.attn.b_V[h]
            for b in range(B):
                for i in range(T):
                    keys = [j for j in range(T)
                            if (not cfg.causal or j <= i) and (key_mask is None or bool(key_mask[b, j]))]
                    a = torch.stack([q[b, i] @ k[b, j] for j in keys]) * cfg.score_scale
                    if cfg.log_length_scaling:
                        a = a * math.log(len(keys))
                    if cfg.attention == "softmax":
                        w = torch.softmax(a, 0)
                    else:
                        w = (a == a.max()).to(a.dtype)
                        w = w / w.sum()
                    head = sum(w[n] * v[b, j] for n, j in enumerate(keys))
                    out[b, i] = out[b, i] + head @ blk.attn.W_O[h]
        y = y + out
        if cfg.layer_norm == "post":
            y = ln(blk.ln1, y)
        if blk.mlp is not None:
            src = ln(blk.ln2, y) if cfg.layer_norm == "pre" else y
            y = y + torch.relu(src @ blk.mlp.W_in + blk.mlp.b_in) @ blk.mlp.W_out + blk.mlp.b_out
            if cfg.layer_norm == "post":
                y = ln(blk.ln2, y)
    if cfg.layer_norm == "pre":
        y = ln(model.ln_final, y)
    if cfg.d_out is not None:
        y = y @ model.W_U + model.b_U
    return y


configs = st.fixed_dictionaries({
    "d_model": st.integers(2, 8),
    "n_layers": st.integers(1, 3),
    "n_heads": st.integers(1, 3),
    "d_head": st.integers(1, 4),
    "d_mlp": st.integers(0, 6),
    "attention": st.sampled_from(["hardmax", "softmax"]),
    "lam": st.sampled_from([0.5, 1.0, 3.0]),
    "causal": st.booleans(),
    "layer_norm": st.sampled_from(["none", "pre", "post"]),
    "log_length_scaling": st.booleans(),
    "positional": st.sampled_from(["learned", "sinusoidal", "none"]),
    "tokens": st.booleans(),
})


@settings(max_examples=40, deadline=None)
@given(spec=configs, seed=st.integers(0, 10_000), T=st.integers(1, 5), masked=st.booleans())
def test_forward_matches_reference(spec, seed, T, masked):
    tokens = spec.pop("tokens")
    io = {"d_vocab": 5} if tokens else {"d_input": 3}
    if spec["attention"] == "hardmax":
        spec["lam"] = None  # hardmax has no λ (its argmax is scale-free)
    cfg = TransformerConfig(**spec, **io, d_out=2, n_ctx=8, dtype="float64")
    model = Transformer(cfg)
    model.reset_parameters(seed)
    gen = torch.Generator().manual_seed(seed)
    if tokens:
        inputs = torch.randint(0, 5, (2, T), generator=gen)
    else:
        inputs = torch.randn(2, T, 3, generator=gen, dtype=torch.float64)
    key_mask = None
    if masked:
        key_mask = torch.ones(2, T, dtype=torch.bool)
        key_mask[1, T // 2 + 1:] = False  # padding at the end of the second sequence
    with torch.no_grad():
        got = model(inputs, key_mask=key_mask)
        want = reference_forward(model, inputs, key_mask)
    valid = key_mask if key_mask is not None else torch.ones(2, T, dtype=torch.bool)
    assert torch.allclose(got[valid], want[valid], atol=1e-10, rtol=1e-9)


def test_hardmax_splits_weight_evenly_over_tied_maxima():
    cfg = TransformerConfig(d_model=2, n_layers=1, n_heads=1, d_head=1, d_mlp=0, d_input=2,
                            positional="none", attention="hardmax", dtype="float64")
    model = Transformer(cfg)
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
        model.W_E.copy_(torch.eye(2, dtype=torch.float64))
        blk = model.blocks[0].attn
        blk.b_Q.fill_(1.0)  # constant query
        blk.W_K[0, 0, 0] = 1.0  # key = channel 0 (the score)
        blk.W_V[0, 1, 0] = 1.0  # value = channel 1
        blk.W_O[0, 0, 1] = 1.0  # written back to channel 1
    x = torch.tensor([[[3.0, 10.0], [3.0, 20.0], [1.0, 100.0]]], dtype=torch.float64)
    cache: dict = {}
    with torch.no_grad():
        out = model(x, cache=cache)
    pattern = cache["blocks.0.attn.hook_pattern"][0, 0]
    assert torch.equal(pattern, torch.tensor([[0.5, 0.5, 0.0]] * 3, dtype=torch.float64))
    assert torch.allclose(out[0, :, 1], x[0, :, 1] + 15.0)


def test_cache_and_residuals_are_consistent():
    cfg = TransformerConfig(d_model=6, n_layers=2, n_heads=2, d_head=3, d_mlp=4, d_vocab=4, dtype="float64")
    model = Transformer(cfg)
    ids = torch.tensor([[0, 1, 2, 3, 1]])
    cache: dict = {}
    with torch.no_grad():
        out = model(ids, cache=cache)
        res = model.residuals(ids)
    assert res.shape == (3, 1, 5, 6)
    assert torch.equal(res[-1], out)
    assert torch.equal(res[1], cache["blocks.0.hook_resid_post"])
    assert cache["blocks.1.attn.hook_pattern"].shape == (1, 2, 5, 5)
    assert torch.allclose(cache["blocks.1.attn.hook_pattern"].sum(-1), torch.ones(1, 2, 5, dtype=torch.float64))


def test_layer_norm_with_zero_eps_is_scale_invariant():
    cfg = TransformerConfig(d_model=4, n_layers=1, n_heads=1, d_head=2, d_mlp=3, d_input=4, d_out=1,
                            layer_norm="post", ln_eps=0.0, positional="none", dtype="float64")
    model = Transformer(cfg)
    x = torch.randn(3, 4, 4, dtype=torch.float64)
    with torch.no_grad():
        ln = model.blocks[0].ln1
        y = torch.randn(5, 4, dtype=torch.float64)
        assert torch.allclose(ln(y), ln(1000.0 * y))  # ε = 0: exactly scale-free
        assert torch.isfinite(model(x)).all()


def test_save_load_round_trip_keeps_outputs_and_channel_names(tmp_path):
    names = ChannelMap.build(("x", 2), ("one!", 1), ("z", 3))
    cfg = TransformerConfig(d_model=6, n_layers=2, n_heads=2, d_head=1, d_mlp=5, d_input=2, d_out=1,
                            n_ctx=4, attention="hardmax", dtype="float64")
    model = Transformer(cfg, names)
    model.reset_parameters(3)
    path = tmp_path / "m.safetensors"
    save_transformer(model, path)
    again = load_transformer(path)
    x = torch.randn(7, 4, 2, dtype=torch.float64)
    with torch.no_grad():
        assert torch.equal(model(x), again(x))
    assert again.cfg == cfg
    assert again.channels.names == ("x[0]", "x[1]", "one", "z[0]", "z[1]", "z[2]")
    assert again.channels.group("z") == [3, 4, 5]
    assert "z[0..2]" in str(again.channels)


def test_load_rejects_foreign_files(tmp_path):
    from safetensors.torch import save_file

    path = tmp_path / "foreign.safetensors"
    save_file({"w": torch.zeros(2)}, str(path))
    with pytest.raises(ValueError, match="not written by expressivity"):
        load_transformer(path)
    bad = tmp_path / "junk.safetensors"
    bad.write_bytes(b"not a tensor file")
    with pytest.raises(ValueError, match="not a safetensors file"):
        load_transformer(bad)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(lam=0.0), "lam"),
        (dict(lam=-1.0), "lam"),
        (dict(lam=float("nan")), "lam"),
        (dict(attention="argmax"), "attention"),
        (dict(layer_norm="mid"), "layer_norm"),
        (dict(ln_eps=-1e-5), "ln_eps"),
        (dict(d_input=3), "exactly one"),
        (dict(d_model=0), "d_model"),
    ],
)
def test_config_rejects_bad_values(kwargs, message):
    base = dict(d_model=4, n_layers=1, n_heads=1, d_head=2, d_mlp=3, d_vocab=3)
    base.update(kwargs)
    with pytest.raises(ValueError, match=message):
        TransformerConfig(**base)


def test_bad_inputs_get_clear_errors():
    tok = Transformer(TransformerConfig(d_model=4, n_layers=1, n_heads=1, d_head=2, d_mlp=3, d_vocab=3, n_ctx=4))
    with pytest.raises(ValueError, match=r"\[0, 3\)"):
        tok(torch.tensor([[0, 5]]))
    with pytest.raises(ValueError, match="n_ctx"):
        tok(torch.zeros(1, 9, dtype=torch.long))
    with pytest.raises(ValueError, match="integer ids"):
        tok(torch.zeros(1, 2))
    cont = Transformer(TransformerConfig(d_model=4, n_layers=1, n_heads=1, d_head=2, d_mlp=3, d_input=3))
    with pytest.raises(ValueError, match=r"\(B, T, 3\)"):
        cont(torch.zeros(1, 2, 4))


def test_flops_and_param_counts():
    cfg = TransformerConfig(d_model=4, n_layers=2, n_heads=2, d_head=3, d_mlp=5, d_input=2, d_out=1, n_ctx=3)
    model = Transformer(cfg)
    per_block = 4 * 2 * 3 * 4 + 3 * 2 * 3 + 4 + (4 * 5 + 5 + 5 * 4 + 4)
    assert model.n_params() == 2 * 4 + 3 * 4 + 2 * per_block + 4 * 1 + 1
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
        model.W_U.fill_(1.0)
    assert model.n_params(nonzero=True) == 4
    T = 3
    expected = 2 * T * 2 * 4 + 2 * (3 * 2 * T * 4 * 6 + 4 * 2 * T * T * 3 + 2 * T * 6 * 4 + 4 * T * 4 * 5) + 2 * T * 4
    assert model.flops(T) == expected
    assert np.isclose(expected, model.flops(3))


def test_lam_is_none_for_hardmax_and_checked_for_softmax():
    base = dict(d_model=4, n_layers=1, n_heads=1, d_head=2, d_mlp=0, d_vocab=3)
    assert TransformerConfig(**base, attention="hardmax").lam is None
    assert TransformerConfig(**base, attention="hardmax").score_scale == 1.0
    assert TransformerConfig(**base).lam == 1.0  # softmax: the default λ
    with pytest.raises(ValueError, match="hardmax attention has no λ"):
        TransformerConfig(**base, attention="hardmax", lam=2.0)
    for bias in ("alibi", "relative"):  # λ weighs q·k against the score bias: it is real there
        assert TransformerConfig(**base, attention="hardmax", positional=bias, lam=2.0).lam == 2.0
        assert TransformerConfig(**base, attention="hardmax", positional=bias).lam == 1.0
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="lam"):
            TransformerConfig(**base, lam=bad)
    # a file written before hardmax lost its λ carries the old default 1.0: it loads as None
    old = {**TransformerConfig(**base, attention="hardmax").to_dict(), "lam": 1.0}
    assert TransformerConfig.from_dict(old).lam is None
    with pytest.raises(ValueError, match="hardmax attention has no λ"):
        TransformerConfig.from_dict({**old, "lam": 3.0})
