"""Bad-input corpus of the training and report area: ``train``, ``sweep``, ``results``,
``reproduce`` and the API (RunConfig, presets, ResultStore, sweep configs, train_run,
evaluate_lengths, reproduce). Each case asserts the contract of ``tests/_bad_input.py``: one line
``error: …`` naming the parameter, exit code 2, no traceback, nothing written."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
import torch
from _bad_input import Case, api_rejects, cli_rejects
from safetensors.torch import save_file

from expressivity import train as T
from expressivity.report import reproduce
from expressivity.runs import Store

TINY = ["--layers", "1", "--heads", "1", "--d-model", "8", "--train-lengths", "2-6", "--test-lengths", "8",
        "--steps", "3", "--batch-size", "4", "--eval-batch", "4"]


def train(*extra: str) -> list[str]:
    return ["train", "--task", "parity", *TINY, *extra]


def tiny_cfg(**kw) -> T.RunConfig:
    base = dict(task="parity", layers=1, heads=1, d_model=8, train_lengths=(2, 6), test_lengths=(8,), steps=3,
                batch_size=4, eval_batch=4)
    base.update(kw)
    return T.RunConfig(**base)


# ------------------------------------------------------------------------ file fixtures
def _text(name: str, body: str = "just some notes, not a database\n"):
    def setup(tmp: Path):
        (tmp / name).write_text(body)
    return setup


def _binary(name: str):
    def setup(tmp: Path):
        (tmp / name).write_bytes(bytes(range(256)) * 4)
    return setup


def _foreign_sqlite(tmp: Path):
    con = sqlite3.connect(tmp / "other.sqlite")
    con.execute("CREATE TABLE customers (id INTEGER, name TEXT)")
    con.commit()
    con.close()


OLD_VERSION = "0.0.1+000000000000"


def _old_version_store(tmp: Path):
    """A store written by another code version (refused for writing, with both versions named)."""
    Store(tmp / "old.sqlite", version=OLD_VERSION).close()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _results_store(tmp: Path):
    T.ResultStore(tmp / "results.sqlite").close()


def _a_file(tmp: Path):
    (tmp / "afile").write_text("x")


def _dir(name: str):
    def setup(tmp: Path):
        (tmp / name).mkdir()
    return setup


def _yaml(body: str, name: str = "sweep.yaml"):
    def setup(tmp: Path):
        (tmp / name).write_text(body)
    return setup


def _cli_cfg() -> T.RunConfig:
    """The RunConfig that ``train(...)`` builds (so a checkpoint can be planted for it)."""
    return tiny_cfg()


def _checkpoint(kind: str):
    """Plant a damaged checkpoint of the CLI run in ./ck (or another run's)."""
    def setup(tmp: Path):
        cfg = _cli_cfg() if kind != "other" else tiny_cfg(seed=7)
        ck = tmp / "ck"
        ck.mkdir()
        meta = {"run_id": cfg.run_id, "step": "2", "run_config": cfg.to_json()}
        good_model = {"w": torch.zeros(2)}
        if kind == "random model":
            (ck / "model.safetensors").write_bytes(bytes(range(256)) * 8)
            (ck / "trainer.pt").write_bytes(b"\x00" * 10)
        elif kind == "truncated trainer":
            save_file(good_model, str(ck / "model.safetensors"), metadata=meta)
            full = tmp / "t.pt"
            torch.save({"run_id": cfg.run_id, "step": 2, "optimizer": {}, "rng": {}, "losses": [1.0, 1.0]}, full)
            (ck / "trainer.pt").write_bytes(full.read_bytes()[:40])
            full.unlink()
        elif kind == "torn":
            save_file(good_model, str(ck / "model.safetensors"), metadata={**meta, "step": "3"})
            torch.save({"run_id": cfg.run_id, "step": 2, "optimizer": {}, "rng": {}, "losses": [1.0, 1.0]},
                       ck / "trainer.pt")
        elif kind == "half":
            save_file(good_model, str(ck / "model.safetensors"), metadata=meta)
        elif kind == "other":
            save_file(good_model, str(ck / "model.safetensors"), metadata=meta)
            torch.save({"run_id": cfg.run_id, "step": 2, "optimizer": {}, "rng": {}, "losses": [1.0, 1.0]},
                       ck / "trainer.pt")
        elif kind == "wrong shapes":
            save_file(good_model, str(ck / "model.safetensors"), metadata=meta)
            torch.save({"run_id": cfg.run_id, "step": 2, "optimizer": {}, "rng": {}, "losses": [1.0, 1.0]},
                       ck / "trainer.pt")
    return setup


GOOD_SWEEP = ("base: {task: parity, layers: 1, heads: 1, d_model: 8, train_lengths: 2-6, test_lengths: '8',"
              " steps: 2, batch_size: 4, eval_batch: 4}\ngrid: {seed: [0]}\n")

CLI_CASES = [
    # ---------------------------------------------------------------- train: numbers
    Case("train steps 0", train("--steps", "0"), "steps"),
    Case("train memory size on a model without memory", train("--memory-size", "50"), "memory_size"),
    Case("train memory size negative", train("--model", "stack_rnn", "--memory-size", "-1"), "memory_size"),
    Case("train steps negative", train("--steps", "-5"), "steps"),
    Case("train steps not an integer", train("--steps", "2.5"), "--steps"),
    Case("train lr zero", train("--lr", "0"), "lr"),
    Case("train lr negative", train("--lr", "-0.01"), "lr"),
    Case("train lr nan", train("--lr", "nan"), ("lr", "finite")),
    Case("train lr inf", train("--lr", "inf"), ("lr", "finite")),
    Case("train batch size 0", train("--batch-size", "0"), "batch_size"),
    Case("train eval batch 0", train("--eval-batch", "0"), "eval_batch"),
    Case("train d_model not divisible by heads", train("--heads", "3"), ("d_model", "divisible")),
    Case("train heads 0", train("--heads", "0"), "heads"),
    Case("train layers 0", train("--layers", "0"), "layers"),
    Case("train layers huge", train("--layers", "100000"), "layers"),
    Case("train ln_eps negative", train("--ln-eps", "-1e-5"), "ln_eps"),
    Case("train ln_eps nan", train("--ln-eps", "nan"), "ln_eps"),
    Case("train seed negative", train("--seed", "-1"), "seed"),
    # ---------------------------------------------------------------- train: lengths
    Case("train lengths non-integer", train("--train-lengths", "12.5"), ("--train-lengths", "12.5")),
    Case("train lengths reversed", train("--train-lengths", "40-1"), ("--train-lengths", "empty")),
    Case("train lengths not contiguous", train("--train-lengths", "1,5"), ("--train-lengths", "contiguous")),
    Case("train lengths words", train("--train-lengths", "short"), "--train-lengths"),
    Case("train lengths negative", train("--train-lengths", "-3-4"), "--train-lengths"),
    Case("test lengths non-integer", train("--test-lengths", "8.5"), ("--test-lengths", "8.5")),
    Case("test lengths empty", train("--test-lengths", ""), "--test-lengths"),
    Case("test lengths half range", train("--test-lengths", "41-"), "--test-lengths"),
    Case("test lengths too many", train("--test-lengths", "1-100000000000"), ("--test-lengths", "limit")),
    Case("train lengths too long", train("--train-lengths", "1-200000000"), ("train_lengths", "limit")),
    Case("test length too long for memory", train("--test-lengths", "200000", "--eval-batch", "1"),
         ("memory", "test lengths")),
    Case("train lengths too long for memory", train("--train-lengths", "1-5000000"), ("memory", "train lengths")),
    Case("no valid dyck test length", ["train", "--task", "dyck", "--kind", "next_symbol", "--test-lengths", "41"],
         "no valid length"),
    # ---------------------------------------------------------------- train: names
    Case("train unknown task", ["train", "--task", "palindrome"], "unknown language"),
    Case("train empty task", ["train", "--task", ""], "language"),
    Case("train missing task", ["train", "--steps", "3"], "--task"),
    Case("train unknown kind", train("--kind", "sideways"), "kind"),
    Case("train unknown model", train("--model", "gru"), ("model", "lstm")),
    Case("train unknown positional", train("--positional", "rotary"), "positional"),
    Case("train unknown layer norm", train("--layer-norm", "both"), "--layer-norm"),
    Case("train unknown preset", train("--preset", "chomsky"), "preset"),
    Case("train unknown construction", train("--init", "construction:nope"), ("init", "construction:parity")),
    Case("train init not a construction", train("--init", "parity"), ("init", "construction:parity")),
    Case("train negative perturb", train("--init", "construction:parity", "--perturb", "-1"), "perturb"),
    Case("train nan perturb", train("--init", "construction:parity", "--perturb", "nan"), "perturb"),
    Case("train perturb without init", train("--perturb", "0.1"), ("perturb", "construction:")),
    Case("train lstm from a construction", train("--init", "construction:parity", "--model", "lstm"),
         ("lstm", "transformer")),
    Case("train construction of another task", ["train", "--task", "first", *TINY, "--init", "construction:parity"],
         ("parity", "first")),
    Case("train bad init param", train("--init", "construction:parity", "--init-param", "nope=1"),
         ("nope", "allowed")),
    Case("train init param not KEY=VALUE", train("--init", "construction:parity", "--init-param", "x"),
         "--init-param"),
    Case("train yao preset on parity", ["train", "--task", "parity", "--preset", "yao"], ("yao", "dyck")),
    Case("train yao preset unknown depth", ["train", "--task", "dyck", "--preset", "yao", "--param", "max_depth=4"],
         "max_depth"),
    Case("train unknown option", train("--epochs", "3"), "--epochs"),
    Case("train param without value", train("--param", "k"), ("--param", "KEY=VALUE")),
    Case("train param given twice", ["train", "--task", "dyck", "--param", "k=1", "--param", "k=2"],
         ("--param", "twice")),
    Case("train param list value", ["train", "--task", "dyck", "--param", "k=[1, 2]"], ("--param", "scalar")),
    Case("train unknown language param", ["train", "--task", "dyck", "--param", "depth=3"], ("dyck", "depth")),
    Case("train language param non-integer", ["train", "--task", "dyck", "--param", "k=2.5"], ("k", "2.5")),
    # ---------------------------------------------------------------- train: files
    Case("train db is a directory", train("--db", "dbdir"), ("--db", "directory"), _dir("dbdir")),
    Case("train db under a file", train("--db", "afile/r.sqlite"), ("--db", "afile"), _a_file),
    Case("train db is a text file", train("--db", "notes.txt"), ("--db", "not an SQLite database"),
         _text("notes.txt")),
    Case("train db is a binary file", train("--db", "blob.bin"), ("--db", "not an SQLite database"),
         _binary("blob.bin")),
    Case("train db of another code version", train("--db", "old.sqlite"), ("--db", OLD_VERSION, "--reset-db"),
         _old_version_store),
    Case("train db is another SQLite", train("--db", "other.sqlite"), ("--db", "no meta table"), _foreign_sqlite),
    Case("train out is a file", train("--out", "afile"), ("--out", "file"), _a_file),
    Case("train out under a file", train("--out", "afile/run"), ("--out", "afile"), _a_file),
    Case("train out holds another run", train("--out", "ck"), ("--out", "another run"), _checkpoint("other")),
    Case("train checkpoint random bytes", train("--out", "ck"), ("model.safetensors", "--restart"),
         _checkpoint("random model")),
    Case("train checkpoint truncated trainer", train("--out", "ck"), ("trainer.pt", "--restart"),
         _checkpoint("truncated trainer")),
    Case("train checkpoint torn", train("--out", "ck"), ("torn", "--restart"), _checkpoint("torn")),
    Case("train checkpoint half missing", train("--out", "ck"), ("trainer.pt", "missing", "--restart"),
         _checkpoint("half")),
    # ---------------------------------------------------------------- sweep
    Case("sweep missing config", ["sweep", "nope.yaml"], ("sweep config", "nope.yaml", "does not exist")),
    Case("sweep config is a directory", ["sweep", "cfgdir"], ("sweep config", "directory"), _dir("cfgdir")),
    Case("sweep config binary", ["sweep", "sweep.yaml"], ("sweep config", "UTF-8"), _binary("sweep.yaml")),
    Case("sweep config latin-1", ["sweep", "sweep.yaml"], ("sweep.yaml", "UTF-8"),
         lambda tmp: (tmp / "sweep.yaml").write_bytes("base: {task: 'parité'}\n".encode("latin-1")) and None),
    Case("sweep config malformed YAML", ["sweep", "sweep.yaml"], ("sweep.yaml", "malformed YAML", "line"),
         _yaml("grid: [unclosed\n")),
    Case("sweep config a list", ["sweep", "sweep.yaml"], ("sweep.yaml", "mapping"), _yaml("- parity\n- dyck\n")),
    Case("sweep config empty", ["sweep", "sweep.yaml"], ("sweep.yaml", "mapping"), _yaml("")),
    Case("sweep unknown top key", ["sweep", "sweep.yaml"], ("unknown keys", "sedes"),
         _yaml("grid: {task: [parity]}\nsedes: [1]\n")),
    Case("sweep unknown run field", ["sweep", "sweep.yaml"], ("unknown fields", "stepz"),
         _yaml("grid: {task: [parity], stepz: [3]}\n")),
    Case("sweep no grid nor runs", ["sweep", "sweep.yaml"], ("grid", "runs"), _yaml("base: {task: parity}\n")),
    Case("sweep empty grid list", ["sweep", "sweep.yaml"], ("grid", "empty"), _yaml("grid: {task: [parity], seed: []}\n")),
    Case("sweep run entry not a mapping", ["sweep", "sweep.yaml"], ("runs", "mapping"),
         _yaml("runs: [parity]\n")),
    Case("sweep preset run without task", ["sweep", "sweep.yaml"], "task", _yaml("preset: quick\ngrid: {seed: [0]}\n")),
    Case("sweep unknown preset", ["sweep", "sweep.yaml"], "preset", _yaml("preset: chomsky\ngrid: {task: [parity]}\n")),
    Case("sweep string test lengths non-integer", ["sweep", "sweep.yaml"], ("test_lengths", "8.5"),
         _yaml("grid: {task: [parity], test_lengths: ['8.5']}\n")),
    Case("sweep grad_clip nan", ["sweep", "sweep.yaml"], "grad_clip",
         _yaml("base: {grad_clip: .nan}\ngrid: {task: [parity]}\n")),
    Case("sweep steps as text", ["sweep", "sweep.yaml"], "steps", _yaml("grid: {task: [parity], steps: [many]}\n")),
    Case("sweep unknown backend", ["sweep", "sweep.yaml", "--backend", "slurm"], "--backend", _yaml(GOOD_SWEEP)),
    Case("sweep workers 0", ["sweep", "sweep.yaml", "--workers", "0"], "--workers", _yaml(GOOD_SWEEP)),
    Case("sweep db is a directory", ["sweep", "sweep.yaml", "--db", "dbdir"], ("--db", "directory"),
         lambda tmp: (_yaml(GOOD_SWEEP)(tmp), (tmp / "dbdir").mkdir()) and None),
    Case("sweep db is a text file", ["sweep", "sweep.yaml", "--db", "notes.txt"], "not an SQLite database",
         lambda tmp: (_yaml(GOOD_SWEEP)(tmp), _text("notes.txt")(tmp)) and None),
    Case("sweep db of another code version", ["sweep", "sweep.yaml", "--db", "old.sqlite"],
         ("holds results of expressivity", OLD_VERSION, "--reset-db"),
         lambda tmp: (_yaml(GOOD_SWEEP)(tmp), _old_version_store(tmp)) and None),
    Case("sweep timeout zero", ["sweep", "sweep.yaml", "--timeout", "0"], "--timeout", _yaml(GOOD_SWEEP)),
    Case("sweep address nowhere", ["sweep", "sweep.yaml", "--backend", "ray", "--address", "127.0.0.1:1"],
         ("--address", "no Ray cluster answers"), _yaml(GOOD_SWEEP)),
    Case("sweep out is a file", ["sweep", "sweep.yaml", "--out", "afile"], ("--out", "file"),
         lambda tmp: (_yaml(GOOD_SWEEP)(tmp), _a_file(tmp)) and None),
    Case("sweep only unknown key", ["sweep", "sweep.yaml", "--only", "modle=lstm"], ("--only key", "modle", "model"),
         _yaml(GOOD_SWEEP)),
    Case("sweep only value not in grid", ["sweep", "sweep.yaml", "--only", "seed=0,7"], ("--only seed", "7", "0"),
         _yaml(GOOD_SWEEP)),
    Case("sweep only no value", ["sweep", "sweep.yaml", "--only", "seed"], ("--only", "KEY=VALUE"), _yaml(GOOD_SWEEP)),
    Case("sweep only empty value", ["sweep", "sweep.yaml", "--only", "seed=0,"], ("--only", "KEY=VALUE"),
         _yaml(GOOD_SWEEP)),
    Case("sweep only matches nothing", ["sweep", "sweep.yaml", "--only", "model=lstm", "--only", "seed=1"],
         ("--only", "no run"), _yaml("base: {task: parity, train_lengths: 2-6, test_lengths: '8', steps: 2}\n"
                                     "runs: [{model: lstm, seed: 0}, {model: transformer, seed: 1}]\n")),
    Case("sweep shard zero", ["sweep", "sweep.yaml", "--shard", "0/4"], ("--shard", ">= 1"), _yaml(GOOD_SWEEP)),
    Case("sweep shard past N", ["sweep", "sweep.yaml", "--shard", "5/4"], ("--shard", "<= 4"), _yaml(GOOD_SWEEP)),
    Case("sweep shard of zero", ["sweep", "sweep.yaml", "--shard", "1/0"], ("--shard", "N"), _yaml(GOOD_SWEEP)),
    Case("sweep shard not I/N", ["sweep", "sweep.yaml", "--shard", "half"], ("--shard", "I/N"), _yaml(GOOD_SWEEP)),
    Case("sweep shard negative", ["sweep", "sweep.yaml", "--shard", "-1/4"], ("--shard", "I/N"), _yaml(GOOD_SWEEP)),
    Case("sweep dry run db is a text file", ["sweep", "sweep.yaml", "--dry-run", "--db", "notes.txt"],
         "not an SQLite database", lambda tmp: (_yaml(GOOD_SWEEP)(tmp), _text("notes.txt")(tmp)) and None),
    # ---------------------------------------------------------------- results
    Case("results missing db", ["results", "--db", "none.sqlite"], ("--db", "does not exist")),
    Case("results db is a directory", ["results", "--db", "dbdir"], ("--db", "directory"), _dir("dbdir")),
    Case("results db is a text file", ["results", "--db", "notes.txt"], "not an SQLite database", _text("notes.txt")),
    Case("results db is another SQLite", ["results", "--db", "other.sqlite"], "no meta table", _foreign_sqlite),
    Case("results plot is a directory", ["results", "--db", "results.sqlite", "--plot", "pics"],
         ("--plot", "directory"), lambda tmp: (_results_store(tmp), (tmp / "pics").mkdir()) and None),
    Case("results plot under a file", ["results", "--db", "results.sqlite", "--plot", "afile/p.png"],
         ("--plot", "afile"), lambda tmp: (_results_store(tmp), _a_file(tmp)) and None),
    Case("results unknown comparison", ["results", "--db", "results.sqlite", "--compare", "chiang"],
         ("--compare", "deletang"), _results_store),
    Case("results unknown comparison, no db", ["results", "--db", "none.sqlite", "--compare", "x"],
         ("--compare", "deletang")),
    # ---------------------------------------------------------------- devices (issue 21)
    Case("train unknown device", train("--device", "tpu"), ("--device", "cuda:N", "present")),
    Case("train device index not a number", train("--device", "cuda:x"), "--device"),
    Case("train unknown dtype", train("--dtype", "float16"), ("--dtype", "bfloat16")),
    Case("train bfloat16 on an lstm", train("--model", "lstm", "--dtype", "bfloat16", "--device", "cpu",
                                            "--layers", "1"), ("dtype", "transformer")),
    Case("sweep unknown device", ["sweep", "sweep.yaml", "--device", "gpu"], "--device",
         _yaml("grid: {task: [parity]}\n")),
    Case("sweep max group zero", ["sweep", "sweep.yaml", "--max-group", "0"], "--max-group",
         _yaml("grid: {task: [parity]}\n")),
    Case("sweep gpu bench without dry run", ["sweep", "sweep.yaml", "--gpu-bench", "g.json"], ("--gpu-bench", "--dry-run"),
         _yaml("grid: {task: [parity]}\n")),
    Case("sweep gpu bench not its json", ["sweep", "sweep.yaml", "--dry-run", "--gpu-bench", "sweep.yaml"],
         ("--gpu-bench", "gpu_bench.py"), _yaml("grid: {task: [parity]}\n")),
    Case("reproduce unknown device", ["reproduce", "--device", "tpu", "--only", "compile.complexity"], "--device"),
    # ---------------------------------------------------------------- reproduce
    Case("reproduce unknown size", ["reproduce", "--size", "medium"], "--size"),
    Case("reproduce unknown backend", ["reproduce", "--backend", "slurm", "--only", "compile.complexity"], "--backend"),
    Case("reproduce timeout zero", ["reproduce", "--timeout", "0", "--only", "compile.complexity"], "--timeout"),
    Case("reproduce timeout nan", ["reproduce", "--timeout", "nan", "--only", "compile.complexity"], "--timeout"),
    Case("reproduce address without ray", ["reproduce", "--address", "auto", "--only", "compile.complexity"],
         ("--address", "--backend ray")),
    Case("reproduce address nowhere", ["reproduce", "--size", "test", "--only", "compile.complexity", "--backend",
                                       "ray", "--address", "127.0.0.1:1"], ("--address", "no Ray cluster answers")),
    Case("reproduce address not host:port", ["reproduce", "--size", "test", "--only", "compile.complexity",
                                             "--backend", "ray", "--address", "nowhere"], ("--address", "host:port")),
    Case("reproduce workers 0", ["reproduce", "--workers", "0", "--only", "compile.complexity"], "--workers"),
    Case("reproduce quick and standard", ["reproduce", "--quick", "--standard"], "mutually exclusive"),
    Case("reproduce unknown claim", ["reproduce", "--only", "nope"], "unknown claim id"),
    Case("reproduce quick and full", ["reproduce", "--quick", "--full"], "mutually exclusive"),
    Case("reproduce out is a file", ["reproduce", "--size", "test", "--only", "compile.complexity", "--out", "afile"],
         ("--out", "file"), _a_file),
    Case("reproduce db is a directory", ["reproduce", "--size", "test", "--only", "compile.complexity", "--db",
                                         "dbdir"], ("--db", "directory"), _dir("dbdir")),
    Case("reproduce db under a file", ["reproduce", "--size", "test", "--only", "compile.complexity", "--db",
                                       "afile/r.sqlite"], ("--db", "afile"), _a_file),
    Case("reproduce db of another code version", ["reproduce", "--size", "test", "--only", "compile.complexity",
                                                  "--db", "old.sqlite"], ("--db", OLD_VERSION, "--reset-db"),
         _old_version_store),
    Case("reproduce db is a text file", ["reproduce", "--size", "test", "--only", "compile.complexity", "--db",
                                         "notes.txt"], ("--db", "not an SQLite database"), _text("notes.txt")),
    Case("reproduce db is another SQLite", ["reproduce", "--size", "test", "--only", "compile.complexity", "--db",
                                            "other.sqlite"], ("--db", "no meta table"), _foreign_sqlite),
]


@pytest.mark.parametrize("case", CLI_CASES, ids=lambda c: c.name)
def test_cli_bad_input(case, tmp_path, monkeypatch):
    cli_rejects(case, tmp_path, monkeypatch)


def test_corpus_names_are_unique():
    names = [c.name for c in CLI_CASES] + [name for name, *_ in API_CASES]
    assert len(names) == len(set(names))
    assert len({tuple(c.args) + (c.name,) for c in CLI_CASES}) == len(CLI_CASES)


# ------------------------------------------------------------------------------ the API
class Tmp:
    """An argument made in the test's temporary directory: ``Tmp(lambda tmp: tmp / "x")``."""

    def __init__(self, make) -> None:
        self.make = make


def _small_n_ctx_eval():
    cfg = tiny_cfg(positional="learned")  # only learned positions have a context limit
    task = cfg.make_task()
    model = T.build_model(cfg, len(task.vocab), task.n_outputs)  # n_ctx = 8 + 2
    return T.evaluate_lengths, (model, tiny_cfg(positional="learned", test_lengths=(8, 50))), {}


def _with_file(kind: str) -> Tmp:
    def make(tmp: Path) -> Path:
        if kind == "text":
            p = tmp / "notes.txt"
            p.write_text("not a database")
        elif kind == "dir":
            p = tmp / "d"
            p.mkdir()
        elif kind == "old":
            p = tmp / "old.sqlite"
            Store(p, version=OLD_VERSION).close()
        elif kind == "results":
            p = tmp / "results.sqlite"
            T.ResultStore(p).close()
        elif kind == "foreign":
            _foreign_sqlite(tmp)
            p = tmp / "other.sqlite"
        elif kind == "binary-yaml":
            p = tmp / "s.yaml"
            p.write_bytes(b"\xff\xfe\x00grid")
        elif kind == "file":
            p = tmp / "afile"
            p.write_text("x")
        return p
    return Tmp(make)


def _torn(tmp: Path) -> Path:
    cfg = tiny_cfg(steps=4, checkpoint_every=2)

    class Stop(Exception):
        pass

    def stop(step, loss):
        if step == 3:
            raise Stop

    out = tmp / "run"
    with pytest.raises(Stop):
        T.train_run(cfg, out, on_step=stop)
    first = (out / "model.safetensors").read_bytes()
    T.train_run(cfg, out)  # finishes: step 4 on disk
    (out / "model.safetensors").write_bytes(first)  # model from step 2, trainer from step 4
    return out


API_CASES = [
    # name, function, args, kwargs, mentions (args may hold callables of tmp_path)
    ("RunConfig test lengths string non-integer", T.RunConfig, (), dict(task="parity", test_lengths="8.5"),
     ("test_lengths", "8.5")),
    ("RunConfig test lengths float", T.RunConfig, (), dict(task="parity", test_lengths=[16, 8.5]), "test_lengths"),
    ("RunConfig train lengths non-integer", T.RunConfig, (), dict(task="parity", train_lengths="2-12.5"),
     "train_lengths"),
    ("RunConfig train lengths three values", T.RunConfig, (), dict(task="parity", train_lengths=(1, 5, 9)),
     ("train_lengths", "contiguous")),
    ("RunConfig train lengths bool", T.RunConfig, (), dict(task="parity", train_lengths=True), "train_lengths"),
    ("RunConfig grad_clip nan", T.RunConfig, (), dict(task="parity", grad_clip=float("nan")), "grad_clip"),
    ("RunConfig grad_clip negative", T.RunConfig, (), dict(task="parity", grad_clip=-1.0), "grad_clip"),
    ("RunConfig grad_clip inf", T.RunConfig, (), dict(task="parity", grad_clip=float("inf")), "grad_clip"),
    ("RunConfig steps float", T.RunConfig, (), dict(task="parity", steps=2.5), "steps"),
    ("RunConfig steps string", T.RunConfig, (), dict(task="parity", steps="100"), "steps"),
    ("RunConfig batch size bool", T.RunConfig, (), dict(task="parity", batch_size=True), "batch_size"),
    ("RunConfig lr string", T.RunConfig, (), dict(task="parity", lr="1e-3"), "lr"),
    ("RunConfig lr inf", T.RunConfig, (), dict(task="parity", lr=float("inf")), "lr"),
    ("RunConfig d_mlp negative", T.RunConfig, (), dict(task="parity", d_mlp=-4), "d_mlp"),
    ("RunConfig seed float", T.RunConfig, (), dict(task="parity", seed=1.5), "seed"),
    ("RunConfig task None", T.RunConfig, (), dict(task=None), "task"),
    ("RunConfig task_params list", T.RunConfig, (), dict(task="dyck", task_params=[("k", 2)]), "task_params"),
    ("RunConfig kind None", T.RunConfig, (), dict(task="parity", kind=None), "kind"),
    ("RunConfig log_length_scaling string", T.RunConfig, (), dict(task="parity", log_length_scaling="yes"),
     "log_length_scaling"),
    ("RunConfig accuracy unknown", T.RunConfig, (), dict(task="parity", accuracy="mean"), "accuracy"),
    ("RunConfig.from_dict a string", T.RunConfig.from_dict, ("parity",), {}, "mapping"),
    ("RunConfig.from_dict no task", T.RunConfig.from_dict, ({"steps": 3},), {}, "task"),
    ("RunConfig.from_dict unknown field", T.RunConfig.from_dict, ({"task": "parity", "stepz": 3},), {},
     ("unknown fields", "stepz")),
    ("preset unknown field", T.preset, ("quick", "parity"), dict(stepz=3), ("unknown fields", "stepz")),
    ("preset unknown name", T.preset, ("chomsky", "parity"), {}, "preset"),
    ("preset yao on parity", T.preset, ("yao", "parity"), {}, ("yao", "dyck")),
    ("RunConfig unknown construction", T.RunConfig, (), dict(task="parity", init="construction:nope"),
     ("RunConfig.init", "construction:parity")),
    ("RunConfig perturb NaN", T.RunConfig, (), dict(task="parity", init="construction:parity", perturb=float("nan")),
     "perturb"),
    ("RunConfig lstm from a construction", T.RunConfig, (), dict(task="parity", model="lstm",
                                                                 init="construction:parity"), ("lstm", "transformer")),
    ("RunConfig construction of another language", T.RunConfig, (), dict(task="first", init="construction:parity"),
     ("parity", "first")),
    ("RunConfig init_params not a mapping", T.RunConfig, (), dict(task="parity", init="construction:parity",
                                                                  init_params=[1]), "init_params"),
    ("preset yao depth without windows", T.preset, ("yao", "dyck"), dict(task_params={"max_depth": 7}), "max_depth"),
    ("preset task_params not a mapping", T.preset, ("yao", "dyck"), dict(task_params=[1]), "task_params"),
    ("preset bad override", T.preset, ("quick", "parity"), dict(steps=0), "steps"),
    ("train parse_lengths re-export", T.parse_lengths, ("8.5",), {}, "8.5"),
    ("ResultStore a directory", T.ResultStore, (_with_file("dir"),), {}, "directory"),
    ("ResultStore a text file", T.ResultStore, (_with_file("text"),), {}, ("not an SQLite database", "text file")),
    ("ResultStore of another code version", T.ResultStore, (_with_file("old"),), {}, (OLD_VERSION, "--reset-db")),
    ("ResultStore another SQLite", T.ResultStore, (_with_file("foreign"),), {}, ("SQLite database", "no meta table")),
    ("ResultStore None", T.ResultStore, (None,), {}, "--db"),
    ("expand_grid a list", T.expand_grid, ([{"task": "parity"}],), {}, "mapping"),
    ("expand_grid empty grid list", T.expand_grid, ({"grid": {"task": ["parity"], "seed": []}},), {}, "empty"),
    ("expand_grid preset not a name", T.expand_grid, ({"preset": 3, "grid": {"task": ["parity"]}},), {}, "preset"),
    ("load_sweep not a path", T.load_sweep, (123,), {}, "path"),
    ("load_sweep binary file", T.load_sweep, (_with_file("binary-yaml"),), {}, ("s.yaml", "UTF-8")),
    ("load_sweep missing file", T.load_sweep, (Path("/nonexistent/sweep.yaml"),), {}, "does not exist"),
    ("run_sweep workers 0", T.run_sweep, (Tmp(lambda tmp: [tiny_cfg()]), Tmp(lambda tmp: tmp / "r.sqlite")), dict(workers=0),
     "workers"),
    ("run_sweep unknown backend", T.run_sweep, (Tmp(lambda tmp: [tiny_cfg()]), Tmp(lambda tmp: tmp / "r.sqlite")),
     dict(backend="slurm"), "backend"),
    ("run_sweep configs a string", T.run_sweep, ("parity", Tmp(lambda tmp: tmp / "r.sqlite")), {}, "configs"),
    ("run_sweep configs of dicts", T.run_sweep, ([{"task": "parity"}], Tmp(lambda tmp: tmp / "r.sqlite")), {}, "configs"),
    ("run_sweep out_dir a file", T.run_sweep, (Tmp(lambda tmp: [tiny_cfg()]), Tmp(lambda tmp: tmp / "r.sqlite")),
     dict(out_dir=_with_file("file")), "out_dir"),
    ("train_run not a config", T.train_run, ("parity",), {}, "cfg"),
    ("train_run out_dir a file", T.train_run, (Tmp(lambda tmp: tiny_cfg()), _with_file("file")), {}, "out_dir"),
    ("train_run on_step not callable", T.train_run, (Tmp(lambda tmp: tiny_cfg()),), dict(on_step=3), "on_step"),
    ("train_run over the memory budget", T.train_run,
     (Tmp(lambda tmp: tiny_cfg(d_model=8, test_lengths=(300_000,), eval_batch=4)),), {}, "memory"),
    ("train_run torn checkpoint", T.train_run, (Tmp(lambda tmp: tiny_cfg(steps=4, checkpoint_every=2)), Tmp(_torn)), {},
     ("torn", "restart")),
    ("evaluate_lengths past the model context", "evaluate_lengths", (), {}, ("test_lengths", "n_ctx")),
    ("evaluate_lengths a config dict", T.evaluate_lengths, (Tmp(lambda tmp: T.build_model(tiny_cfg(), 4, 2)), {"task": "parity"}), {},
     "cfg"),
    ("record_error of a string", Tmp(lambda tmp: T.ResultStore(tmp / "r.sqlite").record_error), ("parity", "boom"), {},
     "cfg"),
    ("reproduce() unknown size", reproduce, (Tmp(lambda tmp: tmp / "o"),), dict(size="medium", db=None), "size"),
    ("reproduce negative timeout", reproduce, (Tmp(lambda tmp: tmp / "o"),), dict(size="test", db=None, timeout=-1),
     "timeout"),
    ("reproduce() db of another code version", reproduce, (Tmp(lambda tmp: tmp / "o"),),
     dict(size="test", db=_with_file("old"), only=["compile.complexity"]), ("holds results of", OLD_VERSION)),
    ("reproduce ray address nowhere", reproduce, (Tmp(lambda tmp: tmp / "o"),),
     dict(size="test", db=None, only=["compile.complexity"], backend="ray", address=Tmp(lambda tmp: f"127.0.0.1:{_free_port()}")),
     "no Ray cluster answers"),
    ("run_sweep timeout negative", T.run_sweep, (Tmp(lambda tmp: [tiny_cfg()]), Tmp(lambda tmp: tmp / "r.sqlite")),
     dict(timeout=-1), "timeout"),
    ("report Store a directory", Store, (_with_file("dir"),), {}, "directory"),
]


def _resolve(x, tmp):
    return x.make(tmp) if isinstance(x, Tmp) else x


@pytest.mark.parametrize("name, fn, args, kwargs, mentions", API_CASES, ids=[c[0] for c in API_CASES])
def test_api_bad_input(name, fn, args, kwargs, mentions, tmp_path, monkeypatch):
    monkeypatch.setenv("EXPRESSIVITY_MEMORY_BUDGET", "2G")
    monkeypatch.chdir(tmp_path)
    if fn == "evaluate_lengths":
        fn, args, kwargs = _small_n_ctx_eval()
    fn = _resolve(fn, tmp_path)
    args = tuple(_resolve(a, tmp_path) for a in args)
    kwargs = {k: _resolve(v, tmp_path) for k, v in kwargs.items()}
    api_rejects(fn, *args, mentions=mentions, **kwargs)


def test_corpus_size():
    assert len(CLI_CASES) + len(API_CASES) >= 70


def test_memory_refusal_gives_the_estimate(tmp_path, monkeypatch):
    monkeypatch.setenv("EXPRESSIVITY_MEMORY_BUDGET", "1G")
    msg = api_rejects(T.train_run, tiny_cfg(test_lengths=(200_000,), eval_batch=1), mentions="memory")
    assert "GiB" in msg or "TiB" in msg
    assert json.dumps(T.memory_estimate(tiny_cfg()))  # plain numbers


def test_train_reset_db_sets_a_store_of_another_version_aside(tmp_path, monkeypatch):
    """The way out the refusal names: ``train --reset-db`` renames the old store (with its
    version) and records the run in a fresh one."""
    from typer.testing import CliRunner

    from expressivity.cli import app

    monkeypatch.chdir(tmp_path)
    _old_version_store(tmp_path)
    res = CliRunner().invoke(app, train("--db", "old.sqlite", "--out", "run", "--reset-db"))
    assert res.exit_code == 0, res.stdout + res.stderr
    (aside,) = [p for p in tmp_path.glob("old.*.sqlite")]
    assert OLD_VERSION in aside.name and "set aside" in res.stdout
    with T.ResultStore(tmp_path / "old.sqlite", read_only=True) as st:
        assert len(st.runs()) == 1 and st.runs()[0]["status"] == "done"
