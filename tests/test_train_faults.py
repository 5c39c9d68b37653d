"""Fault scenarios of training, sweeps and ``reproduce`` (issue 10, items 4-7), scripted:
a diverging run, a killed sweep worker, a killed sweep driver, a killed ``reproduce
--timeout``, torn and corrupt checkpoints. Processes are killed by id, and only processes
that the test started (children found through /proc)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
import yaml
from typer.testing import CliRunner

from expressivity.cli import app
from expressivity.train import ResultStore, RunConfig, RunResult, expand_grid, run_sweep, train_run

CLI = [sys.executable, "-c", "from expressivity.cli import main; main()"]
TINY = {"task": "parity", "layers": 1, "heads": 1, "d_model": 8, "train_lengths": "2-6", "test_lengths": "8,10",
        "steps": 4, "batch_size": 4, "eval_batch": 4}
DIVERGES = {"model": "transformer", "lr": 1e30}  # Adam steps of 1e30: the loss is NaN at step 2


def _children(pid: int) -> list[int]:
    """Direct children of ``pid`` (from /proc/*/stat)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            out.append(int(entry))
    return out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_for(cond, timeout: float, what: str):
    deadline = time.time() + timeout
    while time.time() < deadline:
        got = cond()
        if got:
            return got
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def _statuses(db) -> dict[str, str]:
    con = sqlite3.connect(db)
    try:
        return dict(con.execute("SELECT label, status FROM runs").fetchall())
    finally:
        con.close()


def _start(args, tmp_path) -> subprocess.Popen:
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(Path(__file__).resolve().parents[1] / "src"))
    return subprocess.Popen(CLI + args, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            start_new_session=True)


def _cleanup(proc: subprocess.Popen, extra: list[int]) -> None:
    for pid in extra:  # only the processes this test started (and saw as their children)
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)


# ---------------------------------------------------------------------------- item 4
def test_a_diverging_run_is_recorded_and_the_sweep_goes_on(tmp_path):
    spec = {"base": TINY, "grid": {"model": ["lstm"], "seed": [0, 1, 2]}, "runs": [DIVERGES]}
    db = tmp_path / "r.sqlite"
    summary = run_sweep(expand_grid(spec), db, workers=2, out_dir=tmp_path / "ck")
    assert (summary.done, summary.diverged, summary.errors) == (3, 1, 0), summary.error_messages
    runs = {r["run_id"]: r for r in ResultStore(db).runs()}
    assert sorted(r["status"] for r in runs.values()) == ["diverged", "done", "done", "done"]
    bad = next(r for r in runs.values() if r["status"] == "diverged")
    assert "not finite at step 2" in bad["error"] and bad["score"] is None and bad["final_loss"] is None
    assert not [r for r in ResultStore(db).rows() if r["run_id"] == bad["run_id"]]  # no NaN rows
    again = run_sweep(expand_grid(spec), db, workers=2, out_dir=tmp_path / "ck")
    assert again.skipped == 4 and again.errors == 0  # the rerun does not fail either


def test_train_alone_records_a_diverged_run(tmp_path):
    db = tmp_path / "r.sqlite"
    args = ["train", "--task", "parity", "--model", "transformer", "--layers", "1", "--heads", "1", "--d-model", "8",
            "--train-lengths", "2-6", "--test-lengths", "8", "--steps", "5", "--batch-size", "4", "--lr", "1e30",
            "--db", str(db), "--out", str(tmp_path / "run")]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "diverged" in res.output and "step 2" in res.output
    assert list(_statuses(db).values()) == ["diverged"]
    shown = CliRunner().invoke(app, ["results", "--db", str(db)])
    assert shown.exit_code == 0 and "diverged" in shown.output


def test_nan_metrics_are_stored_as_null(tmp_path):
    cfg = RunConfig(**{**TINY, "model": "lstm"})
    row = {"length": 8, "accuracy": 0.5, "ce_bits": float("nan"), "optimal_bits": 0.0, "excess_bits": float("nan"),
           "n_strings": 4}
    store = ResultStore(tmp_path / "r.sqlite")
    assert store.record_result(RunResult(cfg, (row,), float("nan"), 1.0, 10))
    (got,) = store.rows()
    assert got["ce_bits"] is None and got["excess_bits"] is None and got["accuracy"] == 0.5
    assert store.runs()[0]["final_loss"] is None
    store.close()


def test_a_schema_1_store_is_migrated_in_place(tmp_path):
    db = tmp_path / "old.sqlite"
    con = sqlite3.connect(db)
    con.executescript("""
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE runs (run_id TEXT PRIMARY KEY, label TEXT NOT NULL, config TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('done', 'error')), error TEXT, final_loss REAL,
            n_params INTEGER, duration REAL, score REAL, finished REAL NOT NULL);
        CREATE TABLE results (run_id TEXT NOT NULL REFERENCES runs(run_id), length INTEGER NOT NULL,
            accuracy REAL NOT NULL, ce_bits REAL NOT NULL, optimal_bits REAL NOT NULL, excess_bits REAL NOT NULL,
            n_strings INTEGER NOT NULL, task TEXT NOT NULL, kind TEXT NOT NULL, model TEXT NOT NULL,
            seed INTEGER NOT NULL, config TEXT NOT NULL, PRIMARY KEY (run_id, length));
        INSERT INTO meta VALUES ('app', 'expressivity.train.results'), ('schema', '1');
        INSERT INTO runs VALUES ('abc', 'old run', '{}', 'done', NULL, 0.1, 10, 1.0, 1.0, 0);
        INSERT INTO results VALUES ('abc', 8, 1.0, 0.0, 0.0, 0.0, 4, 'parity', 'recognition', 'lstm', 0, '{}');
    """)
    con.commit()
    con.close()
    store = ResultStore(db)
    assert [r["run_id"] for r in store.runs()] == ["abc"] and len(store.rows()) == 1
    diverged = RunResult(RunConfig(**TINY), (), float("nan"), 1.0, 10, status="diverged", diverged_at=3)
    assert store.record_result(diverged)
    store.close()
    con = sqlite3.connect(db)
    assert con.execute("SELECT value FROM meta WHERE key='schema'").fetchone() == ("3",)
    con.close()


# ---------------------------------------------------------------------------- item 5
def test_a_killed_worker_fails_only_its_run_and_the_sweep_exits_1(tmp_path):
    spec = {"base": {**TINY, "model": "lstm"}, "runs": [{"seed": 0, "steps": 400}, {"seed": 1}, {"seed": 2}]}
    (tmp_path / "sweep.yaml").write_text(yaml.safe_dump(spec))
    proc = _start(["sweep", "sweep.yaml", "--db", "r.sqlite", "--workers", "1", "--no-group"], tmp_path)
    seen: list[int] = []
    try:
        first = _wait_for(lambda: _children(proc.pid), 60, "the first worker")[0]
        seen.append(first)
        os.kill(first, signal.SIGKILL)  # as the out-of-memory killer would
        out, err = proc.communicate(timeout=120)
    finally:
        _cleanup(proc, seen)
    assert proc.returncode == 1, (out, err)
    statuses = _statuses(tmp_path / "r.sqlite")
    assert sorted(statuses.values()) == ["done", "done", "error"], statuses  # the others ran, none lost
    con = sqlite3.connect(tmp_path / "r.sqlite")
    (error,) = con.execute("SELECT error FROM runs WHERE status='error'").fetchone()
    con.close()
    assert "killed by SIGKILL" in error and "--retry-errors" in error
    assert b"1 failed" in out
    retry = CliRunner().invoke(app, ["sweep", str(tmp_path / "sweep.yaml"), "--db", str(tmp_path / "r.sqlite"),
                                     "--retry-errors"])
    assert retry.exit_code == 0, retry.output
    assert sorted(_statuses(tmp_path / "r.sqlite").values()) == ["done", "done", "done"]


def test_a_killed_group_fails_its_runs_and_each_resumes_from_its_checkpoint(tmp_path):
    """Runs trained as one batched model (the default) share a worker: killing it fails each
    of them (recorded one by one); each resumes from its own checkpoint on --retry-errors."""
    spec = {"base": {**TINY, "model": "lstm", "steps": 600, "checkpoint_every": 20}, "grid": {"seed": [0, 1]}}
    (tmp_path / "sweep.yaml").write_text(yaml.safe_dump(spec))
    proc = _start(["sweep", "sweep.yaml", "--db", "r.sqlite", "--workers", "1"], tmp_path)
    seen: list[int] = []
    ck = tmp_path / "checkpoints"
    try:
        worker = _wait_for(lambda: _children(proc.pid), 60, "the group's worker")[0]
        seen.append(worker)
        _wait_for(lambda: len(list(ck.glob("*/trainer.pt"))) == 2 or None, 120, "both runs' checkpoints")
        os.kill(worker, signal.SIGKILL)
        out, err = proc.communicate(timeout=120)
    finally:
        _cleanup(proc, seen)
    assert proc.returncode == 1, (out, err)
    assert sorted(_statuses(tmp_path / "r.sqlite").values()) == ["error", "error"]
    assert b"2 failed" in out
    steps = {p.parent.name: torch.load(p, weights_only=True)["step"] for p in ck.glob("*/trainer.pt")}
    assert len(steps) == 2 and all(s >= 20 for s in steps.values())
    retry = CliRunner().invoke(app, ["sweep", str(tmp_path / "sweep.yaml"), "--db", str(tmp_path / "r.sqlite"),
                                     "--retry-errors", "--workers", "1"])
    assert retry.exit_code == 0, retry.output
    assert sorted(_statuses(tmp_path / "r.sqlite").values()) == ["done", "done"]


# ---------------------------------------------------------------------------- item 6
def test_a_killed_sweep_driver_leaves_no_worker_behind(tmp_path):
    spec = {"base": {**TINY, "model": "lstm", "steps": 100000}, "grid": {"seed": [0, 1]}}
    (tmp_path / "sweep.yaml").write_text(yaml.safe_dump(spec))
    proc = _start(["sweep", "sweep.yaml", "--db", "r.sqlite", "--workers", "2"], tmp_path)
    workers: list[int] = []
    try:
        workers = _wait_for(lambda: (lambda c: c if len(c) == 2 else None)(_children(proc.pid)), 60, "two workers")
        time.sleep(0.5)  # the workers are training
        os.kill(proc.pid, signal.SIGKILL)  # the driver only
        proc.wait(10)
        _wait_for(lambda: not any(_alive(w) for w in workers), 10, "the orphaned workers to exit")
        assert not any(_alive(w) for w in workers)
    finally:
        _cleanup(proc, workers)


def _descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        kids = _children(todo.pop())
        out += kids
        todo += kids
    return out


@pytest.mark.slow
def test_a_killed_reproduce_leaves_no_claim_child_nor_resource_tracker(tmp_path):
    proc = _start(["reproduce", "--size", "test", "--only", "train.parity", "--timeout", "300", "--out", "rep",
                   "--db", "rep.sqlite", "--workers", "2"], tmp_path)
    kids: list[int] = []
    try:
        # the resource tracker and the two unit processes
        kids = _wait_for(lambda: (lambda c: c if len(c) >= 3 else None)(_descendants(proc.pid)), 60,
                         "the unit processes and the resource tracker")
        time.sleep(1.0)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        # a spawned unit arms its death signal only once its imports are done: on a loaded
        # machine that takes tens of seconds (the wait ends as soon as they are gone)
        _wait_for(lambda: not any(_alive(k) for k in kids), 90, "the unit processes and the tracker to exit")
        assert not any(_alive(k) for k in kids)
    finally:
        _cleanup(proc, kids)


# ---------------------------------------------------------------------------- item 7
def _stop_at(n):
    class Stop(Exception):
        pass

    def on_step(step, loss):
        if step == n:
            raise Stop

    return Stop, on_step


def tiny(**kw) -> RunConfig:
    return RunConfig(**{**TINY, "model": "lstm", "steps": 6, "checkpoint_every": 2, **kw})


def test_a_torn_checkpoint_is_refused_and_restart_trains_from_scratch(tmp_path):
    cfg, out = tiny(), tmp_path / "run"
    whole = train_run(cfg, tmp_path / "whole")
    stop, on_step = _stop_at(3)
    with pytest.raises(stop):
        train_run(cfg, out, on_step=on_step)
    model_at_2 = (out / "model.safetensors").read_bytes()
    stop, on_step = _stop_at(5)
    with pytest.raises(stop):
        train_run(cfg, out, on_step=on_step)  # resumed from 2, checkpoint at 4
    (out / "model.safetensors").write_bytes(model_at_2)  # model from step 2, trainer from step 4
    with pytest.raises(ValueError, match="torn: model.safetensors is from step 2, trainer.pt from step 4"):
        train_run(cfg, out)
    fresh = train_run(cfg, out, restart=True)
    assert fresh.resumed_from == 0 and fresh.metrics == whole.metrics


def test_a_crash_while_saving_leaves_the_previous_checkpoint_whole(tmp_path, monkeypatch):
    cfg, out = tiny(), tmp_path / "run"
    whole = train_run(cfg, tmp_path / "whole")
    real_save, calls = torch.save, []

    def dying_save(obj, path, *a, **kw):
        calls.append(path)
        if len(calls) == 2:  # the second checkpoint: the model half is written, then the process "dies"
            raise KeyboardInterrupt
        return real_save(obj, path, *a, **kw)

    monkeypatch.setattr(torch, "save", dying_save)
    with pytest.raises(KeyboardInterrupt):
        train_run(cfg, out)
    monkeypatch.setattr(torch, "save", real_save)
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "model.safetensors", "trainer.pt"]  # no temp
    resumed = train_run(cfg, out)
    assert resumed.resumed_from == 2 and resumed.metrics == whole.metrics


