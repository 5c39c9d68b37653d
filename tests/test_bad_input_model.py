"""Bad-input corpus: the compiler, the networks, the model and the regions (issue 10).

`compile`, `verify` and `regions` on the command line, and the public API (MaxoutNetwork,
families, from_relu_mlp, compile_maxout / compile_relu, CompiledModel, load_compiled,
save/load_transformer, TransformerConfig, Transformer, spec parsing, regions.lower,
count_regions, Segment / Plane / Box). Every case is a real mistake a user could make; each
must give one line naming the parameter (CLI: exit 2, nothing written; API: ValueError).
"""

from __future__ import annotations

import json
import types
from pathlib import Path

import numpy as np
import pytest
import torch
from _bad_input import Case, api_rejects, cli_rejects
from torch import nn

from expressivity.compile import (
    compile_maxout,
    compile_relu,
    complexity_report,
    load_compiled,
    load_spec,
    parse_spec,
)
from expressivity.compile.spec import parse_model_spec
from expressivity.cpwl import MaxoutNetwork, from_relu_mlp, sawtooth_maxout, serra_net, tent_map
from expressivity.regions import Box, Plane, Segment, count_regions, lower
from expressivity.transformer import (
    Transformer,
    TransformerConfig,
    load_transformer,
    save_transformer,
)

HUGE = 10**9  # far over any memory budget once multiplied by a size

MAXOUT = {
    "type": "maxout",
    "layers": [{"W": [[[1.0, 0.0], [0.0, 1.0]], [[-1.0, 0.5], [2.0, -1.0]]], "b": [[0.0, 0.1], [0.2, -0.3]]}],
    "readout": {"A": [[1.0, -1.0]], "c": [0.5]},
    "domain": {"lo": -1, "hi": 1},
}
RANDOM = {"type": "random", "in_dim": 2, "widths": [3], "ranks": 2, "seed": 0}


# ------------------------------------------------------------------------ file helpers
def _write(name: str, data) -> callable:
    """setup: write ``data`` (JSON-dumped unless bytes/str) to ``name`` in the working dir."""

    def setup(tmp: Path):
        p = tmp / name
        if isinstance(data, bytes):
            p.write_bytes(data)
        else:
            p.write_text(data if isinstance(data, str) else json.dumps(data))
        return None

    return setup


def _both(*setups):
    def setup(tmp: Path):
        extra = []
        for s in setups:
            extra += s(tmp) or []
        return extra

    return setup


def _good_model(tmp: Path, name: str = "m.safetensors", net=None, domain=(-1.0, 1.0)) -> Path:
    net = net if net is not None else parse_spec(MAXOUT)[0]
    path = tmp / name
    compile_maxout(net, domain=domain).save(path)
    return path


def _tampered(tensors=None, meta=None, name: str = "m.safetensors"):
    """setup: a compiled model of MAXOUT whose tensors / metadata were changed by the callbacks."""

    def setup(tmp: Path):
        from safetensors import safe_open
        from safetensors.torch import save_file

        good = _good_model(tmp, "good.safetensors")
        with safe_open(str(good), framework="pt") as f:
            md = dict(f.metadata())
            ts = {k: f.get_tensor(k) for k in f.keys()}
        good.unlink()
        if tensors:
            tensors(ts)
        if meta:
            meta(md)
        save_file(ts, str(tmp / name), metadata=md)
        return None

    return setup


def _setitem(d, key, value):
    d[key] = value


def _compiled_edit(**changes):
    def edit(md):
        rec = json.loads(md["compiled"])
        for k, v in changes.items():
            if v is _DROP:
                rec.pop(k)
            else:
                rec[k] = v
        md["compiled"] = json.dumps(rec)

    return edit


_DROP = object()


def _nan_weight(ts):
    ts["blocks.0.mlp.W_in"][0, 0] = float("nan")


def _saw_model(tmp: Path):
    _good_model(tmp, "saw.safetensors", sawtooth_maxout(3, 2), (0.0, 1.0))
    return None


def _a_file(name):
    def setup(tmp: Path):
        (tmp / name).write_text("I am a file")
        return None

    return setup


def _a_dir(name):
    def setup(tmp: Path):
        (tmp / name).mkdir()
        return None

    return setup


