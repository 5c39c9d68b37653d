"""d-D subdivision counter (Box / Slice): against the LP traversal, the 2-D mesh, closed forms,
dense sampling and Euler's relation; degenerate arrangements; refusals."""

from math import comb

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from test_regions_segment import _random_layers, _seq, maxout_patterns, relu_patterns

from expressivity.cpwl import MaxoutNetwork
from expressivity.regions import Box, Plane, Segment, Slice, count_regions
from expressivity.regions.ir import Affine, Embed, Program, Read, ReLU, Residual


def arrangement(W, b) -> Program:
    """One ReLU layer x ↦ relu(W x + b): its regions are the cells of the arrangement of the
    hyperplanes w_i·x + b_i = 0 (rows of W; zero rows are no hyperplane)."""
    W, b = np.asarray(W, float), np.asarray(b, float)
    d = W.shape[1]
    return Program(d, (Embed(np.eye(d)[:, None, :], np.zeros((1, d))), Affine(W.T, b), ReLU(), Read((0,))))


def n_regions(model, R, d=None, **kw):
    lo = -np.asarray(R, float) if d is None else np.full(d, -R)
    return count_regions(model, Box(lo, -lo), **kw).activation_regions


# ---------------------------------------------------------------- against the LP traversal
@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 10_000), d=st.integers(3, 5),
       widths=st.lists(st.integers(1, 12), min_size=1, max_size=3))
def test_relu_counts_equal_the_lp_traversal(seed, d, widths):
    net = _seq(_random_layers([d] + widths, seed))
    r = count_regions(net, Box(-1.0, 1.0))
    assume(r.activation_regions <= 100)  # the LP reference takes ≈ 30 ms per region
    ref = count_regions(net, Box(-1.0, 1.0), method="lp")
    assert r.activation_regions == ref.activation_regions
    assert r.linear_regions == ref.linear_regions


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 10_000), d=st.integers(3, 5), depth=st.integers(1, 3), width=st.integers(1, 3),
       rank=st.integers(2, 3))
def test_maxout_counts_equal_the_lp_traversal(seed, d, depth, width, rank):
    net = MaxoutNetwork.random(d, [width] * depth, rank, seed=seed)
    r = count_regions(net, Box(-1.0, 1.0))
    assume(r.n_pieces <= 100)
    ref = count_regions(net, Box(-1.0, 1.0), method="lp")
    assert r.activation_regions == ref.activation_regions
    assert r.linear_regions == ref.linear_regions


# ---------------------------------------------------------------- against the 2-D mesh
@pytest.mark.parametrize("seed", range(4))
def test_d2_equals_the_plane_counter(seed):
    net = _seq(_random_layers([2, 10, 10, 6], seed))
    mx = MaxoutNetwork.random(2, [3, 3], 3, seed=seed)
    for m in (net, mx):
        rb, rp = count_regions(m, Box(-1.0, 1.0)), count_regions(m, Plane.square(1.0))
        assert rb.activation_regions == rp.activation_regions
        assert rb.linear_regions == rp.linear_regions


def test_slices_equal_plane_and_segment_counts():
    net = _seq(_random_layers([4, 12, 12], 3))
    plane = Plane([0.1, 0, 0, 0.2], [1, 0.5, 0, 0], [0, 0, 1, -0.3], (-1, 1, -0.5, 1.5))
    sl = Slice(plane.origin, [plane.u, plane.v], [-1, -0.5], [1, 1.5])
    assert count_regions(net, sl).activation_regions == count_regions(net, plane).activation_regions
    seg = Segment([-1, 0.2, 0.3, -1], [1, 0.5, -0.7, 1])
    assert count_regions(net, Slice.of_segment(seg)).activation_regions == count_regions(net, seg).activation_regions


