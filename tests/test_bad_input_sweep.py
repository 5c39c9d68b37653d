"""Bad input for sweep grids (sized before anything is expanded), options that do not apply
(refused, not ignored), and the sweep / store API's argument types (see tests/_bad_input.py).

A 9·10⁶-run grid used to hang ``sweep --dry-run`` while it built every RunConfig; it is now
sized as the product of its axes and refused at once, naming the size."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml
from _bad_input import Case, api_rejects, cli_rejects

from expressivity.runs.store import Store
from expressivity.train import ResultStore, RunConfig, expand_grid, load_sweep, run_sweep, train_run
from expressivity.train.sweep import MAX_RUNS, check_size, parse_only, parse_shard, select_runs

BASE = {"task": "parity", "model": "rnn", "d_model": 4, "layers": 1, "heads": 1, "steps": 1, "batch_size": 2,
        "train_lengths": [2, 3], "test_lengths": [4], "eval_batch": 2}


def sweep_file(doc, name: str = "sw.yaml"):
    def setup(tmp: Path):
        (tmp / name).write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc))
    return setup


SMALL = sweep_file({"base": BASE, "grid": {"seed": [0, 1]}})
S = ["sweep", "sw.yaml", "--dry-run"]
BIG = {"seed": list(range(3000)), "lr": [0.001 + i * 1e-6 for i in range(3000)]}

SWEEP_CASES = [
    Case("a 9e6-run grid", S, ("9,000,000 runs", "3000 seed", "3000 lr", "limit"), sweep_file({"base": BASE, "grid": BIG})),
    Case("a 1e10-run grid", S, ("10,000,000,000 runs",), sweep_file(
        {"base": BASE, "grid": {"seed": list(range(100)), "steps": list(range(1, 101)), "batch_size": list(range(1, 101)),
                                "eval_batch": list(range(1, 101)), "d_model": [4] * 100}})),
    Case("a grid and explicit runs over the limit", S, ("explicit runs", "limit"), sweep_file(
        {"base": BASE, "grid": {"seed": list(range(MAX_RUNS))}, "runs": [{"seed": -1}]})),
    Case("30k explicit runs", S, ("30,000 explicit runs", "limit"), sweep_file(
        {"base": BASE, "runs": [{"seed": i} for i in range(30000)]})),
    Case("a sweep file over 2 MiB", S, ("sw.yaml", "MiB", "limit"), sweep_file(
        "base: {task: parity}\n" + "# padding\n" * 300_000 + "grid: {seed: [0]}\n")),
    Case("grid key an integer", S, ("grid keys", "1"), sweep_file({"base": BASE, "grid": {1: [1, 2]}})),
    Case("grid value a mapping", S, ("seed",), sweep_file({"base": BASE, "grid": {"seed": {"a": 1}}})),
    Case("grid value null", S, ("seed",), sweep_file({"base": BASE, "grid": {"seed": None}})),
    Case("grid value a list of lists", S, ("seed",), sweep_file({"base": BASE, "grid": {"seed": [[1, 2]]}})),
    Case("sweep config a pipe", S, ("sweep config", "pipe"), lambda tmp: __import__("os").mkfifo(tmp / "sw.yaml")),
    Case("--dry-run with --restart", S + ["--restart"], ("--restart", "--dry-run"), SMALL),
    Case("--dry-run with a directory as --db", S + ["--db", "."], ("--db", "directory"), SMALL),
    Case("--shard 0/3", S + ["--shard", "0/3"], ("--shard", ">= 1"), SMALL),
    Case("--shard 4/3", S + ["--shard", "4/3"], ("--shard", "<= 3"), SMALL),
    Case("--shard 1/0", S + ["--shard", "1/0"], ("--shard", "number of shards"), SMALL),
    Case("--shard a/b", S + ["--shard", "a/b"], ("--shard", "I/N"), SMALL),
    Case("--shard 1.0/3", S + ["--shard", "1.0/3"], ("--shard", "I/N"), SMALL),
    Case("--shard 1/2000000", S + ["--shard", "1/2000000"], ("--shard", "<= 1000000"), SMALL),
    Case("--only without =", S + ["--only", "x"], ("--only", "KEY=VALUE"), SMALL),
    Case("--only an empty value", S + ["--only", "seed=0,,1"], ("--only",), SMALL),
]


@pytest.mark.parametrize("case", SWEEP_CASES, ids=lambda c: c.name)
def test_cli_bad_sweep(case, tmp_path, monkeypatch):
    t0 = time.perf_counter()
    cli_rejects(case, tmp_path, monkeypatch)
    assert time.perf_counter() - t0 < 60  # sized, not expanded (the 9e6 grid used to hang)


def test_grid_size_is_the_product_of_its_axes():
    assert check_size(["a", "b"], [[1, 2, 3], [1] * 7], 4) == 25
    with pytest.raises(ValueError, match="3,000 × 3,000|3000 seed × 3000 lr"):
        check_size(list(BIG), list(BIG.values()))
    t0 = time.perf_counter()
    api_rejects(expand_grid, {"base": BASE, "grid": {**BIG, "heads": [1, 1]}}, mentions=("18,000,000 runs",))
    assert time.perf_counter() - t0 < 5  # nothing was expanded


def _errored_store(tmp: Path):
    SMALL(tmp)
    store = ResultStore(tmp / "db.sqlite")
    store.record_error(load_sweep(tmp / "sw.yaml")[0], "boom")
    store.close()


def test_cli_dry_run_counts_failed_runs_with_retry_errors(tmp_path, monkeypatch):
    """--retry-errors applies to the dry run (it used to be ignored: a failed run counted as done)."""
    from typer.testing import CliRunner

    from expressivity.cli import app

    _errored_store(tmp_path)
    monkeypatch.chdir(tmp_path)
    plain = CliRunner().invoke(app, S + ["--db", "db.sqlite"])
    again = CliRunner().invoke(app, S + ["--db", "db.sqlite", "--retry-errors"])
    assert plain.exit_code == 0 and "1 already in db.sqlite, 1 to run" in plain.stdout, plain.stdout
    assert again.exit_code == 0 and "0 already in db.sqlite, 2 to run" in again.stdout, again.stdout


# ------------------------------------------------------------ train options that do not apply
TRAIN = ["train", "--task", "parity", "--d-model", "4", "--layers", "1", "--steps", "1", "--batch-size", "2",
         "--train-lengths", "2-3", "--test-lengths", "4", "--eval-batch", "2"]
TRAIN_CASES = [
    Case(f"{opt} with {model}", TRAIN + ["--model", model, opt, *val], (opt, "transformers only"))
    for model in ("rnn", "lstm", "stack_rnn")
    for opt, val in (("--heads", ["2"]), ("--positional", ["rope"]), ("--layer-norm", ["post"]), ("--ln-eps", ["0.1"]),
                     ("--log-length-scaling", []))
] + [
    Case(f"{opt} with --init construction", ["train", "--task", "parity", "--init", "construction:parity", opt, val,
                                             "--steps", "1"], (opt, "construction"))
    for opt, val in (("--layers", "3"), ("--d-model", "16"), ("--heads", "2"), ("--positional", "rope"),
                     ("--layer-norm", "pre"), ("--ln-eps", "0.1"))
] + [
    Case("--perturb without --init", TRAIN + ["--perturb", "0.1"], ("perturb", "construction")),
    Case("--init-param without --init", TRAIN + ["--init-param", "layer_norm=true"], ("init_params", "construction")),
    Case("--memory-size with lstm", TRAIN + ["--model", "lstm", "--memory-size", "3"], ("memory_size", "lstm")),
]


@pytest.mark.parametrize("case", TRAIN_CASES, ids=lambda c: c.name)
def test_cli_train_option_that_does_not_apply(case, tmp_path, monkeypatch):
    cli_rejects(case, tmp_path, monkeypatch)


def test_cli_reproduce_list_checks_its_options(tmp_path, monkeypatch):
    cli_rejects(Case("--list with --workers 0", ["reproduce", "--list", "--workers", "0"], "--workers"),
                tmp_path, monkeypatch)
    cli_rejects(Case("--list with a bad --size", ["reproduce", "--list", "--size", "huge"], "--size"),
                tmp_path, monkeypatch)


# ------------------------------------------------------------------------- API types
def _cfg():
    return RunConfig(**{**BASE, "train_lengths": (2, 3)})


API_CASES = [
    ("expand_grid a 1e7 grid", lambda d: expand_grid({"base": BASE, "grid": {"seed": list(range(10000)),
                                                                             "lr": [0.1 + i for i in range(1000)]}}),
     ("10,000,000 runs",)),
    ("expand_grid grid not a mapping", lambda d: expand_grid({"base": BASE, "grid": [1]}), ("grid",)),
    ("expand_grid an integer grid key", lambda d: expand_grid({"base": BASE, "grid": {2: [1]}}), ("grid keys",)),
    ("expand_grid a tuple is one value", lambda d: expand_grid({"base": BASE, "grid": {"seed": (0, 1)}}), ("seed",)),
    ("expand_grid a None run", lambda d: expand_grid({"base": BASE, "runs": [None]}), ("runs",)),
    ("run_sweep retry_errors='yes'", lambda d: run_sweep([], d / "db.sqlite", retry_errors="yes"), ("retry_errors",)),
    ("run_sweep restart=1", lambda d: run_sweep([], d / "db.sqlite", restart=1), ("restart",)),
    ("run_sweep reset_db=None", lambda d: run_sweep([], d / "db.sqlite", reset_db=None), ("reset_db",)),
    ("run_sweep timeout=-1", lambda d: run_sweep([], d / "db.sqlite", timeout=-1), ("timeout",)),
    ("run_sweep timeout='x'", lambda d: run_sweep([], d / "db.sqlite", timeout="x"), ("timeout",)),
    ("parse_only(5)", lambda d: parse_only(5), ("--only",)),
    ("parse_only({'seed': 0})", lambda d: parse_only({"seed": 0}), ("--only",)),
    ("parse_shard(None)", lambda d: parse_shard(None), ("--shard",)),
    ("select_runs only a list", lambda d: select_runs([_cfg()], only=["seed=0"]), ("only",)),
    ("Store read_only='no'", lambda d: Store(d / "s.sqlite", read_only="no"), ("read_only",)),
    ("Store reset='yes'", lambda d: Store(d / "s.sqlite", reset="yes"), ("reset",)),
    ("Store read-only on a missing file", lambda d: Store(d / "none.sqlite", read_only=True),
     ("none.sqlite", "does not exist")),
    ("train_run out_dir=5", lambda d: train_run(_cfg(), 5), ("out_dir",)),
    ("train_run restart='yes'", lambda d: train_run(_cfg(), d / "o", restart="yes"), ("restart",)),
    ("train_run fit=1", lambda d: train_run(_cfg(), fit=1), ("fit",)),
]


@pytest.mark.parametrize("case", API_CASES, ids=lambda c: c[0])
def test_api_bad_sweep_and_store_arguments(case, tmp_path):
    _, call, mentions = case
    t0 = time.perf_counter()
    api_rejects(call, tmp_path, mentions=mentions)
    assert time.perf_counter() - t0 < 30
    assert list(tmp_path.iterdir()) == []  # nothing created: no store, no run directory
