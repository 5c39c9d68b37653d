"""The count-only streamed d-D count (``count_regions(..., stream=True)``, regions/stream.py):
with a tiny ``stream_rows`` every group is split many times, and the counts still equal the full
count's (and the LP traversal's where it is small) and keep the problem's symmetries; a split
that loses a border vertex or counts a border cell twice is caught; the refusals."""

import json

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from test_regions_segment import _random_layers, _seq
from typer.testing import CliRunner

from expressivity.cli import app
from expressivity.cpwl import MaxoutNetwork
from expressivity.regions import Box, Plane, Segment, Slice, count_regions, stream, subdivide
from expressivity.regions import complex_kernels as ck
from expressivity.regions.ir import Affine, Embed, Program, Read, ReLU, Residual
from expressivity.regions.plot import plot_domain

runner = CliRunner()
BOX = Box(-1.0, 1.0)


def both(model, dom=BOX, rows=None, **kw):
    """(the full count, the streamed one) of ``model`` on ``dom``; ``rows`` default 8: a group
    is split as soon as it has two cells (and more than 8 vertices)."""
    full = count_regions(model, dom, **kw)
    streamed = count_regions(model, dom, stream=True, stream_rows=rows or 8, **kw)
    return full, streamed


def assert_same(full, streamed):
    assert streamed.streamed and not full.streamed
    assert streamed.activation_regions == full.activation_regions
    assert streamed.n_pieces == full.n_pieces


def mlp(d, widths, seed, out=1):
    """A torch-default-init ReLU MLP with a linear read-out (``torch.manual_seed(seed)``)."""
    torch.manual_seed(seed)
    mods, n = [], d
    for w in widths:
        mods += [torch.nn.Linear(n, w), torch.nn.ReLU()]
        n = w
    return torch.nn.Sequential(*mods, torch.nn.Linear(n, out)).double()


# ---------------------------------------------------------------- equal to the full count
@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), d=st.integers(2, 5),
       widths=st.lists(st.integers(1, 10), min_size=1, max_size=3), rows=st.sampled_from([None, 40, 300]))
def test_streamed_relu_counts_equal_the_full_count(seed, d, widths, rows):
    full, streamed = both(_seq(_random_layers([d] + widths, seed)), Box(-np.ones(d), np.ones(d)), rows)
    assert_same(full, streamed)
    assert streamed.pieces.cells == full.n_pieces


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 10_000), d=st.integers(3, 5), widths=st.lists(st.integers(2, 8), min_size=1, max_size=3))
def test_torch_default_init_nets_stream_to_the_full_count(seed, d, widths):
    full, streamed = both(mlp(d, widths, seed), Box(-np.ones(d), np.ones(d)))
    assert_same(full, streamed)


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 10_000), d=st.integers(3, 4))
def test_small_streamed_counts_equal_the_lp_traversal(seed, d):
    net = _seq(_random_layers([d, 4, 3], seed))
    full, streamed = both(net, Box(-np.ones(d), np.ones(d)))
    assert_same(full, streamed)
    if full.activation_regions <= 40:  # the LP reference takes ≈ 30 ms per region
        assert streamed.activation_regions == count_regions(net, Box(-np.ones(d), np.ones(d)),
                                                            method="lp").activation_regions


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_a_residual_program_streams_to_the_full_count(seed):
    rng = np.random.default_rng(seed)
    d = 3
    body = (Affine(rng.normal(size=(d, 6)), rng.normal(size=6) * 0.3), ReLU(),
            Affine(rng.normal(size=(6, d)), np.zeros(d)))
    prog = Program(d, (Embed(np.eye(d)[:, None, :], np.zeros((1, d))), Residual(body),
                       Affine(rng.normal(size=(d, 5)), rng.normal(size=5) * 0.3), ReLU(), Read((0,))))
    assert_same(*both(prog))


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 10_000), d=st.integers(2, 4), width=st.integers(2, 4))
def test_a_maxout_rank_3_net_streams_to_the_full_count(seed, d, width):
    """Rank 3 over-splits: the regions are the distinct patterns at the cells' centroids, kept
    across the groups as hashes."""
    net = MaxoutNetwork.random(d, [width, width], 3, seed=seed)
    assert_same(*both(net, Box(-np.ones(d), np.ones(d))))


def test_the_pattern_hashes_merge_over_groups_where_cells_over_split():
    """Some rank-3 net has more cells than regions; its streamed count (many groups) still
    merges the cells of one pattern found in different groups."""
    for seed in range(40):
        net = MaxoutNetwork.random(3, [3, 3], 3, seed=seed)
        full, streamed = both(net)
        if full.n_pieces > full.activation_regions and streamed.pieces.groups > 1:
            assert_same(full, streamed)
            return
    pytest.fail("no rank-3 net over-split in 40 seeds")


