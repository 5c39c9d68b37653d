"""Bad input for interop (see tests/_bad_input.py for the contract): torch weights that are
not a plain state dict, layers JSON that does not match, hub directories that are not ours,
model kinds a target format cannot express, and missing optional dependencies."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch
from _bad_input import Case, api_rejects, cli_rejects
from torch import nn

from expressivity.interop import from_pretrained, save_pretrained
from expressivity.interop.torch_in import load_sequential, save_sequential

LAYERS = {"layers": [{"linear": [2, 3]}, "relu", {"linear": [3, 1]}], "domain": {"lo": -1, "hi": 1}}


def _mlp() -> nn.Sequential:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))


def _layers(tmp: Path, doc=LAYERS, name: str = "net.json") -> None:
    (tmp / name).write_text(json.dumps(doc) if not isinstance(doc, str) else doc)


def pickled_module(tmp: Path):
    torch.save(_mlp(), tmp / "net.pt")  # a whole pickled module, not a state dict
    _layers(tmp)


def checkpoint_dict(tmp: Path):
    torch.save({"model": _mlp().state_dict(), "step": 3}, tmp / "net.pt")  # nested: not plain
    _layers(tmp)


def tensor_not_dict(tmp: Path):
    torch.save(torch.zeros(3), tmp / "net.pt")
    _layers(tmp)


def garbage_pt(tmp: Path):
    (tmp / "net.pt").write_bytes(b"not a zip at all")
    _layers(tmp)


def no_layers_file(tmp: Path):
    torch.save(_mlp().state_dict(), tmp / "net.pt")


def wrong_shapes(tmp: Path):
    torch.save(_mlp().state_dict(), tmp / "net.pt")
    _layers(tmp, {"layers": [{"linear": [2, 4]}, "relu", {"linear": [4, 1]}], "domain": {"lo": -1, "hi": 1}})


def missing_relu_layer(tmp: Path):
    torch.save(_mlp().state_dict(), tmp / "net.pt")
    _layers(tmp, {"layers": [{"linear": [2, 3]}, {"linear": [3, 1]}], "domain": {"lo": -1, "hi": 1}})


def unknown_layer(tmp: Path):
    torch.save(_mlp().state_dict(), tmp / "net.pt")
    _layers(tmp, {"layers": [{"linear": [2, 3]}, "tanh", {"linear": [3, 1]}]})


def bad_json(tmp: Path):
    torch.save(_mlp().state_dict(), tmp / "net.pt")
    _layers(tmp, "{not json")


def no_domain(tmp: Path):
    torch.save(_mlp().state_dict(), tmp / "net.pt")
    _layers(tmp, {"layers": LAYERS["layers"]})


def nan_weights(tmp: Path):
    state = _mlp().state_dict()
    state["0.weight"][0, 0] = float("nan")
    torch.save(state, tmp / "net.pt")
    _layers(tmp)


def int_weights(tmp: Path):
    state = {k: v.to(torch.int64) for k, v in _mlp().state_dict().items()}
    torch.save(state, tmp / "net.pt")
    _layers(tmp)


def maxout_bad_spec(tmp: Path):
    from expressivity.interop.torch_in import Maxout

    torch.save(nn.Sequential(nn.Linear(2, 3), Maxout(3, 2, 2)).state_dict(), tmp / "net.pt")
    _layers(tmp, {"layers": [{"linear": [2, 3]}, {"maxout": [3, 2]}], "domain": {"lo": -1, "hi": 1}})


def maxout_wrong_rank(tmp: Path):
    from expressivity.interop.torch_in import Maxout

    torch.save(nn.Sequential(nn.Linear(2, 3), Maxout(3, 2, 2)).state_dict(), tmp / "net.pt")
    _layers(tmp, {"layers": [{"linear": [2, 3]}, {"maxout": [3, 2, 4]}], "domain": {"lo": -1, "hi": 1}})


TORCH_CASES = [
    Case("maxout without rank", ["compile", "net.pt", "--out", "m.safetensors"], ("layers[1]", "maxout", "rank"),
         maxout_bad_spec),
    Case("maxout rank mismatch", ["regions", "net.pt", "--segment", "0,0", "1,1"], ("1.weight", "shape"),
         maxout_wrong_rank),
    Case("pickled module", ["compile", "net.pt", "--out", "m.safetensors"], ("not a plain state dict", "weights_only"),
         pickled_module),
    Case("checkpoint dict", ["compile", "net.pt", "--out", "m.safetensors"], ("not a plain state dict", "model"),
         checkpoint_dict),
    Case("tensor not dict", ["regions", "net.pt", "--segment", "0,0", "1,1"], "not a plain state dict", tensor_not_dict),
    Case("garbage .pt", ["compile", "net.pt", "--out", "m.safetensors"], "not a plain state dict", garbage_pt),
    Case("no layers file", ["compile", "net.pt", "--out", "m.safetensors"], ("layers file", "net.json"), no_layers_file),
    Case("wrong shapes", ["compile", "net.pt", "--out", "m.safetensors"], ("0.weight", "shape"), wrong_shapes),
    Case("missing relu", ["regions", "net.pt", "--segment", "0,0", "1,1"], ("does not match", "missing"),
         missing_relu_layer),
    Case("unknown layer", ["compile", "net.pt", "--out", "m.safetensors"], ("layers[1]", "tanh"), unknown_layer),
    Case("bad layers json", ["compile", "net.pt", "--out", "m.safetensors"], ("layers file", "json"), bad_json),
    Case("no domain", ["compile", "net.pt", "--out", "m.safetensors"], ("domain", "compiling"), no_domain),
    Case("nan weights", ["compile", "net.pt", "--out", "m.safetensors"], ("0.weight", "nan"), nan_weights),
    Case("int weights", ["compile", "net.pt", "--out", "m.safetensors"], ("0.weight", "float"), int_weights),
    Case("layers with a json spec", ["compile", "spec.json", "--layers", "x.json", "--out", "m.safetensors"],
         ("--layers", "torch weights"), lambda tmp: (tmp / "spec.json").write_text(json.dumps(
             {"type": "random", "in_dim": 1, "widths": [2], "ranks": 2})) and None),
]


@pytest.mark.parametrize("case", TORCH_CASES, ids=lambda c: c.name)
def test_cli_bad_torch_input(case, tmp_path, monkeypatch):
    cli_rejects(case, tmp_path, monkeypatch)


def test_api_pickled_module_is_refused_without_unpickling(tmp_path, monkeypatch):
    """weights_only=True never runs the pickle's code: a class that would run code is refused."""
    pickled_module(tmp_path)
    calls = []
    real = torch.load
    monkeypatch.setattr(torch, "load", lambda *a, **k: calls.append(k) or real(*a, **k))
    api_rejects(load_sequential, tmp_path / "net.pt", mentions="not a plain state dict")
    assert calls and all(k.get("weights_only") is True for k in calls)


