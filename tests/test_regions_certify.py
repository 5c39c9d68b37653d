"""certify_regions / refute_pattern: counted cells proved nonempty and distinct, patterns refuted
by exact Farkas certificates; the nets of issue 22 where the peers' counts differ."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch import nn

from expressivity.cpwl import MaxoutNetwork
from expressivity.regions import Box, Plane, Regions, Segment, Slice, count_regions, lower
from expressivity.regions.certify import certify_regions, check_farkas, refute_pattern
from expressivity.regions.relu_chain import cell_rows, chain
from expressivity.regions.result import CellPieces


def relu_net(widths, seed: int) -> nn.Sequential:
    """torch.manual_seed(seed), default nn.Linear init, a ReLU after every layer (the last too)."""
    torch.manual_seed(seed)
    layers = []
    for a, b in zip(widths[:-1], widths[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers)


def patterns_on_grid(net: nn.Sequential, pts: np.ndarray) -> set:
    """The activation patterns at pts, by a plain float64 forward pass (independent of the IR)."""
    y = torch.tensor(pts, dtype=torch.float64)
    signs = []
    with torch.no_grad():
        for layer in net:
            y = layer.double()(y)
            if isinstance(layer, nn.Linear):
                signs.append((y > 0).numpy())
    return {row.tobytes() for row in np.concatenate(signs, axis=1)}


DOMAINS = {"box": lambda d: Box(-1.0, 1.0), "plane": lambda d: Plane.square(1.0),
           "segment": lambda d: Segment(-np.ones(d), np.r_[1.0, 0.5 * np.ones(d - 1)]),
           "slice": lambda d: Slice(np.full(d, 0.1), np.eye(d)[:2] + 0.25, -1.0, 1.0)}


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(d=st.integers(2, 3), widths=st.lists(st.integers(1, 3), min_size=1, max_size=2), seed=st.integers(0, 10**6),
       kind=st.sampled_from(sorted(DOMAINS)))
def test_count_equals_the_nonempty_patterns(d, widths, seed, kind):
    """Every pattern of a tiny net decided by refute_pattern: the nonempty ones are exactly the
    counted (and certified) ones, and the grid's patterns are among them."""
    if kind == "plane":
        d = 2
    net, domain = relu_net([d] + widths, seed), DOMAINS[kind](d)
    regions = count_regions(net, domain)
    cert = certify_regions(net, domain, regions)
    assert cert.ok and cert.certified == regions.activation_regions
    nonempty = set()
    for bits in itertools.product([False, True], repeat=sum(widths)):
        ref = refute_pattern(net, domain, np.array(bits))
        assert ref.empty is not None
        if not ref.empty:
            nonempty.add(np.array(bits).tobytes())
    assert len(nonempty) == regions.activation_regions
    t = np.linspace(0.003, 0.997, 41)
    if kind == "segment":
        x = domain.a + t[:, None] * (domain.b - domain.a)
    elif kind == "slice":
        x = domain.points(np.stack(np.meshgrid(2 * t - 1, 2 * t - 1), -1).reshape(-1, 2))
    else:
        x = np.stack(np.meshgrid(*[2 * t - 1] * d), -1).reshape(-1, d)
    assert patterns_on_grid(net, x) <= nonempty


def test_refutes_a_made_up_empty_pattern():
    """Neurons z and −z (opposite rows): both on (z > 0 and −z > 0) is empty — an exact Farkas
    certificate; one on and one off is a cell with a point whose pattern is the one asked."""
    net = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    with torch.no_grad():
        net[0].weight.copy_(torch.tensor([[0.75, -0.3], [-0.75, 0.3]]))
        net[0].bias.copy_(torch.tensor([0.1, -0.1]))
    box = Box(-1.0, 1.0)
    for bits in ([True, True], [False, False]):
        ref = refute_pattern(net, box, np.array(bits))
        assert ref.empty is True
        M, q = cell_rows(chain(lower(net), box), np.array(bits), exact=True)
        assert check_farkas(M, q, ref.multipliers)
        assert not check_farkas(M, q, {i: -v for i, v in ref.multipliers.items()})
    ref = refute_pattern(net, box, np.array([True, False]))
    assert ref.empty is False and patterns_on_grid(net, ref.point[None]) == {np.array([True, False]).tobytes()}
    assert refute_pattern(net, box, [np.array([False, True])]).empty is False


