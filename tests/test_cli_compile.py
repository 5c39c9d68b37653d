"""`expressivity compile` / `verify`: the spec schema, round trip and one-line errors."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from expressivity.cli import app
from expressivity.compile import load_compiled, parse_spec

runner = CliRunner()


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


MAXOUT = {
    "type": "maxout",
    "layers": [{"W": [[[1.0, 0.0], [0.0, 1.0]], [[-1.0, 0.5], [2.0, -1.0]]], "b": [[0.0, 0.1], [0.2, -0.3]]}],
    "readout": {"A": [[1.0, -1.0]], "c": [0.5]},
    "domain": {"lo": -1, "hi": 1},
}


def test_compile_then_verify_round_trip(tmp_path):
    spec = write(tmp_path, "net.json", MAXOUT)
    out = tmp_path / "model.safetensors"
    res = runner.invoke(app, ["compile", str(spec), "--out", str(out), "--channels"])
    assert res.exit_code == 0, res.output
    assert "2 blocks" in res.output and "onehot[0..1]" in res.output
    res = runner.invoke(app, ["verify", str(out), str(spec), "--points", "2000"])
    assert res.exit_code == 0, res.output
    assert "verified" in res.output
    net, _ = parse_spec(MAXOUT)
    cm = load_compiled(out, net)
    x = np.random.default_rng(0).uniform(-1, 1, (100, 2))
    assert np.abs(cm.evaluate(x) - net(x)).max() <= 1e-12


def test_softmax_compile_reports_its_bound(tmp_path):
    spec = write(tmp_path, "net.json", {"type": "random", "in_dim": 2, "widths": [4, 4], "ranks": 3, "seed": 1})
    out = tmp_path / "soft.safetensors"
    res = runner.invoke(app, ["compile", str(spec), "--out", str(out), "--attention", "softmax", "--lam", "100"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["verify", str(out), str(spec), "--points", "3000"])
    assert res.exit_code == 0 and "λ = 100" in res.output


def test_relu_spec_matches_torch_layout(tmp_path):
    data = {"type": "relu", "layers": [{"W": [[1.0, -1.0], [2.0, 0.5]], "b": [0.0, -1.0]}, {"W": [[1.0, 1.0]]}]}
    net, (lo, hi) = parse_spec(data)
    x = np.array([[0.5, -0.25]])
    hidden = np.maximum(0, x @ np.array([[1.0, -1.0], [2.0, 0.5]]).T + np.array([0.0, -1.0]))
    assert np.allclose(net(x), hidden.sum(1, keepdims=True))
    assert float(lo) == -1.0 and float(hi) == 1.0


@pytest.mark.parametrize(
    "data, message",
    [
        ('{"type": "maxout", "layers": [', "not valid JSON"),
        ({"type": "conv", "layers": []}, "invalid network spec"),
        ({**MAXOUT, "colour": "red"}, "Extra inputs"),
        ({**MAXOUT, "layers": []}, "layers"),
        ({**MAXOUT, "layers": [{"W": [[[1.0]]], "b": [[1.0, 2.0]]}]}, "b must have shape"),
        ({**MAXOUT, "layers": [{"W": [[[]]], "b": [[]]}]}, "input dimension must be >= 1"),
        ({"type": "random", "in_dim": 2, "widths": [3], "ranks": 0}, "rank"),
        ({**MAXOUT, "domain": {"lo": 1, "hi": 1}}, "empty"),
        ({**MAXOUT, "domain": {"lo": -1, "hi": float("inf")}}, "bounded"),
        ({"type": "relu", "layers": [{"W": [[1.0, 2.0]]}, {"W": [[1.0], [1.0], [1.0]], "b": [0, 0]}]}, "entries"),
    ],
)
def test_bad_specs_give_one_line_errors(tmp_path, data, message):
    spec = write(tmp_path, "bad.json", data)
    res = runner.invoke(app, ["compile", str(spec), "--out", str(tmp_path / "m.safetensors")])
    assert res.exit_code == 2
    assert message in res.output
    assert "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) <= 2


def test_bad_lambda_and_missing_files(tmp_path):
    spec = write(tmp_path, "net.json", MAXOUT)
    res = runner.invoke(app, ["compile", str(spec), "--out", str(tmp_path / "m.safetensors"), "--attention", "softmax", "--lam", "0"])
    assert res.exit_code == 2 and "λ > 0" in res.output
    res = runner.invoke(app, ["verify", str(tmp_path / "missing.safetensors"), str(spec)])
    assert res.exit_code == 2 and "no such model file" in res.output
    res = runner.invoke(app, ["compile", str(tmp_path / "nope.json"), "--out", str(tmp_path / "m.safetensors")])
    assert res.exit_code == 2 and "nope.json does not exist" in res.output


def test_compile_twice_gives_the_same_bytes_and_umask_permissions(tmp_path):
    import os

    spec = write(tmp_path, "net.json", {"type": "random", "in_dim": 2, "widths": [5, 4], "ranks": 3, "seed": 2})
    old = os.umask(0o022)
    try:
        for name in ("a.safetensors", "b.safetensors"):
            assert runner.invoke(app, ["compile", str(spec), "--out", str(tmp_path / name)]).exit_code == 0
    finally:
        os.umask(old)
    assert (tmp_path / "a.safetensors").read_bytes() == (tmp_path / "b.safetensors").read_bytes()
    assert (tmp_path / "a.safetensors").stat().st_mode & 0o777 == 0o644
