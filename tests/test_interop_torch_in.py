"""Torch models in: a saved nn.Sequential (plain state dict + layers JSON) for compile and
regions — and the worked example of docs/compile.md, step by step."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from torch import nn
from typer.testing import CliRunner

from expressivity.cli import app
from expressivity.cpwl import from_relu_mlp
from expressivity.interop.torch_in import (
    is_torch_weights,
    load_network,
    load_sequential,
    save_sequential,
)


def _mlp(seed: int = 0) -> nn.Sequential:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(2, 6), nn.ReLU(), nn.Linear(6, 4), nn.ReLU(), nn.Linear(4, 1))


@pytest.mark.parametrize("suffix", [".pt", ".safetensors"])
def test_save_load_round_trip(tmp_path, suffix):
    mlp = _mlp()
    w, layers = save_sequential(mlp, tmp_path / f"net{suffix}", domain=(-1.0, 1.0))
    assert layers == tmp_path / "net.json" and is_torch_weights(w)
    back, domain = load_sequential(w)
    assert [type(m) for m in back] == [type(m) for m in mlp] and back[0].weight.dtype == torch.float64
    x = torch.rand(50, 2, dtype=torch.float64) * 2 - 1
    with torch.no_grad():
        assert torch.equal(back(x), mlp.double()(x))
    assert domain[0] == -1.0 and domain[1] == 1.0
    net, _ = load_network(w)
    assert np.abs(net(x.numpy()) - from_relu_mlp(mlp)(x.numpy())).max() == 0.0


def test_our_own_safetensors_are_not_torch_weights(tmp_path):
    from expressivity.compile import compile_maxout

    net, _ = load_network(save_sequential(_mlp(), tmp_path / "n.pt", domain=(-1, 1))[0])
    compile_maxout(net, (-1.0, 1.0)).save(tmp_path / "m.safetensors")
    assert not is_torch_weights(tmp_path / "m.safetensors")


def test_layers_without_bias_and_identity(tmp_path):
    torch.manual_seed(1)
    mlp = nn.Sequential(nn.Linear(3, 4, bias=False), nn.ReLU(), nn.Identity(), nn.Linear(4, 2))
    save_sequential(mlp, tmp_path / "n.pt")
    assert json.loads((tmp_path / "n.json").read_text())["layers"][0] == {"bias": False, "linear": [3, 4]}
    back, domain = load_sequential(tmp_path / "n.pt")
    assert domain is None
    x = torch.randn(10, 3, dtype=torch.float64)
    with torch.no_grad():
        assert torch.equal(back(x), mlp.double()(x))


def _train_tiny(steps: int = 200) -> nn.Sequential:
    """The worked example's net: fit |x0| − |x1| on [−1, 1]² (seconds on a CPU)."""
    torch.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1))
    opt = torch.optim.Adam(mlp.parameters(), lr=1e-2)
    x = torch.rand(256, 2) * 2 - 1
    y = (x[:, :1].abs() - x[:, 1:].abs())
    for _ in range(steps):
        opt.zero_grad()
        loss = ((mlp(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
    return mlp


def test_worked_example_train_save_compile_verify_regions(tmp_path, monkeypatch):
    """docs/compile.md, "Compiling a torch model": every step of it."""
    monkeypatch.chdir(tmp_path)
    mlp = _train_tiny()
    torch.save(mlp.state_dict(), "net.pt")  # a plain state dict
    (tmp_path / "net.json").write_text(json.dumps({
        "layers": [{"linear": [2, 8]}, "relu", {"linear": [8, 8]}, "relu", {"linear": [8, 1]}],
        "domain": {"lo": -1, "hi": 1}}))
    run = CliRunner()
    r = run.invoke(app, ["compile", "net.pt", "--out", "net.safetensors"])
    assert r.exit_code == 0, r.output
    assert "wrote net.safetensors" in r.output
    r = run.invoke(app, ["verify", "net.safetensors", "net.pt", "--points", "2000"])
    assert r.exit_code == 0 and "verified" in r.output, r.output
    r = run.invoke(app, ["regions", "net.pt", "--plane=0,0", "1,0", "0,1", "--json"])
    assert r.exit_code == 0, r.output
    torch_count = json.loads(r.stdout)["linear_regions"]
    r = run.invoke(app, ["regions", "net.safetensors", "--plane=0,0", "1,0", "0,1", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["linear_regions"] == torch_count >= 2  # same function, same regions
    r = run.invoke(app, ["regions", "net.pt", "--compile", "--segment=-1,-1", "1,1", "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["linear_regions"] >= 1, r.output


def test_safetensors_weights_with_explicit_layers(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    save_sequential(_mlp(), tmp_path / "w.safetensors", domain=(-2.0, 2.0), layers=tmp_path / "shapes.json")
    r = CliRunner().invoke(app, ["compile", "w.safetensors", "--layers", "shapes.json", "--out", "m.safetensors"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(app, ["verify", "m.safetensors", "w.safetensors", "--layers", "shapes.json"])
    assert r.exit_code == 0 and "verified" in r.output, r.output