def test_corrupt_checkpoints_give_one_line_and_train_restart_recovers(tmp_path):
    cfg_args = ["train", "--task", "parity", "--model", "lstm", "--layers", "1", "--d-model", "8", "--train-lengths",
                "2-6", "--test-lengths", "8,10", "--steps", "4", "--batch-size", "4", "--eval-batch", "4"]
    out, db = tmp_path / "run", tmp_path / "r.sqlite"
    args = cfg_args + ["--out", str(out), "--db", str(db)]
    assert CliRunner().invoke(app, args).exit_code == 0
    for name in ("trainer.pt", "model.safetensors"):
        path = out / name
        if name == "trainer.pt":
            path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])  # truncated
        else:
            path.write_bytes(os.urandom(4096))  # random bytes
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 2 and "Traceback" not in res.output, res.output
        assert name in res.output and "--restart" in res.output
        fixed = CliRunner().invoke(app, args + ["--restart"])
        assert fixed.exit_code == 0, fixed.output
    assert list(_statuses(db).values()) == ["done"]


def test_evaluation_progress_starts_before_the_first_length():
    calls = []
    train_run(tiny(steps=1), on_eval=lambda done, total: calls.append((done, total)))
    assert calls == [(0, 2), (1, 2), (2, 2)]


def test_a_sweep_run_with_a_corrupt_checkpoint_fails_alone_and_restart_redoes_it(tmp_path):
    spec = {"base": {**TINY, "model": "lstm"}, "grid": {"seed": [0, 1]}}
    path, db, ck = tmp_path / "sweep.yaml", tmp_path / "r.sqlite", tmp_path / "ck"
    path.write_text(yaml.safe_dump(spec))
    broken = expand_grid(spec)[0]
    (ck / broken.run_id).mkdir(parents=True)
    (ck / broken.run_id / "model.safetensors").write_bytes(os.urandom(1000))
    (ck / broken.run_id / "trainer.pt").write_bytes(os.urandom(1000))
    args = ["sweep", str(path), "--db", str(db), "--out", str(ck), "--workers", "1"]
    first = CliRunner().invoke(app, args)
    text = " ".join(first.output.split())
    assert first.exit_code == 1 and "1 failed" in text and "--retry-errors --restart" in text, text
    assert sorted(_statuses(db).values()) == ["done", "error"]
    fixed = CliRunner().invoke(app, args + ["--retry-errors", "--restart"])
    assert fixed.exit_code == 0, fixed.output
    assert sorted(_statuses(db).values()) == ["done", "done"]
