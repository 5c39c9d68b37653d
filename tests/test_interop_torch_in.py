"""Torch models in: a saved nn.Sequential (plain state dict + layers JSON) for compile and
regions — and the worked example of docs/compile.md, run from the docs themselves."""

from __future__ import annotations

import importlib.util
import json
import re
import shlex
from pathlib import Path

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


DOC = Path(__file__).resolve().parents[1] / "docs" / "compile.md"
NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def _worked_example() -> tuple[str, list[tuple[str, str]]]:
    """docs/compile.md, "Compiling a torch model": its python block and its shell session as
    (command, expected output) pairs."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Compiling a torch model", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```(\w*)\n(.*?)```", section, flags=re.S)
    python = next(body for lang, body in blocks if lang == "python")
    shell = next(body for lang, body in blocks if lang == "" and body.lstrip().startswith("$"))
    steps: list[tuple[str, str]] = []
    for line in shell.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:].split("  #")[0].strip(), ""))
        elif steps and line.strip():
            steps[-1] = (steps[-1][0], (steps[-1][1] + "\n" + line).strip())
    return python, steps


def _reads_as(output: str, shown: str) -> bool:
    """Whether ``output`` reads as the docs show it: "…" skips anything, numbers may differ
    (the docs show one run on one machine), table rules and runs of spaces count as one space,
    and every other character must be there, in order."""
    def flat(s: str) -> str:
        return " ".join(re.sub(r"[│┃]", " ", s).split())

    parts = []
    for piece in filter(None, (p.strip() for p in flat(shown).split("…"))):
        out, at = [], 0
        for m in NUMBER.finditer(piece):
            out += [re.escape(piece[at:m.start()]), NUMBER.pattern]
            at = m.end()
        parts.append("".join(out) + re.escape(piece[at:]))
    return re.search(".*?".join(parts), flat(output)) is not None


def test_worked_example_of_the_docs_runs(tmp_path, monkeypatch):
    """Runs docs/compile.md's worked example as written: the python block (train, save), then
    every shell command through the CLI; each output must read as the docs show it, and the
    torch net and its compiled transformer must have the same number of linear regions."""
    python, steps = _worked_example()
    assert [c.split()[:2] for c, _ in steps][:2] == [["python", "train_tiny.py"], ["expressivity", "compile"]]
    monkeypatch.chdir(tmp_path)
    exec(compile(python, str(DOC), "exec"), {"__name__": "__main__"})
    assert (tmp_path / "net.pt").is_file() and (tmp_path / "net.json").is_file()
    counts = []
    for command, shown in steps[1:]:
        args = shlex.split(command)
        assert args[0] == "expressivity", command
        if "--onnx" in args and importlib.util.find_spec("onnxruntime") is None:
            args = args[:args.index("--onnx")] + args[args.index("--onnx") + 2:]  # the extra is absent: hub only
            shown = ""
        r = CliRunner().invoke(app, args[1:])
        assert r.exit_code == 0, (command, r.output)
        assert _reads_as(r.output, shown), (command, shown, r.output)
        if args[1] == "regions":
            counts.append(int(r.output.split(" linear regions")[0].split()[-1]))
    assert len(counts) == 2 and counts[0] == counts[1] >= 2  # same function, same pieces
    assert (tmp_path / "net-hub" / "config.json").is_file()


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