def _plain_transformer(tmp: Path):
    cfg = TransformerConfig(d_model=4, n_layers=1, n_heads=1, d_head=1, d_mlp=2, d_input=2, d_out=1, n_ctx=2,
                            attention="hardmax", dtype="float64")
    save_transformer(Transformer(cfg), tmp / "plain.safetensors")
    return None


SPEC = _write("net.json", MAXOUT)
COMPILE = ["compile", "net.json", "--out", "out.safetensors"]
VERIFY = ["verify", "m.safetensors", "net.json"]
MODEL = _both(SPEC, lambda tmp: (_good_model(tmp), None)[1])


def _spec(data) -> Case:
    return _write("net.json", data)


CLI_CASES = [
    # ---------------------------------------------------------------- compile: the spec file
    Case("compile: spec file missing", COMPILE, ("net.json", "does not exist")),
    Case("compile: spec is a directory", COMPILE, ("net.json", "directory"), _a_dir("net.json")),
    Case("compile: spec is random bytes", COMPILE, ("net.json", "UTF-8"), _write("net.json", bytes(range(256)))),
    Case("compile: spec is Latin-1 text", COMPILE, ("net.json", "UTF-8"),
         _write("net.json", '{"type": "maxout", "name": "Zoë"}'.encode("latin-1"))),
    Case("compile: spec is not JSON", COMPILE, ("net.json", "JSON"), _write("net.json", '{"type": "maxout", "layers": [')),
    Case("compile: spec is a JSON list", COMPILE, ("net.json", "object"), _write("net.json", [1, 2])),
    Case("compile: unknown network type", COMPILE, "type", _spec({"type": "conv", "layers": []})),
    Case("compile: unknown field", COMPILE, "colour", _spec({**MAXOUT, "colour": "red"})),
    Case("compile: NaN weight", COMPILE, ("W", "NaN"), _write("net.json", json.dumps(MAXOUT).replace("0.5]", "NaN]", 1))),
    Case("compile: infinite readout", COMPILE, ("readout", "inf"),
         _spec({**MAXOUT, "readout": {"A": [[1.0, float("inf")]], "c": [0.5]}})),
    Case("compile: weight given as a string", COMPILE, "layers.0.W",
         _spec({**MAXOUT, "layers": [{"W": [[["1", "x"]]], "b": [[0.0]]}]})),
    Case("compile: random width 2.9", COMPILE, "widths", _spec({**RANDOM, "widths": [2.9]})),
    Case("compile: random in_dim 2.5", COMPILE, "in_dim", _spec({**RANDOM, "in_dim": 2.5})),
    Case("compile: random in_dim as a string", COMPILE, "in_dim", _spec({**RANDOM, "in_dim": "2"})),
    Case("compile: random rank 0", COMPILE, "rank", _spec({**RANDOM, "ranks": 0})),
    Case("compile: random negative width", COMPILE, "width", _spec({**RANDOM, "widths": [-3]})),
    Case("compile: random width 1e8 (memory)", COMPILE, ("memory", "widths"), _spec({**RANDOM, "widths": [10**8]})),
    Case("compile: compiled transformer too large", COMPILE, ("memory", "compiled transformer"),
         _spec({**RANDOM, "widths": [200_000]})),
    Case("compile: empty domain", COMPILE, "domain", _spec({**MAXOUT, "domain": {"lo": 1, "hi": 1}})),
    Case("compile: domain bound as text", COMPILE, "domain.lo", _spec({**MAXOUT, "domain": {"lo": "a", "hi": 1}})),
    Case("compile: domain of the wrong length", COMPILE, "domain", _spec({**MAXOUT, "domain": {"lo": [0, 0, 0], "hi": 1}})),
    Case("compile: unbounded domain", COMPILE, ("domain", "bounded"), _spec({**MAXOUT, "domain": {"lo": -1, "hi": float("inf")}})),
    Case("compile: relu layer sizes do not chain", COMPILE, "layers.1",
         _spec({"type": "relu", "layers": [{"W": [[1.0, 2.0]]}, {"W": [[1.0, 1.0], [1.0, 1.0]]}]})),
    Case("compile: relu empty matrix", COMPILE, "layers.0.W", _spec({"type": "relu", "layers": [{"W": [[]]}]})),
    # ---------------------------------------------------------------- compile: options
    Case("compile: --out is a directory", COMPILE, "--out", _both(SPEC, _a_dir("out.safetensors"))),
    Case("compile: --out under a file", ["compile", "net.json", "--out", "f/out.safetensors"], "--out",
         _both(SPEC, _a_file("f"))),
    Case("compile: --out missing", ["compile", "net.json"], "--out", SPEC),
    Case("compile: unknown --attention", COMPILE + ["--attention", "sparsemax"], "attention", SPEC),
    Case("compile: --lam 0", COMPILE + ["--attention", "softmax", "--lam", "0"], "lam", SPEC),
    Case("compile: --lam nan", COMPILE + ["--attention", "softmax", "--lam", "nan"], "lam", SPEC),
    Case("compile: --lam inf", COMPILE + ["--attention", "softmax", "--lam", "inf"], "lam", SPEC),
    Case("compile: --lam with hardmax", COMPILE + ["--lam", "10"], "lam", SPEC),
    Case("compile: --lam not a number", COMPILE + ["--attention", "softmax", "--lam", "big"], "lam", SPEC),
    # ---------------------------------------------------------------- verify: the model file
    Case("verify: model missing", VERIFY, "m.safetensors", SPEC),
    Case("verify: model is random bytes", VERIFY, ("m.safetensors", "safetensors"),
         _both(SPEC, _write("m.safetensors", bytes(range(256)) * 4))),
    Case("verify: model is empty", VERIFY, ("m.safetensors", "safetensors"), _both(SPEC, _write("m.safetensors", b""))),
    Case("verify: model is a foreign safetensors", VERIFY, ("m.safetensors", "expressivity"),
         _both(SPEC, _tampered(meta=lambda md: md.clear()))),
    Case("verify: NaN weight in the model", VERIFY, ("m.safetensors", "NaN", "blocks.0.mlp.W_in"),
         _both(SPEC, _tampered(tensors=_nan_weight))),
    Case("verify: a tensor is missing", VERIFY, ("m.safetensors", "missing", "W_U"),
         _both(SPEC, _tampered(tensors=lambda ts: ts.pop("W_U")))),
    Case("verify: an extra tensor", VERIFY, ("m.safetensors", "unexpected", "junk"),
         _both(SPEC, _tampered(tensors=lambda ts: _setitem(ts, "junk", torch.zeros(2))))),
    Case("verify: a tensor of the wrong shape", VERIFY, ("m.safetensors", "W_E", "shape"),
         _both(SPEC, _tampered(tensors=lambda ts: _setitem(ts, "W_E", torch.zeros(3, 3, dtype=torch.float64))))),
    Case("verify: an integer tensor", VERIFY, ("m.safetensors", "b_U", "dtype"),
         _both(SPEC, _tampered(tensors=lambda ts: _setitem(ts, "b_U", ts["b_U"].to(torch.int64))))),
    Case("verify: config is not JSON", VERIFY, ("m.safetensors", "config"),
         _both(SPEC, _tampered(meta=lambda md: _setitem(md, "config", "{d_model: 3")))),
    Case("verify: config misses a field", VERIFY, ("m.safetensors", "config", "d_model"),
         _both(SPEC, _tampered(meta=lambda md: _setitem(md, "config", json.dumps(
             {k: v for k, v in json.loads(md["config"]).items() if k != "d_model"}))))),
    Case("verify: config field of the wrong type", VERIFY, ("m.safetensors", "n_layers"),
         _both(SPEC, _tampered(meta=lambda md: _setitem(md, "config", json.dumps(
             {**json.loads(md["config"]), "n_layers": "two"}))))),
    Case("verify: compile record misses hi", VERIFY, ("m.safetensors", "compiled", "hi"),
         _both(SPEC, _tampered(meta=_compiled_edit(hi=_DROP)))),
    Case("verify: compile record is not JSON", VERIFY, ("m.safetensors", "compiled"),
         _both(SPEC, _tampered(meta=lambda md: _setitem(md, "compiled", "{lo")))),
    Case("verify: NaN error bound in the record", VERIFY, ("m.safetensors", "output_error"),
         _both(SPEC, _tampered(meta=_compiled_edit(output_error=float("nan"))))),
    Case("verify: negative error bound in the record", VERIFY, ("m.safetensors", "output_error"),
         _both(SPEC, _tampered(meta=_compiled_edit(output_error=-1.0)))),
    Case("verify: empty domain in the record", VERIFY, ("m.safetensors", "lo"),
         _both(SPEC, _tampered(meta=_compiled_edit(lo=[1.0, 1.0], hi=[1.0, 1.0])))),
    Case("verify: unknown attention in the record", VERIFY, ("m.safetensors", "attention"),
         _both(SPEC, _tampered(meta=_compiled_edit(attention="linear")))),
    Case("verify: a plain transformer, not a compiled model", ["verify", "plain.safetensors", "net.json"],
         ("plain.safetensors", "compiled"), _both(SPEC, _plain_transformer)),
    Case("verify: the spec of another network", VERIFY, ("m.safetensors", "spec"),
         _both(_spec({**RANDOM, "in_dim": 3}), lambda tmp: (_good_model(tmp), None)[1])),
    Case("verify: --points 0", VERIFY + ["--points", "0"], "--points", MODEL),
    Case("verify: --points negative", VERIFY + ["--points", "-5"], "--points", MODEL),
    Case("verify: --points 1e10 written as a float", VERIFY + ["--points", "1e10"], "points", MODEL),
    Case("verify: --points 10^10 (memory)", VERIFY + ["--points", "10000000000"], ("--points", "memory"), MODEL),
    # ---------------------------------------------------------------- regions: family specs
    Case("regions: sawtooth q = 2.9", ["regions", "saw.json", "--segment", "0", "1"], "q",
         _write("saw.json", {"type": "sawtooth", "q": 2.9, "L": 2})),
    Case("regions: sawtooth unknown field", ["regions", "saw.json", "--segment", "0", "1"], "depth",
         _write("saw.json", {"type": "sawtooth", "q": 3, "depth": 4})),
    Case("regions: sawtooth q = 1", ["regions", "saw.json", "--segment", "0", "1"], "q",
         _write("saw.json", {"type": "sawtooth", "q": 1, "L": 2})),
    Case("regions: tent L = 0", ["regions", "tent.json", "--segment", "0", "1"], "L",
         _write("tent.json", {"type": "tent", "L": 0})),
    Case("regions: tent L as a string", ["regions", "tent.json", "--segment", "0", "1"], "L",
         _write("tent.json", {"type": "tent", "L": "5"})),
    Case("regions: serra widths too small", ["regions", "serra.json", "--segment", "0", "1"], "widths",
         _write("serra.json", {"type": "serra", "widths": [2]})),
    Case("regions: serra widths as a string", ["regions", "serra.json", "--segment", "0", "1"], "widths",
         _write("serra.json", {"type": "serra", "widths": "34"})),
    Case("regions: sawtooth q=3 L=40 (3^40 regions)", ["regions", "saw.json", "--segment", "0", "1"],
         ("memory", "3^40"), _write("saw.json", {"type": "sawtooth", "q": 3, "L": 40})),
    Case("regions: sawtooth L=10^9 cannot be built", ["regions", "saw.json", "--segment", "0", "1"],
         ("memory", "L"), _write("saw.json", {"type": "sawtooth", "q": 2, "L": HUGE})),
    Case("regions: JSON model without a type", ["regions", "m.json", "--segment", "0", "1"], "type",
         _write("m.json", {"q": 3})),
    Case("regions: JSON model is binary", ["regions", "m.json", "--segment", "0", "1"], ("m.json", "UTF-8"),
         _write("m.json", b"\xff\xfe\x00binary")),
    Case("regions: MODEL with an unknown suffix", ["regions", "m.txt", "--segment", "0", "1"], "MODEL",
         _write("m.txt", "{}")),
    # ---------------------------------------------------------------- regions: compiled domain (item 1)
    Case("regions: segment leaves the compile domain", ["regions", "m.safetensors", "--segment=-5,-5", "5,5"],
         ("compile domain", "[-1, 1]", "--segment"), lambda tmp: (_good_model(tmp), None)[1]),
    Case("regions: --box --compile outside the family's domain", ["regions", "saw.json", "--box", "--compile"],
         ("compile domain", "[0"), _write("saw.json", {"type": "sawtooth", "q": 3, "L": 2})),
    Case("regions: plane leaves the compile domain", ["regions", "saw.safetensors", "--plane", "0", "2", "1",
                                                      "--bounds", "0,1,0,1"], "compile domain", _saw_model),
    # ---------------------------------------------------------------- regions: options
    Case("regions: --plot is a directory", ["regions", "net.json", "--plane", "0,0", "1,0", "0,1", "--plot", "p.png"],
         "--plot", _both(SPEC, _a_dir("p.png"))),
    Case("regions: --plot under a file", ["regions", "net.json", "--plane", "0,0", "1,0", "0,1", "--plot", "f/p.png"],
         "--plot", _both(SPEC, _a_file("f"))),
    Case("regions: --plot not a .png", ["regions", "net.json", "--plane", "0,0", "1,0", "0,1", "--plot", "p.txt"],
         ("--plot", "png"), SPEC),
    Case("regions: --n-tokens 0", ["regions", "plain.safetensors", "--segment=-1,0", "1,0", "--n-tokens", "0"],
         "n_tokens", _plain_transformer),
    Case("regions: --bounds with 2 numbers", ["regions", "net.json", "--plane", "0,0", "1,0", "0,1", "--bounds", "1,2"],
         "bounds", SPEC),
    Case("regions: --box with lo = hi", ["regions", "net.json", "--box", "--lo", "1", "--hi", "1"], "lo", SPEC),
    Case("regions: NaN in --segment", ["regions", "net.json", "--segment", "nan,0", "1,1"], "segment", SPEC),
    Case("regions: --domain not JSON", ["regions", "net.json", "--domain", "{segment"], ("--domain", "not JSON"), SPEC),
    Case("regions: --domain of unknown type", ["regions", "net.json", "--domain", '{"type": "ray"}'],
         ("unknown type 'ray'", "segment"), SPEC),
    Case("regions: --domain with a foreign field", ["regions", "net.json", "--domain",
                                                     '{"type": "segment", "a": [0, 0], "c": [1, 1]}'],
         "domain segment", SPEC),
    Case("regions: --domain and --box", ["regions", "net.json", "--box", "--domain", '{"type": "box", "lo": -1, "hi": 1}'],
         "exactly one of", SPEC),
    Case("regions: unknown --color-by", ["regions", "net.json", "--plane", "0,0", "1,0", "0,1", "--plot", "p.png",
                                          "--color-by", "hue"], "color-by", SPEC),
    Case("regions: --segment of the wrong dimension", ["regions", "net.json", "--segment", "0", "1"],
         "dimension", SPEC),
]


