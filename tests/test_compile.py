"""Maxout/ReLU → Transformer compiler: exact with hardmax, within the bound with σ_λ."""

import json
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from expressivity.compile import compile_maxout, compile_relu, complexity_report, load_compiled
from expressivity.cpwl import MaxoutNetwork

EXACT = 1e-9


def tie_points(net: MaxoutNetwork, lo: float, hi: float, rng, count: int = 200) -> np.ndarray:
    """Points on first-layer boundaries w_ij·x + b_ij = w_ij'·x + b_ij' (projected, clipped)."""
    layer = net.layers[0]
    pts = []
    for _ in range(count):
        i = rng.integers(layer.width)
        if layer.rank < 2:
            break
        j, k = rng.choice(layer.rank, 2, replace=False)
        a, c = layer.W[i, j] - layer.W[i, k], layer.b[i, k] - layer.b[i, j]
        x0 = rng.uniform(lo, hi, net.in_dim)
        if np.dot(a, a) > 1e-12:
            x0 = x0 + (c - a @ x0) / (a @ a) * a
        pts.append(np.clip(x0, lo, hi))
    return np.array(pts).reshape(-1, net.in_dim)


@settings(max_examples=15, deadline=None)
@given(d=st.integers(1, 8), widths=st.lists(st.integers(1, 16), min_size=1, max_size=6),
       ranks=st.data(), seed=st.integers(0, 10_000))
def test_hardmax_compile_is_exact_on_random_networks(d, widths, ranks, seed):
    rk = ranks.draw(st.lists(st.integers(1, 6), min_size=len(widths), max_size=len(widths)))
    net = MaxoutNetwork.random(d, widths, rk, seed=seed)
    cm = compile_maxout(net, domain=(-1.0, 1.0))
    rng = np.random.default_rng(seed)
    x = np.concatenate([rng.uniform(-1, 1, (10_000, d)), tie_points(net, -1, 1, rng),
                        -np.ones((1, d)), np.ones((1, d))])
    err = np.abs(cm.evaluate(x) - net(x)).max()
    assert err <= EXACT
    assert cm.n_blocks == net.depth + 1 <= 3 * net.depth
    assert cm.n_tokens == max(rk)
    assert cm.output_error == 0.0  # hardmax: no σ_λ term, only float64 round-off
    assert err <= 2 * cm.roundoff_error, (err, cm.roundoff_error)  # ours + the numpy reference's


def test_exact_ties_from_duplicated_pieces_and_relu_zeros():
    rng = np.random.default_rng(0)
    W = rng.normal(size=(3, 2, 2))
    W[:, 1] = W[:, 0]  # every unit's two pieces coincide: a tie everywhere
    b = np.zeros((3, 2))
    net = MaxoutNetwork.from_weights([(W, b)], readout=(np.ones((1, 3)), np.zeros(1)))
    cm = compile_maxout(net, domain=(-2.0, 2.0))
    x = rng.uniform(-2, 2, (1000, 2))
    assert np.abs(cm.evaluate(x) - net(x)).max() <= EXACT
    # ReLU units at x = 0 with zero bias: both pieces are exactly 0
    mlp = nn.Sequential(nn.Linear(2, 4, bias=False), nn.ReLU(), nn.Linear(4, 1)).double()
    cm = compile_relu(mlp, domain=(-1.0, 1.0))
    zero = np.zeros((1, 2))
    with torch.no_grad():
        want = mlp(torch.zeros(1, 2, dtype=torch.float64)).numpy()
    assert np.abs(cm.evaluate(zero) - want).max() <= EXACT


@settings(max_examples=10, deadline=None)
@given(sizes=st.lists(st.integers(1, 12), min_size=1, max_size=4), d=st.integers(1, 5), seed=st.integers(0, 999))
def test_relu_mlps_compile_exactly(sizes, d, seed):
    torch.manual_seed(seed)
    mods, prev = [], d
    for m in sizes:
        mods += [nn.Linear(prev, m), nn.ReLU()]
        prev = m
    mlp = nn.Sequential(*mods, nn.Linear(prev, 2)).double()
    cm = compile_relu(mlp, domain=(-1.0, 1.0))
    x = np.random.default_rng(seed).uniform(-1, 1, (10_000, d))
    with torch.no_grad():
        want = mlp(torch.from_numpy(x)).numpy()
    assert np.abs(cm.evaluate(x) - want).max() <= EXACT
    assert cm.n_blocks == len(sizes) + 1


