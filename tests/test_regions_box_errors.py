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



def _jump_transformer():
    """Channels [x0, x1, c, f]; c = +1 on token 0, −1 on token 1. Block 0: FFN writes
    f = ReLU(x0 + 2c) (= x0 + 2 on token 0, 0 on token 1 for |x0| < 1). Block 1: constant
    query, key f − c (x0 + 1 vs 1: token 0 wins iff x0 > 0), value c: the output jumps from −1
    to +1 at x0 = 0."""
    from expressivity.transformer import Transformer, TransformerConfig

    cfg = TransformerConfig(d_model=4, n_layers=2, n_heads=1, d_head=1, d_mlp=1, d_input=2, d_out=1, n_ctx=2,
                            attention="hardmax", dtype="float64")
    model = Transformer(cfg)
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
        model.W_E.copy_(torch.tensor([[1.0, 0, 0, 0], [0, 1.0, 0, 0]]))
        model.W_pos.copy_(torch.tensor([[0, 0, 1.0, 0], [0, 0, -1.0, 0]]))
        m0 = model.blocks[0].mlp
        m0.W_in.copy_(torch.tensor([[1.0], [0.0], [2.0], [0.0]]))
        m0.W_out.copy_(torch.tensor([[0, 0, 0, 1.0]]))
        a = model.blocks[1].attn
        a.b_Q.fill_(1.0)
        a.W_K.copy_(torch.tensor([[[0.0], [0.0], [-1.0], [1.0]]]))
        a.W_V.copy_(torch.tensor([[[0.0], [0.0], [1.0], [0.0]]]))
        a.W_O.copy_(torch.tensor([[[1.0, 0, 0, 0]]]))
        model.W_U.copy_(torch.tensor([[1.0], [0.0], [0.0], [0.0]]))
    return model


def test_jumping_hardmax_value_segment_exact_plane_refused():
    model = _jump_transformer()
    seg = Segment([-1.0, 0.3], [1.0, 0.3])
    r = count_regions(model, seg, n_tokens=2, tokens=(0,))
    assert r.activation_regions == 2 and r.linear_regions == 2
    assert np.allclose(r.breakpoints, [0.5])
    p = r.pieces
    # the function is x0 − 1 left of 0 and x0 + 1 right of it: a jump of 2 at the breakpoint
    assert np.isclose(p["out_R"][0, 0], -1.0) and np.isclose(p["out_L"][1, 0], 1.0)
    with pytest.raises(ValueError, match="Segment"):
        count_regions(model, Plane.square(), n_tokens=2, tokens=(0,))


def test_sampled_estimate_approaches_the_exact_count_and_covers_quadratic_scores():
    from expressivity.regions.estimate import sampled_regions

    net = MaxoutNetwork.random(2, [4, 3], 3, seed=2)
    exact = count_regions(net, Plane.square()).activation_regions
    est = sampled_regions(net, Plane.square(), resolution=300)
    assert est["patterns"] == exact  # every region of this net is wider than the grid spacing
    assert est["components"] >= est["patterns"]
    from expressivity.transformer import Transformer, TransformerConfig

    cfg = TransformerConfig(d_model=4, n_layers=1, n_heads=1, d_head=2, d_mlp=3, d_input=2, d_out=1, n_ctx=3,
                            attention="hardmax", dtype="float64")
    model = Transformer(cfg)
    model.reset_parameters(0)
    est = sampled_regions(model, Plane.square(), resolution=100, n_tokens=3)
    assert est["components"] >= est["patterns"] >= 1


def test_the_compile_domain_is_a_typed_field_of_the_program():
    """A compiled model's box travels as Program.compile_domain (a CompileDomain, read-only,
    checked); other programs have none, and a count outside the box is refused."""
    from dataclasses import replace

    from expressivity.compile import compile_maxout
    from expressivity.regions import CompileDomain

    net = MaxoutNetwork.random(in_dim=2, widths=[3], ranks=[2], seed=0)
    prog = lower(compile_maxout(net, domain=([0.0, -1.0], [1.0, 1.0])))
    assert isinstance(prog.compile_domain, CompileDomain)
    assert prog.compile_domain.lo.tolist() == [0.0, -1.0] and prog.compile_domain.hi.tolist() == [1.0, 1.0]
    assert not prog.compile_domain.lo.flags.writeable and "compile_domain" not in prog.meta
    assert lower(net).compile_domain is None
    with pytest.raises(ValueError, match="compile domain"):
        count_regions(prog, Segment([-1.0, 0.0], [1.0, 0.0]))
    assert count_regions(prog, Segment([0.0, 0.0], [1.0, 0.0])).activation_regions >= 1
    for lo, hi in (([0.0, 1.0], [1.0, 1.0]), ([0.0, np.nan], [1.0, 1.0]), ([0.0], [1.0, 1.0])):
        with pytest.raises(ValueError, match="CompileDomain"):
            CompileDomain(lo, hi)
    with pytest.raises(ValueError, match="in_dim"):
        replace(prog, compile_domain=CompileDomain([0.0], [1.0]))
    with pytest.raises(ValueError, match="CompileDomain or None"):
        replace(prog, compile_domain=(np.zeros(2), np.ones(2)))
