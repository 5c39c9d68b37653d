"""1-D exact counting against closed forms (sawtooth q^L, tent 2^L, Serra's ∏(n_l+1)),
independent dense sampling, regioncam.Regioncam1D, and compiled transformers vs their source."""

import itertools

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from expressivity.cpwl import MaxoutNetwork
from expressivity.cpwl.families import sawtooth_maxout, serra_domain, serra_net, tent_map, zigzag
from expressivity.regions import Segment, count_regions

SEG01 = Segment([0.0], [1.0])


# ---------------------------------------------------------------- independent pattern oracles
def maxout_patterns(net: MaxoutNetwork, x: np.ndarray) -> np.ndarray:
    """Argmax of every unit of every layer, computed directly from the weights: (N, Σ m_l)."""
    h, pats = x, []
    for layer in net.layers:
        pre = np.einsum("nd,mpd->nmp", h, layer.W) + layer.b
        pats.append(pre.argmax(axis=2))
        h = pre.max(axis=2)
    return np.concatenate(pats, axis=1)


def relu_patterns(mlp, x: np.ndarray) -> np.ndarray:
    out, h = [], torch.as_tensor(x, dtype=torch.float64)
    with torch.no_grad():
        for mod in mlp:
            h = mod(h)
            if isinstance(mod, torch.nn.Linear):
                out.append((h > 0).numpy())
    return np.concatenate(out[:-1] if isinstance(mlp[-1], torch.nn.Linear) else out, axis=1)


def check_partition(regions, pattern_fn, n_grid=20001):
    """Grid patterns equal the pattern of the piece containing them; neighbouring pieces differ."""
    seg = regions.domain
    t0, t1 = regions.pieces.t0, regions.pieces.t1
    mids = pattern_fn(regions.interior_points())
    rid = regions.pieces.region
    # pieces of one activation region share its pattern; different regions differ from neighbours
    assert np.all((rid[1:] == rid[:-1]) == np.all(mids[1:] == mids[:-1], axis=1))
    t = np.linspace(0, 1, n_grid)
    k = np.clip(np.searchsorted(t1, t, side="left"), 0, len(t1) - 1)
    near = np.minimum(np.abs(t - t0[k]), np.abs(t - t1[k])) < 1e-9
    grid = pattern_fn(seg.points(t))
    assert np.all(grid[~near] == mids[k[~near]])
    runs = 1 + np.any(grid[1:] != grid[:-1], axis=1).sum()
    assert runs <= regions.activation_regions


# ---------------------------------------------------------------- closed forms
@settings(max_examples=20, deadline=None)
@given(q=st.integers(2, 5), L=st.integers(1, 4))
def test_sawtooth_has_q_to_the_L_pieces(q, L):
    net = sawtooth_maxout(q, L)
    x = np.linspace(0, 1, 513)[:, None]
    assert np.allclose(net(x)[:, 0], zigzag(q, x[:, 0], L), atol=1e-9)
    r = count_regions(net, SEG01)
    assert r.linear_regions == q**L
    assert r.activation_regions == q**L


@pytest.mark.parametrize("L", [1, 2, 5, 8])
def test_tent_map_has_2_to_the_L_pieces(L):
    r = count_regions(tent_map(L), SEG01)
    assert r.linear_regions == 2**L


@pytest.mark.parametrize("widths", [[3], [4], [3, 3], [4, 5], [3, 4, 5], [6, 3, 4]])
def test_serra_maximum_is_attained(widths):
    """Serra, Tjandraatmadja, Ramalingam (2018): for n0 = 1 and n_l >= 3 the maximal number of
    regions is ∏(n_l + 1); the constructed net attains it."""
    lo, hi = serra_domain()
    net = serra_net(widths)
    r = count_regions(net, Segment([lo], [hi]))
    assert r.activation_regions == int(np.prod(np.array(widths) + 1))
    check_partition(r, lambda x: maxout_patterns(net, x))


