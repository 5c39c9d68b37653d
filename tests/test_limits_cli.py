"""CLI of the limits area: sensitivity, restrict, dyck-ce."""

from __future__ import annotations

import torch
from typer.testing import CliRunner

from expressivity.cli import app

torch.set_num_threads(1)
runner = CliRunner()


def test_sensitivity_parity_bound_holds(tmp_path):
    png, js = tmp_path / "s.png", tmp_path / "s.json"
    res = runner.invoke(app, ["sensitivity", "--model", "parity", "--lengths", "8,16", "--strings", "1",
                              "--plot", str(png), "--json", str(js)])
    assert res.exit_code == 0, res.output
    assert "measured ≤ bound on every layer: yes" in res.output
    assert png.stat().st_size > 0 and '"applicable": true' in js.read_text()


def test_sensitivity_layer_norm_eps0_not_applicable():
    res = runner.invoke(app, ["sensitivity", "--model", "first", "-p", "layer_norm=true", "-p", "eps=0",
                              "--lengths", "8,16", "--strings", "1"])
    assert res.exit_code == 0, res.output
    assert "not applicable" in res.output and "Lipschitz" in res.output


def test_restrict_random_hardmax(tmp_path):
    res = runner.invoke(app, ["restrict", "--n", "16", "--lengths", "8,16", "--restrictions", "2",
                              "--plot", str(tmp_path / "d.png")])
    assert res.exit_code == 0, res.output
    assert "depth reduction" in res.output and "verified" in res.output and "parity" in res.output


def test_restrict_softmax_model_is_a_clear_error():
    res = runner.invoke(app, ["restrict", "--model", "parity", "--lengths", "8"])
    assert res.exit_code == 2
    assert "hard attention" in res.output and "softmax" in res.output


def test_bad_lengths_and_unknown_model():
    res = runner.invoke(app, ["sensitivity", "--lengths", "8,x"])
    assert res.exit_code == 2 and "--lengths" in res.output
    res = runner.invoke(app, ["sensitivity", "--model", "nonesuch", "--lengths", "8"])
    assert res.exit_code == 2


def test_dyck_ce_tiny(tmp_path):
    res = runner.invoke(app, ["dyck-ce", "--lengths", "4,6", "--steps", "2", "--models", "lstm",
                              "--plot", str(tmp_path / "ce.png")])
    assert res.exit_code == 0, res.output
    assert "P_0" in res.output and (tmp_path / "ce.png").exists()
