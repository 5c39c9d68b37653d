"""CPWL objects: maxout networks, ReLU conversion, affine-piece constructors, interval bounds."""

import itertools

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from expressivity.cpwl import (
    MaxoutNetwork,
    difference_of_max,
    from_relu_mlp,
    interpolate_1d,
    max_min,
    max_of_affine,
)


def loop_maxout(net: MaxoutNetwork, x: np.ndarray) -> np.ndarray:
    """Reference: unit by unit, piece by piece, in plain Python."""
    outs = []
    for point in x:
        h = list(point)
        for layer in net.layers:
            h = [max(sum(layer.W[i, j, k] * h[k] for k in range(len(h))) + layer.b[i, j]
                     for j in range(layer.rank)) for i in range(layer.width)]
        if net.readout is not None:
            A, c = net.readout
            h = [sum(A[o, i] * h[i] for i in range(len(h))) + c[o] for o in range(len(c))]
        outs.append(h)
    return np.array(outs)


@settings(max_examples=30, deadline=None)
@given(d=st.integers(1, 4), widths=st.lists(st.integers(1, 5), min_size=1, max_size=3),
       rank=st.integers(1, 4), seed=st.integers(0, 1000))
def test_maxout_matches_loop_reference(d, widths, rank, seed):
    net = MaxoutNetwork.random(d, widths, rank, seed=seed, out_dim=2)
    x = np.random.default_rng(seed).uniform(-2, 2, (20, d))
    assert np.allclose(net(x), loop_maxout(net, x), atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(d=st.integers(1, 3), widths=st.lists(st.integers(1, 5), min_size=1, max_size=3),
       rank=st.integers(1, 4), seed=st.integers(0, 1000))
def test_interval_bounds_contain_all_values(d, widths, rank, seed):
    net = MaxoutNetwork.random(d, widths, rank, seed=seed)
    lo, hi = -np.ones(d), 2 * np.ones(d)
    bounds = net.interval_bounds(lo, hi)
    corners = np.array(list(itertools.product(*zip(lo, hi))))
    x = np.concatenate([np.random.default_rng(seed).uniform(lo, hi, (500, d)), corners])
    h = x
    for layer, bnd in zip(net.layers, bounds):
        pre = layer.pre(h)
        assert np.all(pre >= bnd.pre_lo - 1e-12) and np.all(pre <= bnd.pre_hi + 1e-12)
        h = layer(h)
        assert np.all(h >= bnd.lo - 1e-12) and np.all(h <= bnd.hi + 1e-12)
    # first layer bounds are exact: attained at a corner of the box
    pre0 = net.layers[0].pre(corners)
    assert np.allclose(pre0.max(0), bounds[0].pre_hi) and np.allclose(pre0.min(0), bounds[0].pre_lo)


def test_relu_mlp_converts_exactly():
    torch.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 4), nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2)).double()
    net = from_relu_mlp(mlp)
    assert net.ranks == (2, 2) and net.widths == (5, 4) and net.out_dim == 2
    x = np.random.default_rng(1).normal(size=(1000, 3))
    with torch.no_grad():
        want = mlp(torch.from_numpy(x)).numpy()
    assert np.allclose(net(x), want, atol=1e-12)


def test_relu_mlp_ending_in_relu_has_no_readout():
    mlp = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
    net = from_relu_mlp(mlp)
    assert net.readout is None and net.out_dim == 3


@pytest.mark.parametrize("module", [nn.GELU(), nn.Tanh(), nn.Softmax(dim=-1)])
def test_relu_mlp_rejects_non_piecewise_linear_layers(module):
    with pytest.raises(ValueError, match="not piecewise linear"):
        from_relu_mlp(nn.Sequential(nn.Linear(2, 3), module, nn.Linear(3, 1)))


def test_max_min_and_difference_of_max_match_their_formulas():
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(5, 2)), rng.normal(size=5)
    groups = [[0, 1], [2, 3, 4], [1]]
    x = rng.uniform(-3, 3, (2000, 2))
    ell = x @ a.T + b
    want = np.max([ell[:, g].min(1) for g in groups], axis=0)
    assert np.allclose(max_min(a, b, groups)(x)[:, 0], want, atol=1e-12)
    want = ell[:, :2].max(1) - ell[:, 2:].max(1)
    assert np.allclose(difference_of_max(a[:2], b[:2], a[2:], b[2:])(x)[:, 0], want, atol=1e-12)
    assert np.allclose(max_of_affine(a, b)(x)[:, 0], ell.max(1), atol=1e-12)


def test_interpolate_1d_passes_through_knots_and_is_affine_between():
    knots, values = np.array([-1.0, 0.0, 0.5, 2.0]), np.array([1.0, -1.0, 3.0, 0.0])
    g = interpolate_1d(knots, values)
    assert np.allclose(g(knots[:, None])[:, 0], values, atol=1e-12)
    x = np.linspace(-3, 4, 701)
    inside = (x >= -1) & (x <= 2)
    assert np.allclose(g(x[inside, None])[:, 0], np.interp(x[inside], knots, values), atol=1e-12)
    left = x < -1  # linear continuation with the first slope (−2)
    assert np.allclose(g(x[left, None])[:, 0], 1.0 - 2.0 * (x[left] + 1.0), atol=1e-12)


