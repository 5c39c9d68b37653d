"""Bad input for `expressivity export`, ONNX (``export_onnx`` / ``check_onnx``) and the
TransformerLens export (see tests/_bad_input.py for the contract).

The ONNX check judges: it exits with code 1 (one ``error:`` line) when onnxruntime and our
forward differ by more than the tolerance or when any output is not finite (NaN equals NaN
nowhere); options that only the ONNX export reads are refused without ``--onnx``."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import torch
from _bad_input import Case, api_rejects, cli_rejects
from _saved_models import as_dtype, build, copy_into, edit_json, edit_tensors, poison
from typer.testing import CliRunner

ort = pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

from expressivity.compile import load_compiled  # noqa: E402
from expressivity.interop import check_onnx, export_onnx, to_transformer_lens  # noqa: E402
from expressivity.transformer import load_transformer  # noqa: E402


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("saved"))


def _with(saved: Path, edit=None):
    """A Case setup: the saved models copied into the test's directory, then ``edit``."""
    def setup(tmp: Path):
        copy_into(saved, tmp)
        if edit is not None:
            edit(tmp)
    return setup


E = ["export", "m.safetensors"]
CLI_CASES = [
    ("NaN weight in a hub transformer", ["export", "hub_tr", "--onnx", "o.onnx"], ("model.safetensors", "nan"),
     lambda d: poison(d / "hub_tr" / "model.safetensors")),
    ("NaN weight in a construction", ["export", "hub_first", "--onnx", "o.onnx"], ("nan",),
     lambda d: poison(d / "hub_first" / "model.safetensors")),
    ("NaN weight in a training run", ["export", "run", "--hub", "h"], ("nan",),
     lambda d: poison(d / "run" / "model.safetensors")),
    ("NaN weight in a compiled file", E + ["--onnx", "o.onnx"], ("m.safetensors", "nan"),
     lambda d: poison(d / "m.safetensors")),
    ("edited source net", ["export", "hub_compiled", "--onnx", "o.onnx"], ("source network", "error bound"),
     lambda d: edit_tensors(d / "hub_compiled" / "source_net.safetensors",
                            lambda t: t.__setitem__("readout.A", 3 * t["readout.A"] + 1))),
    ("negative output_error", ["export", "hub_compiled", "--hub", "h2"], ("output_error",),
     lambda d: edit_json(d / "hub_compiled" / "config.json", lambda doc: doc["compiled"].update(output_error=-1))),
    ("float32 tensors in a float64 hub", ["export", "hub_tr", "--onnx", "o.onnx"], ("dtype",),
     lambda d: edit_tensors(d / "hub_tr" / "model.safetensors", as_dtype(torch.float32))),
    ("--check not an integer", E + ["--onnx", "o.onnx", "--check", "abc"], ("--check",), None),
    ("--check in exponent notation", E + ["--onnx", "o.onnx", "--check", "1e3"], ("--check",), None),
    ("--check negative", E + ["--onnx", "o.onnx", "--check", "-5"], ("--check", ">= 0"), None),
    ("--check too large for memory", E + ["--onnx", "o.onnx", "--check", "1000000000000"], ("--check", "memory"), None),
    ("--check without --onnx", E + ["--hub", "h", "--check", "5"], ("--check", "--onnx"), None),
    ("--tolerance without --onnx", E + ["--hub", "h", "--tolerance", "1e-3"], ("--tolerance", "--onnx"), None),
    ("--allow-zero-eps without --onnx", E + ["--hub", "h", "--allow-zero-eps"], ("--allow-zero-eps", "--onnx"), None),
    ("--tolerance negative", E + ["--onnx", "o.onnx", "--tolerance", "-1"], ("--tolerance", ">= 0"), None),
    ("--tolerance NaN", E + ["--onnx", "o.onnx", "--tolerance", "nan"], ("--tolerance", "finite"), None),
    ("--tolerance with --check 0", E + ["--onnx", "o.onnx", "--check", "0", "--tolerance", "1"],
     ("--tolerance", "--check 0"), None),
    ("--onnx under a file", E + ["--onnx", "m.safetensors/o.onnx"], ("--onnx", "not a directory"), None),
    ("--onnx over the model", E + ["--onnx", "m.safetensors"], ("--onnx", "overwrite the model"), None),
    ("--onnx into the --hub directory", E + ["--onnx", "h/model.safetensors", "--hub", "h"],
     ("--onnx", "--hub"), None),
    ("--onnx over a hub model's weights", ["export", "hub_tr", "--onnx", "hub_tr/model.safetensors"],
     ("--onnx", "overwrite the model"), None),
    ("--hub onto the model's own directory", ["export", "hub_tr", "--hub", "hub_tr"], ("--hub", "overwrite"), None),
    ("--hub is a file", E + ["--hub", "spec.json"], ("--hub", "is a file"), None),
    ("--onnx a pipe", E + ["--onnx", "fifo"], ("--onnx", "pipe"), lambda d: os.mkfifo(d / "fifo")),
    ("--hub a pipe", E + ["--hub", "fifo"], ("--hub", "pipe"), lambda d: os.mkfifo(d / "fifo")),
    ("model a plain directory", ["export", ".", "--onnx", "o.onnx"], ("config.json",), None),
    ("model a JSON spec", ["export", "spec.json", "--onnx", "o.onnx"], ("spec.json", ".safetensors"), None),
    ("recurrent run to ONNX", ["export", "run_lstm", "--onnx", "o.onnx"], ("lstm", "not a transformer"), None),
    ("hardmax to TransformerLens without --lam", E + ["--transformer-lens", "tl"], ("hardmax", "give --lam"), None),
    ("--lam without --transformer-lens", E + ["--hub", "h", "--lam", "100"], ("--lam", "--transformer-lens"), None),
    ("--n-ctx without --transformer-lens", E + ["--hub", "h", "--n-ctx", "4"], ("--n-ctx", "--transformer-lens"),
     None),
    ("--lam 0", E + ["--transformer-lens", "tl", "--lam", "0"], ("--lam", "> 0"), None),
    ("--n-ctx 0", E + ["--transformer-lens", "tl", "--lam", "10", "--n-ctx", "0"], ("--n-ctx", ">= 1"), None),
    ("--n-ctx past the model's", E + ["--transformer-lens", "tl", "--lam", "10", "--n-ctx", "100"], ("n_ctx",), None),
    ("--lam with a softmax model", ["export", "ms.safetensors", "--transformer-lens", "tl", "--lam", "10"],
     ("lam", "hardmax models only"), None),
    ("--transformer-lens onto the hub directory", E + ["--hub", "h", "--transformer-lens", "h", "--lam", "10"],
     ("--transformer-lens", "--hub"), None),
    ("--transformer-lens over a hub model's directory", ["export", "hub_tr", "--transformer-lens", "hub_tr"],
     ("--transformer-lens", "overwrite"), None),
    ("--transformer-lens a file", E + ["--transformer-lens", "spec.json", "--lam", "10"],
     ("--transformer-lens", "is a file"), None),
    ("edited source net in a compiled file", E + ["--hub", "h"], ("source network", "error bound"),
     lambda d: edit_tensors(d / "m.safetensors",
                            lambda t: t.__setitem__("source_net.readout.A", 3 * t["source_net.readout.A"] + 1))),
    ("source net metadata missing its tensors", E + ["--hub", "h"], ("m.safetensors", "aux_tensors"),
     lambda d: edit_tensors(d / "m.safetensors", lambda t: {k: v for k, v in t.items() if k != "source_net.layers.0.b"})),
]


