"""A run is stored once: its metrics in the store's ``runs``/``results`` tables, read back by
``Store.run_record``; a report unit keeps the run id only (plus what those tables do not hold),
a unit whose run is gone is trained again, and ``DEFAULT_DB`` is defined in one place."""

from __future__ import annotations

import ast
import math
import sqlite3
from pathlib import Path

import pytest

from expressivity.report.reproduce import reproduce
from expressivity.runs.store import DEFAULT_DB, Store
from expressivity.train import ResultStore, RunConfig, RunResult

SRC = Path(__file__).resolve().parents[1] / "src" / "expressivity"
TINY = dict(task="parity", model="lstm", d_model=8, layers=1, steps=5, batch_size=8, train_lengths=(1, 4),
            test_lengths=(5, 6), eval_batch=4)


def _result(cfg: RunConfig, accuracy: tuple[float, float]) -> RunResult:
    rows = tuple({"length": n, "accuracy": a, "ce_bits": float("nan"), "optimal_bits": 0.0, "excess_bits": 0.25,
                  "n_strings": 4, "close_count": n + 0.5} for n, a in zip(cfg.test_lengths, accuracy))
    return RunResult(cfg, rows, 0.2, 1.0, 10)


def test_run_record_gives_back_the_metrics_written(tmp_path):
    cfg = RunConfig(**TINY)
    res = _result(cfg, (0.75, 0.5))
    with Store(tmp_path / "r.sqlite") as st:
        assert st.run_record(cfg.run_id) is None  # never recorded
        st.record_error(cfg, "boom")
        assert st.run_record(cfg.run_id) is None  # failed: nothing to read
        assert st.record_result(res)
        run = st.run_record(cfg.run_id)
    assert run["status"] == "done" and run["label"] == cfg.label() and run["n_params"] == 10
    assert [m["length"] for m in run["metrics"]] == list(cfg.test_lengths)
    for got, want in zip(run["metrics"], res.metrics):
        assert set(got) == set(want)  # the metrics and the extra number, nothing else
        for k, v in want.items():  # NaN stored as NULL comes back as NaN
            assert math.isnan(got[k]) if math.isnan(v) else got[k] == v
    with Store(tmp_path / "r.sqlite", read_only=True, version="0.0.0+000000000000") as other:
        assert other.run_record(cfg.run_id) is None  # another code version's run is not read as ours


def test_a_run_from_before_versioning_is_not_read_and_is_replaced_by_a_new_measurement(tmp_path):
    db, cfg = tmp_path / "r.sqlite", RunConfig(**TINY)
    with Store(db) as st:
        assert st.record_result(_result(cfg, (0.75, 0.5)))
    con = sqlite3.connect(db)
    con.execute("UPDATE runs SET code_version = NULL")  # as a migrated older store holds it
    con.commit()
    con.close()
    with Store(db) as st:
        assert st.run_record(cfg.run_id) is None  # unversioned: never reused as a result
        assert st.record_result(_result(cfg, (1.0, 0.25))) and not st.record_result(_result(cfg, (0.0, 0.0)))
        assert [m["accuracy"] for m in st.run_record(cfg.run_id)["metrics"]] == [1.0, 0.25]
        assert len(st.rows()) == 2  # the old rows were replaced, not kept beside the new ones


def test_the_store_takes_runs_by_protocol_and_refuses_other_objects(tmp_path):
    assert ResultStore is Store  # the training name of the one store
    with Store(tmp_path / "r.sqlite") as st:
        with pytest.raises(ValueError, match="result must be a finished run"):
            st.record_result({"run_id": "x"})
        with pytest.raises(ValueError, match="cfg must be a run configuration"):
            st.record_error("parity", "boom")


def _one_copy(db: Path) -> tuple[dict, dict]:
    """The units of train.parity and each run's results rows, asserting the one-copy property."""
    with Store(db, read_only=True) as st:
        units = st.units(group="train.parity")
        rows = {r["run_id"]: [] for r in st.runs()}
        for r in st.rows():
            rows[r["run_id"]].append(r["length"])
    for key, u in units.items():
        value = u["value"]
        assert value["run_id"] in rows, key
        assert not {"metrics", "status"} & set(value), key  # no second copy of the run
        assert set(value) == {"run_id", "train_range"}, key  # only what runs/results do not hold
    return units, rows


def test_a_reproduced_training_claim_stores_each_run_once_and_retrains_a_missing_run(tmp_path):
    db = tmp_path / "results.sqlite"
    first = reproduce(tmp_path / "out", size="test", db=db, only=["train.parity"], workers=2, group=False)
    (claim,) = first.claims
    units, rows = _one_copy(db)
    assert len(units) == 2 and len(rows) == 2
    assert all(lengths == sorted(set(lengths)) for lengths in rows.values())  # one row per length, once
    judged = sorted((r["model"], r["length"], r["accuracy"]) for r in claim.numbers["rows"])
    with Store(db, read_only=True) as st:
        stored = sorted((u.rsplit("|", 1)[-1].split("/")[0], m["length"], m["accuracy"])
                        for u, v in units.items() for m in st.run_record(v["value"]["run_id"])["metrics"])
    assert judged == stored  # the claim was judged on the rows the store holds

    gone_key = next(iter(units))
    gone, kept = units[gone_key]["value"]["run_id"], next(u for k, u in units.items() if k != gone_key)
    con = sqlite3.connect(db)
    for table in ("results", "extra_metrics", "runs"):
        con.execute(f"DELETE FROM {table} WHERE run_id = ?", (gone,))
    con.execute("DELETE FROM claims")
    con.commit()
    con.close()
    again = reproduce(tmp_path / "out2", size="test", db=db, only=["train.parity"], workers=2, group=False)
    assert again.computed == ("train.parity",) and again.claims[0].status == claim.status
    units2, rows2 = _one_copy(db)
    assert gone in rows2  # the missing run was trained again and recorded
    assert units2[gone_key]["finished"] > units[gone_key]["finished"]
    assert units2[kept["key"]]["finished"] == kept["finished"]  # the other unit was reused, not retrained
    assert sorted(r["accuracy"] for r in again.claims[0].numbers["rows"]) == sorted(
        r["accuracy"] for r in claim.numbers["rows"])  # training is deterministic given the seed


def _assigned_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def test_default_db_is_defined_once():
    defining = [p.relative_to(SRC).as_posix() for p in SRC.rglob("*.py") if "DEFAULT_DB" in _assigned_names(p)]
    assert defining == ["runs/store.py"]
    import inspect

    from expressivity import report

    assert report.DEFAULT_DB is DEFAULT_DB and inspect.signature(reproduce).parameters["db"].default is DEFAULT_DB
