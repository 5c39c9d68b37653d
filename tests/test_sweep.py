"""Sweeps: rows written per run × length, kill-and-resume without duplicates, crashing runs, Ray."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
import yaml
from typer.testing import CliRunner

from expressivity.cli import app
from expressivity.train import ResultStore, expand_grid, load_sweep, run_sweep, train_run

SPEC = {
    "base": {"task": "parity", "layers": 1, "heads": 1, "d_model": 8, "train_lengths": "2-6",
             "test_lengths": "8,10", "steps": 4, "batch_size": 4, "eval_batch": 4},
    "grid": {"model": ["transformer", "lstm"], "seed": [0]},
    "runs": [{"task": "dyck", "kind": "next_symbol", "model": "lstm"}],
}


def write_spec(tmp_path, spec=SPEC, name="sweep.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(spec))
    return path


def counts(db):
    con = sqlite3.connect(db)
    try:
        runs = con.execute("SELECT count(*), count(DISTINCT run_id) FROM runs WHERE status='done'").fetchone()
        rows = con.execute("SELECT count(*), count(DISTINCT run_id || ':' || length) FROM results").fetchone()
        return runs, rows
    finally:
        con.close()


def test_grid_expansion_and_bad_yaml(tmp_path):
    configs = expand_grid(SPEC)
    assert [(c.task, c.model) for c in configs] == [("parity", "transformer"), ("parity", "lstm"), ("dyck", "lstm")]
    assert configs[0].test_lengths == (8, 10) and configs[0].train_lengths == (2, 6)
    bad = tmp_path / "bad.yaml"
    bad.write_text("grid: [unclosed\n")
    with pytest.raises(ValueError, match="malformed YAML"):
        load_sweep(bad)
    with pytest.raises(ValueError, match="unknown keys"):
        expand_grid({"grid": {"task": ["parity"]}, "sedes": [1]})
    with pytest.raises(ValueError, match="unknown preset"):
        expand_grid({"preset": "nope", "grid": {"task": ["parity"]}})
    res = CliRunner().invoke(app, ["sweep", str(bad), "--db", str(tmp_path / "r.sqlite")])
    assert res.exit_code == 2 and "malformed YAML" in res.output


def test_three_run_sweep_writes_rows_and_results_command(tmp_path):
    spec, db = write_spec(tmp_path), tmp_path / "r.sqlite"
    res = CliRunner().invoke(app, ["sweep", str(spec), "--db", str(db), "--workers", "2"])
    assert res.exit_code == 0, res.output
    assert counts(db) == ((3, 3), (6, 6))  # 3 runs × 2 test lengths
    rows = ResultStore(db).rows()
    assert {(r["task"], r["model"], r["length"]) for r in rows} == {
        ("parity", "transformer", 8), ("parity", "transformer", 10), ("parity", "lstm", 8),
        ("parity", "lstm", 10), ("dyck", "lstm", 8), ("dyck", "lstm", 10)}
    assert all(r["config"]["steps"] == 4 for r in rows)
    again = CliRunner().invoke(app, ["sweep", str(spec), "--db", str(db)])
    assert again.exit_code == 0 and "3 skipped" in again.output
    assert counts(db) == ((3, 3), (6, 6))
    out = CliRunner().invoke(app, ["results", "--db", str(db), "--plot", str(tmp_path / "acc.png")])
    assert out.exit_code == 0, out.output
    assert (tmp_path / "acc.png").stat().st_size > 1000


def test_not_our_database(tmp_path):
    foreign = tmp_path / "foreign.sqlite"
    con = sqlite3.connect(foreign)
    con.execute("CREATE TABLE meta (key TEXT, value TEXT)")
    con.execute("INSERT INTO meta VALUES ('app', 'something else')")
    con.commit()
    con.close()
    with pytest.raises(ValueError, match="not an expressivity results database"):
        ResultStore(foreign)
    junk = tmp_path / "junk.sqlite"
    junk.write_text("hello, I am not SQLite at all" * 10)
    res = CliRunner().invoke(app, ["results", "--db", str(junk)])
    assert res.exit_code == 2 and "is not an SQLite database (a text file)" in res.output


def test_killed_sweep_resumes_without_duplicates(tmp_path):
    spec = {"base": {"task": "parity", "model": "transformer", "layers": 1, "heads": 2, "d_model": 16,
                     "train_lengths": "2-8", "test_lengths": "10,12", "steps": 150, "batch_size": 16,
                     "eval_batch": 8},
            "grid": {"seed": [0, 1, 2]}}
    path, db = write_spec(tmp_path, spec), tmp_path / "r.sqlite"
    cmd = [sys.executable, "-c", "from expressivity.cli import main; main()", "sweep", str(path),
           "--db", str(db), "--workers", "1", "--no-group"]  # one unit per run (a group is recorded at once)
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                            start_new_session=True)
    try:
        deadline = time.time() + 120
        while time.time() < deadline:
            try:
                if db.exists() and counts(db)[0][0] >= 1:
                    break
            except sqlite3.OperationalError:  # the sweep has created the file, not yet its tables
                pass
            time.sleep(0.05)
        killed_at = counts(db)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the sweep and its worker process
        proc.wait()
    assert killed_at[0][0] == 1 and killed_at[1][0] == 2, killed_at  # killed after exactly one run
    first = ResultStore(db).runs()[0]
    summary = run_sweep(load_sweep(path), db, workers=1)
    assert (summary.skipped, summary.done, summary.errors) == (1, 2, 0)
    assert counts(db) == ((3, 3), (6, 6))
    assert ResultStore(db).runs()[0]["finished"] == first["finished"]  # not re-run


def crash_on_seed_one(cfg, out_dir):
    """A run function that fails for one configuration (pickled by reference into workers)."""
    if cfg.seed == 1:
        raise RuntimeError("boom: simulated crash")
    return train_run(cfg, out_dir)


def test_crashing_run_records_error_and_sweep_goes_on(tmp_path):
    spec = dict(SPEC, grid={"model": ["lstm"], "seed": [0, 1, 2]})
    spec.pop("runs")
    db = tmp_path / "r.sqlite"
    summary = run_sweep(expand_grid(spec), db, workers=2, run_fn=crash_on_seed_one)
    assert (summary.done, summary.errors) == (2, 1)
    runs = ResultStore(db).runs()
    errors = [r for r in runs if r["status"] == "error"]
    assert len(errors) == 1 and "boom: simulated crash" in errors[0]["error"]
    assert counts(db) == ((2, 2), (4, 4))
    again = run_sweep(expand_grid(spec), db, workers=1, run_fn=crash_on_seed_one)
    assert again.skipped == 3  # errors count as finished unless retry_errors
    retry = run_sweep(expand_grid(spec), db, workers=1, retry_errors=True)
    assert (retry.done, retry.errors) == (1, 0) and counts(db) == ((3, 3), (6, 6))
    assert not [r for r in ResultStore(db).runs() if r["status"] == "error"]


@pytest.mark.slow
def test_ray_backend_runs_the_same_sweep(tmp_path):
    ray = pytest.importorskip("ray")
    db = tmp_path / "r.sqlite"
    local = tmp_path / "local.sqlite"  # first: forking workers after ray.init is unsafe (its threads)
    here = run_sweep(expand_grid(SPEC), local, workers=1)
    assert (here.done, here.errors) == (3, 0), here.error_messages
    ray.init(num_cpus=1, include_dashboard=False, logging_level="WARNING")
    try:
        summary = run_sweep(expand_grid(SPEC), db, backend="ray")
    finally:
        ray.shutdown()
    assert (summary.done, summary.errors) == (3, 0), summary.error_messages
    assert counts(db) == ((3, 3), (6, 6))
    key = lambda r: (r["run_id"], r["length"])
    assert [(key(r), r["accuracy"], r["ce_bits"]) for r in sorted(ResultStore(db).rows(), key=key)] == \
        [(key(r), r["accuracy"], r["ce_bits"]) for r in sorted(ResultStore(local).rows(), key=key)]