def test_a_slice_streams_and_small_limits_split_into_many_groups():
    net = _seq(_random_layers([5, 10, 10], 2))
    sl = Slice(np.zeros(5), np.eye(5)[[0, 2, 3]], -1.0, 1.0)
    full, streamed = both(net, sl, rows=20)
    assert_same(full, streamed)
    assert streamed.pieces.groups > 10 and streamed.pieces.stream_rows == 20
    _, big = both(net, sl, rows=10**6)
    assert big.pieces.groups == 1 and big.activation_regions == full.activation_regions


def test_the_invariant_checks_run_until_the_first_split(monkeypatch):
    monkeypatch.setenv("EXPRESSIVITY_CHECK", "1")
    assert_same(*both(_seq(_random_layers([3, 6, 6], 4))))


# ---------------------------------------------------------------- the symmetries
@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 10_000), c=st.floats(-1e6, 1e6), s=st.floats(1e-3, 1e3), d=st.integers(3, 4))
def test_streamed_counts_keep_the_symmetries(seed, c, s, d):
    """f + c on the output, the box [−1, 1]^d rescaled to [−s, s]^d with the first layer × 1/s,
    and a hidden layer's units permuted: the same streamed count as the full count of f."""
    net = mlp(d, [6, 5], seed)
    ref = count_regions(net, Box(-np.ones(d), np.ones(d)))
    box = Box(-np.ones(d), np.ones(d))
    shifted, rescaled, permuted = (mlp(d, [6, 5], seed) for _ in range(3))
    perm = torch.from_numpy(np.random.default_rng(seed).permutation(6))
    with torch.no_grad():
        shifted[-1].bias += c
        rescaled[0].weight /= s
        permuted[0].weight.copy_(permuted[0].weight[perm])
        permuted[0].bias.copy_(permuted[0].bias[perm])
        permuted[2].weight.copy_(permuted[2].weight[:, perm])
    for model, dom in ((shifted, box), (rescaled, Box(-s * np.ones(d), s * np.ones(d))), (permuted, box)):
        r = count_regions(model, dom, stream=True, stream_rows=8)
        assert (r.activation_regions, r.n_pieces) == (ref.activation_regions, ref.n_pieces)


# ---------------------------------------------------------------- a broken split is caught
def _border_vertex_dropped(real_part):
    """A ``part`` that forgets, in every cell of the group, the first vertex the group shares
    with the other cells (a border vertex)."""
    def part(cx, cells):
        sub = real_part(cx, cells)
        others = np.setdiff1d(np.arange(cx.C), cells)
        used = np.unique(ck.gather_cells(cx.cs[cells], cx.cl[cells], cx.pool)[1])
        border = np.intersect1d(used, ck.gather_cells(cx.cs[others], cx.cl[others], cx.pool)[1])
        if len(border) == 0:
            return sub
        v = np.searchsorted(used, border[0])  # its id in the part (vertices kept in order)
        cstart, cverts = sub.csr()
        keep = cverts != v
        sub.cl = np.add.reduceat(keep, cstart[:-1]).astype(np.int64)
        sub.cs = np.r_[0, np.cumsum(sub.cl)[:-1]].astype(np.int64)
        sub.pool, sub.npool = cverts[keep], int(keep.sum())
        return sub

    return part


def test_a_split_that_drops_a_border_vertex_changes_the_count(monkeypatch):
    nets = [_seq(_random_layers([3, 8, 8, 8], seed)) for seed in range(3)]
    right = [both(n)[1].activation_regions for n in nets]
    monkeypatch.setattr(subdivide._Complex, "part", _border_vertex_dropped(subdivide._Complex.part))
    wrong = [count_regions(n, BOX, stream=True, stream_rows=8).activation_regions for n in nets]
    assert wrong != right


def test_a_split_that_gives_a_border_cell_to_both_halves_changes_the_count(monkeypatch):
    net = _seq(_random_layers([3, 8, 8], 1))
    full, streamed = both(net)
    assert_same(full, streamed)
    real = stream.split_cells

    def overlapping(cx, n_parts):  # (from 4 cells on, so that every part is smaller than the whole)
        parts = real(cx, n_parts)
        if cx.C >= 4:
            parts[1] = np.union1d(parts[1], parts[0][-1:])
        return parts

    monkeypatch.setattr(stream, "split_cells", overlapping)
    assert count_regions(net, BOX, stream=True, stream_rows=8).activation_regions > full.activation_regions