def test_a_region_counted_twice_is_caught():
    net, box = relu_net([2, 5, 4], 3), Box(-1.0, 1.0)
    r = count_regions(net, box)
    p = r.pieces
    twice = CellPieces(np.vstack([p.points, p.points[:1]]), np.r_[p.region, r.activation_regions], p.program, p.domain)
    fake = Regions("box", box, r.activation_regions + 1, r.n_pieces + 1, twice)
    cert = certify_regions(net, box, fake)
    assert cert.duplicates == [(int(p.region[0]), r.activation_regions)] and not cert.ok
    assert certify_regions(net, box, r).ok


def test_refuses_what_is_not_a_relu_net():
    with pytest.raises(ValueError, match="maxout"):
        certify_regions(MaxoutNetwork.random(2, [3, 3], 3, seed=0), Box(-1.0, 1.0))
    net = relu_net([2, 3], 0)
    with pytest.raises(ValueError, match="3 entries"):
        refute_pattern(net, Box(-1.0, 1.0), np.ones(4, bool))
    with pytest.raises(ValueError, match="domain"):
        certify_regions(net, "box")
    with pytest.raises(ValueError, match="dimension"):
        certify_regions(net, Segment([0.0, 0.0, 0.0], [1.0, 1.0, 1.0]))


def test_3d_net_where_edge_subdivision_differs(monkeypatch):
    """Issue 22: 3-48-48-48-48 (seed 7102) on [−1, 1]³ — 105 279 cells (edge subdivision: 105 281),
    every one proved nonempty, all patterns distinct."""
    monkeypatch.setenv("EXPRESSIVITY_CHECK", "0")
    net, box = relu_net([3, 48, 48, 48, 48], 7102), Box(-1.0, 1.0)
    regions = count_regions(net, box)
    assert regions.activation_regions == 105_279
    cert = certify_regions(net, box, regions)
    assert cert.ok and cert.certified == 105_279


@pytest.mark.slow
def test_2d_net_where_regioncam_differs(monkeypatch):
    """Issue 22: 2-256×6 (seed 9901) on [−1, 1]² — 205 162 cells (regioncam: 205 157), all proved;
    a few only in exact arithmetic."""
    monkeypatch.setenv("EXPRESSIVITY_CHECK", "0")
    net, plane = relu_net([2] + [256] * 6, 9901), Plane.square(1.0)
    regions = count_regions(net, plane)
    assert regions.activation_regions == 205_162
    cert = certify_regions(net, plane, regions)
    assert cert.ok and cert.summary()["exact"] + cert.summary()["lp"] > 0


def test_interior_point_from_the_lp_is_proved_exactly():
    """A cell's point found by the Chebyshev LP from another cell's point lies in the cell (its
    exact pattern is σ); a made-up empty pattern gets none."""
    from expressivity.regions.certify import interior_point
    from expressivity.regions.relu_chain import exact_signs

    net, box = relu_net([2, 6, 5], 11), Box(-1.0, 1.0)
    cert = certify_regions(net, box)
    ch = chain(lower(net), box)
    n = ch.n_neurons
    for r in range(min(cert.n_regions, 6)):
        sigma = np.unpackbits(cert.patterns[r])[:n].astype(bool)
        a = interior_point(ch, sigma, guess=cert.points[(r + 1) % cert.n_regions])
        assert a is not None and np.array_equal(exact_signs(ch, a), sigma)
        assert not np.array_equal(exact_signs(ch, cert.points[(r + 1) % cert.n_regions]), sigma)
    empty = next(s for s in itertools.product([False, True], repeat=n)
                 if refute_pattern(net, box, np.array(s)).empty)
    assert interior_point(ch, np.array(empty)) is None
