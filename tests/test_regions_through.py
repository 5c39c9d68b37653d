"""Plane.through(x1, x2, x3): the plane through three inputs, its counts, its CLI and its picture."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from typer.testing import CliRunner

from expressivity.cli import app
from expressivity.interop.torch_in import save_sequential
from expressivity.regions import Plane, count_regions


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from([(3,), (2, 3), (1, 2, 2)]))
def test_the_plane_passes_through_its_three_inputs_with_true_geometry(seed, shape):
    rng = np.random.default_rng(seed)
    xs = rng.normal(size=(3, *shape))
    pl = Plane.through(*xs)
    assert pl.input_shape == shape
    got = pl.points(pl.marks)
    assert np.allclose(got, xs.reshape(3, -1), atol=1e-10 * (1 + np.abs(xs).max()))
    # orthogonal axes of equal length: distances in (α, β) are distances in the input (÷ |u|)
    assert abs(pl.u @ pl.v) <= 1e-9 * (pl.u @ pl.u)
    assert np.isclose(np.linalg.norm(pl.u), np.linalg.norm(pl.v))
    d_in = np.linalg.norm(xs[1] - xs[2])
    d_ab = np.linalg.norm(pl.marks[1] - pl.marks[2]) * np.linalg.norm(pl.u)
    assert np.isclose(d_in, d_ab)
    # every mark lies inside the bounds, away from the border (margin)
    poly = pl.polygon
    assert np.all(pl.marks.min(0) > poly.min(0)) and np.all(pl.marks.max(0) < poly.max(0))


def test_bad_inputs_are_one_line_errors():
    a, b, c = np.zeros((1, 2, 2)), np.ones((1, 2, 2)), np.eye(2)[None]
    with pytest.raises(ValueError, match=r"one shape, got \(1, 2, 2\), \(1, 2, 2\), \(4,\)"):
        Plane.through(a, b, np.zeros(4))
    with pytest.raises(ValueError, match="collinear"):
        Plane.through(a, b, 2 * b)
    with pytest.raises(ValueError, match="x1 and x2 coincide"):
        Plane.through(a, a, c)
    with pytest.raises(ValueError, match="x3 contains NaN"):
        Plane.through(a, b, np.full((1, 2, 2), np.nan))
    with pytest.raises(ValueError, match="margin"):
        Plane.through(a, b, c, margin=-1)


def test_counting_on_a_plane_through_images_uses_their_shape():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(1, 3, 2), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(3, 2)).eval()
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(3, 1, 3, 3))
    pl = Plane.through(*xs)
    r = count_regions(net, pl)  # no input_shape: the plane carries it
    same = Plane(pl.origin, pl.u, pl.v, pl.bounds)
    r2 = count_regions(net, same, input_shape=(1, 3, 3))
    assert (r.activation_regions, r.linear_regions) == (r2.activation_regions, r2.linear_regions)
    assert r.activation_regions >= 1
    # the outputs the counter reports at the marks equal the module's
    with torch.no_grad():
        ref = net.double()(torch.tensor(xs)).numpy()
    from expressivity.regions import lower

    prog = lower(net, input_shape=(1, 3, 3))
    assert np.allclose(prog(pl.points(pl.marks)), ref, atol=1e-9)


runner = CliRunner()


def _mlp_files(tmp_path, n=4):
    torch.manual_seed(1)
    mlp = nn.Sequential(nn.Linear(n, 6), nn.ReLU(), nn.Linear(6, 1))
    w, _ = save_sequential(mlp, tmp_path / "net.pt")
    rng = np.random.default_rng(1)
    paths = []
    for i, x in enumerate(rng.normal(size=(3, n))):
        p = tmp_path / f"x{i}.npy"
        np.save(p, x)
        paths.append(str(p))
    return mlp, w, paths


def test_cli_through_counts_and_plots(tmp_path):
    mlp, w, paths = _mlp_files(tmp_path)
    png = tmp_path / "through.png"
    res = runner.invoke(app, ["regions", str(w), "--through", *paths, "--json"])
    assert res.exit_code == 0, res.output
    got = json.loads(res.output)
    xs = [np.load(p) for p in paths]
    ref = count_regions(mlp, Plane.through(*xs))
    assert (got["activation_regions"], got["linear_regions"]) == (ref.activation_regions, ref.linear_regions)
    res = runner.invoke(app, ["regions", str(w), "--through", *paths, "--plot", str(png)])
    assert res.exit_code == 0, res.output
    assert png.stat().st_size > 1000


def test_cli_through_bad_inputs(tmp_path):
    _, w, paths = _mlp_files(tmp_path)
    np.save(tmp_path / "short.npy", np.zeros(3))
    np.save(tmp_path / "line.npy", 2 * np.load(paths[1]) - np.load(paths[0]))
    np.save(tmp_path / "nan.npy", np.full(4, np.nan))
    (tmp_path / "bad.npy").write_bytes(b"not an array")
    cases = [
        ([paths[0], paths[1], str(tmp_path / "short.npy")], "one shape"),
        ([paths[0], paths[1], str(tmp_path / "line.npy")], "collinear"),
        ([paths[0], paths[1], str(tmp_path / "nan.npy")], "NaN"),
        ([paths[0], paths[1], str(tmp_path / "bad.npy")], "not a numeric .npy"),
        ([paths[0], paths[1], str(tmp_path / "missing.npy")], "does not exist"),
        ([paths[0], paths[1], str(tmp_path / "x.txt")], "expected a .npy file"),
    ]
    for args, match in cases:
        res = runner.invoke(app, ["regions", str(w), "--through", *args])
        assert res.exit_code != 0
        assert match in res.output and "Traceback" not in res.output, res.output
    res = runner.invoke(app, ["regions", str(w), "--through", *paths, "--plane", "0,0,0,0", "1,0,0,0", "0,1,0,0"])
    assert res.exit_code != 0 and "exactly one of" in res.output


def test_cli_counts_a_saved_conv_net_through_three_images(tmp_path):
    torch.manual_seed(2)
    net = nn.Sequential(nn.Conv2d(1, 3, 3, padding=1, stride=2), nn.BatchNorm2d(3), nn.LeakyReLU(0.1),
                        nn.MaxPool2d(2), nn.Flatten(), nn.Linear(12, 4), nn.Hardtanh(-1, 2), nn.Linear(4, 2)).eval()
    with torch.no_grad():
        net[1].running_mean.normal_()
        net[1].running_var.uniform_(0.5, 2)
    w, _ = save_sequential(net, tmp_path / "cnn.safetensors", input_shape=(1, 8, 8))
    rng = np.random.default_rng(2)
    xs = rng.uniform(0, 1, size=(3, 1, 8, 8))
    paths = []
    for i, x in enumerate(xs):
        np.save(tmp_path / f"d{i}.npy", x)
        paths.append(str(tmp_path / f"d{i}.npy"))
    res = runner.invoke(app, ["regions", str(w), "--through", *paths, "--json"])
    assert res.exit_code == 0, res.output
    got = json.loads(res.output)
    ref = count_regions(net, Plane.through(*xs))
    assert (got["activation_regions"], got["linear_regions"]) == (ref.activation_regions, ref.linear_regions)
    # the layers JSON's input_shape serves the other domains
    flat = xs.reshape(3, -1)
    res = runner.invoke(app, ["regions", str(w), "--segment", ",".join(map(str, flat[0])), ",".join(map(str, flat[1])),
                              "--json"])
    assert res.exit_code == 0, res.output
    from expressivity.regions import Segment

    seg = count_regions(net, Segment(flat[0], flat[1]), input_shape=(1, 8, 8))
    assert json.loads(res.output)["activation_regions"] == seg.activation_regions


def test_bad_conv_layer_entries_are_named(tmp_path):
    from expressivity.interop.torch_in import build_sequential

    with pytest.raises(ValueError, match=r"layers\[0\]: unknown fields \['strid'\] for conv2d"):
        build_sequential([{"conv2d": [1, 2, 3], "strid": 2}])
    with pytest.raises(ValueError, match=r"layers\[0\]: conv2d shape must be"):
        build_sequential([{"conv2d": [1, 2]}])
    with pytest.raises(ValueError, match=r"layers\[0\]: conv2d .* is not a valid module"):
        build_sequential([{"conv2d": [3, 2, 3], "groups": 2}])
    with pytest.raises(ValueError, match=r"layers\[1\]: hardtanh needs \[lo, hi\]"):
        build_sequential([{"linear": [2, 2]}, {"hardtanh": [1, 0]}])
    with pytest.raises(ValueError, match="no linear, maxout or conv layer"):
        build_sequential(["relu", {"maxpool2d": 2}])


def test_plane_fields_are_checked():
    with pytest.raises(ValueError, match="product is the dimension 4"):
        Plane(np.zeros(4), np.eye(4)[0], np.eye(4)[1], input_shape=(1, 3))
    with pytest.raises(ValueError, match=r"Plane.marks must be \(k, 2\)"):
        Plane(np.zeros(4), np.eye(4)[0], np.eye(4)[1], marks=[[0, 0, 0]])
    pl = Plane(np.zeros(4), np.eye(4)[0], np.eye(4)[1], input_shape=[1, 2, 2], marks=[[0, 0]])
    assert pl.input_shape == (1, 2, 2)