# ---------------------------------------------------------------- what it keeps, refusals
def test_the_streamed_result_keeps_counts_only(tmp_path):
    net = _seq(_random_layers([3, 6, 6], 0))
    r = count_regions(net, BOX, stream=True, stream_rows=8)
    s = r.summary()
    assert s["linear_regions"] is None and s["activation_regions"] == r.activation_regions
    assert s["stream"]["groups"] == r.pieces.groups > 1 and s["stream"]["stream_rows"] == 8
    json.dumps(s)
    for get in (lambda: r.linear_regions, lambda: r.linear_labels, r.interior_points, lambda: r.pieces.edges,
                lambda: r.pieces.region, lambda: r.pieces.maps):
        with pytest.raises(ValueError, match="keeps no cells; count without stream=True"):
            get()
    with pytest.raises(ValueError, match="keeps no cells"):
        plot_domain(net, BOX, tmp_path / "x.png", regions=r)


def test_a_1d_box_streams_through_the_segment_counter():
    net = _seq(_random_layers([1, 12, 12], 3))
    full, streamed = both(net, Box(-1.0, 1.0))
    assert streamed.activation_regions == full.activation_regions and streamed.summary()["linear_regions"] is None


@pytest.mark.parametrize("dom,kw,msg", [
    (Plane.square(1.0), {"stream": True}, "stream=True is for the d-D counter"),
    (Segment([-1.0, 0.0, 0.0], [1.0, 1.0, 1.0]), {"stream": True}, "not a Segment"),
    (BOX, {"stream": True, "method": "lp"}, "method='subdivide'"),
    (BOX, {"stream_rows": 10}, "stream_rows applies to stream=True"),
    (BOX, {"stream": True, "stream_rows": 0}, "stream_rows must be a positive int"),
    (BOX, {"stream": True, "stream_rows": 2.5}, "stream_rows must be a positive int"),
    (BOX, {"stream": True, "stream_rows": True}, "stream_rows must be a positive int"),
])
def test_streaming_refusals(dom, kw, msg):
    d = 2 if isinstance(dom, Plane) else 3
    with pytest.raises(ValueError, match=msg):
        count_regions(_seq(_random_layers([d, 4], 0)), dom, **kw)


# ---------------------------------------------------------------- the command line
@pytest.fixture()
def net_json(tmp_path):
    p = tmp_path / "net.json"
    p.write_text(json.dumps({"type": "random", "in_dim": 3, "widths": [8, 8], "ranks": 2, "seed": 0}))
    return p


def test_cli_stream_json_prints_the_full_count(net_json):
    full = runner.invoke(app, ["regions", str(net_json), "--box", "--json"])
    streamed = runner.invoke(app, ["regions", str(net_json), "--box", "--stream", "--json"])
    assert full.exit_code == 0 and streamed.exit_code == 0, streamed.output
    f, s = json.loads(full.output), json.loads(streamed.output)
    assert s["activation_regions"] == f["activation_regions"] and s["linear_regions"] is None
    text = runner.invoke(app, ["regions", str(net_json), "--box", "--stream"])
    assert text.exit_code == 0 and "linear regions not counted (--stream)" in text.output


@pytest.mark.parametrize("args,msg", [
    (["--segment", "0,0,0", "1,1,1", "--stream"], "--stream does not apply to a Segment"),
    (["--plane", "0,0,0", "1,0,0", "0,1,0", "--stream"], "--stream does not apply to a Plane"),
    (["--box", "--stream", "--plot", "x.png"], "--stream does not apply with --plot"),
])
def test_cli_stream_refusals_are_one_line(net_json, args, msg):
    res = runner.invoke(app, ["regions", str(net_json), *args], catch_exceptions=False)
    assert res.exit_code == 2, res.output
    assert msg in res.output and len(res.output.strip().splitlines()) == 1


def test_a_compiled_hardmax_transformer_streams_to_the_full_count():
    """Hardmax selections (and maxout rounds) run through; splits come before their layers."""
    from expressivity.compile import compile_maxout

    cm = compile_maxout(MaxoutNetwork.random(2, [2, 2], 3, seed=3), domain=(-1.0, 1.0))
    full, streamed = both(cm, Box(-1.0, 1.0))
    assert_same(full, streamed)
    assert streamed.pieces.groups > 1


def test_streamed_progress_rises_to_one():
    seen = []
    count_regions(_seq(_random_layers([4, 8, 8], 5)), BOX, progress=seen.append, stream=True, stream_rows=8)
    assert seen[-1] == 1.0 and all(0.0 <= a <= b <= 1.0 for a, b in zip(seen, seen[1:]))