@pytest.mark.parametrize("seed, d, widths, ranks", [(0, 2, [6, 6], [4, 3]), (1, 1, [5, 4, 3], [3, 5, 2])])
def test_softmax_error_is_below_bound_and_falls_like_one_over_lambda(seed, d, widths, ranks):
    net = MaxoutNetwork.random(d, widths, ranks, seed=seed)
    rng = np.random.default_rng(seed)
    x = np.concatenate([rng.uniform(-1, 1, (20_000, d)), tie_points(net, -1, 1, rng)])
    exact = net(x)
    lams = [1.0, 10.0, 1e2, 1e3, 1e4, 1e5, 1e6]
    bound_at_one = compile_maxout(net, (-1.0, 1.0), "softmax", 1.0).output_error
    errs = []
    for lam in lams:
        cm = compile_maxout(net, domain=(-1.0, 1.0), attention="softmax", lam=lam)
        out = cm.evaluate(x)
        assert np.all(np.isfinite(out)), f"overflow/NaN at λ = {lam}"
        err = np.abs(out - exact).max()
        assert err <= cm.error_bound(), (lam, err, cm.error_bound())
        errs.append(err)
        # the σ_λ term is (T−1)/(eλ) propagated: exactly ∝ 1/λ; round-off is a small extra
        assert math.isclose(cm.output_error * lam, bound_at_one, rel_tol=1e-9)
        assert cm.roundoff_error <= 1e-6 * bound_at_one
    slope = np.polyfit(np.log10(lams[1:5]), np.log10(errs[1:5]), 1)[0]
    assert -1.25 <= slope <= -0.75, (slope, errs)


def test_channel_map_names_every_role_and_survives_save_load(tmp_path):
    net = MaxoutNetwork.random(3, [4, 2], [3, 2], seed=5)
    cm = compile_maxout(net, domain=(-1.0, 1.0))
    ch = cm.channels
    assert len(ch.group("x")) == 3 and len(ch.group("onehot")) == 3
    # every layer has channels of its own: z^(l) (pieces), h^(l) (outputs)
    assert [len(ch.group(g)) for g in ("z1", "z2", "h1", "h2")] == [4, 2, 4, 2] and "one" in ch
    text = str(ch)
    for label in ("x[0..2]", "onehot[0..2]", "one", "z1[0..3]", "z2[0..1]", "h1[0..3]", "h2[0..1]"):
        assert label in text
    # the weights are written by name: the embedding sends x[k] to channel "x[k]"
    assert cm.transformer.W_E[1, ch.index("x[1]")] == 1.0
    path = tmp_path / "c.safetensors"
    cm.save(path)
    again = load_compiled(path, net)
    x = np.random.default_rng(0).uniform(-1, 1, (500, 3))
    assert np.array_equal(again.evaluate(x), cm.evaluate(x))
    assert again.channels.names == ch.names and again.error_bound() == cm.error_bound() and again.output_error == 0.0


