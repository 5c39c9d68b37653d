"""d-D box traversal against Zaslavsky and the 2-D mesh; bad input gives one clear ValueError."""

import itertools
from math import comb

import numpy as np
import pytest
import torch

from expressivity.cpwl import MaxoutNetwork
from expressivity.regions import Box, Plane, Segment, count_regions, lower


def _relu_layer(W, b):
    lin = torch.nn.Linear(W.shape[1], W.shape[0]).double()
    with torch.no_grad():
        lin.weight.copy_(torch.as_tensor(W))
        lin.bias.copy_(torch.as_tensor(b))
    return torch.nn.Sequential(lin, torch.nn.ReLU())


@pytest.mark.parametrize("d,n,seed", [(2, 5, 0), (3, 5, 1), (3, 4, 2)])
def test_box_one_layer_zaslavsky(d, n, seed):
    """Zaslavsky: n hyperplanes in general position in R^d make Σ_{s≤d} C(n, s) regions; the
    box contains every vertex of the arrangement."""
    rng = np.random.default_rng(seed)
    W, b = rng.normal(size=(n, d)), 0.3 * rng.normal(size=n)
    pts = [np.linalg.solve(W[list(c)], -b[list(c)]) for c in itertools.combinations(range(n), d)]
    R = 1 + np.abs(pts).max()
    r = count_regions(_relu_layer(W, b), Box(-R, R))
    assert r.activation_regions == sum(comb(n, s) for s in range(d + 1))
    # every region's H-representation contains its interior point
    for A, bb, x in zip(r.pieces["A"], r.pieces["b"], r.pieces["points"]):
        assert np.all(A @ x <= bb + 1e-9)


@pytest.mark.parametrize("seed", [1, 4])
def test_box_matches_plane_on_2d_maxout(seed):
    net = MaxoutNetwork.random(2, [3, 3], 3, seed=seed)
    rb, rp = count_regions(net, Box(-1.0, 1.0)), count_regions(net, Plane.square(1.0))
    assert rb.activation_regions == rp.activation_regions
    assert rb.linear_regions == rp.linear_regions


# ---------------------------------------------------------------- bad input
def test_degenerate_domains():
    with pytest.raises(ValueError, match="collinear"):
        Plane([0, 0], [1, 1], [2, 2])
    with pytest.raises(ValueError, match="empty"):
        Box([0, 0], [1, 0])
    with pytest.raises(ValueError, match="degenerate"):
        Segment([1.0], [1.0])
    with pytest.raises(ValueError, match="convex"):
        Plane([0, 0], [1, 0], [0, 1], [[0, 0], [1, 0], [0.2, 0.2], [0, 1]])


def test_non_piecewise_linear_layers_are_rejected():
    with pytest.raises(ValueError, match="GELU"):
        count_regions(torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.GELU()), Plane.square())
    from expressivity.transformer import Transformer, TransformerConfig

    soft = Transformer(TransformerConfig(d_model=4, n_layers=1, n_heads=1, d_head=2, d_mlp=4, d_input=1, n_ctx=2,
                                         attention="softmax"))
    with pytest.raises(ValueError, match="softmax"):
        lower(soft)
    ln = Transformer(TransformerConfig(d_model=4, n_layers=1, n_heads=1, d_head=2, d_mlp=4, d_input=1, n_ctx=2,
                                       attention="hardmax", layer_norm="pre"))
    with pytest.raises(ValueError, match="layer norm"):
        lower(ln)


def test_wrong_input_dimension():
    net = MaxoutNetwork.random(3, [4], 2, seed=0)
    with pytest.raises(ValueError, match="input dimension"):
        count_regions(net, Plane.square())
    with pytest.raises(ValueError, match="input dimension"):
        count_regions(net, Segment([0.0, 0.0], [1.0, 1.0]))
    with pytest.raises(ValueError, match="input dimension"):
        count_regions(net, Box([0, 0], [1, 1]))


def test_quadratic_scores_in_2d_are_refused_clearly():
    from expressivity.transformer import Transformer, TransformerConfig

    cfg = TransformerConfig(d_model=4, n_layers=1, n_heads=1, d_head=2, d_mlp=3, d_input=2, d_out=1, n_ctx=3,
                            attention="hardmax", dtype="float64")
    model = Transformer(cfg)
    model.reset_parameters(0)
    with pytest.raises(ValueError, match="Segment"):
        count_regions(model, Plane.square(), n_tokens=3)
