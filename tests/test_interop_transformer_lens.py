"""TransformerLens 4.x export: logits to 1e-6 in float64 (1e-12 where stated) and the residual
stream at every layer to 1e-9, compared through ``run_with_cache`` on both models; float32
models are compared in float64 (their weights cast exactly)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

pytest.importorskip("transformer_lens", reason="TransformerLens export needs the extra: pip install 'expressivity[tl]'")

from expressivity import constructions  # noqa: E402
from expressivity.compile import compile_maxout  # noqa: E402
from expressivity.cpwl import MaxoutNetwork  # noqa: E402
from expressivity.interop.transformer_lens import to_transformer_lens  # noqa: E402
from expressivity.transformer import Transformer, TransformerConfig  # noqa: E402


def _compare(tl, ours: Transformer, inputs: torch.Tensor) -> float:
    """Max |difference| of logits; asserts every mapped hook (residual stream at every layer,
    attention patterns) agrees too."""
    cache: dict = {}
    with torch.no_grad():
        y = ours(inputs, cache=cache)
        logits, tl_cache = tl.bridge.run_with_cache(tl.tl_input(inputs))
    assert logits.dtype == torch.float64 and logits.shape == y.shape
    residual = [f"blocks.{k}.hook_resid_post" for k in range(ours.cfg.n_layers)]
    assert set(residual) | {"hook_embed"} <= set(tl.hooks)
    for name, tl_name in tl.hooks.items():
        a, b = cache[name], tl_cache[tl_name]
        assert a.shape == b.shape, (name, tl_name)
        assert (a - b).abs().max().item() < 1e-9, (name, tl_name)
    return (logits - y).abs().max().item()


CASES = [  # name, config overrides
    ("plain", {}),
    ("pre-LN causal", {"layer_norm": "pre", "causal": True}),
    ("λ = 1 (folded)", {"lam": 1.0}),
    ("attention only, no unembed", {"d_mlp": 0, "d_out": None}),
    ("sinusoidal", {"positional": "sinusoidal", "causal": True}),
    ("no positions, LN ε = 0", {"positional": "none", "layer_norm": "pre", "ln_eps": 0.0}),
    ("rope (TL rotary)", {"positional": "rope"}),
    ("rope, pre-LN causal", {"positional": "rope", "layer_norm": "pre", "causal": True}),
]


@pytest.mark.parametrize("name,over", CASES, ids=[c[0] for c in CASES])
def test_softmax_transformer_matches(name, over):
    base = dict(d_model=8, n_layers=2, n_heads=2, d_head=4, d_mlp=16, d_vocab=5, d_out=3, n_ctx=12,
                dtype="float64", lam=0.5)
    m = Transformer(TransformerConfig(**{**base, **over}))
    m.reset_parameters(seed=1)
    ids = torch.randint(0, 5, (4, 9), generator=torch.Generator().manual_seed(0))
    tl = to_transformer_lens(m)
    assert tl.error_bound == 0.0 and tl.lam is None
    assert _compare(tl, m, ids) < 1e-6


@pytest.mark.parametrize("name", ["parity", "first"])
def test_softmax_constructions_match(name):
    c = constructions.get(name)
    tl = to_transformer_lens(c, n_ctx=16)  # the constructions have n_ctx = 65536
    strings = ["0110", "1110", "0000", "1011"]
    assert _compare(tl, c.transformer, c.encode(strings).inputs) < 1e-6
    # the read-out survives: the same decisions
    logits = tl.logits(c.encode(strings).inputs)[:, -1, 0].numpy()
    assert np.array_equal(logits > 0, c.predict(strings))


def test_hardmax_compiled_model_as_softmax_within_its_bound():
    net = MaxoutNetwork.random(in_dim=2, widths=[4, 4], ranks=[3, 2], seed=0)
    cm = compile_maxout(net, domain=(-1.0, 1.0))
    with pytest.raises(ValueError, match="no hardmax"):
        to_transformer_lens(cm)
    lam = 1e4
    tl = to_transformer_lens(cm, lam=lam)
    soft = compile_maxout(net, domain=(-1.0, 1.0), attention="softmax", lam=lam)
    assert tl.lam == lam and tl.error_bound == soft.error_bound() > 0
    x = np.random.default_rng(0).uniform(-1, 1, (2000, 2))
    inputs = cm.inputs(x)
    measured = np.abs(tl.logits(inputs)[:, 0, :].numpy() - net(x)).max()
    assert measured <= tl.error_bound
    assert _compare(tl, soft.transformer, inputs[:50]) < 1e-6  # the bridge is that σ_λ model


def test_rope_is_tl_rotary_with_exact_tables():
    """RoPE maps onto TL's rotary (adjacent pairs, θ_i = 10000^(−2i/d_head)); TL's own tables are
    float32, so ours replace them: at length 60 the logits agree to float64 round-off."""
    m = Transformer(TransformerConfig(d_model=8, n_layers=2, n_heads=2, d_head=4, d_mlp=16, d_vocab=5, d_out=3,
                                      n_ctx=64, positional="rope", causal=True, dtype="float64", lam=0.5))
    m.reset_parameters(seed=3)
    tl = to_transformer_lens(m)
    assert tl.bridge.cfg.positional_embedding_type == "rotary"
    ids = torch.randint(0, 5, (3, 60), generator=torch.Generator().manual_seed(2))
    assert _compare(tl, m, ids) < 1e-12


def test_float32_model_compared_in_float64():
    """A float32 model is compared in float64: exported with dtype="float64" (its weights cast
    exactly), the bridge equals our float64 forward of the same weights to 1e-12, so its whole
    distance to the float32 model is our own float32 round-off |F32 − F64| — not the export's."""
    m = Transformer(TransformerConfig(d_model=8, n_layers=2, n_heads=2, d_head=4, d_mlp=16, d_vocab=5, d_out=3,
                                      n_ctx=12, layer_norm="pre", positional="sinusoidal", causal=True))
    m.reset_parameters(seed=2)
    tl = to_transformer_lens(m, dtype="float64")
    assert tl.transformer.cfg.dtype == "float64" and m.cfg.dtype == "float32"
    ids = torch.randint(0, 5, (4, 12), generator=torch.Generator().manual_seed(1))
    assert _compare(tl, tl.transformer, ids) < 1e-12
    with torch.no_grad():
        ours32, ours64 = m(ids).double(), tl.transformer(ids)
        export_err = (tl.logits(ids) - ours64).abs().max().item()
        roundoff = (ours32 - ours64).abs().max().item()
        assert export_err < 1e-12 < roundoff  # float32 round-off is there, and it is all of the gap
        assert abs((tl.logits(ids) - ours32).abs().max().item() - roundoff) <= export_err


def test_trained_run_with_rope(tmp_path):
    """A training output directory (float32, pre-LN, RoPE) → TrainedRun → TransformerLens in
    float64, compared hook by hook with the same weights in float64."""
    from expressivity.interop import from_pretrained
    from expressivity.train import RunConfig, train_run

    cfg = RunConfig(task="parity", layers=2, heads=2, d_model=8, d_mlp=8, steps=2, batch_size=4,
                    train_lengths=(2, 6), test_lengths=(8,), eval_batch=4, checkpoint_every=1, positional="rope")
    train_run(cfg, out_dir=tmp_path / "run")
    run = from_pretrained(tmp_path / "run")
    tl = to_transformer_lens(run, dtype="float64")
    assert tl.bridge.cfg.positional_embedding_type == "rotary" and run.model.cfg.dtype == "float32"
    assert _compare(tl, tl.transformer, run.sample_inputs(8)) < 1e-12