def test_api_save_sequential_refuses_other_modules(tmp_path):
    api_rejects(save_sequential, nn.Sequential(nn.Linear(2, 2), nn.Tanh()), tmp_path / "n.pt", mentions=("Tanh",))
    api_rejects(save_sequential, _mlp(), tmp_path / "n.bin", mentions=("weights", ".pt"))


# ------------------------------------------------------------------------------ hub
def test_api_hub_bad_directories(tmp_path):
    api_rejects(from_pretrained, tmp_path / "nope", mentions=("directory", "config.json"))
    (tmp_path / "empty").mkdir()
    api_rejects(from_pretrained, tmp_path / "empty", mentions="config.json")
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / "config.json").write_text(json.dumps({"model_type": "gpt2"}))
    api_rejects(from_pretrained, tmp_path / "foreign", mentions=("format", "save_pretrained"))
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "config.json").write_text("{")
    api_rejects(from_pretrained, tmp_path / "broken", mentions=("config.json", "json"))
    api_rejects(save_pretrained, nn.Linear(2, 2), tmp_path / "x", mentions=("model", "Linear"))
    (tmp_path / "file").write_text("")
    from expressivity.transformer import Transformer, TransformerConfig

    tr = Transformer(TransformerConfig(d_model=2, n_layers=1, n_heads=1, d_head=1, d_mlp=0, d_input=1, n_ctx=2))
    api_rejects(save_pretrained, tr, tmp_path / "file", mentions=("directory", "file"))