@pytest.mark.parametrize("case", CLI_CASES, ids=lambda c: c[0])
def test_cli_bad_export(case, saved, tmp_path, monkeypatch):
    name, args, mentions, edit = case
    cli_rejects(Case(name, args, mentions, _with(saved, edit)), tmp_path, monkeypatch)


def _perturb(monkeypatch, fn):
    """Make onnxruntime's outputs ``fn(outputs)``, as a broken runtime or export would."""
    real = ort.InferenceSession.run

    def run(self, names, feeds, *a, **k):
        return [fn(np.array(o)) for o in real(self, names, feeds, *a, **k)]

    monkeypatch.setattr(ort.InferenceSession, "run", run)


def _nan_at_one(o):
    o.reshape(-1)[0] = np.nan
    return o


@pytest.mark.parametrize("how, words", [
    (lambda o: o + 1e-3, ("differ by", "over the tolerance")),
    (_nan_at_one, ("nan or inf",)),
], ids=["off by 1e-3", "one NaN"])
def test_cli_check_failure_exits_1(how, words, saved, tmp_path, monkeypatch):
    copy_into(saved, tmp_path)
    monkeypatch.chdir(tmp_path)
    _perturb(monkeypatch, how)
    from expressivity.cli import app

    r = CliRunner().invoke(app, E + ["--onnx", "o.onnx", "--check", "50"])
    assert r.exit_code == 1, (r.stdout, r.stderr)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: --check"), r.stderr
    assert "FAILED" in r.stdout and all(w in lines[0].lower() for w in words), (r.stdout, r.stderr)
    assert "internal error" not in r.stderr