def test_a_residual_program_equals_the_lp_traversal():
    rng = np.random.default_rng(5)
    d = 3
    body = (Affine(rng.normal(size=(d, 4)), rng.normal(size=4) * 0.3), ReLU(), Affine(rng.normal(size=(4, d)), np.zeros(d)))
    prog = Program(d, (Embed(np.eye(d)[:, None, :], np.zeros((1, d))), Residual(body),
                       Affine(rng.normal(size=(d, 3)), rng.normal(size=3) * 0.3), ReLU(), Read((0,))))
    r, ref = count_regions(prog, Box(-1.0, 1.0)), count_regions(prog, Box(-1.0, 1.0), method="lp")
    assert r.activation_regions == ref.activation_regions
    assert r.linear_regions == ref.linear_regions


def test_compiled_transformer_in_3d_has_the_maxout_nets_linear_regions():
    compile_mod = pytest.importorskip("expressivity.compile")
    net = MaxoutNetwork.random(3, [2, 2], 2, seed=4)
    cm = compile_mod.compile_maxout(net, domain=(-1.0, 1.0))
    r_t, r_m = count_regions(cm, Box(-1.0, 1.0)), count_regions(net, Box(-1.0, 1.0))
    assert r_t.linear_regions == r_m.linear_regions
    assert r_t.activation_regions >= r_m.activation_regions


# ---------------------------------------------------------------- closed forms and sampling
@pytest.mark.parametrize("d,n,seed", [(3, 7, 0), (4, 6, 1), (5, 6, 2), (6, 7, 3)])
def test_one_layer_zaslavsky(d, n, seed):
    """Zaslavsky (1975): n hyperplanes in general position in R^d make Σ_{s≤d} C(n, s) regions;
    the box is chosen to contain every vertex of the arrangement."""
    import itertools

    rng = np.random.default_rng(seed)
    W, b = rng.normal(size=(n, d)), 0.3 * rng.normal(size=n)
    pts = [np.linalg.solve(W[list(c)], -b[list(c)]) for c in itertools.combinations(range(n), d)]
    R = 1 + np.abs(pts).max()
    assert n_regions(arrangement(W, b), R, d) == sum(comb(n, s) for s in range(d + 1))


@pytest.mark.parametrize("d,widths,seed", [(3, [8, 8], 0), (3, [6, 6, 6], 1), (4, [6, 5], 2)])
def test_every_sampled_pattern_is_a_region(d, widths, seed):
    net = _seq(_random_layers([d] + widths, seed))
    r = count_regions(net, Box(-1.0, 1.0))
    pats = relu_patterns(net, r.interior_points())
    keys = {p.tobytes() for p in pats}
    assert len(keys) == r.activation_regions  # one pattern per region, all different
    x = np.random.default_rng(seed).uniform(-1, 1, size=(40_000, d))
    assert {p.tobytes() for p in relu_patterns(net, x)} <= keys


def test_every_sampled_maxout_pattern_is_a_region():
    net = MaxoutNetwork.random(3, [3, 2], 3, seed=7)
    r = count_regions(net, Box(-1.0, 1.0))
    keys = {p.tobytes() for p in maxout_patterns(net, r.interior_points())}
    assert len(keys) == r.activation_regions
    x = np.random.default_rng(7).uniform(-1, 1, size=(40_000, 3))
    assert {p.tobytes() for p in maxout_patterns(net, x)} <= keys


@pytest.mark.parametrize("seed", range(3))
def test_euler_relation(seed):
    """The complex subdivides a ball: V − E + C = 1 on a square, V − E + F − C = 1 in a cube
    (F: 2-faces = facets of the cells, each counted once)."""
    net2 = _seq(_random_layers([2, 9, 9], seed))
    p = count_regions(net2, Box(-1.0, 1.0)).pieces
    assert len(p.vertices) - len(p.edges) + len(p.region) == 1
    net3 = _seq(_random_layers([3, 7, 7], seed))
    p = count_regions(net3, Box(-1.0, 1.0)).pieces
    F = len(np.unique(p.facets[0]))
    assert len(p.vertices) - len(p.edges) + F - len(p.region) == 1