def test_api_hub_bad_kind_record(tmp_path):
    from expressivity import constructions

    save_pretrained(constructions.get("first"), tmp_path / "c")
    doc = json.loads((tmp_path / "c" / "config.json").read_text())
    del doc["construction"]
    (tmp_path / "c" / "config.json").write_text(json.dumps(doc))
    api_rejects(from_pretrained, tmp_path / "c", mentions=("config.json", "construction"))


def test_api_hub_bad_run_record(tmp_path):
    """A "run" hub directory whose RunConfig is damaged, or whose weights are not that model's."""
    from expressivity.interop import TrainedRun, load_run
    from expressivity.train import RunConfig, build_model

    cfg = RunConfig(task="parity", model="lstm", d_model=4, heads=1, layers=1, steps=1, train_lengths=(2, 3),
                    test_lengths=(4,))
    task = cfg.make_task()
    save_pretrained(TrainedRun(build_model(cfg, len(task.vocab), task.n_outputs), cfg), tmp_path / "r")
    assert from_pretrained(tmp_path / "r").kind == "lstm"  # the intact directory loads
    doc = json.loads((tmp_path / "r" / "config.json").read_text())
    (tmp_path / "r" / "config.json").write_text(json.dumps({**doc, "run": {**doc["run"], "model": "gru"}}))
    api_rejects(from_pretrained, tmp_path / "r", mentions=("config.json", "run config", "model"))
    (tmp_path / "r" / "config.json").write_text(json.dumps({**doc, "run": {**doc["run"], "d_model": 6}}))
    api_rejects(from_pretrained, tmp_path / "r", mentions=("model.safetensors", "does not fit", "lstm"))
    doc["transformer"] = {"d_model": 4}
    (tmp_path / "r" / "config.json").write_text(json.dumps(doc))
    api_rejects(from_pretrained, tmp_path / "r", mentions=("config.json", "another transformer"))
    api_rejects(load_run, tmp_path / "nope", mentions=("model.safetensors", "training output"))
    api_rejects(load_run, tmp_path / "r", mentions=("run_config", "expressivity.train"))
    api_rejects(TrainedRun, build_model(cfg, 4, 2), {"task": "parity"}, mentions=("config", "RunConfig"))


def test_api_hub_weights_not_matching_config(tmp_path):
    from expressivity.transformer import Transformer, TransformerConfig

    cfg = TransformerConfig(d_model=4, n_layers=1, n_heads=1, d_head=2, d_mlp=0, d_input=1, n_ctx=2)
    save_pretrained(Transformer(cfg), tmp_path / "m")
    doc = json.loads((tmp_path / "m" / "config.json").read_text())
    doc["transformer"]["d_model"] = 6
    (tmp_path / "m" / "config.json").write_text(json.dumps(doc))
    api_rejects(from_pretrained, tmp_path / "m", mentions=("model.safetensors", "does not match"))


# ------------------------------------------------------------------ optional extras
def test_missing_optional_dependency_names_the_extra(monkeypatch):
    from expressivity.interop import _optional

    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import fails as if not installed
    monkeypatch.setitem(sys.modules, "transformer_lens", None)
    api_rejects(_optional.need, "onnxruntime", mentions=("onnxruntime", "pip install 'expressivity[onnx]'"))
    api_rejects(_optional.need, "transformer_lens", mentions=("transformer_lens", "pip install 'expressivity[tl]'"))


# ------------------------------------------------------------------------------ export
def zero_eps_hub(tmp: Path):
    from expressivity import constructions

    save_pretrained(constructions.get("parity", layer_norm=True), tmp / "ln0")


def compiled_file(tmp: Path):
    from expressivity.compile import compile_maxout
    from expressivity.cpwl import MaxoutNetwork

    compile_maxout(MaxoutNetwork.random(in_dim=1, widths=[2], ranks=2, seed=0), (0.0, 1.0)).save(tmp / "m.safetensors")