@pytest.mark.parametrize(
    "layers, readout, message",
    [
        ([], None, "empty network"),
        ([(np.zeros((2, 0, 3)), np.zeros((2, 0)))], None, "rank p must be >= 1"),
        ([(np.zeros((2, 2)), np.zeros((2, 2)))], None, r"shape \(m, p, d\)"),
        ([(np.zeros((2, 2, 3)), np.zeros((2, 3)))], None, "b must have shape"),
        ([(np.full((1, 1, 1), np.nan), np.zeros((1, 1)))], None, "NaN or inf"),
        ([(np.full((1, 1, 1), np.inf), np.zeros((1, 1)))], None, "NaN or inf"),
        ([(np.zeros((2, 1, 3)), np.zeros((2, 1))), (np.zeros((1, 1, 4)), np.zeros((1, 1)))], None, "does not match"),
        ([(np.zeros((2, 1, 3)), np.zeros((2, 1)))], (np.zeros((1, 3)), np.zeros(1)), "readout A"),
    ],
)
def test_from_weights_rejects_bad_networks(layers, readout, message):
    with pytest.raises(ValueError, match=message):
        MaxoutNetwork.from_weights(layers, readout)


def test_bad_evaluation_input_and_domain():
    net = MaxoutNetwork.random(2, [3], 2)
    with pytest.raises(ValueError, match=r"\(N, 2\)"):
        net(np.zeros((4, 3)))
    with pytest.raises(ValueError, match="NaN"):
        net(np.full((1, 2), np.nan))
    with pytest.raises(ValueError, match="empty"):
        net.interval_bounds(1.0, 1.0)
    with pytest.raises(ValueError, match="bounded"):
        net.interval_bounds(-np.inf, 1.0)


def test_sample_box_points_inside_and_corners_appended():
    from expressivity.cpwl.maxout import sample_box

    x = sample_box([-1.0, 0.0], [1.0, 2.0], 50, seed=3)
    assert x.shape == (54, 2)
    assert np.all(x >= [-1.0, 0.0]) and np.all(x <= [1.0, 2.0])
    assert {tuple(r) for r in x[-4:]} == {(-1.0, 0.0), (1.0, 0.0), (-1.0, 2.0), (1.0, 2.0)}
    assert sample_box(np.zeros(11), np.ones(11), 5).shape == (5, 11)  # no 2^11 corners
    assert np.array_equal(sample_box(-1.0, 1.0, 7, seed=1), sample_box(-1.0, 1.0, 7, seed=1))


def test_sequential_steps_is_the_one_walk_for_cpwl_and_regions():
    """from_relu_mlp and regions.lower_sequential read the same steps: both refuse the same
    module and agree on the function."""
    from expressivity.cpwl.relu import sequential_steps
    from expressivity.regions.lower import lower_sequential

    torch.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Identity(), nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 1)).double()
    assert [k for _, k, _, _ in sequential_steps(mlp)] == ["linear", "relu", "linear", "relu", "linear"]
    x = np.random.default_rng(0).uniform(-1, 1, (20, 2))
    np.testing.assert_allclose(from_relu_mlp(mlp)(x), lower_sequential(mlp)(x), rtol=1e-12, atol=1e-12)
    bad = nn.Sequential(nn.Linear(2, 2), nn.Tanh())
    for convert in (from_relu_mlp, lower_sequential):
        with pytest.raises(ValueError, match="module 1 \\(Tanh\\) is not piecewise linear"):
            convert(bad)


def test_sequential_steps_reads_maxout_modules_for_interop():
    """With ``maxout=`` the same walk gives the Maxout modules' (W, b) (interop.network_of
    reads it); without it a Maxout is refused like any unsupported module."""
    from expressivity.cpwl.relu import sequential_steps
    from expressivity.interop import Maxout, network_of

    torch.manual_seed(1)
    mlp = nn.Sequential(nn.Linear(2, 3), Maxout(3, 2, 3, dtype=torch.float64), nn.ReLU(), nn.Linear(2, 1)).double()
    steps = sequential_steps(mlp, maxout=Maxout)
    assert [k for _, k, _, _ in steps] == ["linear", "maxout", "relu", "linear"]
    assert np.array_equal(steps[1][2], mlp[1].weight.detach().numpy())
    x = np.random.default_rng(2).uniform(-1, 1, (25, 2))
    with torch.no_grad():
        ref = mlp(torch.as_tensor(x)).numpy()
    np.testing.assert_allclose(network_of(mlp)(x), ref, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="module 1 \\(Maxout\\) is not piecewise linear"):
        sequential_steps(mlp)
