"""Bad-input corpus of the limits area: hand-built transformers, languages and Hahn's limits.

Commands ``constructions``, ``construct``, ``sensitivity``, ``restrict``, ``dyck-ce`` and the
API (``languages.get`` / ``get_task``, ``Language.accepts`` / ``sample``, ``Task.sample_batch``,
``constructions.get`` and the Construction methods, ``flip_sensitivity``, ``lemma5_bound``,
``random_restriction`` / ``dyck_restriction``, ``dependence_under_restriction``,
``depth_reduction``, ``dyck_ce`` and their configs). Each case is a real bad input; each
must give a one-line error naming the parameter (CLI: exit 2, nothing written).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pytest
import torch
from _bad_input import Case, api_rejects, cli_rejects

from expressivity import constructions, languages
from expressivity.limits import (
    ReductionConfig,
    TokenEncoder,
    dependence_under_restriction,
    depth_reduction,
    dyck_restriction,
    flip_sensitivity,
    lemma5_bound,
    measure_flips,
    random_restriction,
    token_embedding_table,
)
from expressivity.limits.dyck_ce import DyckCEConfig, closing_mass, dyck_ce
from expressivity.transformer import Transformer, TransformerConfig

torch.set_num_threads(1)
BIG = "100000000"  # 1e8: the sizes that used to end in MemoryError


def _dir(tmp: Path) -> list[str]:
    (tmp / "adir").mkdir()
    return []


def _file(tmp: Path) -> list[str]:
    (tmp / "afile").write_text("x")
    return []


def _junk_model(tmp: Path) -> list[str]:
    (tmp / "junk.safetensors").write_bytes(b"\x00\xffnot a safetensors file")
    return []


def _lstm_run(tmp: Path) -> list[str]:
    from expressivity.train import RunConfig, train_run

    train_run(RunConfig(task="parity", model="lstm", d_model=4, steps=1, batch_size=4, train_lengths=(2, 4),
                        test_lengths=(5,), eval_batch=4), out_dir=tmp / "lstm")
    return []


CLI_CASES = [
    # ---- constructions
    Case("constructions: extra argument", ["constructions", "parity"], "unexpected"),
    # ---- construct
    Case("construct: unknown name", ["construct", "nope"], ("construction", "nope", "parity")),
    Case("construct: unknown parameter", ["construct", "dyck", "--param", "depth=2"], ("depth", "max_depth")),
    Case("construct: k not an integer", ["construct", "dyck", "--param", "k=two"], ("k", "two")),
    Case("construct: k fractional", ["construct", "dyck", "--param", "k=2.5"], ("k", "2.5")),
    Case("construct: k zero", ["construct", "dyck", "--param", "k=0"], ("k", ">= 1")),
    Case("construct: --param without =", ["construct", "dyck", "--param", "k"], ("--param", "KEY=VALUE")),
    Case("construct: parameter given twice", ["construct", "dyck", "-p", "k=2", "-p", "k=3"], ("k", "twice")),
    Case("construct: unknown method", ["construct", "dyck", "--param", "method=cancel"], ("method", "yao")),
    Case("construct: layer_norm not a bool", ["construct", "parity", "--param", "layer_norm=maybe"], "layer_norm"),
    Case("construct: max_depth a bool", ["construct", "dyck", "--param", "max_depth=true"], "max_depth"),
    Case("construct: negative eps", ["construct", "parity", "--param", "eps=-1"], "eps"),
    Case("construct: NaN eps", ["construct", "first", "--param", "eps=.nan"], "eps"),
    Case("construct: scale zero", ["construct", "dyck", "--param", "scale=0"], "scale"),
    Case("construct: parity scale zero", ["construct", "parity", "--param", "scale=0"], ("scale", "> 0")),
    Case("construct: first negative scale", ["construct", "first", "--param", "scale=-2"], ("scale", "> 0")),
    Case("construct: parity NaN scale", ["construct", "parity", "--param", "scale=.nan"], ("scale", "finite")),
    Case("construct: first scale as text", ["construct", "first", "--param", "scale=big"], ("scale", "big")),
    Case("sensitivity: parity scale zero", ["sensitivity", "--model", "parity", "-p", "scale=0", "--lengths", "8"],
         "scale"),
    Case("construct: max_length zero", ["construct", "dyck", "--param", "max_length=0"], "max_length"),
    Case("construct: letters in --lengths", ["construct", "dyck", "--lengths", "a,b"], "--lengths"),
    Case("construct: fractional length", ["construct", "parity", "--lengths", "8.5"], ("--lengths", "8.5")),
    Case("construct: negative length", ["construct", "parity", "--lengths", "-5"], "--lengths"),
    Case("construct: empty range", ["construct", "parity", "--lengths", "20-10"], ("--lengths", "empty")),
    Case("construct: --samples 0", ["construct", "dyck", "--samples", "0"], "--samples"),
    Case("construct: negative seed", ["construct", "parity", "--seed", "-1"], "--seed"),
    Case("construct: length beyond max_length", ["construct", "parity-compiled", "--lengths", "20", "--samples", "4"],
         ("max_length", "20")),
    Case("construct: empty FIRST string", ["construct", "first", "--lengths", "0"], ("length", "first")),
    Case("construct: 1e8 symbols", ["construct", "parity", "--lengths", BIG], ("needs about", "--lengths")),
    Case("construct: huge dyck context", ["construct", "dyck", "--param", "max_length=100000000000"],
         ("needs about", "max_length")),
    Case("construct: huge compiled parity", ["construct", "parity-compiled", "--param", "max_length=1000000"],
         ("needs about", "max_length")),
    # ---- sensitivity
    Case("sensitivity: letters in --lengths", ["sensitivity", "--lengths", "8,x"], "--lengths"),
    Case("sensitivity: length 1", ["sensitivity", "--lengths", "1"], ("lengths", ">= 2")),
    Case("sensitivity: fractional length", ["sensitivity", "--lengths", "8.5"], ("--lengths", "8.5")),
    Case("sensitivity: unknown model", ["sensitivity", "--model", "nonesuch", "--lengths", "8"],
         ("--model", "nonesuch", "random", "parity")),
    Case("sensitivity: missing model file", ["sensitivity", "--model", "missing.safetensors"],
         "missing.safetensors"),
    Case("sensitivity: junk model file", ["sensitivity", "--model", "junk.safetensors"], "junk.safetensors",
         _junk_model),
    Case("sensitivity: a recurrent training checkpoint", ["sensitivity", "--model", "lstm/model.safetensors",
                                                        "--lengths", "8"], ("lstm", "no transformer"), _lstm_run),
    Case("sensitivity: unknown language", ["sensitivity", "--language", "nope", "--lengths", "8"],
         ("language", "nope", "parity")),
    Case("sensitivity: a function task as the language", ["sensitivity", "--language", "reverse_string",
                                                          "--lengths", "8"],
         ("reverse_string", "transduction", "not a language", "tomita7")),
    Case("sensitivity: language of another alphabet", ["sensitivity", "--model", "parity", "--language", "dyck",
                                                         "--lengths", "8"], ("language", "alphabet")),
    Case("sensitivity: --strings 0", ["sensitivity", "--strings", "0", "--lengths", "8"], "--strings"),
    Case("sensitivity: unknown construction parameter", ["sensitivity", "--model", "parity", "-p", "foo=1",
                                                           "--lengths", "8"], ("foo", "layer_norm")),
    Case("sensitivity: --param on a random model", ["sensitivity", "--model", "random", "-p", "layer_norm=true",
                                                      "--lengths", "8"], ("--param", "random")),
    Case("sensitivity: random model, bad attention", ["sensitivity", "--model", "random", "--attention", "sparse",
                                                        "--lengths", "8"], ("--attention", "softmax")),
    Case("sensitivity: random model, bad layer norm", ["sensitivity", "--model", "random", "--layer-norm",
                                                         "sideways", "--lengths", "8"], ("--layer-norm", "pre")),
    Case("sensitivity: random model, lam 0", ["sensitivity", "--model", "random", "--lam", "0", "--lengths", "8"],
         "--lam"),
    Case("sensitivity: random model, negative eps", ["sensitivity", "--model", "random", "--layer-norm", "pre",
                                                       "--eps", "-1", "--lengths", "8"], "--eps"),
    Case("sensitivity: random-model option on a construction", ["sensitivity", "--model", "parity", "--attention",
                                                                   "hardmax", "--lengths", "8"],
         ("--attention", "random")),
    Case("sensitivity: length beyond max_length", ["sensitivity", "--model", "parity-compiled", "--lengths", "8,32"],
         ("max_length", "32")),
    Case("sensitivity: 1e8 positions", ["sensitivity", "--model", "random", "--lengths", BIG],
         ("needs about", "lengths")),
    Case("sensitivity: --plot is a directory", ["sensitivity", "--lengths", "8", "--plot", "adir"],
         ("--plot", "directory"), _dir),
    Case("sensitivity: --plot of an unknown format", ["sensitivity", "--lengths", "8", "--plot", "fig.txt"],
         ("--plot", ".txt", ".png")),
    Case("sensitivity: --json under a file", ["sensitivity", "--lengths", "8", "--json", "afile/s.json"],
         ("--json", "is a file"), _file),
    Case("sensitivity: --json unwritable", ["sensitivity", "--lengths", "8", "--json",
                                              "/proc/expressivity-test/s.json"], ("--json", "cannot write")),
    # ---- restrict
    Case("restrict: letters in --lengths", ["restrict", "--lengths", "8,x"], "--lengths"),
    Case("restrict: fractional length", ["restrict", "--lengths", "8.5", "--no-constructive"], ("--lengths", "8.5")),
    Case("restrict: C = 0", ["restrict", "--C", "0", "--lengths", "8"], "fraction"),
    Case("restrict: C above 1", ["restrict", "--C", "1.5", "--lengths", "8"], ("C", "1.5")),
    Case("restrict: q = 1", ["restrict", "--q", "1", "--lengths", "8"], "q must"),
    Case("restrict: k = 0", ["restrict", "--k", "0", "--lengths", "8"], "k must"),
    Case("restrict: n = 1", ["restrict", "--n", "1", "--lengths", "8"], "n must"),
    Case("restrict: softmax model", ["restrict", "--model", "parity", "--lengths", "8"], ("hard attention", "softmax")),
    Case("restrict: zero restrictions", ["restrict", "--restrictions", "0", "--lengths", "8"], "restrictions"),
    Case("restrict: zero completions", ["restrict", "--completions", "0", "--lengths", "8"], "completions"),
    Case("restrict: non-binary model, constructive", ["restrict", "--model", "dyck", "--lengths", "8"],
         ("binary", "--no-constructive")),
    Case("restrict: --n 1e5", ["restrict", "--n", "100000", "--lengths", "8"], ("needs about", "n = 100000")),
    Case("restrict: --plot under a file", ["restrict", "--lengths", "8", "--plot", "afile/d.png"],
         ("--plot", "is a file"), _file),
    Case("restrict: unknown model", ["restrict", "--model", "lstm", "--lengths", "8"], ("--model", "lstm")),
    # ---- dyck-ce
    Case("dyck-ce: odd length", ["dyck-ce", "--lengths", "7"], ("lengths", "even")),
    Case("dyck-ce: fractional length", ["dyck-ce", "--lengths", "8.5"], ("--lengths", "8.5")),
    Case("dyck-ce: unknown model kind", ["dyck-ce", "--models", "gru"], ("models", "gru", "lstm")),
    Case("dyck-ce: no models", ["dyck-ce", "--models", ","], "models"),
    Case("dyck-ce: zero steps", ["dyck-ce", "--steps", "0"], "steps"),
    Case("dyck-ce: 1e8 symbols", ["dyck-ce", "--lengths", BIG], ("needs about", "--lengths")),
    Case("dyck-ce: --plot is a directory", ["dyck-ce", "--lengths", "4", "--steps", "1", "--plot", "adir"],
         ("--plot", "directory"), _dir),
    Case("dyck-ce: negative seed", ["dyck-ce", "--seed", "-3"], "seed"),
]


@pytest.mark.parametrize("case", CLI_CASES, ids=lambda c: c.name)
def test_cli_bad_input(case, tmp_path, monkeypatch):
    monkeypatch.setenv("EXPRESSIVITY_MEMORY_BUDGET", "4G")
    cli_rejects(case, tmp_path, monkeypatch)


# ----------------------------------------------------------------------------- API


@cache
def _parity():
    return constructions.get("parity")


@cache
def _hard() -> Transformer:
    cfg = TransformerConfig(d_model=8, n_layers=1, n_heads=1, d_head=4, d_mlp=8, d_vocab=3, d_out=1, n_ctx=64,
                            attention="hardmax", dtype="float64")
    m = Transformer(cfg)
    m.reset_parameters(0)
    return m


@cache
def _soft() -> Transformer:
    cfg = TransformerConfig(d_model=6, n_layers=1, n_heads=1, d_head=3, d_mlp=8, d_vocab=3, d_out=1, n_ctx=64,
                            dtype="float64")
    m = Transformer(cfg)
    m.reset_parameters(0)
    return m


def _rng():
    return np.random.default_rng(0)


def _cls(**kw):
    """The hardmax model reading {0, 1} strings at a CLS token 2 after them."""
    return TokenEncoder(_hard(), **{"symbols": (0, 1), "suffix": (2,), "readout": -1, **kw})
P = languages.get("parity")

API_CASES = [
    # ---- languages
    ("languages.get: a list as name", lambda: languages.get(["parity"]), ("parity", "dyck")),
    ("languages.get_language: a function task", lambda: languages.get_language("parity_check"),
     ("parity_check", "classification", "not a language", "parity,")),
    ("languages.get: unknown parameter", lambda: languages.get("dyck", depth=3), ("depth", "max_depth")),
    ("languages.get: p_end not a number", lambda: languages.get("parity", p_end="x"), "p_end"),
    ("languages.get: max_depth a bool", lambda: languages.get("dyck", max_depth=True), "max_depth"),
    ("get_task: unknown kind", lambda: languages.get_task("parity", "generation"), ("kind", "recognition")),
    ("Language.accepts: not a string", lambda: P.accepts(5), ("accepts", "str")),
    ("Language.sample: fractional count", lambda: P.sample(_rng(), 2.5, 8, True), "count"),
    ("Language.sample: fractional length", lambda: P.sample(_rng(), 4, 8.5, True), "length"),
    ("Language.sample: no generator", lambda: P.sample(None, 4, 8, True), "rng"),
    ("Language.sample: 1e12 strings", lambda: P.sample(_rng(), 10**12, 8, True), ("needs about", "count")),
    ("Task.sample_batch: negative batch",
     lambda: languages.get_task("parity").sample_batch(_rng(), -1, 8), "batch_size"),
    ("Task.sample_batch: fractional length",
     lambda: languages.get_task("dyck", "next_symbol").sample_batch(_rng(), 4, 8.5), ("length", "integer")),
    # ---- constructions
    ("constructions.get: a list as name", lambda: constructions.get(["parity"]), ("construction", "parity")),
    ("constructions.get: unknown parameter", lambda: constructions.get("parity", foo=1), ("foo", "layer_norm")),
    ("constructions.get: eps negative", lambda: constructions.get("parity", eps=-1.0), "eps"),
    ("constructions.get: dyck max_length 1e9", lambda: constructions.get("dyck", max_length=10**9),
     ("needs about", "max_length")),
    ("encode: one string", lambda: _parity().encode("0101"), "list of strings"),
    ("encode: foreign symbols", lambda: _parity().encode(["01a"]), "alphabet"),
    ("encode: not strings", lambda: _parity().encode([1, 0]), "str"),
    ("logits: None", lambda: _parity().logits(None), "strings"),
    ("accept_probability: beyond max_length",
     lambda: constructions.get("parity-compiled", max_length=4).accept_probability(["0" * 6]), "max_length"),
    ("cross_entropy_bits: label 2", lambda: _parity().cross_entropy_bits(["01", "11"], labels=[2, 0]), "labels"),
    ("cross_entropy_bits: label 0.5", lambda: _parity().cross_entropy_bits(["01", "11"], labels=[0.5, 1]), "labels"),
    ("cross_entropy_bits: no strings", lambda: _parity().cross_entropy_bits([]), "strings"),
    ("cross_entropy_bits: labels of another length",
     lambda: _parity().cross_entropy_bits(["01", "11"], labels=[1]), "labels"),
    ("ce_bits_from_logits: NaN logit", lambda: constructions.ce_bits_from_logits([float("nan")], [1]), "logits"),
    ("growth_table: fractional N",
     lambda: constructions.parity_compiled.growth_table([8.5]), "lengths"),
    # ---- flip sensitivity and Lemma 5
    ("flip_sensitivity: fractional length", lambda: flip_sensitivity(_parity(), lengths=[8.5]), ("lengths", "8.5")),
    ("flip_sensitivity: length 1", lambda: flip_sensitivity(_soft(), lengths=[1]), "lengths"),
    ("flip_sensitivity: a name as model", lambda: flip_sensitivity("parity", lengths=[8]), "model"),
    ("flip_sensitivity: a name as language", lambda: flip_sensitivity(_parity(), "parity", lengths=[8]),
     "language"),
    ("flip_sensitivity: language of another alphabet",
     lambda: flip_sensitivity(_parity(), languages.get("dyck"), lengths=[8]), ("language", "alphabet")),
    ("flip_sensitivity: fractional n_strings", lambda: flip_sensitivity(_soft(), lengths=[8], n_strings=2.5),
     "n_strings"),
    ("flip_sensitivity: chunk 0", lambda: flip_sensitivity(_soft(), lengths=[8], chunk=0), "chunk"),
    ("flip_sensitivity: negative seed", lambda: flip_sensitivity(_soft(), lengths=[8], seed=-1), "seed"),
    ("flip_sensitivity: length beyond n_ctx", lambda: flip_sensitivity(_soft(), lengths=[100]), "n_ctx"),
    ("flip_sensitivity: 1e6 positions", lambda: flip_sensitivity(_parity(), lengths=[10**6]), "needs about"),
    ("lemma5_bound: a name as model",
     lambda: lemma5_bound("parity", token_embedding_table(_soft(), 8), [(0, 1)]), "model"),
    ("lemma5_bound: 2-D emb", lambda: lemma5_bound(_soft(), _soft().W_E.detach(), [(0, 1)]), "emb"),
    ("lemma5_bound: symbol out of range",
     lambda: lemma5_bound(_soft(), token_embedding_table(_soft(), 8), [(0, 7)]), "flip_pairs"),
    ("lemma5_bound: flip position beyond n",
     lambda: lemma5_bound(_soft(), token_embedding_table(_soft(), 8), [(0, 1)], flip_positions=[3, 8]),
     "flip_positions"),
    ("lemma5_bound: readout beyond n",
     lambda: lemma5_bound(_soft(), token_embedding_table(_soft(), 8), [(0, 1)], readout=100), "readout"),
    ("measure_flips: chunk -1", lambda: measure_flips(_soft(), np.zeros((1, 8), dtype=np.int64),
                                                      chunk=-1), "chunk"),
    # ---- restrictions and depth reduction
    ("random_restriction: negative n", lambda: random_restriction(_rng(), -1, 0.5), "n must"),
    ("random_restriction: K = 0", lambda: random_restriction(_rng(), 8, 0.5, K=0), "K"),
    ("random_restriction: no generator", lambda: random_restriction(None, 8, 0.5), "rng"),
    ("dyck_restriction: negative n", lambda: dyck_restriction(-5), "n must"),
    ("dyck_restriction: overlapping frac", lambda: dyck_restriction(10, frac=0.7), "frac"),
    ("dyck_restriction: NaN frac", lambda: dyck_restriction(10, frac=float("nan")), "frac"),
    ("dependence: fractional length",
     lambda: dependence_under_restriction(_cls(), [8.5]), ("n_values", "8.5")),
    ("dependence: zero restrictions",
     lambda: dependence_under_restriction(_cls(), [8], n_restrictions=0), "n_restrictions"),
    ("dependence: zero completions",
     lambda: dependence_under_restriction(_cls(), [8], n_completions=0), "n_completions"),
    ("TokenEncoder: one symbol", lambda: TokenEncoder(_hard(), symbols=(0,)), ("TokenEncoder.symbols", ">= 2")),
    ("TokenEncoder: symbols vs the language's alphabet",
     lambda: TokenEncoder(_hard(), __import__("expressivity.languages", fromlist=["x"]).get("parity"), symbols=(0, 1, 2)),
     ("TokenEncoder.symbols", "parity")),
    ("TokenEncoder: not a transformer", lambda: TokenEncoder("model"), "TokenEncoder.transformer"),
    ("dependence: encoder tokens beyond the vocabulary",
     lambda: dependence_under_restriction(_cls(suffix=(5,)), [8]), ("TokenEncoder.suffix", "vocabulary")),
    ("dependence: interface readout beyond the input",
     lambda: dependence_under_restriction(_cls(readout=20), [8]),
     "readout"),
    ("dependence: softmax model", lambda: dependence_under_restriction(_soft(), [8]), "hard attention"),
    ("depth_reduction: fractional n", lambda: depth_reduction(_cls(), 8.5), "n must"),
    ("depth_reduction: n as text", lambda: depth_reduction(_cls(), "24"), "n must"),
    ("depth_reduction: dict as config", lambda: depth_reduction(_cls(), 8, {"k": 4}), "config"),
    ("ReductionConfig: fractional k", lambda: ReductionConfig(k=2.5), "k must"),
    ("ReductionConfig: eta as text", lambda: ReductionConfig(eta="0.1"), "eta"),
    ("ReductionConfig: zero resamples", lambda: ReductionConfig(max_resamples=0), "max_resamples"),
    ("ReductionConfig: brute force over 2^100", lambda: ReductionConfig(brute_force_max=100), "brute_force_max"),
    # ---- Dyck-2 cross-entropy
    ("DyckCEConfig: fractional steps", lambda: DyckCEConfig(steps=2.5), "steps"),
    ("DyckCEConfig: NaN lr", lambda: DyckCEConfig(lr=float("nan")), "lr"),
    ("DyckCEConfig: 1e8 symbols", lambda: dyck_ce(DyckCEConfig(lengths=(10**8,), models=("lstm",))),
     ("needs about", "lengths")),
    ("DyckCEConfig: unknown model", lambda: DyckCEConfig(models=("gru",)), ("models", "gru")),
    ("dyck_ce: a preset name as config", lambda: dyck_ce("quick"), "config"),
    # ---- the confidence scale of PARITY and FIRST
    ("parity: NaN scale", lambda: constructions.get("parity", scale=float("nan")), ("parity", "scale")),
    ("first: zero scale", lambda: constructions.get("first", scale=0.0), ("first", "scale")),
    ("first: infinite scale", lambda: constructions.get("first", scale=float("inf")), ("first", "scale")),
    ("parity: scale a bool", lambda: constructions.get("parity", layer_norm=True, scale=True), ("parity", "scale")),
    ("closing_mass: zero strings", lambda: closing_mass(8, count=0), "count"),
]


@pytest.mark.parametrize("name, call, mentions", API_CASES, ids=[c[0] for c in API_CASES])
def test_api_bad_input(name, call, mentions, monkeypatch):
    monkeypatch.setenv("EXPRESSIVITY_MEMORY_BUDGET", "4G")
    api_rejects(call, mentions=mentions)


def test_corpus_size_and_names_are_unique():
    names = [c.name for c in CLI_CASES] + [c[0] for c in API_CASES]
    assert len(names) == len(set(names)) and len(names) >= 60


# ----------------------------------------------------------------------------- regressions (issue 10)


def test_a_length_string_is_parsed_not_iterated():
    """'32' used to measure n = 3 and 2; '8' and '8,16' likewise everywhere lengths are taken."""
    rep = flip_sensitivity(_parity(), lengths="32", n_strings=1)
    assert {r.n for r in rep.rows} == {32}
    rows = dependence_under_restriction(_cls(), "8", n_restrictions=1, n_completions=2,
                                        references=False)
    assert [r.n for r in rows] == [8]
    assert [r["N"] for r in constructions.parity_compiled.growth_table("4")] == [4]
    assert DyckCEConfig(lengths="8,16", models="lstm").lengths == (8, 16)
    assert DyckCEConfig(lengths="8,16", models="lstm").models == ("lstm",)


def test_cli_lengths_take_ranges_and_params_take_exponents():
    from typer.testing import CliRunner

    from expressivity.cli import app

    res = CliRunner().invoke(app, ["construct", "parity", "--lengths", "8-10", "--samples", "4"], terminal_width=200)
    assert res.exit_code == 0, res.output
    assert [ln.split("│")[1].strip() for ln in res.output.splitlines() if ln.count("│") == 9] == ["8", "9", "10"]
    res = CliRunner().invoke(app, ["sensitivity", "--model", "first", "-p", "layer_norm=true", "-p", "eps=1e-5",
                                   "--lengths", "8", "--strings", "1"])
    assert res.exit_code == 0, res.output
    assert "Lemma 5 applies" in res.output  # eps = 1e-5 arrived as a number, not as the string '1e-5'


def test_plot_without_suffix_is_written_where_asked(tmp_path):
    """`--plot figx` used to write figx.png while printing 'wrote figx'."""
    from typer.testing import CliRunner

    from expressivity.cli import app

    res = CliRunner().invoke(app, ["dyck-ce", "--lengths", "4", "--steps", "1", "--models", "lstm",
                                   "--plot", str(tmp_path / "figx")])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["figx"]
    assert (tmp_path / "figx").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cross_entropy_labels_bool_and_01_agree():
    c = _parity()
    s = ["01", "11", "10"]
    assert c.cross_entropy_bits(s, [1, 0, 1]) == c.cross_entropy_bits(s, [True, False, True]) == \
        c.cross_entropy_bits(s, np.array([1.0, 0.0, 1.0])) == c.cross_entropy_bits(s)


def test_restriction_batches_follow_the_one_batching_rule():
    """Restriction batches: min(4096, SCORE_BUDGET // (3·8·T²·H)) strings — the rule flip
    sensitivity and Lemma 5 use too (limits.encoder.rows_per_pass)."""
    from expressivity.limits.encoder import SCORE_BUDGET, rows_per_pass

    for T in (9, 65, 129, 257, 2049, 10_000):
        assert rows_per_pass(3 * T * T * 1, total=4096) == max(1, min(4096, SCORE_BUDGET // (3 * 8 * T * T)))


def test_flip_chunks_unchanged_by_chunk_rows():
    """One pass when the copies fit in 2^21 score entries (SCORE_BUDGET), the same split as before otherwise."""

    cfg = TransformerConfig(d_model=4, n_layers=1, n_heads=1, d_head=2, d_mlp=4, d_vocab=3, d_out=1, n_ctx=160,
                            dtype="float64")
    m = Transformer(cfg)
    m.reset_parameters(0)
    n = 150
    ids = np.random.default_rng(0).integers(0, 3, size=(2, n))
    meas = measure_flips(m, ids, incremental=False)
    per_pass = (1 << 21) // (2 * 1 * n * n)  # 46 flipped copies per pass
    assert meas.n_passes == -(-n // per_pass) == 4