def test_maps_are_the_networks_affine_maps():
    net = _seq(_random_layers([3, 6, 6], 9))
    r = count_regions(net, Box(-1.0, 1.0))
    import torch

    x = r.interior_points()
    with torch.no_grad():
        y = net(torch.as_tensor(x)).numpy()
    M = r.pieces.maps
    np.testing.assert_allclose(np.einsum("coi,ci->co", M[..., :-1], x) + M[..., -1], y, atol=1e-9)


# ---------------------------------------------------------------- degenerate arrangements
TRIANGLE_2D = ([[1, 0], [0, 1], [1, 1]], [0, 0, -1])
TETRA_3D = ([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1]], [0, 0, 0, -1])


@pytest.mark.parametrize("R", [1.5, 10.0, 1e3, 1e5, 1e6, 1e7, 1e8])
def test_wide_boxes_keep_every_region(R):
    """Regression (the LP traversal lost these): x = 0, y = 0, x + y = 1 make 7 regions in every
    box containing the triangle; x, y, z, x + y + z = 1 make 15 in 3-D."""
    assert n_regions(arrangement(*TRIANGLE_2D), R, 2) == 7
    assert n_regions(arrangement(*TETRA_3D), R, 3) == 15


def test_nested_boxes_never_lose_regions():
    rng = np.random.default_rng(0)
    W = np.vstack([TETRA_3D[0], rng.normal(size=(4, 3))])
    b = np.concatenate([TETRA_3D[1], 0.5 * rng.normal(size=4)])
    radii = 10.0 ** np.arange(-3, 9)
    counts = [n_regions(arrangement(W, b), R, 3) for R in radii]
    assert counts == sorted(counts)
    assert counts[0] == 8  # only the three coordinate planes meet the tiny box
    assert counts[radii.tolist().index(1e3)] == sum(comb(8, s) for s in range(4))  # Zaslavsky


@pytest.mark.parametrize("case,expected", [
    # three lines through one point (a neuron through an existing vertex): 6 sectors
    (([[1, 0], [0, 1], [1, -1]], [0, 0, 0]), 6),
    # four generic planes through one point: a central arrangement, 2 Σ_{i<3} C(3, i) = 14
    (([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1]], [0, 0, 0, 0]), 14),
    # coincident hyperplanes (a repeat and a scaled copy) count once
    (([[1, 0], [0, 1], [1, 1], [1, 0], [2, 2]], [0, 0, -1, 0, -2], 2.0), 7),
    # parallel planes: x = 0, x = 0.5, y = 0 → 3 · 2
    (([[1, 0, 0], [1, 0, 0], [0, 1, 0]], [0, -0.5, 0]), 6),
    # zero rows (constant neurons) cut nothing
    (([[1, 0, 0], [0, 0, 0], [0, 1, 0], [0, 0, 0]], [0, 0.3, 0, 0]), 4),
    # hyperplanes on the faces of the box [−1, 1]^3 cut nothing
    (([[1, 0, 0], [0, 1, 0], [1, 0, 0], [0, 0, 1]], [-1, 1, 0, 0]), 4),
    # a plane through an edge of the complex (the line x = y = 0) and through vertices on it
    (([[1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1]], [0, 0, 0, 0]), 12),
])
def test_degenerate_arrangements(case, expected):
    W, b, R = case if len(case) == 3 else (*case, 1.0)
    assert n_regions(arrangement(W, b), R, len(W[0])) == expected


def test_degenerate_arrangement_euler_and_sampling():
    W = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1], [1, 1, 1], [1, -1, 0]], float)
    b = np.array([0, 0, 0, 0, 0, 0.0])
    r = count_regions(arrangement(W, b), Box(-1.0, 1.0))
    p = r.pieces
    assert len(p.vertices) - len(p.edges) + len(np.unique(p.facets[0])) - len(p.region) == 1
    x = np.random.default_rng(1).uniform(-1, 1, size=(40_000, 3))
    sample = {tuple(row) for row in (x @ W.T + b > 0)}
    assert {tuple(row) for row in (r.interior_points() @ W.T + b > 0)} == sample
    assert r.activation_regions == len(sample)