@pytest.mark.parametrize("case", CLI_CASES, ids=lambda c: c.name)
def test_cli_bad_input(case, tmp_path, monkeypatch):
    cli_rejects(case, tmp_path, monkeypatch)


def test_cli_case_names_are_unique():
    names = [c.name for c in CLI_CASES] + [c[0] for c in API_CASES]
    assert len(names) == len(set(names))
    assert len(names) >= 80


# ------------------------------------------------------------------------ the API
def _net():
    return MaxoutNetwork.random(2, [3], 2, seed=0)


def _cm():
    return compile_maxout(_net(), domain=(-1.0, 1.0))


def _tok_model():
    return Transformer(TransformerConfig(d_model=4, n_layers=1, n_heads=1, d_head=2, d_mlp=3, d_input=2, n_ctx=4))


def _complex_linear():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch: complex modules are experimental
        lin = nn.Linear(2, 2).to(torch.complex128)
        return nn.Sequential(lin, nn.ReLU(), nn.Linear(2, 1).to(torch.complex128))


def _nan_linear():
    mlp = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1))
    with torch.no_grad():
        mlp[0].weight[0, 0] = float("nan")
    return mlp


def _tampered_path(tmp: Path, **kw) -> Path:
    _tampered(**kw)(tmp)
    return tmp / "m.safetensors"