def rnn_run(tmp: Path):
    from expressivity.train import RunConfig, train_run

    train_run(RunConfig(task="parity", model="rnn", d_model=4, heads=1, layers=1, steps=1, batch_size=2,
                        train_lengths=(2, 3), test_lengths=(4,), eval_batch=2, checkpoint_every=1), out_dir=tmp / "run")


EXPORT_CASES = [
    Case("recurrent run to onnx", ["export", "run", "--onnx", "o.onnx"], ("rnn", "not a transformer", "--hub"), rnn_run),
    Case("layer norm eps 0 to onnx", ["export", "ln0", "--onnx", "out.onnx"], ("eps = 0", "onnx", "--allow-zero-eps"),
         zero_eps_hub),
    Case("no target", ["export", "m.safetensors"], ("--onnx", "--hub"), compiled_file),
    Case("negative check", ["export", "m.safetensors", "--onnx", "o.onnx", "--check", "-1"], "--check", compiled_file),
    Case("missing model", ["export", "nope.safetensors", "--onnx", "o.onnx"], ("nope.safetensors", "does not exist")),
    Case("not a model", ["export", "m.txt", "--onnx", "o.onnx"], ("m.txt", ".safetensors"),
         lambda tmp: (tmp / "m.txt").write_text("x") and None),
    Case("onnx into a directory", ["export", "m.safetensors", "--onnx", "."], ("--onnx", "directory"), compiled_file),
]


@pytest.mark.parametrize("case", EXPORT_CASES, ids=lambda c: c.name)
def test_cli_bad_export(case, tmp_path, monkeypatch):
    cli_rejects(case, tmp_path, monkeypatch)


@pytest.mark.parametrize("module", ["onnx", "onnxruntime"])
def test_cli_export_without_onnx_names_the_extra(module, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, module, None)
    case = Case(f"no {module}", ["export", "m.safetensors", "--onnx", "o.onnx"],
                (module, "pip install 'expressivity[onnx]'"), compiled_file)
    cli_rejects(case, tmp_path, monkeypatch)


# ------------------------------------------------------------------- TransformerLens
def _tr(**over):
    from expressivity.transformer import Transformer, TransformerConfig

    base = dict(d_model=4, n_layers=1, n_heads=1, d_head=2, d_mlp=4, d_vocab=3, d_out=2, n_ctx=8, dtype="float64")
    return Transformer(TransformerConfig(**{**base, **over}))


def test_api_transformer_lens_refusals():
    from expressivity import constructions
    from expressivity.compile import compile_maxout
    from expressivity.cpwl import MaxoutNetwork
    from expressivity.interop.transformer_lens import to_transformer_lens

    cm = compile_maxout(MaxoutNetwork.random(in_dim=1, widths=[2], ranks=2, seed=0), (0.0, 1.0))
    api_rejects(to_transformer_lens, cm, mentions=("no hardmax", "lam"))
    api_rejects(to_transformer_lens, type(cm)(**{**cm.__dict__, "net": None}), lam=100.0, mentions=("source network",))
    api_rejects(to_transformer_lens, constructions.get("dyck", max_length=8), lam=100.0, mentions=("hardmax", "bound"))
    api_rejects(to_transformer_lens, _tr(), lam=10.0, mentions=("lam", "hardmax models only"))
    api_rejects(to_transformer_lens, _tr(layer_norm="post"), mentions=("post-LN", "pre-LN"))
    api_rejects(to_transformer_lens, _tr(log_length_scaling=True), mentions=("log-length", "attn_scale"))
    api_rejects(to_transformer_lens, _tr(), n_ctx=9, mentions=("n_ctx", "<= 8"))


def test_api_transformer_lens_missing_names_the_extra(monkeypatch):
    from expressivity.interop.transformer_lens import to_transformer_lens

    monkeypatch.setitem(sys.modules, "transformer_lens", None)
    api_rejects(to_transformer_lens, _tr(), mentions=("transformer_lens", "pip install 'expressivity[tl]'"))