def test_complexity_report_counts_match_the_models():
    net = MaxoutNetwork.random(4, [8, 8, 8], [4, 4, 4], seed=2)
    cm = compile_maxout(net, domain=(-1.0, 1.0))
    rep = complexity_report(net, cm)
    assert rep.blocks == 4 and rep.tokens == 4 and rep.depth == 3
    assert rep.net_params == sum(8 * 4 * (d + 1) for d in (4, 8, 8)) + 9
    assert rep.params_dense == cm.transformer.n_params()
    assert rep.params_nonzero == cm.transformer.n_params(nonzero=True)
    # comparable complexity: the non-zero parameters are within a small factor of the net's
    assert rep.param_ratio_nonzero < 3.0
    assert rep.flops == cm.transformer.flops(4) and rep.flop_ratio > 1
    assert len(rep.rows()) == 6


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(attention="softmax", lam=0.0), "λ > 0"),
        (dict(attention="softmax", lam=-3.0), "λ > 0"),
        (dict(attention="softmax"), "λ > 0"),
        (dict(attention="hardmax", lam=10.0), "softmax attention only"),
        (dict(attention="sparsemax"), "attention must be"),
        (dict(domain=(1.0, 1.0)), "empty"),
        (dict(domain=(-np.inf, 1.0)), "bounded"),
        (dict(domain=(np.zeros(3), np.ones(3))), "length-2"),
        (dict(domain=5.0), "pair"),
    ],
)
def test_bad_compile_arguments(kwargs, message):
    net = MaxoutNetwork.random(2, [3], 2)
    with pytest.raises(ValueError, match=message):
        compile_maxout(net, **kwargs)


def test_evaluate_rejects_points_outside_the_domain_and_bad_shapes():
    net = MaxoutNetwork.random(2, [3], 2)
    cm = compile_maxout(net, domain=(-1.0, 1.0))
    with pytest.raises(ValueError, match="outside the compiled domain"):
        cm.evaluate(np.array([[0.0, 1.5]]))
    with pytest.raises(ValueError, match=r"\(N, 2\)"):
        cm.evaluate(np.zeros((3, 5)))
    with pytest.raises(ValueError, match="MaxoutNetwork"):
        compile_maxout("not a net")


@pytest.mark.parametrize("seed, d, widths, ranks", [(0, 2, [6, 6], [4, 3]), (3, 3, [8, 5, 4], [3, 2, 4])])
def test_error_bound_covers_round_off_up_to_lambda_1e300(seed, d, widths, ranks):
    """measured ≤ error_bound() at every λ = 1 … 1e300 (at 1e300 the σ_λ term is ~1e-300 and
    the measured error is float64 round-off), no NaN, and the round-off term is not vacuous: at
    λ = 1e6 it is a small part of the bound, at 1e300 within 10^3 of the measured error. The
    measured error is against numpy's float64 net, which rounds too: hence 2× the term."""
    net = MaxoutNetwork.random(d, widths, ranks, seed=seed)
    rng = np.random.default_rng(seed)
    x = np.concatenate([rng.uniform(-1, 1, (3000, d)), tie_points(net, -1, 1, rng)])
    exact = net(x)
    for lam in [1.0, 1e3, 1e6, 1e10, 1e16, 1e50, 1e150, 1e300]:
        cm = compile_maxout(net, domain=(-1.0, 1.0), attention="softmax", lam=lam)
        out = cm.evaluate(x)
        assert np.all(np.isfinite(out)), lam
        err = np.abs(out - exact).max()
        assert err <= cm.output_error + 2 * cm.roundoff_error, (lam, err, cm.error_bound())
        if lam == 1e6:  # the round-off term does not inflate the σ_λ bound
            assert cm.roundoff_error <= 1e-3 * cm.output_error
    # at λ = 1e300 the bound is round-off only: within 10^3 of the measured round-off error
    assert cm.output_error < 1e-290 and 0 < err and cm.roundoff_error <= 1e3 * err, (err, cm.roundoff_error)


def test_hardmax_stays_exact_at_depth_10():
    net = MaxoutNetwork.random(2, [6] * 10, 3, seed=7)
    cm = compile_maxout(net, domain=(-1.0, 1.0))
    x = np.random.default_rng(7).uniform(-1, 1, (4000, 2))
    err = np.abs(cm.evaluate(x) - net(x)).max()
    assert err <= EXACT and err <= 2 * cm.roundoff_error
    assert cm.n_blocks == 11 and cm.output_error == 0.0


