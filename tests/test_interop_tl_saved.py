"""A compiled model to TransformerLens with no Python glue: `compile` saves the source network
in the model file, `export --transformer-lens DIR --lam` writes what TransformerLens's
``boot_native`` + ``load_state_dict`` take, and both the plain TransformerLens load
(``LOAD_WITH_TL``, run as written) and ``load_transformer_lens`` give the bridge back."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from _saved_models import edit_json, edit_tensors
from typer.testing import CliRunner

pytest.importorskip("transformer_lens", reason="TransformerLens export needs the extra: pip install 'expressivity[tl]'")

from expressivity.cli import app  # noqa: E402
from expressivity.compile import compile_maxout, load_compiled  # noqa: E402
from expressivity.compile.spec import parse_spec  # noqa: E402
from expressivity.cpwl import MaxoutNetwork  # noqa: E402
from expressivity.interop.transformer_lens import (  # noqa: E402
    LOAD_WITH_TL,
    load_transformer_lens,
    save_transformer_lens,
    to_transformer_lens,
)
from expressivity.transformer import Transformer, TransformerConfig  # noqa: E402

SPEC = {"type": "random", "in_dim": 2, "widths": [4, 3], "ranks": [3, 2], "seed": 4,
        "domain": {"lo": [-1, -1], "hi": [1, 1]}}
runner = CliRunner()


def _plain_tl(d):
    """The bridge as TransformerLens alone loads it: the documented lines, as written."""
    ns: dict = {}
    exec(LOAD_WITH_TL.replace("DIR", str(d)), ns)
    return ns["bridge"]


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def test_compile_saves_the_source_network(tmp_path):
    (tmp_path / "spec.json").write_text(json.dumps(SPEC))
    res = runner.invoke(app, ["compile", str(tmp_path / "spec.json"), "--out", str(tmp_path / "m.safetensors")])
    assert res.exit_code == 0, res.output
    cm = load_compiled(tmp_path / "m.safetensors")
    net, _ = parse_spec(SPEC)
    x = np.random.default_rng(1).uniform(-1, 1, (300, 2))
    assert cm.net is not None and _same_bits(cm.net(x), net(x))
    # verify needs no spec now, and the hub layout written from the file keeps the network
    res = runner.invoke(app, ["verify", str(tmp_path / "m.safetensors")])
    assert res.exit_code == 0 and "verified" in res.output, res.output
    res = runner.invoke(app, ["export", str(tmp_path / "m.safetensors"), "--hub", str(tmp_path / "hub")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "hub" / "source_net.safetensors").is_file()


def test_cli_compile_then_transformer_lens_without_glue(tmp_path):
    (tmp_path / "spec.json").write_text(json.dumps(SPEC))
    m, out = tmp_path / "m.safetensors", tmp_path / "tl"
    assert runner.invoke(app, ["compile", str(tmp_path / "spec.json"), "--out", str(m)]).exit_code == 0
    res = runner.invoke(app, ["export", str(m), "--transformer-lens", str(out), "--lam", "1e4"])
    assert res.exit_code == 0, res.output
    assert "load_transformer_lens" in res.output
    assert f'load_file("{out}/model.safetensors")' in res.output  # the TransformerLens lines, for this DIR
    from expressivity.interop import load_any

    with pytest.raises(ValueError, match="load_transformer_lens"):
        load_any(out)
    net, _ = parse_spec(SPEC)
    cm = load_compiled(m)
    x = np.random.default_rng(0).uniform(-1, 1, (500, 2))
    inputs = cm.inputs(x)
    tl = load_transformer_lens(out)
    soft = compile_maxout(net, domain=(cm.lo, cm.hi), attention="softmax", lam=1e4)
    assert tl.lam == 1e4 and tl.error_bound == soft.error_bound() > 0
    assert np.abs(tl.logits(inputs)[:, 0, :].numpy() - net(x)).max() <= tl.error_bound
    # TransformerLens alone: the native files, with inputs_embeds = x·W_E from source.safetensors
    from safetensors.torch import load_file

    W_E = load_file(str(out / "source.safetensors"))["W_E"]
    with torch.no_grad():
        plain = _plain_tl(out)(inputs @ W_E)
    assert plain.dtype == torch.float64
    assert torch.equal(plain, tl.logits(inputs))


def test_token_model_round_trip_and_plain_load(tmp_path):
    m = Transformer(TransformerConfig(d_model=8, n_layers=2, n_heads=2, d_head=4, d_mlp=16, d_vocab=5, d_out=3,
                                      n_ctx=32, positional="rope", layer_norm="pre", causal=True, dtype="float64",
                                      lam=0.5))
    m.reset_parameters(seed=5)
    ids = torch.randint(0, 5, (4, 30), generator=torch.Generator().manual_seed(0))
    tl = to_transformer_lens(m)
    save_transformer_lens(tl, tmp_path / "tl")
    back = load_transformer_lens(tmp_path / "tl")
    assert torch.equal(back.logits(ids), tl.logits(ids)) and back.hooks == tl.hooks and back.error_bound == 0
    with torch.no_grad():
        ours = m(ids)
        plain = _plain_tl(tmp_path / "tl")(ids)
    # TL's own rotary tables are float32 (angles off by ~1e-7·t): within float32 round-off of ours
    assert (plain - ours).abs().max().item() < 1e-5
    assert (back.logits(ids) - ours).abs().max().item() < 1e-12  # ours restores exact tables
    # the same bytes when saved again
    save_transformer_lens(back, tmp_path / "tl2")
    for name in ("tl_config.json", "model.safetensors", "expressivity.json", "source.safetensors"):
        assert (tmp_path / "tl" / name).read_bytes() == (tmp_path / "tl2" / name).read_bytes(), name


@pytest.fixture(scope="module")
def saved_tl(tmp_path_factory):
    d = tmp_path_factory.mktemp("tl")
    net = MaxoutNetwork.random(in_dim=2, widths=[3], ranks=[2], seed=0)
    cm = compile_maxout(net, domain=(-1.0, 1.0))
    save_transformer_lens(to_transformer_lens(cm, lam=1e3), d / "tl")
    return d / "tl"


def _copy(src, dst):
    import shutil

    shutil.copytree(src, dst)
    return dst


EDITS = [
    ("an edited native weight", lambda d: edit_tensors(d / "model.safetensors",
                                                      lambda t: t.__setitem__("head.bias", t["head.bias"] + 1)),
     ("model.safetensors", "not the weights")),
    ("a stated bound below the compile's", lambda d: edit_json(d / "expressivity.json",
                                                              lambda r: r.update(error_bound=r["error_bound"] / 2)),
     ("error_bound",)),
    ("another λ", lambda d: edit_json(d / "expressivity.json", lambda r: r.update(lam=10.0)), ("lam",)),
    ("an edited bridge config", lambda d: edit_json(d / "tl_config.json", lambda c: c.update(attn_scale=1.0)),
     ("tl_config.json",)),
    ("an unknown record key", lambda d: edit_json(d / "expressivity.json", lambda r: r.update(extra=1)),
     ("expressivity.json", "keys")),
    ("n_ctx past the model's", lambda d: edit_json(d / "expressivity.json", lambda r: r.update(n_ctx=10**6)),
     ("n_ctx",)),
    ("an edited source network", lambda d: edit_tensors(
        d / "source.safetensors", lambda t: t.__setitem__("source_net.readout.c", t["source_net.readout.c"] + 1)),
     ("source network",)),
    ("a missing native file", lambda d: (d / "model.safetensors").unlink(), ("model.safetensors",)),
    ("a missing record", lambda d: (d / "expressivity.json").unlink(), ("expressivity.json",)),
]


@pytest.mark.parametrize("name,edit,mentions", EDITS, ids=[e[0] for e in EDITS])
def test_load_refuses_edited_files(name, edit, mentions, saved_tl, tmp_path):
    d = _copy(saved_tl, tmp_path / "tl")
    edit(d)
    with pytest.raises(ValueError) as info:
        load_transformer_lens(d)
    msg = str(info.value)
    assert "\n" not in msg and all(m.lower() in msg.lower() for m in mentions), msg


def test_model_without_its_network_says_what_to_do(tmp_path):
    """A file of an older version (no source network): the error's advice, run, works."""
    from expressivity.interop.torch_in import load_source  # noqa: F401  (the advice imports it)

    (tmp_path / "spec.json").write_text(json.dumps(SPEC))
    net, domain = parse_spec(SPEC)
    old = compile_maxout(net, domain)
    from dataclasses import replace

    replace(old, net=None).save(tmp_path / "old.safetensors")
    cm = load_compiled(tmp_path / "old.safetensors")
    assert cm.net is None
    with pytest.raises(ValueError, match="has none") as info:
        to_transformer_lens(cm, lam=1e3)
    advice = str(info.value).split("load it with the spec: ")[1].split(" (from")[0]
    path, SPEC_PATH = str(tmp_path / "old.safetensors"), str(tmp_path / "spec.json")  # noqa: N806
    fixed = eval(advice.replace("path", repr(path)).replace("SPEC", repr(SPEC_PATH)),
                 {"load_compiled": load_compiled, "load_source": load_source})
    assert to_transformer_lens(fixed, lam=1e3).error_bound > 0