def test_cli_check_tolerance_is_stated_and_applied(saved, tmp_path, monkeypatch):
    """An explicit --tolerance decides: 1e-3 off passes at 1e-2 and fails at 1e-4."""
    copy_into(saved, tmp_path)
    monkeypatch.chdir(tmp_path)
    _perturb(monkeypatch, lambda o: o + 1e-3)
    from expressivity.cli import app

    ok = CliRunner().invoke(app, E + ["--onnx", "o.onnx", "--check", "20", "--tolerance", "1e-2"])
    assert ok.exit_code == 0 and "within the tolerance 0.01" in ok.stdout, (ok.stdout, ok.stderr)
    bad = CliRunner().invoke(app, E + ["--onnx", "o2.onnx", "--check", "20", "--tolerance", "1e-4"])
    assert bad.exit_code == 1 and "over the tolerance 0.0001" in bad.stderr, (bad.stdout, bad.stderr)


def test_api_check_onnx_nan_is_not_equal_to_nan(saved, tmp_path):
    """A model whose outputs are NaN on both sides fails the check (it used to report 0)."""
    copy_into(saved, tmp_path)
    tr = load_transformer(tmp_path / "tr.safetensors")
    export_onnx(tr, tmp_path / "o.onnx")
    with torch.no_grad():
        tr.W_U.fill_(float("nan"))
    res = check_onnx(tr, tmp_path / "o.onnx", n_inputs=20)
    assert not res.ok and res.nonfinite > 0 and "FAILED" in res.line() and "NaN" in res.line()
    tr2 = load_transformer(tmp_path / "tr.safetensors")
    good = check_onnx(tr2, tmp_path / "o.onnx", n_inputs=20)
    assert good.ok and good.max_abs_error <= good.tolerance and "within the tolerance" in good.line()


def _cm(d):
    return load_compiled(d / "m.safetensors")


def _onnx(d):
    export_onnx(_cm(d), d / "o.onnx")
    return d / "o.onnx"


def _nan_tr(d):
    tr = load_transformer(d / "tr.safetensors")
    with torch.no_grad():
        tr.W_U.view(-1)[0] = float("nan")
    return tr


def _other_file(d):
    export_onnx(load_transformer(d / "tr.safetensors"), d / "tr.onnx")  # reads token ids, not vectors
    return check_onnx(_cm(d), d / "tr.onnx", n_inputs=5)


