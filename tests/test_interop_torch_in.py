"""Torch models in: a saved nn.Sequential (plain state dict + layers JSON) for compile and
regions (the worked example of docs/compile.md runs in tests/test_docs.py)."""

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
    Maxout,
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


def _maxout_net(seed: int = 0) -> nn.Sequential:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(2, 5), Maxout(5, 4, 3), Maxout(4, 3, 2), nn.ReLU(), nn.Linear(3, 6),
                         nn.Linear(6, 4), nn.ReLU(), nn.Linear(4, 2))


@pytest.mark.parametrize("suffix", [".pt", ".safetensors"])
def test_our_maxout_module_round_trips_and_converts_exactly(tmp_path, suffix):
    """Maxout(in, out, rank) in a Sequential: saved as {"maxout": [in, out, rank]}, loaded back,
    and converted to the MaxoutNetwork that computes the same function (Linear maps folded into
    the next layer's pieces, a ReLU after a Maxout, two Linears in a row)."""
    mlp = _maxout_net()
    w, layers = save_sequential(mlp, tmp_path / f"m{suffix}", domain=(-1.0, 1.0))
    assert json.loads(layers.read_text())["layers"][1] == {"maxout": [5, 4, 3]}
    back, _ = load_sequential(w)
    x = torch.rand(2000, 2, dtype=torch.float64) * 4 - 2
    with torch.no_grad():
        ref = mlp.double()(x)
        assert torch.equal(back(x), ref)
    net, _ = load_network(w)
    assert [layer.rank for layer in net.layers] == [3, 2, 2, 2] and net.readout[0].shape == (2, 4)
    assert np.abs(net(x.numpy()) - ref.numpy()).max() < 1e-12


def test_maxout_net_compiles_verifies_and_counts_regions(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    save_sequential(_maxout_net(1), tmp_path / "m.pt", domain=(-1.0, 1.0))
    run = CliRunner()
    r = run.invoke(app, ["compile", "m.pt", "--out", "m.safetensors"])
    assert r.exit_code == 0 and "wrote m.safetensors" in r.output, r.output
    r = run.invoke(app, ["verify", "m.safetensors", "m.pt", "--points", "2000"])
    assert r.exit_code == 0 and "verified" in r.output, r.output
    counts = []
    for model in ("m.pt", "m.safetensors"):
        r = run.invoke(app, ["regions", model, "--plane=0,0", "1,0", "0,1", "--json"])
        assert r.exit_code == 0, r.output
        counts.append(json.loads(r.stdout)["linear_regions"])
    assert counts[0] == counts[1] >= 2


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


def test_regions_of_a_torch_net_compiled_on_the_fly(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    save_sequential(_mlp(), tmp_path / "net.pt", domain=(-1.0, 1.0))
    r = CliRunner().invoke(app, ["regions", "net.pt", "--compile", "--segment=-1,-1", "1,1", "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["linear_regions"] >= 1, r.output


def test_safetensors_weights_with_explicit_layers(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    save_sequential(_mlp(), tmp_path / "w.safetensors", domain=(-2.0, 2.0), layers=tmp_path / "shapes.json")
    r = CliRunner().invoke(app, ["compile", "w.safetensors", "--layers", "shapes.json", "--out", "m.safetensors"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(app, ["verify", "m.safetensors", "w.safetensors", "--layers", "shapes.json"])
    assert r.exit_code == 0 and "verified" in r.output, r.output
