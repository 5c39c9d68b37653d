"""Part of a grid: ``select_runs`` / ``sweep --only/--shard/--dry-run`` against a slow reference."""

from __future__ import annotations

import hashlib
import sqlite3

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from expressivity.cli import app
from expressivity.train import expand_grid, run_sweep, select_runs
from expressivity.train.sweep import parse_only, parse_shard, shard_of

SPEC = {
    "base": {"layers": 1, "heads": 1, "d_model": 8, "train_lengths": "2-6", "test_lengths": "8", "steps": 2,
             "batch_size": 4, "eval_batch": 4},
    "grid": {"task": ["parity", "first"], "model": ["transformer"], "positional": ["sinusoidal", "rope", "none"],
             "seed": [0, 1], "lr": [1e-3, 3e-3]},
    "runs": [{"task": t, "model": m, "seed": s} for t in ("parity", "first") for m in ("lstm", "rnn") for s in (0, 1)],
}
GRID = expand_grid(SPEC)  # 24 transformer runs + 8 recurrent ones


def test_only_picks_exactly_the_matching_runs():
    picked = select_runs(GRID, parse_only(["task=parity", "model=lstm,transformer", "seed=1"]))
    expected = [c for c in GRID if c.task == "parity" and c.model in ("lstm", "transformer") and c.seed == 1]
    assert picked == expected and len(picked) == 6 + 1
    # numbers are compared as numbers, a repeated key adds values, the grid order is kept
    assert select_runs(GRID, parse_only(["lr=3e-3", "positional=rope"])) == \
        [c for c in GRID if c.lr == 0.003 and c.positional == "rope"]
    assert select_runs(GRID, parse_only(["seed=0", "seed=1"])) == GRID
    assert select_runs(GRID, {"seed": 0, "model": ["rnn"]}) == [c for c in GRID if c.seed == 0 and c.model == "rnn"]


def test_only_and_shard_refuse_what_the_grid_does_not_hold():
    with pytest.raises(ValueError, match="unknown --only key 'modle'; choose one of: task, kind, model"):
        select_runs(GRID, {"modle": ["rnn"]})
    with pytest.raises(ValueError, match="--only model: 'gru' is in no run of the grid; valid: transformer, lstm, rnn"):
        select_runs(GRID, {"model": ["lstm", "gru"]})
    with pytest.raises(ValueError, match="no run of the grid matches"):
        select_runs(GRID, {"model": ["rnn"], "positional": ["rope"]})
    for bad in ("3", "1/", "/4", "a/b", "1.5/4", "-1/4"):
        with pytest.raises(ValueError, match="--shard expects I/N"):
            parse_shard(bad)
    for bad, word in (("0/4", ">= 1"), ("5/4", "<= 4"), ("1/0", ">= 1")):
        with pytest.raises(ValueError, match=word):
            parse_shard(bad)
    assert parse_shard(" 2/ 8") == (2, 8)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 40), data=st.data())
def test_shards_partition_the_grid(n, data):
    configs = data.draw(st.permutations(GRID))  # the shards do not depend on the grid's order
    shards = [select_runs(configs, shard=(i, n)) for i in range(1, n + 1)]
    ids = [[c.run_id for c in s] for s in shards]
    flat = [r for s in ids for r in s]
    assert sorted(flat) == sorted(c.run_id for c in GRID)  # union = grid, and no run twice (disjoint)
    assert len(set(flat)) == len(flat)
    for i, s in enumerate(ids, start=1):  # the reference: each run in exactly the shard its hash names
        assert all(shard_of(r, n) == i for r in s)
        assert s == [c.run_id for c in configs if shard_of(c.run_id, n) == i]  # order kept
    k = data.draw(st.integers(1, n))
    sub = [c for c in configs if c.model != "transformer"]  # a shard of a selection = selection ∩ shard
    assert select_runs(sub, shard=(k, n)) == [c for c in shards[k - 1] if c.model != "transformer"]


def test_shard_of_is_fixed():
    """A run's shard is a function of its id alone, pinned (machines on different checkouts agree)."""
    ref = int(hashlib.sha256(b"0123456789abcdef").hexdigest()[:16], 16)
    assert [shard_of("0123456789abcdef", n) for n in (1, 2, 3, 7)] == [1 + ref % n for n in (1, 2, 3, 7)] == [1, 1, 1, 4]


def _spec_file(tmp_path):
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(SPEC))
    return path


def test_dry_run_trains_nothing_and_counts_what_is_left(tmp_path):
    path, db = _spec_file(tmp_path), tmp_path / "r.sqlite"
    res = CliRunner().invoke(app, ["sweep", str(path), "--db", str(db), "--dry-run", "--only", "model=rnn,lstm",
                                   "--workers", "2"])
    assert res.exit_code == 0, res.output
    assert "8 of 32 runs selected; 0 already in" in res.output and "8 to run" in res.output
    assert "core-hours" in res.output and "nothing was trained" in res.output
    assert not db.exists() and not (tmp_path / "checkpoints").exists()
    done = [c for c in GRID if c.model == "rnn"][:3]
    run_sweep(done, db, workers=1)
    res = CliRunner().invoke(app, ["sweep", str(path), "--db", str(db), "--dry-run", "--only", "model=rnn,lstm"])
    assert res.exit_code == 0, res.output
    assert "8 of 32 runs selected; 3 already in" in res.output and "5 to run" in res.output
    # a store of other code: the sweep would refuse it, so the dry run counts none of its runs
    con = sqlite3.connect(db)
    con.execute("UPDATE meta SET value = '0.0.1+other' WHERE key = 'code_version'")
    con.commit()
    con.close()
    res = CliRunner().invoke(app, ["sweep", str(path), "--db", str(db), "--dry-run", "--only", "model=rnn,lstm"])
    assert res.exit_code == 0, res.output
    assert "0.0.1+other" in res.output and "--reset-db" in res.output
    assert "8 of 32 runs selected; 0 already in" in res.output and "8 to run" in res.output


def test_sweep_runs_only_its_shard(tmp_path):
    path, db = _spec_file(tmp_path), tmp_path / "r.sqlite"
    args = ["sweep", str(path), "--db", str(db), "--workers", "2", "--only", "model=rnn", "--shard"]
    for i in (1, 2):
        res = CliRunner().invoke(app, [*args, f"{i}/2"])
        assert res.exit_code == 0, res.output
    con = sqlite3.connect(db)
    try:
        ran = {r for (r,) in con.execute("SELECT run_id FROM runs WHERE status = 'done'")}
    finally:
        con.close()
    assert ran == {c.run_id for c in GRID if c.model == "rnn"}
