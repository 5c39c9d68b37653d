"""The mesh invariant checks (EXPRESSIVITY_CHECK=1, on in every tests/test_regions_*.py by the
conftest): they are on, cost nothing when off, and catch a corrupted mesh in each counter."""

import numpy as np
import pytest
from test_regions_segment import _random_layers, _seq

from expressivity.cpwl import MaxoutNetwork
from expressivity.regions import (
    Box,
    Plane,
    Segment,
    count_regions,
    invariants,
    kernels,
    segment_vertex,
    subdivide,
)
from expressivity.regions import complex_kernels as ck


def test_the_checks_are_on_in_the_counters_tests():
    assert invariants.enabled()


def test_checked_and_unchecked_counts_agree(monkeypatch):
    net = _seq(_random_layers([3, 8, 8], 1))
    doms = (Segment([-1, -1, -1], [1, 1, 1]), Plane([0, 0, 0], [1, 0, 0], [0, 1, 1]), Box(-1.0, 1.0))
    on = [count_regions(net, d).activation_regions for d in doms]
    monkeypatch.setenv("EXPRESSIVITY_CHECK", "0")
    assert not invariants.enabled()
    assert [count_regions(net, d).activation_regions for d in doms] == on


def _moved(X, rows, col):
    X[rows, col] += 0.01 * (1 + np.abs(X[rows, col]))


def test_a_moved_plane_vertex_is_caught(monkeypatch):
    """A kernel that puts a new vertex off its edge (the state is interpolated, the coordinate moved)."""
    orig = kernels.split_channels

    def broken(store, V, *args):
        out = orig(store, V, *args)
        if out[0] > V:
            _moved(store, [out[0] - 1], 0)
        return out

    monkeypatch.setattr(kernels, "split_channels", broken)
    with pytest.raises(invariants.InvariantError, match=r"ReLU channel \d+ of step 1") as e:
        count_regions(_seq(_random_layers([2, 6, 6], 0)), Plane.square(1.0))
    assert "invariant" in str(e.value)


def test_a_dropped_plane_face_is_caught(monkeypatch):
    orig = kernels.split_channels

    def broken(store, V, cyc, nv, origin, F, *args):
        V2, F2, *rest = orig(store, V, cyc, nv, origin, F, *args)
        return (V2, F2 - 1 if F2 > F else F2, *rest)  # forget the last face made

    monkeypatch.setattr(kernels, "split_channels", broken)
    with pytest.raises(invariants.InvariantError, match="edges shared by two faces|Euler|every vertex"):
        count_regions(_seq(_random_layers([2, 6, 6], 0)), Plane.square(1.0))


def test_a_wrong_carried_state_is_caught_in_d_dimensions(monkeypatch):
    orig = ck.cut_block

    def broken(store, Z, V, *args):
        out = list(orig(store, Z, V, *args))
        if out[2] > V:
            out[0][out[2] - 1, 0] += 0.05  # the newest vertex's first coordinate
        return tuple(out)

    monkeypatch.setattr(subdivide.ck, "cut_block", broken)
    with pytest.raises(invariants.InvariantError, match="step 1"):
        count_regions(_seq(_random_layers([3, 5, 4], 2)), Box(-1.0, 1.0))


def test_a_missing_cell_is_caught_in_d_dimensions(monkeypatch):
    orig = ck.cut_block

    def broken(*args):
        out = list(orig(*args))
        if out[7] > args[7]:
            out[7] -= 1  # forget the last cell made
        return tuple(out)

    monkeypatch.setattr(subdivide.ck, "cut_block", broken)
    with pytest.raises(invariants.InvariantError, match="facets shared|Euler|every vertex"):
        count_regions(MaxoutNetwork.random(3, [3], 2, seed=0), Box(-1.0, 1.0))


def test_a_missed_breakpoint_is_caught_in_one_dimension(monkeypatch):
    orig = kernels.plan_inserts

    def broken(*args):
        estart, ech, eza, ezb, kstart, ks, krank = orig(*args)
        if len(ks) > 1:  # drop the last breakpoint of the step
            kstart = np.minimum(kstart, len(ks) - 1)
            ks, krank = ks[:-1], krank[:-1]
        return estart, ech, eza, ezb, kstart, ks, krank

    monkeypatch.setattr(segment_vertex.kernels, "plan_inserts", broken)
    with pytest.raises(invariants.InvariantError, match="changes sign inside piece"):
        count_regions(_seq(_random_layers([2, 8, 8], 3)), Segment([-1, -1], [1, 1]))


def test_the_general_1d_counter_is_checked(monkeypatch):
    from expressivity.regions import segment

    orig = segment._split

    def broken(st, pi, s):
        return orig(st, pi[:-1], s[:-1]) if len(pi) > 1 else orig(st, pi, s)

    monkeypatch.setattr(segment, "_split", broken)
    with pytest.raises(invariants.InvariantError, match="step"):
        count_regions(_seq(_random_layers([2, 8, 8], 3)), Segment([-1, -1], [1, 1]), general=True)


def test_no_check_runs_when_off(monkeypatch):
    monkeypatch.setenv("EXPRESSIVITY_CHECK", "0")
    calls = []
    monkeypatch.setattr(invariants, "check_plane", lambda *a: calls.append(a))
    monkeypatch.setattr(invariants, "check_complex", lambda *a: calls.append(a))
    monkeypatch.setattr(invariants, "check_segment", lambda *a: calls.append(a))
    net = _seq(_random_layers([3, 6, 6], 4))
    for d in (Segment([-1, -1, -1], [1, 1, 1]), Plane([0, 0, 0], [1, 0, 0], [0, 1, 0]), Box(-1.0, 1.0)):
        count_regions(net, d)
    assert calls == []