@pytest.mark.parametrize("layer", [0, 1, 2])
@pytest.mark.parametrize("a", [1e-8, 1e-5, 1e5, 1e8])
def test_hardmax_stays_exact_relative_to_a_rescaled_layer(layer, a):
    """Layer ``layer``'s weights and biases × a, the next layer's weights × 1/a: the same f, and
    the compiled transformer keeps float64 precision relative to f. Each layer writes its own
    channels; when a layer's pieces were written as z_old + (u − z_old), the error was
    2^−53·|z_old| — 4e-8·max|f| at a = 1e-8 on the last layer, 2e-8 at a = 1e8 on the first."""
    net = MaxoutNetwork.random(4, [3, 3, 3], 3, seed=193)
    layers = [(lay.W.copy(), lay.b.copy()) for lay in net.layers]
    A, c = net.readout
    layers[layer] = (a * layers[layer][0], a * layers[layer][1])
    if layer + 1 < len(layers):
        layers[layer + 1] = (layers[layer + 1][0] / a, layers[layer + 1][1])
    else:
        A = A / a
    net2 = MaxoutNetwork.from_weights(layers, (A, c))
    x = np.random.default_rng(1).uniform(-1, 1, (2000, 4))
    assert np.allclose(net2(x), net(x), rtol=1e-9, atol=1e-9 * np.abs(net(x)).max())
    cm = compile_maxout(net2, domain=(-1.0, 1.0))
    err = np.abs(cm.evaluate(x) - net2(x)).max()
    assert err <= 1e-13 * np.abs(net2(x)).max() and err <= 2 * cm.roundoff_error, (err, cm.roundoff_error)


def test_verify_uses_a_relative_tolerance_for_large_outputs(tmp_path):
    """An exactly compiled net whose outputs are near 1e6: the error (~1e-9) is round-off, far
    under the scale-aware tolerance, so `verify` passes (it failed with an absolute 1e-9)."""
    from typer.testing import CliRunner

    from expressivity.cli import app

    layers = [{"W": (1e3 * np.random.default_rng(1).normal(size=(4, 3, 2))).tolist(), "b": np.zeros((4, 3)).tolist()},
              {"W": (1e3 * np.random.default_rng(2).normal(size=(3, 2, 4))).tolist(), "b": np.zeros((3, 2)).tolist()}]
    spec = {"type": "maxout", "layers": layers, "readout": {"A": [[1.0, 1.0, 1.0]], "c": [1e6]}, "domain": {"lo": -1, "hi": 1}}
    (tmp_path / "big.json").write_text(json.dumps(spec))
    out = tmp_path / "big.safetensors"
    runner = CliRunner()
    assert runner.invoke(app, ["compile", str(tmp_path / "big.json"), "--out", str(out)]).exit_code == 0
    res = runner.invoke(app, ["verify", str(out), str(tmp_path / "big.json"), "--points", "3000"])
    assert res.exit_code == 0, res.output
    assert "verified" in res.output
    from expressivity.compile import parse_spec

    net, _ = parse_spec(spec)
    cm = load_compiled(out, net)
    x = np.random.default_rng(0).uniform(-1, 1, (3000, 2))
    err = np.abs(cm.evaluate(x) - net(x)).max()
    assert np.abs(net(x)).max() > 1e5 and err > 1e-9  # large outputs: the old absolute 1e-9 threshold failed here


def test_compile_writes_the_same_bytes_twice_with_umask_permissions(tmp_path):
    import os

    net = MaxoutNetwork.random(2, [4, 3], [3, 2], seed=3)
    a, b = tmp_path / "a.safetensors", tmp_path / "b.safetensors"
    old = os.umask(0o022)
    try:
        compile_maxout(net, (-1.0, 1.0)).save(a)
        compile_maxout(net, (-1.0, 1.0), "softmax", lam=10.0).save(b)
        compile_maxout(net, (-1.0, 1.0), "softmax", lam=10.0).save(a)
    finally:
        os.umask(old)
    assert a.read_bytes() == b.read_bytes()
    assert (a.stat().st_mode & 0o777) == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.safetensors", "b.safetensors"]  # no temp files left
    again = load_compiled(a, net)
    assert again.lam == 10.0 and again.error_bound() > 0
