"""Hub layout (config.json + model.safetensors): every model kind round-trips to
bitwise-identical outputs; bytes are deterministic; files respect the umask."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch

from expressivity import constructions
from expressivity.compile import compile_maxout
from expressivity.cpwl import MaxoutNetwork
from expressivity.interop import from_pretrained, model_kind, read_config, save_pretrained
from expressivity.limits.trained import TrainedModel
from expressivity.transformer import Transformer, TransformerConfig, load_transformer

X = np.random.default_rng(0).uniform(-1, 1, (500, 2))


def _net():
    return MaxoutNetwork.random(in_dim=2, widths=[4, 3], ranks=[3, 2], seed=1)


def _same(a: torch.Tensor | np.ndarray, b) -> bool:
    a, b = (x.detach().numpy() if isinstance(x, torch.Tensor) else np.asarray(x) for x in (a, b))
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("layer_norm,attention,dtype", [("none", "softmax", "float32"), ("pre", "hardmax", "float64"),
                                                        ("post", "softmax", "float64")])
def test_plain_transformer_round_trip(tmp_path, layer_norm, attention, dtype):
    cfg = TransformerConfig(d_model=8, n_layers=2, n_heads=2, d_head=4, d_mlp=16, d_vocab=5, d_out=3,
                            n_ctx=12, layer_norm=layer_norm, attention=attention, dtype=dtype, causal=True)
    model = Transformer(cfg)
    model.reset_parameters(seed=3)
    save_pretrained(model, tmp_path / "m")
    back = from_pretrained(tmp_path / "m")
    assert isinstance(back, Transformer) and back.cfg == cfg and back.channels is None
    ids = torch.randint(0, 5, (4, 12), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        assert _same(model(ids), back(ids))
    # model.safetensors is the plain state dict: our Transformer loads it strictly
    from safetensors.torch import load_file

    fresh = Transformer(cfg)
    fresh.load_state_dict(load_file(str(tmp_path / "m" / "model.safetensors")), strict=True)
    with torch.no_grad():
        assert _same(model(ids), fresh(ids))


def test_plain_transformer_with_a_channel_map(tmp_path):
    from expressivity.transformer import ChannelMap

    cfg = TransformerConfig(d_model=3, n_layers=1, n_heads=1, d_head=2, d_mlp=4, d_input=2, n_ctx=4, dtype="float64")
    model = Transformer(cfg, ChannelMap(("x[0]", "x[1]", "one")))
    model.reset_parameters(seed=1)
    save_pretrained(model, tmp_path / "m")
    back = from_pretrained(tmp_path / "m")
    assert back.channels == model.channels and back.channels.names == ("x[0]", "x[1]", "one")
    x = torch.randn(5, 4, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        assert _same(model(x), back(x))


@pytest.mark.parametrize("attention,lam", [("hardmax", None), ("softmax", 100.0)])
def test_compiled_round_trip_keeps_net_domain_and_bound(tmp_path, attention, lam):
    net = _net()
    cm = compile_maxout(net, domain=(-1.0, 1.0), attention=attention, lam=lam)
    save_pretrained(cm, tmp_path / "cm")
    back = from_pretrained(tmp_path / "cm")
    assert model_kind(back) == "compiled"
    assert _same(cm.evaluate(X), back.evaluate(X))
    assert back.error_bound() == cm.error_bound() and back.lam == cm.lam and back.attention == attention
    assert back.channels == cm.channels
    assert _same(back.lo, cm.lo) and _same(back.hi, cm.hi)
    assert back.net is not None and _same(back.net(X), net(X))  # verify needs no spec
    with pytest.raises(ValueError, match="outside the compiled domain"):
        back.evaluate(np.array([[2.0, 0.0]]))


def test_compiled_without_source_net(tmp_path):
    cm = compile_maxout(_net(), domain=(-1.0, 1.0))
    save_pretrained(cm, tmp_path / "cm")  # first with its net …
    bare = type(cm)(**{**cm.__dict__, "net": None})
    save_pretrained(bare, tmp_path / "cm")  # … then over it without: no stale source net
    assert not (tmp_path / "cm" / "source_net.safetensors").exists()
    back = from_pretrained(tmp_path / "cm")
    assert back.net is None and _same(back.evaluate(X), cm.evaluate(X))


CONSTRUCTION_CASES = [
    ("parity", {}, ["0101", "1100", "1110", ""]),
    ("parity", {"layer_norm": True}, ["0101", "1100", "1110"]),
    ("first", {}, ["0101", "1100", "1"]),
    ("parity-compiled", {"max_length": 6}, ["0101", "1100", "111"]),
    ("dyck", {"k": 2, "max_depth": 2, "max_length": 32}, ["()[]", "(())", "(]", "(("]),
    ("dyck", {"method": "yao", "max_length": 16}, ["()[]", "([])", "(]"]),
]


@pytest.mark.parametrize("name,params,strings", CONSTRUCTION_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CONSTRUCTION_CASES)])
def test_construction_round_trip(tmp_path, name, params, strings):
    c = constructions.get(name, **params)
    save_pretrained(c, tmp_path / "c")
    back = from_pretrained(tmp_path / "c")
    assert model_kind(back) == "construction" and back.name == name and back.params == c.params
    assert back.transformer.channels is not None and back.transformer.channels == c.transformer.channels
    assert _same(c.logits(strings), back.logits(strings))


def test_construction_keeps_edited_weights(tmp_path):
    """The weights come from the file, not from rebuilding: an edited model round-trips."""
    c = constructions.get("first")
    with torch.no_grad():
        c.transformer.W_U.mul_(3.0)
    save_pretrained(c, tmp_path / "c")
    back = from_pretrained(tmp_path / "c")
    assert _same(c.logits(["01", "10"]), back.logits(["01", "10"]))
    assert not _same(constructions.get("first").logits(["01", "10"]), back.logits(["01", "10"]))


TINY = dict(task="parity", layers=1, heads=2, d_model=8, d_mlp=8, steps=2, batch_size=4, train_lengths=(2, 4),
            test_lengths=(6,), eval_batch=4, checkpoint_every=1)


def _run_cases():
    """Every model kind of the training registry (a kind added there is covered with no
    change here), and the transformer with every position encoding."""
    from expressivity.train import MODELS
    from expressivity.transformer.positions import POSITIONALS

    cases = [(name, {}) for name in MODELS if name != "transformer"]
    cases += [("transformer", {"positional": p}) for p in POSITIONALS]
    cases += [("transformer", {"positional": "rope", "kind": "next_symbol", "layer_norm": "post"})]
    return cases


RUN_CASES = _run_cases()


@pytest.mark.parametrize("name,over", RUN_CASES, ids=[f"{n}-{'-'.join(map(str, o.values()))}" for n, o in RUN_CASES])
def test_every_trained_model_kind_round_trips(tmp_path, name, over):
    """A training output directory → hub layout → back: identical outputs, for every kind."""
    from expressivity.interop import TrainedRun, load_run
    from expressivity.train import RunConfig, train_run

    cfg = RunConfig(**{**TINY, "model": name, **over})
    train_run(cfg, out_dir=tmp_path / "run")
    run = from_pretrained(tmp_path / "run")  # a train output directory loads as it is
    assert isinstance(run, TrainedRun) and run.kind == name and run.config == cfg
    save_pretrained(run, tmp_path / "hub")
    doc = read_config(tmp_path / "hub")
    assert doc["kind"] == "run" and doc["run"]["model"] == name
    assert (doc["transformer"] is not None) == (name == "transformer")
    back = from_pretrained(tmp_path / "hub")
    assert isinstance(back, TrainedRun) and back.config == cfg and type(back.model) is type(run.model)
    ids = run.sample_inputs(16, seed=3)
    assert _same(run(ids), back(ids))
    assert _same(load_run(tmp_path / "run" / "model.safetensors")(ids), back(ids))
    state = {k: v for k, v in back.model.state_dict().items()}
    from safetensors.torch import load_file

    saved = load_file(str(tmp_path / "run" / "model.safetensors"))
    assert state.keys() == saved.keys() and all(_same(state[k], saved[k]) for k in state)
    # and again: the bytes of a re-save are the same
    save_pretrained(back, tmp_path / "hub2")
    for f in ("config.json", "model.safetensors"):
        assert (tmp_path / "hub" / f).read_bytes() == (tmp_path / "hub2" / f).read_bytes()


def test_cli_exports_a_run_dir_to_the_hub(tmp_path, monkeypatch):
    """`expressivity export RUN_DIR --hub DIR` for a recurrent run (no transformer inside)."""
    from typer.testing import CliRunner

    from expressivity.cli import app
    from expressivity.train import RunConfig, train_run

    cfg = RunConfig(**{**TINY, "model": "lstm"})
    train_run(cfg, out_dir=tmp_path / "run")
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["export", "run", "--hub", "hub"])
    assert r.exit_code == 0, r.output
    back = from_pretrained(tmp_path / "hub")
    ids = back.sample_inputs(8)
    assert _same(from_pretrained(tmp_path / "run")(ids), back(ids))


def test_trained_model_kind_and_encoder(tmp_path):
    """A TrainedModel (the limits analyses' Encoder) still saves as kind "trained"; a
    transformer run gives one with .encoder()."""
    from expressivity.train import RunConfig, train_run

    cfg = RunConfig(task="dyck", task_params={"k": 1, "max_depth": 3}, layers=1, heads=1, d_model=8, d_mlp=8,
                    steps=2, batch_size=4, train_lengths=(2, 4), test_lengths=(6,), eval_batch=4,
                    checkpoint_every=1)
    train_run(cfg, out_dir=tmp_path / "run")
    enc = from_pretrained(tmp_path / "run").encoder()
    assert isinstance(enc, TrainedModel) and enc.language.k == 1 and enc.language.max_depth == 3
    save_pretrained(enc, tmp_path / "hub")
    back = from_pretrained(tmp_path / "hub")
    assert isinstance(back, TrainedModel) and back.kind == enc.kind
    assert back.language.k == 1 and back.language.max_depth == 3
    x = enc.encode(["()()", "(())"]).inputs
    with torch.no_grad():
        assert _same(enc.transformer(x), back.transformer(back.encode(["()()", "(())"]).inputs))
    assert _same(load_transformer(tmp_path / "run" / "model.safetensors").W_E, back.transformer.W_E)


def test_bytes_are_deterministic_and_config_sorted(tmp_path):
    cm = compile_maxout(_net(), domain=(-1.0, 1.0), attention="softmax", lam=10.0)
    save_pretrained(cm, tmp_path / "a")
    save_pretrained(from_pretrained(tmp_path / "a"), tmp_path / "b")
    for name in ("config.json", "model.safetensors", "source_net.safetensors"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    text = (tmp_path / "a" / "config.json").read_text()
    assert text == json.dumps(json.loads(text), sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    assert read_config(tmp_path / "a")["kind"] == "compiled"


def test_files_respect_the_umask(tmp_path):
    old = os.umask(0o027)
    try:
        save_pretrained(constructions.get("parity"), tmp_path / "new" / "dir")
    finally:
        os.umask(old)
    d = tmp_path / "new" / "dir"
    assert (d.stat().st_mode & 0o777) == 0o750
    for f in d.iterdir():
        assert (f.stat().st_mode & 0o777) == 0o640, f.name
    assert not [f for f in d.iterdir() if f.name.startswith(".")]  # no temporary files left
