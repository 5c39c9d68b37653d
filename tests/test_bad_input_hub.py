"""Bad input for the loaders of saved models (see tests/_bad_input.py for the contract):
hub directories (``from_pretrained``), compiled and transformer files (``load_compiled``,
``load_transformer``), training outputs (``load_run``) and the API's path arguments.

Nothing loaded is believed unchecked: every field of config.json and of the compile record,
every tensor (name, shape, dtype, finite), and a compiled model against its source network
(measured on sample points). Each case edits one thing in a copy of a saved model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from _bad_input import api_rejects
from _saved_models import as_dtype, build, copy_into, edit_json, edit_record, edit_tensors, poison

from expressivity.compile import load_compiled
from expressivity.interop import from_pretrained, load_any, load_run, save_pretrained
from expressivity.transformer import load_transformer, save_transformer

HC, HS, HT, HF, HR, HN = "hub_compiled", "hub_soft", "hub_tr", "hub_first", "hub_run", "hub_net"


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("saved"))


@pytest.fixture
def models(saved, tmp_path) -> Path:
    return copy_into(saved, tmp_path)


def cfg(hub: str, fn):
    return lambda d: edit_json(d / hub / "config.json", fn)


def comp(fn, hub: str = HC):
    return cfg(hub, lambda doc: fn(doc["compiled"]))


def put(**kv):
    return lambda rec: rec.update(kv)


def src(fn):
    return lambda d: edit_tensors(d / HC / "source_net.safetensors", fn)


def drop(key):
    return lambda rec: rec.pop(key)


def weights(hub, fn):
    return lambda d: edit_tensors(d / hub / "model.safetensors", fn)


# (name, hub directory, edit, words the message must contain)
HUB_CASES = [
    # weights: finite, dtype never cast, names and shapes
    ("transformer NaN weight", HT, lambda d: poison(d / HT / "model.safetensors"), ("model.safetensors", "nan")),
    ("transformer inf weight", HT, lambda d: poison(d / HT / "model.safetensors", float("inf")), ("model.safetensors", "inf")),
    ("compiled NaN weight", HC, lambda d: poison(d / HC / "model.safetensors"), ("model.safetensors", "nan")),
    ("construction NaN weight", HF, lambda d: poison(d / HF / "model.safetensors"), ("model.safetensors", "nan")),
    ("run NaN weight", HR, lambda d: poison(d / HR / "model.safetensors"), ("model.safetensors", "nan")),
    ("float32 tensors, float64 config", HT, weights(HT, as_dtype(torch.float32)), ("dtype", "float32")),
    ("int tensors", HT, weights(HT, as_dtype(torch.int64)), ("dtype", "int64")),
    ("run float64 tensors", HR, weights(HR, as_dtype(torch.float64)), ("model.safetensors", "dtype")),
    ("extra tensor", HT, weights(HT, lambda t: t.__setitem__("bogus", torch.zeros(1, dtype=torch.float64))),
     ("unexpected", "bogus")),
    ("missing tensor", HT, weights(HT, lambda t: (t.pop("W_U"), None)[1]), ("missing", "W_U")),
    ("wrong shape", HT, weights(HT, lambda t: t.__setitem__("W_U", t["W_U"][:2])), ("W_U", "shape")),
    ("garbage weights", HT, lambda d: (d / HT / "model.safetensors").write_bytes(b"garbage!" * 3),
     ("model.safetensors", "not a safetensors")),
    ("empty weights", HT, lambda d: (d / HT / "model.safetensors").write_bytes(b""), ("model.safetensors",)),
    ("truncated weights", HT, lambda d: (d / HT / "model.safetensors").write_bytes(
        (d / HT / "model.safetensors").read_bytes()[:-20]), ("model.safetensors",)),
    # the source net of a compiled model
    ("source net NaN", HC, lambda d: poison(d / HC / "source_net.safetensors"), ("source_net", "nan")),
    ("source net edited", HC, src(lambda t: t.__setitem__("readout.A", 3 * t["readout.A"] + 1)),
     ("source network", "error bound", "compile it again")),
    ("source net bias edited", HC, src(lambda t: t.__setitem__("layers.0.b", t["layers.0.b"] + 0.5)),
     ("source network", "error bound")),
    ("source net int tensors", HC, src(as_dtype(torch.int64)), ("source_net", "dtype")),
    ("source net float32", HC, src(as_dtype(torch.float32)), ("source_net", "float64")),
    ("source net wrong shape", HC, src(lambda t: t.__setitem__("layers.0.W", t["layers.0.W"][:2])), ("source_net",)),
    ("source net missing tensor", HC, src(lambda t: (t.pop("readout.c"), None)[1]), ("source_net", "readout.c")),
    ("source net extra tensor", HC, src(lambda t: t.__setitem__("extra", torch.zeros(2, dtype=torch.float64))),
     ("source_net", "extra")),
    ("source net file missing", HC, lambda d: (d / HC / "source_net.safetensors").unlink(), ("source_net",)),
    ("source net file garbage", HC, lambda d: (d / HC / "source_net.safetensors").write_bytes(b"garbage!" * 3),
     ("source_net",)),
    ("source_net depth 2", HC, cfg(HC, lambda doc: doc["source_net"].update(depth=2)), ("source_net", "depth")),
    ("source_net depth string", HC, cfg(HC, lambda doc: doc["source_net"].update(depth="x")), ("source_net.depth",)),
    ("source_net depth 1.5", HC, cfg(HC, lambda doc: doc["source_net"].update(depth=1.5)), ("source_net.depth",)),
    ("source_net depth 0", HC, cfg(HC, lambda doc: doc["source_net"].update(depth=0)), ("source_net.depth",)),
    ("source_net readout false", HC, cfg(HC, lambda doc: doc["source_net"].update(readout=False)),
     ("source_net", "readout")),
    ("source_net readout string", HC, cfg(HC, lambda doc: doc["source_net"].update(readout="yes")),
     ("source_net.readout",)),
    ("source_net a list", HC, cfg(HC, lambda doc: doc.update(source_net=[1])), ("source_net", "object")),
    ("source_net unknown key", HC, cfg(HC, lambda doc: doc["source_net"].update(bogus=1)), ("source_net", "bogus")),
    # the compile record
    ("output_error -1", HC, comp(put(output_error=-1)), ("output_error", ">= 0")),
    ("output_error NaN", HC, comp(put(output_error=float("nan"))), ("output_error", "nan")),
    ("output_error a string", HC, comp(put(output_error="0")), ("output_error",)),
    ("output_error null", HC, comp(put(output_error=None)), ("output_error",)),
    ("roundoff_error negative", HC, comp(put(roundoff_error=-1e-3)), ("roundoff_error",)),
    ("lo > hi", HC, comp(put(lo=[2.0])), ("lo < hi",)),
    ("lo == hi", HC, comp(put(lo=[1.0])), ("lo < hi",)),
    ("lo of the wrong length", HC, comp(put(lo=[0.0, 0.0])), ("lo", "shape")),
    ("lo a string", HC, comp(put(lo="0")), ("lo",)),
    ("hi inf", HC, comp(put(hi=[float("inf")])), ("hi", "nan or inf")),
    ("attention not the transformer's", HC, comp(put(attention="softmax", lam=10.0)), ("attention", "hardmax")),
    ("attention unknown", HC, comp(put(attention="bogus")), ("attention", "bogus")),
    ("hardmax with a lam", HC, comp(put(lam=5.0)), ("lam", "null")),
    ("softmax lam -1", HS, comp(put(lam=-1.0), HS), ("lam", "> 0")),
    ("softmax lam null", HS, comp(put(lam=None), HS), ("lam",)),
    ("softmax lam not the transformer's", HS, comp(put(lam=1.0), HS), ("lam", "100")),
    ("layer_errors of the wrong length", HC, comp(put(layer_errors=[0.0, 0.0])), ("layer_errors",)),
    ("layer_errors negative", HC, comp(put(layer_errors=[-1.0])), ("layer_errors[0]", ">= 0")),
    ("layer_errors a string", HC, comp(put(layer_errors="x")), ("layer_errors",)),
    ("big_m negative", HC, comp(put(big_m=[-2.0])), ("big_m[0]",)),
    ("big_m empty", HC, comp(put(big_m=[])), ("big_m",)),
    ("compile record unknown field", HC, comp(put(extra_field=1)), ("extra_field",)),
    ("compile record misses lo", HC, comp(drop("lo")), ("misses lo",)),
    ("compile record a list", HC, cfg(HC, lambda doc: doc.update(compiled=[1, 2])), ("compile record", "object")),
    ("compile record missing", HC, cfg(HC, lambda doc: doc.pop("compiled")), ("missing keys", "compiled")),
    # config.json and its transformer
    ("unknown top-level key", HT, cfg(HT, lambda doc: doc.update(bogus=1)), ("unknown keys", "bogus")),
    ("a key of another kind", HT, cfg(HT, lambda doc: doc.update(compiled={})), ("unknown keys", "compiled")),
    ("kind missing", HT, cfg(HT, lambda doc: doc.pop("kind")), ("kind",)),
    ("kind a list", HT, cfg(HT, lambda doc: doc.update(kind=["transformer"])), ("kind",)),
    ("format missing", HT, cfg(HT, lambda doc: doc.pop("format")), ("format",)),
    ("transformer unknown field", HT, cfg(HT, lambda doc: doc["transformer"].update(bogus=1)), ("transformer", "bogus")),
    ("transformer d_model -4", HT, cfg(HT, lambda doc: doc["transformer"].update(d_model=-4)), ("d_model",)),
    ("transformer lam NaN", HT, cfg(HT, lambda doc: doc["transformer"].update(lam=float("nan"))), ("lam",)),
    ("transformer d_model a string", HT, cfg(HT, lambda doc: doc["transformer"].update(d_model="4")), ("d_model",)),
    ("transformer a list", HT, cfg(HT, lambda doc: doc.update(transformer=[1])), ("config.json", "transformer")),
    ("transformer null", HT, cfg(HT, lambda doc: doc.update(transformer=None)), ("config.json", "transformer")),
    ("transformer misses d_model", HT, cfg(HT, lambda doc: doc["transformer"].pop("d_model")), ("d_model",)),
    ("channels too few", HC, cfg(HC, lambda doc: doc.update(channels=doc["channels"][:-1])), ("channels", "d_model")),
    ("channels not names", HC, cfg(HC, lambda doc: doc.update(channels=[1] * 10)), ("channels",)),
    ("channels a string", HC, cfg(HC, lambda doc: doc.update(channels="x[0]")), ("channels",)),
    ("channels duplicated", HC, cfg(HC, lambda doc: doc.update(channels=["a"] * 10)), ("channels", "duplicate")),
    ("config.json binary", HT, lambda d: (d / HT / "config.json").write_bytes(b"\xff\xfe\x00bin"), ("config.json",)),
    ("config.json a list", HT, lambda d: (d / HT / "config.json").write_text("[]"), ("config.json",)),
    ("config.json NaN token", HT, lambda d: (d / HT / "config.json").write_text("NaN"), ("config.json",)),
    # construction, trained and run records
    ("construction unknown name", HF, cfg(HF, lambda doc: doc["construction"].update(name="nope")), ("construction", "nope")),
    ("construction params a list", HF, cfg(HF, lambda doc: doc["construction"].update(params=[1])),
     ("construction.params",)),
    ("construction unknown param", HF, cfg(HF, lambda doc: doc["construction"].update(params={"bogus": 1})), ("bogus",)),
    ("construction record a string", HF, cfg(HF, lambda doc: doc.update(construction="first")), ("construction",)),
    ("construction record unknown field", HF, cfg(HF, lambda doc: doc["construction"].update(extra=1)),
     ("construction", "extra")),
    ("run record a string", HR, cfg(HR, lambda doc: doc.update(run="x")), ("run config",)),
    ("run steps -1", HR, cfg(HR, lambda doc: doc["run"].update(steps=-1)), ("steps",)),
    ("run unknown key", HR, cfg(HR, lambda doc: doc.update(bogus=2)), ("unknown keys", "bogus")),
    # a network (kind "network")
    ("network NaN weight", HN, weights(HN, lambda t: t["layers.0.W"].view(-1).__setitem__(0, float("nan"))),
     ("layers[0].W", "NaN")),
    ("network float32 weights", HN, weights(HN, lambda t: {k: v.float() for k, v in t.items()}), ("dtype", "float64")),
    ("network deeper than its tensors", HN, cfg(HN, lambda doc: doc["network"].update(depth=2)),
     ("model.safetensors", "missing")),
    ("network readout claimed", HN, weights(HN, lambda t: t.pop("readout.A")), ("missing", "readout.A")),
    ("network depth 0", HN, cfg(HN, lambda doc: doc["network"].update(depth=0)), ("network.depth",)),
    ("network with a transformer", HN, cfg(HN, lambda doc: doc.update(transformer={"d_model": 4})),
     ("network", "null")),
    ("network unknown key", HN, cfg(HN, lambda doc: doc.update(compiled={})), ("unknown keys", "compiled")),
    ("network ragged weights", HN, weights(HN, lambda t: t.__setitem__("layers.0.b", t["layers.0.b"][:1])),
     ("layers[0]",)),
]


@pytest.mark.parametrize("case", HUB_CASES, ids=lambda c: c[0])
def test_api_hub_directory_checked_whole(case, models):
    _, hub, edit, mentions = case
    edit(models)
    api_rejects(from_pretrained, models / hub, mentions=mentions)


def test_api_intact_hub_directories_still_load(models):
    """The guard of the corpus above: every saved model loads unedited, and the compiled one
    with its source network measures within its bound."""
    for hub in (HC, HS, HT, HF, HR, HN, "run", "run_lstm"):
        from_pretrained(models / hub)
    cm = from_pretrained(models / HC)
    assert cm.net is not None and cm.measured_error() <= cm.tolerance()


# --------------------------------------------------------------- compiled / transformer files
def _net(d: Path):
    from expressivity.compile.spec import load_spec

    return load_spec(d / "spec.json")[0]


def _other_net(d: Path):
    from expressivity.cpwl import MaxoutNetwork

    return MaxoutNetwork.random(in_dim=1, widths=[3], ranks=2, seed=1)


M = "m.safetensors"
FILE_CASES = [
    # the source network saved in a compiled file (tensors source_net.*, listed in aux_tensors)
    ("file source net edited", lambda d: edit_tensors(d / M, lambda t: t.__setitem__(
        "source_net.layers.0.b", t["source_net.layers.0.b"] + 1)), lambda d: load_compiled(d / M),
     ("source network", "error bound")),
    ("file source net record deeper", lambda d: edit_record(d / M, "source_net", put(depth=3)),
     lambda d: load_compiled(d / M), ("m.safetensors", "missing")),
    ("file source net float32", lambda d: edit_tensors(d / M, lambda t: t.__setitem__(
        "source_net.readout.A", t["source_net.readout.A"].float())), lambda d: load_compiled(d / M), ("dtype",)),
    ("file aux list not a list", lambda d: edit_tensors(d / M, meta_fn=lambda m: m.update(aux_tensors='"x"')),
     lambda d: load_compiled(d / M), ("aux_tensors", "list")),
    ("file aux list names a missing tensor", lambda d: edit_tensors(d / M, meta_fn=lambda m: m.update(
        aux_tensors=json.dumps(json.loads(m["aux_tensors"]) + ["source_net.ghost"]))),
     lambda d: load_compiled(d / M), ("aux_tensors", "ghost")),
    ("file aux tensor unlisted", lambda d: edit_tensors(d / M, meta_fn=lambda m: m.update(
        aux_tensors=json.dumps(json.loads(m["aux_tensors"])[1:]))), lambda d: load_transformer(d / M),
     ("unexpected tensor",)),
    ("compiled lo > hi", lambda d: edit_record(d / M, "compiled", put(lo=[2.0])), lambda d: load_compiled(d / M),
     ("lo < hi",)),
    ("compiled output_error -1", lambda d: edit_record(d / M, "compiled", put(output_error=-1)),
     lambda d: load_compiled(d / M), ("output_error",)),
    ("compiled record unknown field", lambda d: edit_record(d / M, "compiled", put(extra=1)),
     lambda d: load_compiled(d / M), ("extra",)),
    ("transformer config unknown field", lambda d: edit_record(d / "tr.safetensors", "config", put(bogus=1)),
     lambda d: load_transformer(d / "tr.safetensors"), ("bogus",)),
    ("channels duplicated", lambda d: edit_tensors(d / M, meta_fn=lambda m: m.update(channels=json.dumps(["a"] * 10))),
     lambda d: load_compiled(d / M), ("channels", "duplicate")),
    ("channels too few", lambda d: edit_tensors(d / M, meta_fn=lambda m: m.update(channels=json.dumps(["a", "b"]))),
     lambda d: load_compiled(d / M), ("channels", "d_model")),
    ("weights edited, net given", lambda d: edit_tensors(d / M, lambda t: t.__setitem__("W_U", 5 * t["W_U"])),
     lambda d: load_compiled(d / M, net=_net(d)), ("source network", "error bound")),
    ("another net given", None, lambda d: load_compiled(d / M, net=_other_net(d)), ("net given", "error bound")),
    ("NaN weight", lambda d: poison(d / M), lambda d: load_compiled(d / M), ("nan",)),
    ("training checkpoint NaN", lambda d: poison(d / "run" / "model.safetensors"), lambda d: load_run(d / "run"),
     ("model.safetensors", "nan")),
    ("lstm checkpoint NaN", lambda d: poison(d / "run_lstm" / "model.safetensors"), lambda d: load_run(d / "run_lstm"),
     ("model.safetensors", "nan")),
    ("lstm checkpoint float64", lambda d: edit_tensors(d / "run_lstm" / "model.safetensors", as_dtype(torch.float64)),
     lambda d: load_run(d / "run_lstm"), ("dtype",)),
    ("train dir NaN via from_pretrained", lambda d: poison(d / "run" / "model.safetensors"),
     lambda d: from_pretrained(d / "run"), ("nan",)),
]


@pytest.mark.parametrize("case", FILE_CASES, ids=lambda c: c[0])
def test_api_model_files_checked_whole(case, models):
    _, edit, load, mentions = case
    if edit is not None:
        edit(models)
    api_rejects(load, models, mentions=mentions)


# ----------------------------------------------------------------- API argument types
def _tr(d):
    return load_transformer(d / "tr.safetensors")


def _nan_tr(d):
    tr = _tr(d)
    with torch.no_grad():
        tr.W_U.view(-1)[0] = float("nan")
    return tr


TYPE_CASES = [
    ("from_pretrained(None)", lambda d: from_pretrained(None), ("directory", "None")),
    ("from_pretrained(5)", lambda d: from_pretrained(5), ("directory", "int")),
    ("from_pretrained(bytes)", lambda d: from_pretrained(b"x"), ("directory", "bytes")),
    ("from_pretrained([dir])", lambda d: from_pretrained([str(d / HT)]), ("directory", "list")),
    ("from_pretrained('')", lambda d: from_pretrained(""), ("directory", "empty")),
    ("save_pretrained(tr, None)", lambda d: save_pretrained(_tr(d), None), ("directory",)),
    ("save_pretrained(tr, 5)", lambda d: save_pretrained(_tr(d), 5), ("directory",)),
    ("save_pretrained(tr, '')", lambda d: save_pretrained(_tr(d), ""), ("directory", "empty")),
    ("save_pretrained(None, dir)", lambda d: save_pretrained(None, d / "x"), ("model",)),
    ("save_pretrained NaN model", lambda d: save_pretrained(_nan_tr(d), d / "out"), ("W_U", "nan")),
    ("load_any(None)", lambda d: load_any(None), ("model",)),
    ("load_any(3.5)", lambda d: load_any(3.5), ("model",)),
    ("load_compiled(None)", lambda d: load_compiled(None), ("path",)),
    ("load_compiled(5)", lambda d: load_compiled(5), ("path",)),
    ("load_compiled(net='x')", lambda d: load_compiled(d / M, net="x"), ("net",)),
    ("load_transformer(None)", lambda d: load_transformer(None), ("path",)),
    ("load_transformer(5)", lambda d: load_transformer(5), ("path",)),
    ("load_transformer(finite='no')", lambda d: load_transformer(d / "tr.safetensors", finite="no"), ("finite",)),
    ("save_transformer(tr, 5)", lambda d: save_transformer(_tr(d), 5), ("path",)),
    ("save_transformer extra a string", lambda d: save_transformer(_tr(d), d / "o.safetensors", extra="x"), ("extra",)),
    ("save_transformer extra int keys", lambda d: save_transformer(_tr(d), d / "o.safetensors", extra={1: "a"}),
     ("extra",)),
    ("save_transformer NaN model", lambda d: save_transformer(_nan_tr(d), d / "o.safetensors"), ("W_U", "nan")),
    ("load_run(None)", lambda d: load_run(None), ("path",)),
]


@pytest.mark.parametrize("case", TYPE_CASES, ids=lambda c: c[0])
def test_api_paths_and_types_named(case, models, monkeypatch):
    monkeypatch.chdir(models)  # save_pretrained(tr, "") must not write into the working directory
    before = sorted(p.name for p in models.iterdir())
    _, call, mentions = case
    api_rejects(call, models, mentions=mentions)
    assert sorted(p.name for p in models.iterdir()) == before  # nothing written


def test_api_understated_softmax_bound_is_refused(models):
    """A softmax record whose output_error is lowered still meets the measured error (σ_λ with
    λ = 100 is ~1e-40 here), so it is checked against the bound its net and λ give."""
    edit_json(models / HS / "config.json", lambda doc: doc["compiled"].update(output_error=0.0))
    api_rejects(from_pretrained, models / HS, mentions=("output_error", "below the bound", "λ = 100"))
    edit_json(models / HS / "config.json", lambda doc: doc["compiled"].update(output_error=1.0))
    assert from_pretrained(models / HS).error_bound() >= 1.0  # a larger (looser) stated bound is allowed
