"""2-D exact counting: Zaslavsky's formula, regioncam, dense sampling, maxout and compiled
transformers, linear-region merging."""

from math import comb

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from test_regions_segment import _random_layers, _seq, maxout_patterns, relu_patterns

from expressivity.cpwl import MaxoutNetwork
from expressivity.regions import Plane, count_regions


def _one_layer(W, b):
    lin = torch.nn.Linear(W.shape[1], W.shape[0]).double()
    with torch.no_grad():
        lin.weight.copy_(torch.as_tensor(W))
        lin.bias.copy_(torch.as_tensor(b))
    return torch.nn.Sequential(lin, torch.nn.ReLU())


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 30))
def test_one_layer_zaslavsky(seed, n):
    """Zaslavsky (1975): n lines in general position cut the plane into Σ_{s≤2} C(n, s) regions;
    the square is chosen to contain every pairwise intersection and a point of every line."""
    rng = np.random.default_rng(seed)
    theta = np.pi * (np.arange(n) + 0.5 * rng.random(n)) / n  # directions at least π/(2n) apart
    W = np.stack([np.cos(theta), np.sin(theta)], 1) * rng.uniform(0.5, 2.0, (n, 1))
    b = rng.uniform(-1, 1, n)
    pts = [np.linalg.solve(W[[i, j]], -b[[i, j]]) for i in range(n) for j in range(i + 1, n)]
    pts += [-b[i] * W[i] / (W[i] @ W[i]) for i in range(n)]  # every line meets the square
    R = 1.0 + np.abs(np.array(pts)).max()
    r = count_regions(_one_layer(W, b), Plane([0.0, 0.0], [1.0, 0.0], [0.0, 1.0], (-R, R, -R, R)))
    assert r.activation_regions == sum(comb(n, s) for s in range(3))


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), widths=st.lists(st.integers(2, 24), min_size=1, max_size=3))
def test_agrees_with_regioncam(seed, widths):
    ours, theirs = _ours_and_regioncam(_random_layers([2] + widths, seed))
    assert ours.activation_regions == theirs


def _ours_and_regioncam(layers):
    """Our Regions and regioncam's face count for the ReLU net ``layers`` on [−1, 1]²."""
    regioncam = pytest.importorskip("regioncam")
    rc = regioncam.Regioncam(size=1.0)
    for W, b in layers:
        rc.linear(W, b)
        rc.relu()
    return count_regions(_seq(layers), Plane.square(1.0)), rc.num_faces


def check_faces(regions, pattern_fn, n_grid=201):
    """Every face has one pattern, different faces of one region share it, regions differ, and
    every pattern seen on a grid is the pattern of some counted region."""
    pats = pattern_fn(regions.interior_points())
    rid = regions.pieces.region
    keys = [p.tobytes() for p in pats]
    by_region: dict = {}
    for k, r in zip(keys, rid):
        by_region.setdefault(r, set()).add(k)
    assert all(len(v) == 1 for v in by_region.values())
    assert len({next(iter(v)) for v in by_region.values()}) == regions.activation_regions
    poly = regions.domain.polygon
    a = np.linspace(poly[:, 0].min(), poly[:, 0].max(), n_grid)
    g = np.stack(np.meshgrid(a, np.linspace(poly[:, 1].min(), poly[:, 1].max(), n_grid)), -1).reshape(-1, 2)
    from matplotlib.path import Path

    g = g[Path(poly).contains_points(g)]  # the grid inside the (convex) domain only
    grid = pattern_fn(regions.domain.points(g))
    assert {p.tobytes() for p in grid} <= set(keys)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_relu_mlp_faces_match_sampled_patterns(seed):
    torch.manual_seed(seed)
    mlp = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.ReLU(), torch.nn.Linear(8, 6), torch.nn.ReLU(),
                              torch.nn.Linear(6, 1)).double()
    rng = np.random.default_rng(seed)
    plane = Plane(rng.normal(size=3), rng.normal(size=3), rng.normal(size=3), (-2, 2, -1, 1))
    r = count_regions(mlp, plane)
    check_faces(r, lambda x: relu_patterns(mlp, x))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), rank=st.integers(2, 4))
