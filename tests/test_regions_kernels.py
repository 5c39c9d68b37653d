"""The compiled loops of the 1-D vertex counter against plain numpy, and the deferred
next-layer evaluation (inserted vertices never go through the dense product) against the
general counter, which evaluates every piece end densely."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from expressivity.regions import Segment, count_regions, kernels
from expressivity.regions import segment_vertex as sv


def numpy_sign_changes(g, rtol):
    pos = g > 0
    vi, ch = np.nonzero(pos[:-1] != pos[1:])
    a, b = g[vi, ch], g[vi + 1, ch]
    eps = rtol * np.abs(g).max(axis=0)
    return vi, ch, a, b, (np.abs(a) > eps[ch]) & (np.abs(b) > eps[ch])


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), P=st.integers(2, 300), n=st.integers(1, 70),
       zeros=st.booleans(), relu=st.booleans())
def test_sign_changes_match_numpy(seed, P, n, zeros, relu):
    rng = np.random.default_rng(seed)
    g = rng.normal(size=(P, n))  # about half of all pairs flip: the buffers must grow
    if zeros:  # exact zeros and values inside the tolerance
        g[rng.random(g.shape) < 0.2] = 0.0
        g[rng.random(g.shape) < 0.1] *= 1e-12
    want = numpy_sign_changes(g, 1e-9)
    work = g.copy()
    got = kernels.sign_changes(work, 1e-9, relu)
    for x, y in zip(got, want):
        assert np.array_equal(x, y)
    assert np.array_equal(work, np.maximum(g, 0) if relu else g)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), P=st.integers(2, 40), d=st.integers(1, 9), N=st.integers(0, 60))
def test_insert_rows_interpolates(seed, P, d, N):
    rng = np.random.default_rng(seed)
    F = rng.normal(size=(P, d))
    vi = np.sort(rng.integers(0, P - 1, N))
    s = rng.random(N)
    order = np.lexsort((s, vi))
    vi, s = vi[order], s[order]
    out = np.empty((P + N, d))
    kernels.insert_rows(F, sv._offsets(vi, P - 1), s, True, out)
    rows = np.concatenate([F, F[vi] + s[:, None] * (F[vi + 1] - F[vi])])
    key = np.concatenate([np.arange(P) + 0.0, vi + 0.5 + s * 0.49])  # old row e, then new ones on e
    assert np.array_equal(out, np.maximum(rows[np.argsort(key, kind="stable")], 0))


def relu_mlp(widths, seed, bias=0.5):
    torch.manual_seed(seed)
    mods = []
    for a, b in zip(widths[:-1], widths[1:]):
        lin = torch.nn.Linear(a, b).double()
        with torch.no_grad():
            lin.weight.normal_(0, 1 / np.sqrt(a))
            lin.bias.normal_(0, bias)
        mods += [lin, torch.nn.ReLU()]
    return torch.nn.Sequential(*mods[:-1] if seed % 2 else mods)  # odd seeds end on a Linear


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), in_dim=st.integers(1, 3),
       widths=st.lists(st.sampled_from([64, 80, 128]), min_size=2, max_size=4))
def test_deferred_next_layer_equals_general_counter(seed, in_dim, widths):
    """Wide layers (≥ LAZY_MIN_WIDTH) take the deferred path; the general counter does not."""
    net = relu_mlp([in_dim, *widths], seed)
    rng = np.random.default_rng(seed)
    seg = Segment(rng.uniform(-2, 0, in_dim), rng.uniform(0, 2, in_dim))
    fast, slow = count_regions(net, seg), count_regions(net, seg, general=True)
    assert fast.activation_regions == slow.activation_regions
    assert np.allclose(fast.breakpoints, slow.breakpoints, atol=1e-12)
    scale = 1 + np.abs(slow.pieces.out_L).max()
    assert np.abs(fast.pieces.out_L - slow.pieces.out_L).max() <= 1e-10 * scale
    assert np.abs(fast.pieces.out_R - slow.pieces.out_R).max() <= 1e-10 * scale


def test_deferred_path_is_taken_and_matches_dense_evaluation():
    """The deferred path runs (few dense rows), and every vertex's output equals the network
    evaluated there directly."""
    net = relu_mlp([1, 128, 128, 128], seed=2)
    seg = Segment([-3.0], [3.0])
    calls = []
    pre = sv._Pending.pre

    def spy(self, W, b, scratch=False):
        calls.append((len(self.Y_old), len(self.Y_old) + len(self.ks)))
        return pre(self, W, b, scratch)

    sv._Pending.pre = spy
    try:
        r = count_regions(net, seg)
    finally:
        sv._Pending.pre = pre
    assert len(calls) == 2 and all(dense < total for dense, total in calls)
    x = seg.points(np.r_[r.pieces.t0, r.pieces.t1[-1]])
    with torch.no_grad():
        want = net(torch.from_numpy(x)).numpy()
    got = np.r_[r.pieces.out_L, r.pieces.out_R[-1:]]
    assert np.abs(got - want).max() <= 1e-12 * (1 + np.abs(want).max())


def test_results_do_not_share_the_scratch_buffers():
    net_a, net_b = relu_mlp([1, 96, 96, 96], seed=4), relu_mlp([1, 96, 96, 96], seed=6)
    seg = Segment([-2.0], [2.0])
    ra = count_regions(net_a, seg)
    names = ("t0", "t1", "out_L", "out_R", "region")
    keep = {k: np.array(getattr(ra.pieces, k), copy=True) for k in names}
    count_regions(net_b, seg)
    for k, v in keep.items():
        assert np.array_equal(getattr(ra.pieces, k), v), k


@pytest.mark.parametrize("width", [1, 63, 64])
def test_narrow_and_single_channel_layers(width):
    net = relu_mlp([1, width, width, 3], seed=8)
    seg = Segment([-4.0], [4.0])
    fast, slow = count_regions(net, seg), count_regions(net, seg, general=True)
    assert fast.activation_regions == slow.activation_regions
    assert np.allclose(fast.breakpoints, slow.breakpoints, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), P=st.integers(2, 30), J=st.integers(0, 80))
def test_plan_inserts_sorts_and_merges_like_numpy(seed, P, J):
    """Per edge: changes by their zero s, strict ones become vertices unless within MERGE_S of
    the previous strict one (chains collapse to their first) — against lexsort + diff."""
    rng = np.random.default_rng(seed)
    vi = np.sort(rng.integers(0, P - 1, J))
    ch = rng.integers(0, 50, J)
    s = rng.choice(rng.random(max(1, J // 3)), J)  # repeated zeros
    s[rng.random(J) < 0.2] += 1e-13  # and zeros within MERGE_S of each other
    a = rng.uniform(0.1, 2, J) * rng.choice([-1, 1], J)
    b = a - a / s  # so that a / (a − b) = s
    strict = rng.random(J) < 0.8
    order = np.lexsort((ch, vi))
    vi, ch, a, b, strict = vi[order], ch[order], a[order], b[order], strict[order]
    estart, ech, eza, ezb, kstart, ks, krank = kernels.plan_inserts(P, vi, ch, a, b, strict, sv.MERGE_S)
    zero = a / (a - b)
    ref = np.lexsort((zero, vi))  # stable: ties keep channel order
    assert np.array_equal(ech, ch[ref]) and np.array_equal(eza, np.abs(a[ref]))
    assert np.array_equal(ezb, np.abs(b[ref]))
    assert np.array_equal(estart, np.r_[0, np.cumsum(np.bincount(vi, minlength=P - 1))])
    si = np.flatnonzero(strict[ref])
    kept, k_vi, k_s = sv._dedup(vi[ref][si], zero[ref][si], presorted=True)
    assert np.array_equal(ks, k_s) and np.array_equal(krank, si[kept])
    assert np.array_equal(kstart, np.r_[0, np.cumsum(np.bincount(k_vi, minlength=P - 1))])