# ---------------------------------------------------------------- random nets vs sampling
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), depth=st.integers(1, 3), width=st.integers(1, 8), rank=st.integers(2, 4))
def test_random_maxout_matches_dense_sampling(seed, depth, width, rank):
    net = MaxoutNetwork.random(1, [width] * depth, rank, seed=seed)
    r = count_regions(net, Segment([-2.0], [2.0]))
    check_partition(r, lambda x: maxout_patterns(net, x))


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), in_dim=st.integers(1, 3))
def test_random_relu_mlp_matches_dense_sampling(seed, in_dim):
    torch.manual_seed(seed)
    mlp = torch.nn.Sequential(torch.nn.Linear(in_dim, 6), torch.nn.ReLU(), torch.nn.Linear(6, 5),
                              torch.nn.ReLU(), torch.nn.Linear(5, 2)).double()
    rng = np.random.default_rng(seed)
    seg = Segment(rng.normal(size=in_dim), rng.normal(size=in_dim))
    r = count_regions(mlp, seg)
    check_partition(r, lambda x: relu_patterns(mlp, x))


def _random_layers(widths, seed):
    rng = np.random.default_rng(seed)
    return [((rng.normal(size=(a, b)) / np.sqrt(a)).astype(np.float32), (0.5 * rng.normal(size=b)).astype(np.float32))
            for a, b in itertools.pairwise(widths)]


def _seq(layers):
    mods = []
    for W, b in layers:
        lin = torch.nn.Linear(*W.shape).double()
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(W.T.astype(np.float64)))
            lin.bias.copy_(torch.from_numpy(b.astype(np.float64)))
        mods += [lin, torch.nn.ReLU()]
    return torch.nn.Sequential(*mods)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), widths=st.lists(st.integers(4, 64), min_size=1, max_size=3))
def test_agrees_with_regioncam_1d(seed, widths):
    regioncam = pytest.importorskip("regioncam")
    layers = _random_layers([1] + widths, seed)
    rc = regioncam.Regioncam1D((-1.0, 1.0))
    for W, b in layers:
        rc.linear(W, b)
        rc.relu()
    r = count_regions(_seq(layers), Segment([-1.0], [1.0]))
    assert r.activation_regions == rc.num_edges


# ---------------------------------------------------------------- linear vs activation regions
def test_linear_regions_merge_pieces_with_one_affine_map():
    # f(x) = ReLU(x) with two more units (kinks at x = 1 − 10⁻³ and 1) that the read-out ignores:
    # 4 activation regions, 2 linear ones; breakpoints at t = (x + 2)/4
    lin1 = torch.nn.Linear(1, 3).double()
    lin2 = torch.nn.Linear(3, 1).double()
    with torch.no_grad():
        lin1.weight.copy_(torch.tensor([[1.0], [1.0], [1.0]]))
        lin1.bias.copy_(torch.tensor([0.0, -1.0, -1.0 + 1e-3]))
        lin2.weight.copy_(torch.tensor([[1.0, 0.0, 0.0]]))
        lin2.bias.zero_()
    r = count_regions(torch.nn.Sequential(lin1, torch.nn.ReLU(), lin2), Segment([-2.0], [2.0]))
    assert r.activation_regions == 4
    assert r.linear_regions == 2
    assert np.allclose(r.breakpoints, [0.5, 0.75 - 1e-3 / 4, 0.75])


# ---------------------------------------------------------------- hardmax transformers
def _tiny_hardmax_transformer(seed, causal=False):
    from expressivity.transformer import Transformer, TransformerConfig

    cfg = TransformerConfig(d_model=4, n_layers=2, n_heads=2, d_head=2, d_mlp=5, d_input=1, d_out=1, n_ctx=3,
                            attention="hardmax", dtype="float64", causal=causal)
    model = Transformer(cfg)
    model.reset_parameters(seed)
    with torch.no_grad():
        for blk in model.blocks:
            blk.attn.b_K.normal_()
            blk.attn.b_Q.normal_()
    return model


