"""regions.plot.plot_domain: the picture that fits the domain (plane faces, box slices)."""

import numpy as np
import pytest

from expressivity.cpwl import MaxoutNetwork
from expressivity.regions import Box, Plane, Segment, count_regions
from expressivity.regions.plot import plot_domain


def test_plot_domain_plane_reuses_the_count(tmp_path):
    net = MaxoutNetwork.random(2, [3], 2, seed=0)
    plane = Plane.square(1.0)
    res = count_regions(net, plane)
    drawn = plot_domain(net, plane, tmp_path / "p.png", regions=res)
    assert drawn is res and (tmp_path / "p.png").stat().st_size > 0


def test_plot_domain_2d_box_is_drawn_as_its_plane(tmp_path):
    net = MaxoutNetwork.random(2, [3], 2, seed=1)
    drawn = plot_domain(net, Box(np.array([-1.0, -1.0]), np.array([1.0, 1.0])), tmp_path / "b.png")
    assert drawn.kind == "plane"
    assert drawn.activation_regions == count_regions(net, Plane.square(1.0)).activation_regions


def test_plot_domain_3d_box_draws_slices_and_refuses_a_segment(tmp_path):
    net = MaxoutNetwork.random(3, [2], 2, seed=2)
    box = Box(-1.0, 1.0)
    drawn = plot_domain(net, box, tmp_path / "s.png", color_by="activation")
    assert drawn.kind == "box" and (tmp_path / "s.png").exists()
    with pytest.raises(ValueError, match="no picture is registered for a Segment domain .domains with one: box, plane"):
        plot_domain(net, Segment([0.0, 0.0, 0.0], [1.0, 1.0, 1.0]), tmp_path / "x.png")
