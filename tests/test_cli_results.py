"""Results out of the store: ``results --json`` / ``--csv`` (stdout or ``--output``), the
``--compare`` table with only measured cells unless ``--all``, and ``expressivity.runs.to_pandas``."""

from __future__ import annotations

import csv
import io
import json
import sys

import pytest
import yaml
from typer.testing import CliRunner

from expressivity.cli import app
from expressivity.runs import records, to_pandas
from expressivity.train import ResultStore

SWEEP = {  # the deletang protocol, so that --compare deletang has cells we measured (lengths 41–500)
    "preset": "deletang",
    "base": {"task": "parity_check", "layers": 1, "heads": 1, "d_model": 8, "train_lengths": "2-6",
             "test_lengths": "8,41,42", "steps": 3, "batch_size": 4, "eval_batch": 4},
    "grid": {"model": ["transformer", "lstm"], "seed": [0]},
}


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    root = tmp_path_factory.mktemp("results")
    cfg = root / "sweep.yaml"
    cfg.write_text(yaml.safe_dump(SWEEP))
    path = root / "r.sqlite"
    res = CliRunner().invoke(app, ["sweep", str(cfg), "--db", str(path), "--workers", "2", "-q"])
    assert res.exit_code == 0, res.output
    return path


def _stored(db):
    with ResultStore(db, read_only=True) as st:
        return st.runs(), st.rows()


def test_json_and_csv_carry_the_table_per_run(db, tmp_path):
    runs, rows = _stored(db)
    res = CliRunner().invoke(app, ["results", "--db", str(db), "--json"])
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)  # nothing but the records on stdout
    assert sorted(r["run_id"] for r in got) == sorted(r["run_id"] for r in runs)
    for r in got:
        mine = [x for x in rows if x["run_id"] == r["run_id"]]
        assert r["lengths"] == len(mine) == 3 and (r["min_length"], r["max_length"]) == (8, 42)
        assert r["mean_accuracy"] == pytest.approx(sum(x["accuracy"] for x in mine) / 3)
        assert r["config"]["model"] == r["model"] and r["config"]["steps"] == 3
    res_csv = CliRunner().invoke(app, ["results", "--db", str(db), "--csv"])
    table = list(csv.DictReader(io.StringIO(res_csv.stdout)))
    assert [t["run_id"] for t in table] == [r["run_id"] for r in got]
    for t, r in zip(table, got):
        assert float(t["mean_ce_bits"]) == pytest.approx(r["mean_ce_bits"])
        assert json.loads(t["config"]) == r["config"]  # a nested cell is one JSON string
    out = tmp_path / "sub" / "runs.csv"
    res_file = CliRunner().invoke(app, ["results", "--db", str(db), "--csv", "--output", str(out)])
    assert res_file.exit_code == 0 and out.read_text() == res_csv.stdout
    assert res_file.stdout == "" and "wrote 2 records" in res_file.stderr


@pytest.mark.parametrize("args, mentions", [
    (["--json", "--csv"], "--json and --csv"),
    (["--output", "x.csv"], "--output"),
    (["--all"], "--all applies to --compare"),
])
def test_bad_combinations_are_refused(db, args, mentions, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, ["results", "--db", str(db), *args])
    assert res.exit_code == 2 and mentions in res.stderr and not (tmp_path / "x.csv").exists()


def test_compare_shows_measured_cells_unless_all(db):
    measured = CliRunner().invoke(app, ["results", "--db", str(db), "--compare", "deletang", "--json"])
    every = CliRunner().invoke(app, ["results", "--db", str(db), "--compare", "deletang", "--all", "--json"])
    few, many = json.loads(measured.stdout), json.loads(every.stdout)
    assert few == [c for c in many if c["runs"] > 0]  # parity_check × {transformer, lstm}, and its encodings
    assert {(c["task"], c["model"]) for c in few if not c["positional"] or c["positional"] == "best"} == \
        {("parity_check", "transformer"), ("parity_check", "lstm")}
    assert len(many) > len(few)
    text = CliRunner().invoke(app, ["results", "--db", str(db), "--compare", "deletang"])
    assert "parity_check" in text.stdout and "even_pairs" not in text.stdout
    cells = [c for c in many if c["positional"] in ("", "best")]
    assert f"{len(cells) - 2} of {len(cells)} published cells have no run of ours" in text.stdout
    assert "--all shows them" in text.stdout
    assert "even_pairs" in CliRunner().invoke(app, ["results", "--db", str(db), "--compare", "deletang",
                                                    "--all"]).stdout


def test_to_pandas_is_one_row_per_run_and_length(db):
    runs, rows = _stored(db)
    df = to_pandas(db)
    assert len(df) == len(rows) == 6
    assert {"run_id", "label", "status", "task", "model", "seed", "layers", "length", "accuracy",
            "ce_bits"} <= set(df.columns)
    for _, r in df.iterrows():
        stored = next(x for x in rows if x["run_id"] == r["run_id"] and x["length"] == r["length"])
        assert r["accuracy"] == pytest.approx(stored["accuracy"]) and r["model"] == stored["model"]
    per_run = to_pandas(db, "runs")
    assert sorted(per_run["run_id"]) == sorted(r["run_id"] for r in runs)
    assert records(db, "runs")[0].keys() == set(per_run.columns)
    with pytest.raises(ValueError, match="table"):
        to_pandas(db, "claims")
    with pytest.raises(ValueError, match="does not exist"):
        to_pandas(db.parent / "nothing.sqlite")


def test_to_pandas_without_pandas_names_the_extra(db, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas → ImportError
    with pytest.raises(ImportError, match=r"pip install 'expressivity\[pandas\]'"):
        to_pandas(db)