W3 = np.zeros((2, 2, 3))
B2 = np.zeros((2, 2))
CFG = dict(d_model=4, n_layers=1, n_heads=1, d_head=2, d_mlp=3, d_vocab=3)

# (name, function, args, kwargs, mentions); args may be callables of tmp_path (files)
API_CASES = [
    # ---- MaxoutNetwork.from_weights / random
    ("from_weights: complex W", MaxoutNetwork.from_weights, ([(W3 + 1j, B2)],), {}, ("layers[0].W", "complex")),
    ("from_weights: W of strings", MaxoutNetwork.from_weights, ([([[["a"]]], [[0.0]])],), {}, "layers[0].W"),
    ("from_weights: ragged W", MaxoutNetwork.from_weights, ([([[[1.0], [1.0, 2.0]]], [[0.0, 0.0]])],), {}, "layers[0].W"),
    ("from_weights: layers is a string", MaxoutNetwork.from_weights, ("W, b",), {}, "layers"),
    ("from_weights: a layer is a number", MaxoutNetwork.from_weights, ([3.0],), {}, "layers[0]"),
    ("from_weights: readout without c", MaxoutNetwork.from_weights, ([(W3, B2)], (np.ones((1, 2)),)), {}, "readout"),
    ("from_weights: complex readout", MaxoutNetwork.from_weights, ([(W3, B2)], (np.ones((1, 2)) * 1j, np.zeros(1))), {},
     ("readout A", "complex")),
    ("from_weights: NaN bias", MaxoutNetwork.from_weights, ([(W3, np.full((2, 2), np.nan))],), {}, ("layers[0].b", "NaN")),
    ("random: in_dim 2.9", MaxoutNetwork.random, (2.9, [3], 2), {}, "in_dim"),
    ("random: in_dim as a string", MaxoutNetwork.random, ("2", [3], 2), {}, "in_dim"),
    ("random: widths as a string", MaxoutNetwork.random, (2, "8", 2), {}, "widths"),
    ("random: rank 2.5", MaxoutNetwork.random, (2, [3], 2.5), {}, "ranks"),
    ("random: width 1e8 (memory)", MaxoutNetwork.random, (2, [10**8], 3), {}, ("memory", "widths")),
    ("random: seed as text", MaxoutNetwork.random, (2, [3], 2), {"seed": "x"}, "seed"),
    ("random: out_dim 0", MaxoutNetwork.random, (2, [3], 2), {"out_dim": 0}, "out_dim"),
    # ---- families
    ("sawtooth: q = 2.9", sawtooth_maxout, (2.9, 2), {}, "q"),
    ("sawtooth: L = 2.5", sawtooth_maxout, (3, 2.5), {}, "L"),
    ("sawtooth: q = True", sawtooth_maxout, (True, 2), {}, "q"),
    ("sawtooth: q = 10^9 cannot be built", sawtooth_maxout, (HUGE, 2), {}, ("q", "memory")),
    ("tent: L = 0", tent_map, (0,), {}, "L"),
    ("tent: L as a string", tent_map, ("3",), {}, "L"),
    ("serra: widths is an int", serra_net, (3,), {}, "widths"),
    ("serra: width 3.5", serra_net, ([3.5],), {}, "widths"),
    ("serra: widths as a string", serra_net, ("34",), {}, "widths"),
    # ---- from_relu_mlp / compile_relu
    ("from_relu_mlp: a string", from_relu_mlp, ("mlp",), {}, "mlp"),
    ("from_relu_mlp: complex Linear", from_relu_mlp, (_complex_linear(),), {}, ("weight", "complex")),
    ("from_relu_mlp: NaN weight", from_relu_mlp, (_nan_linear(),), {}, ("weight", "NaN")),
    ("compile_relu: a string", compile_relu, ("mlp",), {}, "mlp"),
    # ---- compile_maxout
    ("compile_maxout: a string for the net", compile_maxout, ("net",), {}, "net"),
    ("compile_maxout: NaN domain", compile_maxout, (_net(),), {"domain": (np.nan, 1.0)}, "domain"),
    ("compile_maxout: complex domain", compile_maxout, (_net(),), {"domain": (-1j, 1.0)}, ("domain", "complex")),
    ("compile_maxout: lam as a string", compile_maxout, (_net(), (-1.0, 1.0), "softmax", "100"), {}, "lam"),
    ("compile_maxout: lam = True", compile_maxout, (_net(), (-1.0, 1.0), "softmax", True), {}, "lam"),
    ("compile_maxout: attention None", compile_maxout, (_net(), (-1.0, 1.0), None), {}, "attention"),
    ("complexity_report: a string for the net", complexity_report, ("net", _cm()), {}, "net"),
    # ---- CompiledModel.evaluate
    ("evaluate: x of the wrong width", _cm().evaluate, (np.zeros((3, 5)),), {}, "x"),
    ("evaluate: x as text", _cm().evaluate, ("0.5, 0.5",), {}, "x"),
    ("evaluate: complex x", _cm().evaluate, (np.zeros((2, 2)) + 0.1j,), {}, ("x", "complex")),
    ("evaluate: NaN x", _cm().evaluate, (np.full((1, 2), np.nan),), {}, ("x", "NaN")),
    ("evaluate: x outside the domain", _cm().evaluate, (np.array([[0.0, 1.5]]),), {}, ("x", "domain")),
    ("evaluate: batch_size 0", _cm().evaluate, (np.zeros((3, 2)),), {"batch_size": 0}, "batch_size"),
    ("evaluate: batch_size 2.5", _cm().evaluate, (np.zeros((3, 2)),), {"batch_size": 2.5}, "batch_size"),
    # ---- load_compiled / load_transformer / save_transformer
    ("load_compiled: NaN weight", load_compiled, (lambda tmp: _tampered_path(tmp, tensors=_nan_weight),), {},
     ("NaN", "blocks.0.mlp.W_in")),
    ("load_compiled: missing file", load_compiled, (lambda tmp: tmp / "none.safetensors",), {}, "none.safetensors"),
    ("load_compiled: random bytes", load_compiled, (lambda tmp: (_write("r.safetensors", b"\x00" * 64)(tmp), tmp / "r.safetensors")[1],),
     {}, ("r.safetensors", "safetensors")),
    ("load_compiled: record misses hi", load_compiled, (lambda tmp: _tampered_path(tmp, meta=_compiled_edit(hi=_DROP)),), {},
     ("compiled", "hi")),
    ("load_compiled: record with lam as text", load_compiled,
     (lambda tmp: _tampered_path(tmp, meta=_compiled_edit(lam="big")),), {}, "lam"),
    ("load_compiled: net of another input size", load_compiled, (lambda tmp: _good_model(tmp),),
     {"net": MaxoutNetwork.random(3, [2], 2)}, "net"),
    ("load_compiled: net is a string", load_compiled, (lambda tmp: _good_model(tmp),), {"net": "net.json"}, "net"),
    ("load_transformer: wrong shape", load_transformer,
     (lambda tmp: _tampered_path(tmp, tensors=lambda ts: _setitem(ts, "b_U", torch.zeros(7, dtype=torch.float64))),),
     {}, ("b_U", "shape")),
    ("load_transformer: missing tensor", load_transformer,
     (lambda tmp: _tampered_path(tmp, tensors=lambda ts: ts.pop("blocks.1.attn.W_Q")),), {}, ("missing", "W_Q")),
    ("load_transformer: inf weight", load_transformer,
     (lambda tmp: _tampered_path(tmp, tensors=lambda ts: ts["W_E"].fill_(float("inf"))),), {}, ("W_E", "inf")),
    ("load_transformer: config not JSON", load_transformer,
     (lambda tmp: _tampered_path(tmp, meta=lambda md: _setitem(md, "config", "[[["),),), {}, "config"),
    ("load_transformer: channel map not JSON", load_transformer,
     (lambda tmp: _tampered_path(tmp, meta=lambda md: _setitem(md, "channels", "x[0"),),), {}, "channels"),
    ("load_transformer: channel map of the wrong size", load_transformer,
     (lambda tmp: _tampered_path(tmp, meta=lambda md: _setitem(md, "channels", '["a", "b"]'),),), {}, "channel"),
    ("save_transformer: a string for the model", save_transformer, ("model", lambda tmp: tmp / "x.safetensors"), {}, "model"),
    ("save_transformer: path is a directory", save_transformer, (_tok_model(), lambda tmp: tmp), {}, "path"),
    ("save_transformer: metadata value not a string", save_transformer,
     (_tok_model(), lambda tmp: tmp / "x.safetensors"), {"extra": {"k": 3}}, "k"),
    # ---- TransformerConfig
    ("TransformerConfig: d_mlp = True", TransformerConfig, (), {**CFG, "d_mlp": True}, "d_mlp"),
    ("TransformerConfig: lam = True", TransformerConfig, (), {**CFG, "lam": True}, "lam"),
    ("TransformerConfig: ln_eps as text", TransformerConfig, (), {**CFG, "ln_eps": "1e-5"}, "ln_eps"),
    ("TransformerConfig: d_out = True", TransformerConfig, (), {**CFG, "d_out": True}, "d_out"),
    ("TransformerConfig: d_model 4.0 float", TransformerConfig, (), {**CFG, "d_model": 4.5}, "d_model"),
    ("TransformerConfig.from_dict: a string", TransformerConfig.from_dict, ("d_model=4",), {}, "TransformerConfig"),
    ("Transformer: n_ctx 10^9 (memory)", lambda: Transformer(TransformerConfig(**{**CFG, "n_ctx": HUGE})), (), {},
     "memory"),
    ("Transformer: cfg is a dict", Transformer, (CFG,), {}, "cfg"),
    # ---- Transformer forward
    ("forward: numpy input", _tok_model(), (np.zeros((1, 2, 2)),), {}, "inputs"),
    ("forward: complex input", _tok_model(), (torch.zeros(1, 2, 2, dtype=torch.complex128),), {}, ("inputs", "complex")),
    ("forward: key_mask of the wrong shape", _tok_model(), (torch.zeros(1, 2, 2),), {"key_mask": torch.ones(3, 5)}, "key_mask"),
    ("forward: token model given a list", Transformer(TransformerConfig(**CFG)), ([[0, 1]],), {}, "inputs"),
    # ---- spec parsing
    ("parse_spec: a string", parse_spec, ('{"type": "maxout"}',), {}, "spec"),
    ("parse_model_spec: sawtooth q = 2.9", parse_model_spec, ({"type": "sawtooth", "q": 2.9, "L": 2},), {}, "q"),
    ("parse_model_spec: sawtooth unknown field", parse_model_spec, ({"type": "sawtooth", "q": 2, "L": 2, "Q": 3},), {}, "Q"),
    ("parse_spec: complex weight", parse_spec, ({**MAXOUT, "layers": [{"W": [[[1j]]], "b": [[0.0]]}]},), {}, "W"),
    ("parse_spec: bool as a weight", parse_spec, ({**MAXOUT, "layers": [{"W": [[[True]]], "b": [[0.0]]}]},), {}, "W"),
    ("load_spec: binary file", load_spec, (lambda tmp: (_write("s.json", b"\x89PNG\r\n")(tmp), tmp / "s.json")[1],), {},
     ("s.json", "UTF-8")),
    # ---- regions
    ("lower: a string", lower, ("net",), {}, "model"),
    ("lower: compiled n_tokens 0", lower, (_cm(),), {"n_tokens": 0}, "n_tokens"),
    ("count_regions: domain as a tuple", count_regions, (_net(), ((0, 0), (1, 1))), {}, "domain"),
    ("count_regions: segment leaves the compile domain", count_regions, (_cm(), Segment([-5, -5], [5, 5])), {},
     ("compile domain", "[-1")),
    ("count_regions: box leaves the compile domain", count_regions,
     (compile_maxout(sawtooth_maxout(3, 2), (0.0, 1.0)), Box(-1.0, 1.0)), {}, ("compile domain", "[0")),
    ("count_regions: plane leaves the compile domain", count_regions, (_cm(), Plane.square(2.0)), {}, "compile domain"),
    ("Segment: text coordinate", Segment, ([0, "a"], [1, 1]), {}, "Segment.a"),
    ("Segment: complex end", Segment, ([0.0, 0.0], np.array([1 + 1j, 1.0])), {}, ("Segment.b", "complex")),
    ("Plane: complex bounds", Plane, ([0, 0], [1, 0], [0, 1], np.array([0, 1, 0, 1j])), {}, ("bounds", "complex")),
    ("Box: NaN lo", Box, ([np.nan, 0.0], [1.0, 1.0]), {}, ("Box.lo", "NaN")),
]


@pytest.mark.parametrize("name, fn, args, kwargs, mentions", API_CASES, ids=[c[0] for c in API_CASES])
def test_api_bad_input(name, fn, args, kwargs, mentions, tmp_path):
    args = tuple(a(tmp_path) if isinstance(a, types.FunctionType) else a for a in args)
    api_rejects(fn, *args, mentions=mentions, **kwargs)
