"""Flip sensitivity vs Hahn's Lemma 5 bound (expressivity.limits.sensitivity / lemma5)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from expressivity.limits import (
    flip_sensitivity,
    lemma5_bound,
    measure_flips,
    token_embedding_table,
)
from expressivity.transformer import Transformer, TransformerConfig

torch.set_num_threads(1)


def _model(seed=0, **kw) -> Transformer:
    base = dict(d_model=6, n_layers=2, n_heads=2, d_head=3, d_mlp=8, d_vocab=3, d_out=2, n_ctx=64,
                dtype="float64")
    base.update(kw)
    m = Transformer(TransformerConfig(**base))
    m.reset_parameters(seed)
    return m


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    layer_norm=st.sampled_from(["none", "pre", "post"]),
    causal=st.booleans(),
    log_scaling=st.booleans(),
    lam=st.sampled_from([0.05, 0.3, 1.0]),
    scale=st.sampled_from([0.3, 1.0, 2.0]),
    n=st.sampled_from([5, 12, 24]),
)
def test_measured_never_exceeds_bound(seed, layer_norm, causal, log_scaling, lam, scale, n):
    m = _model(seed, layer_norm=layer_norm, causal=causal, log_length_scaling=log_scaling, lam=lam,
               ln_eps=1e-3)
    with torch.no_grad():  # vary weight scales so logits range from tiny to large
        for name, p in m.named_parameters():
            if name.endswith(("W_Q", "W_K", "W_E", "W_pos")):
                p.mul_(scale)
            elif name.endswith((".b", "b_in", "b_O", "b_V")):
                p.copy_(0.3 * torch.randn(p.shape, dtype=p.dtype, generator=torch.Generator().manual_seed(seed)))
    rep = flip_sensitivity(m, lengths=[n], n_strings=2, seed=seed)
    assert rep.applicable
    for r in rep.rows:
        slack = 1e-9 * (1 + r.bound_flipped)
        assert r.measured_other <= r.bound_other + slack
        assert r.measured_readout <= r.bound_readout + slack
        assert r.measured_flipped <= r.bound_flipped + slack
        if r.output_change is not None:
            assert r.output_change <= r.output_bound + slack


def test_bound_decays_like_one_over_n_when_logits_are_small():
    """Tiny query/key weights: A ≈ 0, so the bound itself is O(1/n): n·bound is flat at large n."""
    m = _model(3, n_layers=1, d_mlp=0, lam=0.01)
    pairs = [(0, 1), (1, 2), (2, 0)]
    nb = [n * lemma5_bound(m, token_embedding_table(m, n), pairs).other[0] for n in (16, 32, 64)]
    assert nb[2] == pytest.approx(nb[1], rel=0.1) and nb[1] == pytest.approx(nb[0], rel=0.2)


def test_measured_times_n_is_flat_for_parity_construction():
    """Chiang & Cholak PARITY (uniform attention, bounded logits): n·max_{j≠i}‖Δy_j‖ is ~constant."""
    from expressivity import constructions
    c = constructions.get("parity")
    rep = flip_sensitivity(c, lengths=[16, 64, 256], n_strings=1, seed=1)
    _, nd = rep.n_delta(layer=1)
    assert rep.applicable
    assert nd.max() / nd.min() < 1.5
    for r in rep.rows:
        assert r.measured_other <= r.bound_other


def test_layer_norm_eps0_escapes_and_says_why():
    from expressivity import constructions
    c = constructions.get("parity", layer_norm=True, eps=0.0)
    rep = flip_sensitivity(c, lengths=[8, 32, 128], n_strings=1, seed=0)
    assert not rep.applicable
    assert "Lipschitz" in rep.reason and "eps = 0" in rep.reason
    last = [r for r in rep.rows if r.layer == 2]
    assert all(r.bound_other is None for r in rep.rows)
    # Δ at the readout stays constant in n (so n·Δ grows linearly) — no O(1/n) decay
    assert last[-1].measured_readout > 0.5 * last[0].measured_readout
    assert last[-1].output_change > 1.0


def test_hardmax_model_is_reported_not_applicable():
    m = _model(1, attention="hardmax")
    rep = flip_sensitivity(m, lengths=[8], n_strings=1)
    assert not rep.applicable
    assert "soft-attention assumption fails" in rep.reason and "hardmax" in rep.reason


def test_batched_measurement_matches_position_loop():
    """Independent reference: run the model on each flipped copy separately."""
    m = _model(7, layer_norm="pre", causal=True)
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 3, size=(2, 10))
    meas = measure_flips(m, ids, chunk=3)
    assert meas.n_passes == 4
    other = np.zeros(2)
    flipped = np.zeros(2)
    with torch.no_grad():
        base = m.residuals(torch.as_tensor(ids))[1:]  # (L, B, T, d)
        for i in range(10):
            x = ids.copy()
            x[:, i] = (x[:, i] + 1) % 3
            d = torch.linalg.vector_norm(m.residuals(torch.as_tensor(x))[1:] - base, dim=-1)  # (L, B, T)
            flipped = np.maximum(flipped, d[:, :, i].amax(1).numpy())
            d[:, :, i] = 0
            other = np.maximum(other, d.amax((1, 2)).numpy())
    np.testing.assert_allclose(meas.other, other, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(meas.flipped, flipped, rtol=1e-10, atol=1e-12)


def test_bound_does_not_run_the_model(monkeypatch):
    m = _model(2)

    def boom(*a, **k):
        raise AssertionError("lemma5_bound must not run the model")

    monkeypatch.setattr(Transformer, "forward", boom)
    b = lemma5_bound(m, token_embedding_table(m, 16), [(0, 1)])
    assert b.applicable and b.other.shape == (2,) and np.all(b.other > 0)


def test_bad_input():
    m = _model(0)
    with pytest.raises(ValueError, match="lengths"):
        flip_sensitivity(m, lengths=[1])
    with pytest.raises(ValueError, match="n_strings"):
        flip_sensitivity(m, lengths=[4], n_strings=0)
    cont = Transformer(TransformerConfig(d_model=4, n_layers=1, n_heads=1, d_head=2, d_mlp=0, d_input=3))
    with pytest.raises(ValueError, match="encoder"):
        flip_sensitivity(cont, lengths=[4])
    with pytest.raises(ValueError, match="Transformer"):
        flip_sensitivity("not a model", lengths=[4])


@pytest.mark.parametrize("kw", [dict(), dict(layer_norm="pre", causal=True), dict(layer_norm="post"),
                                dict(log_length_scaling=True, causal=True), dict(lam=30.0)])
def test_incremental_first_block_equals_full_passes(kw):
    """Rank-one softmax updates for block 1 vs plain forward passes (lam=30: sharp attention,
    exercising the exact fallback rows)."""
    m = _model(11, n_layers=3, **kw)
    ids = np.random.default_rng(1).integers(0, 3, size=(2, 12))
    a = measure_flips(m, ids, chunk=5, incremental=True)
    b = measure_flips(m, ids, chunk=5, incremental=False)
    for x, y in ((a.other, b.other), (a.flipped, b.flipped), (a.readout, b.readout)):
        np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-12)
    assert a.output == pytest.approx(b.output, rel=1e-9, abs=1e-12)


def test_lemma5_bound_maximises_over_the_whole_vocabulary():
    """Hahn's R^(0) is a max over every input the model can be given: for a token model that is
    every token of the vocabulary, not only the language's alphabet. A token the strings never
    use (id 3, embedding scaled up) must still raise the bound."""
    from expressivity import languages

    m = _model(5, d_vocab=4)
    with torch.no_grad():
        m.W_E[3].mul_(50.0)
    n = 12
    rep = flip_sensitivity(m, languages.get("parity"), lengths=[n], n_strings=2, seed=0)
    full = lemma5_bound(m, token_embedding_table(m, n), [(0, 1), (1, 0)], readout=n - 1)
    alphabet_only = lemma5_bound(m, token_embedding_table(m, n)[:2], [(0, 1), (1, 0)], readout=n - 1)
    got = np.array([r.bound_other for r in rep.rows])
    np.testing.assert_allclose(got, full.other, rtol=1e-12)
    assert np.all(got > alphabet_only.other * 1.5)  # the unused token dominates R^(0)


def test_token_encoder_symbols_map_into_the_full_table():
    """Symbols 0/1 as tokens 2/3 behind a fixed prefix token: the flips and the bound use rows
    2 and 3 of the full-vocabulary table, at the string's token positions."""
    from expressivity.limits import TokenEncoder
    from expressivity.limits.encoder import layout

    m = _model(6, d_vocab=4)
    enc = TokenEncoder(m, symbols=(2, 3), prefix=(0,))
    lay = layout(enc, 8)
    assert lay.positions.tolist() == list(range(1, 9)) and lay.n_tokens == 9 and lay.read == 8
    assert lay.table.shape[0] == 4 and lay.rows.tolist() == [2, 3]
    ids = np.random.default_rng(0).integers(0, 2, size=(2, 8))
    inc = measure_flips(enc, ids, incremental=True)
    full = measure_flips(enc, ids, incremental=False)
    np.testing.assert_allclose(inc.other, full.other, rtol=1e-9, atol=1e-12)
    rep = flip_sensitivity(enc, lengths=[8], n_strings=2)
    ref = lemma5_bound(m, token_embedding_table(m, 9), [(2, 3), (3, 2)], flip_positions=list(range(1, 9)), readout=8)
    np.testing.assert_allclose([r.bound_other for r in rep.rows], ref.other, rtol=1e-12)
    for r in rep.rows:
        assert r.measured_other <= r.bound_other * (1 + 1e-9)


def test_report_within_bound_and_as_dict():
    import json

    rep = flip_sensitivity(_model(3), lengths=[6], n_strings=1)
    assert rep.within_bound()
    data = json.loads(json.dumps(rep.as_dict()))
    assert data["applicable"] and len(data["rows"]) == 2 and data["rows"][0]["n"] == 6
    hard = flip_sensitivity(_model(3, attention="hardmax"), lengths=[6], n_strings=1)
    assert not hard.within_bound()
