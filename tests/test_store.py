"""The one results store (expressivity.runs.store): tables per kind, migrations of the old
training and report files in place, and one code version per store."""

from __future__ import annotations

import json
import sqlite3

import pytest

from expressivity.runs import Store, VersionMismatch, code_version
from expressivity.train import ResultStore, RunConfig, RunResult, run_sweep

TINY = dict(task="parity", model="lstm", d_model=8, layers=1, steps=5, batch_size=8, train_lengths=(1, 4),
            test_lengths=(5,), eval_batch=4)


def _schema2(db):
    con = sqlite3.connect(db)
    con.executescript("""
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE runs (run_id TEXT PRIMARY KEY, label TEXT NOT NULL, config TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('done', 'diverged', 'error')), error TEXT, final_loss REAL,
            n_params INTEGER, duration REAL, score REAL, finished REAL NOT NULL);
        CREATE TABLE results (run_id TEXT NOT NULL REFERENCES runs(run_id), length INTEGER NOT NULL,
            accuracy REAL, ce_bits REAL, optimal_bits REAL, excess_bits REAL, n_strings INTEGER NOT NULL,
            task TEXT NOT NULL, kind TEXT NOT NULL, model TEXT NOT NULL, seed INTEGER NOT NULL,
            config TEXT NOT NULL, PRIMARY KEY (run_id, length));
        INSERT INTO meta VALUES ('app', 'expressivity.train.results'), ('schema', '2');
        INSERT INTO runs VALUES ('old', 'old run', '{}', 'diverged', 'nan', NULL, 10, 1.0, NULL, 5);
        INSERT INTO runs VALUES ('ok', 'ok run', '{}', 'done', NULL, 0.1, 10, 1.0, 1.0, 6);
        INSERT INTO results VALUES ('ok', 8, NULL, 0.5, 0.0, 0.5, 4, 'parity', 'recognition', 'lstm', 0, '{}');
    """)
    con.commit()
    con.close()


def test_a_schema_2_training_store_is_migrated_and_takes_new_kinds(tmp_path):
    db = tmp_path / "r.sqlite"
    _schema2(db)
    with ResultStore(db) as st:
        assert [r["run_id"] for r in st.runs()] == ["old", "ok"]
        assert st.runs()[0]["code_version"] is None  # from before versioning: readable, unversioned
        assert st.rows()[0]["accuracy"] is None and st.finished(include_errors=False) == {"old", "ok"}
        st.record_error(RunConfig(**TINY), "took too long", status="timed_out")
        st.put_unit("claim|test|u0", "claim", "test", "done", {"x": 1.5}, seconds=2.0)
    con = sqlite3.connect(db)
    meta = dict(con.execute("SELECT key, value FROM meta"))
    assert meta["schema"] == "3" and meta["app"] == "expressivity.results" and meta["code_version"] == code_version()
    assert con.execute("SELECT status, code_version FROM runs WHERE run_id = ?",
                       (RunConfig(**TINY).run_id,)).fetchone() == ("timed_out", code_version())
    con.close()


def test_an_old_report_store_is_migrated_and_its_claims_are_not_reused(tmp_path):
    db = tmp_path / "report.sqlite"
    con = sqlite3.connect(db)
    con.executescript("""
        CREATE TABLE claims (claim_id TEXT NOT NULL, size TEXT NOT NULL, key TEXT NOT NULL, status TEXT NOT NULL,
            claim TEXT NOT NULL, figure BLOB, created REAL NOT NULL, PRIMARY KEY (claim_id, size, key));
        CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO meta VALUES ('magic', 'expressivity-report-v1');
        INSERT INTO claims VALUES ('a.b', 'quick', 'k1', 'holds', '{"old": 1}', NULL, 1);
        INSERT INTO claims VALUES ('a.b', 'quick', 'k2', 'violated', '{"old": 2}', NULL, 2);
    """)
    con.commit()
    con.close()
    with Store(db) as st:
        assert st.count_claims("quick") == 1  # the newest row per (claim, budget) is kept
        assert st.get_claim("a.b", "quick") is None  # no code version: measured again, never reused
        st.put_claim("a.b", "quick", "holds", {"new": 1}, None)
        assert st.get_claim("a.b", "quick") == ({"new": 1}, None)
        assert st.runs() == [] and st.units() == {}


def test_one_store_holds_one_code_version(tmp_path):
    db = tmp_path / "v.sqlite"
    with Store(db, version="0.0.1+aaaaaaaaaaaa") as st:
        st.put_unit("k", "g", "quick", "done", 1)
    with pytest.raises(VersionMismatch, match=r"holds results of expressivity 0\.0\.1\+aaaaaaaaaaaa; this is "
                       r"0\.0\.2\+bbbbbbbbbbbb.*--reset-db"):
        Store(db, version="0.0.2+bbbbbbbbbbbb")
    with pytest.raises(VersionMismatch, match="0.0.1"):  # the training commands refuse it too
        run_sweep([RunConfig(**TINY)], db, run_fn=lambda cfg, out: None)
    with Store(db, read_only=True) as st:  # reading is fine whatever the version
        assert st.count_claims() == 0
        with pytest.raises(ValueError, match="read-only"):
            st.put_unit("k2", "g", "quick", "done", 1)
    st = Store(db, version="0.0.2+bbbbbbbbbbbb", reset=True)
    assert st.set_aside == tmp_path / "v.0.0.1+aaaaaaaaaaaa.sqlite" and st.units() == {}
    st.close()
    with Store(st.set_aside, version="0.0.1+aaaaaaaaaaaa") as old:  # the old results are kept, aside
        assert list(old.units()) == ["k"]


def test_units_claims_and_runs_share_one_file(tmp_path):
    db = tmp_path / "one.sqlite"
    res = RunResult(RunConfig(**TINY), ({"length": 5, "accuracy": 0.75, "ce_bits": float("nan"), "optimal_bits": 0.0,
                                        "excess_bits": 0.1, "n_strings": 4},), 0.2, 1.0, 10)
    with Store(db) as st:
        assert st.record_result(res) and not st.record_result(res)  # a finished run is written once
        st.put_unit("train.x|test|lstm/s0", "train.x", "test", "done", {"metrics": [1, 2]}, seconds=3.5)
        st.put_unit("train.x|test|lstm/s1", "train.x", "test", "timed_out", None, "timed out after 1 s", 1.0)
        st.put_claim("train.x", "test", "holds", {"id": "train.x"}, b"png")
    with ResultStore(db, read_only=True) as st:  # what `expressivity results` reads
        (row,) = st.rows()
        assert row["accuracy"] == 0.75 and row["ce_bits"] is None and row["config"]["task"] == "parity"
        units = st.units(group="train.x")
        assert units["train.x|test|lstm/s0"]["value"] == {"metrics": [1, 2]}
        assert set(st.units(group="train.x", done_only=True)) == {"train.x|test|lstm/s0"}
        assert st.get_claim("train.x", "test") == ({"id": "train.x"}, b"png")
    con = sqlite3.connect(db)
    assert json.loads(con.execute("SELECT value FROM units WHERE status='done'").fetchone()[0]) == {"metrics": [1, 2]}
    con.close()