# ---------------------------------------------------------------- refusals and options
def test_refusals_name_the_parameter():
    net = _seq(_random_layers([7, 3], 0))
    with pytest.raises(ValueError, match="Slice"):
        count_regions(net, Box(-1.0, 1.0))
    with pytest.raises(ValueError, match="method"):
        count_regions(net, Box(-1.0, 1.0), method="fast")
    with pytest.raises(ValueError, match="Slice.basis"):
        Slice(np.zeros(3), [[1, 0, 0], [2, 0, 0]], [0, 0], [1, 1])
    with pytest.raises(ValueError, match="Slice.lo"):
        Slice(np.zeros(3), [[1, 0, 0], [0, 1, 0]], [0, 0, 0], [1, 1, 1])
    sl = Slice(np.zeros(7), np.eye(7)[:3], -1.0, 1.0)  # a 3-D slice of the 7-D input is fine
    assert count_regions(net, sl).activation_regions >= 1


def test_memory_budget_is_refused_before_allocating(monkeypatch):
    monkeypatch.setenv("EXPRESSIVITY_MEMORY_BUDGET", "200K")
    net = _seq(_random_layers([3, 40, 40], 0))
    with pytest.raises(ValueError, match="memory budget") as e:
        count_regions(net, Box(-1.0, 1.0))
    assert "\n" not in str(e.value) and "Slice" in str(e.value)


def test_cli_box_counts_and_plots_3d_slices(tmp_path):
    import json

    from typer.testing import CliRunner

    from expressivity.cli import app

    spec = tmp_path / "net.json"
    spec.write_text(json.dumps({"type": "random", "in_dim": 3, "widths": [5, 4], "ranks": 2, "seed": 1, "out_dim": 1}))
    png = tmp_path / "box.png"
    res = CliRunner().invoke(app, ["regions", str(spec), "--box", "--plot", str(png), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    from expressivity.interop.region_models import region_model

    ref = count_regions(region_model(spec), Box(-1.0, 1.0), method="lp")
    assert out["activation_regions"] == ref.activation_regions
    assert png.stat().st_size > 10_000


def test_dimension_claim_holds_at_test_size():
    """Serra et al.'s bound: n_0 = 1 gives ∏(n_l + 1); one layer gives Zaslavsky's sum; [2, 5] in
    3-D: j_1 = 0, 1, 2 leave j_2 ≤ 2, 1, 0, so 16 + 2 · 6 + 1."""
    from expressivity.report.claims import Context
    from expressivity.report.regions_claims import dimension, serra_bound

    assert serra_bound(1, [3, 3]) == 16 and serra_bound(2, [4]) == 11 and serra_bound(3, [2, 5]) == 16 + 2 * 6 + 1
    m = dimension(Context(size="test"))
    assert m.checks and all(c.ok() for c in m.checks) and m.figure


def test_a_constant_network_is_one_linear_region_in_every_counter():
    """relu(−0.45·relu(w·x + b) − 0.11) is 0 everywhere: two activation regions (the first
    ReLU's kink), one affine map. The least-squares maps of the d-D cells carry ≈ 1e-16 of
    round-off while every true gradient is 0, so the merge tolerance must have a scale other
    than the largest gradient (found by the LP property test: seed 3, widths [1, 1, 2])."""
    net = _seq(_random_layers([3, 1, 1, 2], 3))
    for dom in (Box(-1.0, 1.0), Plane([0, 0, 0], [1, 0, 0], [0, 1, 0], (-1, 1, -1, 1)),
                Slice([0, 0, 0], [[1, 0, 0], [0, 1, 0], [0, 0, 1]], [-1, -1, -1], [1, 1, 1])):
        r = count_regions(net, dom)
        assert (r.activation_regions, r.linear_regions) == (2, 1), dom
    assert count_regions(net, Box(-1.0, 1.0), method="lp").linear_regions == 1
    x = np.random.default_rng(0).uniform(-1, 1, (200, 3))
    import torch

    y = net(torch.as_tensor(x)).detach().numpy()
    assert np.ptp(y, axis=0).max() == 0.0  # constant indeed