API_CASES = [
    ("check_onnx n_inputs=0", lambda d: check_onnx(_cm(d), _onnx(d), n_inputs=0), ("n_inputs", ">= 1")),
    ("check_onnx n_inputs=-1", lambda d: check_onnx(_cm(d), _onnx(d), n_inputs=-1), ("n_inputs",)),
    ("check_onnx n_inputs=2.5", lambda d: check_onnx(_cm(d), _onnx(d), n_inputs=2.5), ("n_inputs", "integer")),
    ("check_onnx n_inputs='10'", lambda d: check_onnx(_cm(d), _onnx(d), n_inputs="10"), ("n_inputs", "integer")),
    ("check_onnx n_inputs=1e12", lambda d: check_onnx(_cm(d), _onnx(d), n_inputs=10**12), ("n_inputs", "memory")),
    ("check_onnx batch=0", lambda d: check_onnx(_cm(d), _onnx(d), batch=0), ("batch",)),
    ("check_onnx seed=-1", lambda d: check_onnx(_cm(d), _onnx(d), seed=-1), ("seed",)),
    ("check_onnx seed='a'", lambda d: check_onnx(_cm(d), _onnx(d), seed="a"), ("seed",)),
    ("check_onnx tolerance=-1", lambda d: check_onnx(_cm(d), _onnx(d), tolerance=-1), ("tolerance",)),
    ("check_onnx tolerance=nan", lambda d: check_onnx(_cm(d), _onnx(d), tolerance=float("nan")), ("tolerance",)),
    ("check_onnx missing file", lambda d: check_onnx(_cm(d), d / "nope.onnx"), ("nope.onnx", "does not exist")),
    ("check_onnx not an ONNX file", lambda d: check_onnx(_cm(d), d / "spec.json"), ("spec.json", "onnxruntime cannot load")),
    ("check_onnx path None", lambda d: check_onnx(_cm(d), None), ("path",)),
    ("check_onnx another model's file", _other_file, ("tr.onnx", "this model")),
    ("check_onnx model None", lambda d: check_onnx(None, _onnx(d)), ("model",)),
    ("export_onnx path None", lambda d: export_onnx(_cm(d), None), ("path",)),
    ("export_onnx path 5", lambda d: export_onnx(_cm(d), 5), ("path",)),
    ("export_onnx path a directory", lambda d: export_onnx(_cm(d), d), ("path", "directory")),
    ("export_onnx path a pipe", lambda d: (os.mkfifo(d / "p"), export_onnx(_cm(d), d / "p")), ("path", "pipe")),
    ("export_onnx model None", lambda d: export_onnx(None, d / "o.onnx"), ("model",)),
    ("export_onnx model a string", lambda d: export_onnx("m.safetensors", d / "o.onnx"), ("model",)),
    ("export_onnx NaN model", lambda d: export_onnx(_nan_tr(d), d / "o.onnx"), ("W_U", "nan")),
    ("export_onnx allow_zero_eps='no'", lambda d: export_onnx(_cm(d), d / "o.onnx", allow_zero_eps="no"),
     ("allow_zero_eps",)),
    ("to_transformer_lens lam='x'", lambda d: to_transformer_lens(_cm(d), lam="x"), ("lam",)),
    ("to_transformer_lens lam=-1", lambda d: to_transformer_lens(_cm(d), lam=-1.0), ("lam", "> 0")),
    ("to_transformer_lens lam=inf", lambda d: to_transformer_lens(_cm(d), lam=float("inf")), ("lam",)),
    ("to_transformer_lens NaN model", lambda d: to_transformer_lens(_nan_tr(d)), ("W_U", "nan")),
    ("to_transformer_lens model None", lambda d: to_transformer_lens(None), ("model",)),
]


@pytest.mark.parametrize("case", API_CASES, ids=lambda c: c[0])
def test_api_bad_export(case, saved, tmp_path):
    copy_into(saved, tmp_path)
    before = {p.name for p in tmp_path.iterdir()}
    _, call, mentions = case
    api_rejects(call, tmp_path, mentions=mentions)
    leftovers = {p.name for p in tmp_path.iterdir()} - before - {"o.onnx", "tr.onnx", "p"}
    assert not leftovers, leftovers  # nothing but the fixtures' own exports