def _selection_patterns(model, x):
    cache = {}
    with torch.no_grad():
        inp = torch.as_tensor(x, dtype=torch.float64)[:, None, :].expand(-1, 3, -1)
        model(inp, cache=cache)
    pats = [cache[f"blocks.{k}.attn.hook_pattern"].argmax(-1).reshape(len(x), -1).numpy() for k in range(2)]
    pre = [((cache[f"blocks.{k}.hook_resid_mid"] @ model.blocks[k].mlp.W_in + model.blocks[k].mlp.b_in) > 0)
           .reshape(len(x), -1).numpy() for k in range(2)]
    return np.concatenate(pats + pre, axis=1)


@pytest.mark.parametrize("seed,causal", [(0, False), (1, False), (2, True), (3, False)])
def test_hardmax_transformer_with_quadratic_scores_on_a_segment(seed, causal):
    """Queries and keys both depend on x: boundaries are roots of quadratics, values may jump."""
    model = _tiny_hardmax_transformer(seed, causal)
    seg = Segment([-3.0], [3.0])
    r = count_regions(model, seg, n_tokens=3)
    check_partition(r, lambda x: _selection_patterns(model, x), n_grid=40001)
    # the piecewise-affine output of the counter matches the model everywhere inside the pieces
    t = np.linspace(0, 1, 2001)
    k = np.clip(np.searchsorted(r.pieces.t1, t), 0, r.n_pieces - 1)
    s = (t - r.pieces.t0[k]) / (r.pieces.t1[k] - r.pieces.t0[k])
    pred = r.pieces.out_L[k] + s[:, None] * (r.pieces.out_R[k] - r.pieces.out_L[k])
    with torch.no_grad():
        y = model(torch.as_tensor(seg.points(t))[:, None, :].expand(-1, 3, -1)).reshape(len(t), -1).numpy()
    inside = np.minimum(np.abs(t - r.pieces.t0[k]), np.abs(t - r.pieces.t1[k])) > 1e-9
    assert np.allclose(pred[inside], y[inside], atol=1e-8)


def test_compiled_transformer_has_the_source_nets_linear_regions():
    compile_mod = pytest.importorskip("expressivity.compile")
    for q, L in ((2, 4), (3, 3), (5, 2)):
        net = sawtooth_maxout(q, L)
        cm = compile_mod.compile_maxout(net, domain=(0.0, 1.0))
        r_t, r_m = count_regions(cm, SEG01), count_regions(net, SEG01)
        assert r_t.linear_regions == r_m.linear_regions == q**L
        assert np.allclose(r_t.breakpoints, r_m.breakpoints, atol=1e-9)
    net = MaxoutNetwork.random(2, [4, 3], 3, seed=5)
    cm = compile_mod.compile_maxout(net, domain=(-1.0, 1.0))
    seg = Segment([-1.0, -0.7], [1.0, 0.9])
    r_t, r_m = count_regions(cm, seg), count_regions(net, seg)
    assert r_t.linear_regions == r_m.linear_regions
    lin_t = r_t.pieces.t0[1:][np.diff(r_t.linear_labels) != 0]
    lin_m = r_m.pieces.t0[1:][np.diff(r_m.linear_labels) != 0]
    assert np.allclose(lin_t, lin_m, atol=1e-9)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), rank=st.integers(2, 4))
def test_vertex_fast_path_equals_general_counter(seed, rank):
    net = MaxoutNetwork.random(2, [5, 4, 3], rank, seed=seed)
    seg = Segment([-1.5, -1.0], [1.0, 2.0])
    fast, slow = count_regions(net, seg), count_regions(net, seg, general=True)
    assert fast.activation_regions == slow.activation_regions
    assert fast.linear_regions == slow.linear_regions
    assert np.allclose(fast.breakpoints, slow.breakpoints, atol=1e-12)