def test_maxout_faces_match_sampled_patterns(seed, rank):
    net = MaxoutNetwork.random(2, [4, 3], rank, seed=seed)
    r = count_regions(net, Plane([0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [[-1, -1], [1, -1], [1.2, 0.5], [-1, 1]]))
    check_faces(r, lambda x: maxout_patterns(net, x))


def test_linear_regions_merge_faces_with_one_affine_map():
    # two crossing lines, read-out uses only the first unit: 4 activation regions, 2 linear ones
    W, b = np.array([[1.0, 0.2], [0.3, -1.0]]), np.array([0.1, -0.2])
    lin = torch.nn.Linear(2, 1).double()
    with torch.no_grad():
        lin.weight.copy_(torch.tensor([[2.0, 0.0]]))
        lin.bias.zero_()
    net = torch.nn.Sequential(*_one_layer(W, b), lin)
    r = count_regions(net, Plane.square(1.0))
    assert r.activation_regions == 4
    assert r.linear_regions == 2


def test_compiled_transformer_has_the_source_nets_regions_in_2d():
    compile_mod = pytest.importorskip("expressivity.compile")
    net = MaxoutNetwork.random(2, [3, 3], 3, seed=11)
    cm = compile_mod.compile_maxout(net, domain=(-1.0, 1.0))
    r_t, r_m = count_regions(cm, Plane.square(1.0)), count_regions(net, Plane.square(1.0))
    assert r_t.linear_regions == r_m.linear_regions
    assert r_t.activation_regions >= r_m.activation_regions


def _mesh_checks(regions):
    """Faces tile the domain (areas add up, each positive and convex) and the mesh is
    conforming: every edge is used once by each of two faces, or once on the boundary."""
    X, faces = regions.pieces.vertices, regions.pieces.faces
    poly = regions.domain.polygon

    def area(P):
        return 0.5 * np.sum(P[:, 0] * np.roll(P[:, 1], -1) - np.roll(P[:, 0], -1) * P[:, 1])

    total, edges = 0.0, {}
    for row in faces:
        cyc = row[row >= 0]
        P = X[cyc]
        a = area(P)
        assert a > 0
        d = np.roll(P, -1, axis=0) - P
        assert np.all(d[:, 0] * np.roll(d[:, 1], -1) - d[:, 1] * np.roll(d[:, 0], -1) >= -1e-12)
        total += a
        for u, v in zip(cyc, np.roll(cyc, -1)):
            edges[(u, v)] = edges.get((u, v), 0) + 1
    assert abs(total - area(poly)) <= 1e-9 * area(poly)
    assert max(edges.values()) == 1
    boundary = [e for e in edges if (e[1], e[0]) not in edges]
    on_hull = np.isclose(np.abs(_cross_to_hull(X, poly)).min(axis=1), 0, atol=1e-9)
    assert all(on_hull[u] and on_hull[v] for u, v in boundary)


def _cross_to_hull(X, poly):
    """Distance-like residual of every vertex to every side line of the domain polygon."""
    A, B = poly, np.roll(poly, -1, axis=0)
    d = B - A
    return ((X[:, None, 0] - A[None, :, 0]) * d[None, :, 1] - (X[:, None, 1] - A[None, :, 1]) * d[None, :, 0]) \
        / np.linalg.norm(d, axis=1)[None]


@pytest.mark.parametrize("widths", [[64, 64], [100], [16, 16, 16], [200, 40]])
def test_wide_blocks_agree_with_regioncam_and_tile_the_domain(widths):
    """Both ReLU store layouts (all of G; input + one block) and several blocks per layer."""
    r, theirs = _ours_and_regioncam(_random_layers([2] + widths, 11))
    assert r.activation_regions == theirs
    _mesh_checks(r)
