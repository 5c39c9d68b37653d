"""``compare`` (and ``results --compare``) on a small store of synthetic runs.

The rows are made up, so the expected numbers are recomputed here from them, independently of
the library: score of a run = 100 × mean of its accuracies at lengths 41–500; a cell = the
max over its runs; the transformer cell = the max over every encoding.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from typer.testing import CliRunner

from expressivity.cli import app
from expressivity.train import ResultStore, RunResult, preset
from expressivity.train.compare import compare, run_scores
from expressivity.train.published import published

LENGTHS = (30, 41, 100, 500)  # 30 is inside the training range: never scored


def _metrics(rng, lengths=LENGTHS):
    return tuple({"length": n, "accuracy": float(rng.uniform()), "ce_bits": 1.0, "optimal_bits": 0.0,
                  "excess_bits": 1.0, "n_strings": 8} for n in lengths)


def _cfg(task, model, seed, positional="sinusoidal", protocol="deletang", **kw):
    fields = dict(model=model, seed=seed, positional=positional, steps=1, d_model=8, heads=2, layers=1,
                  test_lengths=(41, 100, 500) if protocol == "deletang" else (51, 100), **kw)
    if protocol == "deletang":
        return preset("deletang", task, **fields)
    return preset(protocol, task, **fields)


@pytest.fixture()
def store(tmp_path):
    rng = np.random.default_rng(7)
    runs = []
    for task in ("reverse_string", "parity_check"):
        for seed in (0, 1, 2):
            runs.append(RunResult(_cfg(task, "stack_rnn", seed), _metrics(rng), 0.1, 1.0, 10))
            for enc in ("rope", "alibi"):
                runs.append(RunResult(_cfg(task, "transformer", seed, enc), _metrics(rng), 0.1, 1.0, 10))
    # ignored: another protocol; a diverged run (no rows)
    runs.append(RunResult(_cfg("reverse_string", "lstm", 0, protocol="bhattamishra"), _metrics(rng, (51, 100)),
                          0.1, 1.0, 10))
    runs.append(RunResult(_cfg("reverse_string", "lstm", 1), (), float("nan"), 1.0, 10, status="diverged",
                          diverged_at=3))
    path = tmp_path / "r.sqlite"
    with ResultStore(path) as s:
        for r in runs:
            s.record_result(r)
    return path, runs


def _expected(runs, task, model, positional=None):
    best = None
    for r in runs:
        c = r.config
        if (c.task, c.model, c.protocol) != (task, model, "deletang") or not r.metrics:
            continue
        if positional is not None and c.positional != positional:
            continue
        score = 100 * np.mean([m["accuracy"] for m in r.metrics if 41 <= m["length"] <= 500])
        best = score if best is None else max(best, score)
    return best


def test_cells_are_the_best_mean_accuracy_over_runs(store):
    path, runs = store
    with ResultStore(path) as s:
        comp = compare(s.rows(), "deletang")
    table = published("deletang")
    assert [(c.task, c.model) for c in comp.cells] == [(t, m) for t in table.tasks for m in table.models]
    for task in ("reverse_string", "parity_check"):
        for model in ("stack_rnn", "transformer"):
            cell = comp.cell(task, model)
            assert cell.ours == pytest.approx(_expected(runs, task, model), abs=1e-9)
            assert cell.runs == (3 if model == "stack_rnn" else 6)
            assert cell.published == table.score(task, model)
            assert cell.difference == pytest.approx(cell.ours - cell.published)
        encs = [c for c in comp.encodings if c.task == task]
        assert [c.positional for c in encs] == ["alibi", "rope"]
        for c in encs:
            assert c.ours == pytest.approx(_expected(runs, task, "transformer", c.positional), abs=1e-9)
            assert c.runs == 3
        assert comp.cell(task, "transformer").ours == pytest.approx(max(c.ours for c in encs))
        assert comp.cell(task, "transformer").best.split(",")[0] in ("alibi", "rope")
    # the LSTM ran only under another protocol or diverged: nothing to score
    lstm = comp.cell("reverse_string", "lstm")
    assert lstm.ours is None and lstm.difference is None
    assert comp.cell("bucket_sort", "tape_rnn").ours is None


def test_run_scores_ignore_training_lengths_and_other_protocols(store):
    path, runs = store
    with ResultStore(path) as s:
        scores = run_scores(s.rows())
    assert len(scores) == 18  # 2 tasks × 3 seeds × (stack_rnn + 2 encodings)
    by_id = {r.config.run_id: r for r in runs}
    for s in scores:
        metrics = by_id[s["run_id"]].metrics
        assert s["score"] == pytest.approx(100 * np.mean([m["accuracy"] for m in metrics[1:]]))
        assert s["score"] != pytest.approx(100 * np.mean([m["accuracy"] for m in metrics]))


def test_results_compare_prints_and_plots(store, tmp_path):
    path, runs = store
    png = tmp_path / "cmp.png"
    res = CliRunner(env={"COLUMNS": "120"}).invoke(app, ["results", "--db", str(path), "--compare", "deletang",
                                                         "--plot", str(png)])
    assert res.exit_code == 0, res.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    out = res.output
    assert "Table 2" in out and "2207.02098" in out and "└ rope" in out
    ours = _expected(runs, "reverse_string", "stack_rnn")
    line = next(ln for ln in out.splitlines() if "reverse_string" in ln and "stack_rnn" in ln)
    assert f"{ours:.1f}" in line and "100.0" in line and f"{ours - 100:+.1f}" in line


def test_results_compare_unknown_name_is_one_line(store):
    path, _ = store
    res = CliRunner().invoke(app, ["results", "--db", str(path), "--compare", "chiang"])
    assert res.exit_code == 2
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and "--compare" in lines[0] and "deletang" in lines[0]


def test_published_numbers_reach_the_comparison_unchanged(store):
    path, _ = store
    with ResultStore(path) as s:
        comp = compare(s.rows())
    from importlib import resources

    raw = json.loads(resources.files("expressivity.train").joinpath("data", "deletang2023.json").read_text())
    for c in comp.cells:
        assert c.published == raw["tasks"][c.task]["scores"][c.model]
        assert c.level == raw["tasks"][c.task]["level"]


# ------------------------------------------------------------ a table file of the user's
def _shipped():
    from importlib import resources

    return json.loads(resources.files("expressivity.train").joinpath("data", "deletang2023.json").read_text())


def test_a_table_file_with_more_cells_filled_is_compared(store, tmp_path):
    """A researcher fills a null cell (with a source of theirs) and passes the file's path: the
    printed comparison carries the new number, the shipped table is untouched."""
    path, runs = store
    d = _shipped()
    assert d["tasks"]["even_pairs"]["scores"]["stack_rnn"] is None
    d["sources"]["mine"] = "read in the paper's PDF, Table 2"
    d["tasks"]["even_pairs"]["scores"]["stack_rnn"] = 97.5
    d["tasks"]["even_pairs"]["sources"]["stack_rnn"] = "mine"
    d["tasks"]["parity_check"]["scores"]["stack_rnn"] = 12.5  # a changed number is the file's, not ours
    table = tmp_path / "table.json"
    table.write_text(json.dumps(d))
    t = published(str(table))
    assert t.score("even_pairs", "stack_rnn") == 97.5 and published("deletang").score("even_pairs", "stack_rnn") is None
    res = CliRunner(env={"COLUMNS": "120"}).invoke(app, ["results", "--db", str(path), "--compare", str(table), "--all"])
    assert res.exit_code == 0, res.output
    line = next(ln for ln in res.output.splitlines() if "parity_check" in ln and "stack_rnn" in ln)
    ours = _expected(runs, "parity_check", "stack_rnn")
    assert "12.5" in line and f"{ours - 12.5:+.1f}" in line
    assert "even_pairs" in res.output and "97.5" in res.output


def _broken(change):
    d = _shipped()
    change(d)
    return json.dumps(d)


@pytest.mark.parametrize("text, message", [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "must be a JSON object"),
    (_broken(lambda d: d.pop("models")), "has no 'models'"),
    (_broken(lambda d: d.update(models=["rnn", "gru"])), "unknown: gru"),
    (_broken(lambda d: d["tasks"].update(nope=d["tasks"]["parity_check"])), "task 'nope' is not a task"),
    (_broken(lambda d: d["tasks"]["parity_check"].update(level="X")), "level 'X' is not one of"),
    (_broken(lambda d: d["tasks"]["parity_check"]["scores"].update(rnn=101)), "number in [0, 100]"),
    (_broken(lambda d: d["tasks"]["parity_check"]["scores"].update(rnn="100")), "number in [0, 100]"),
    (_broken(lambda d: d["tasks"]["parity_check"]["scores"].update(rnn=True)), "number in [0, 100]"),
    (_broken(lambda d: d["tasks"]["even_pairs"]["scores"].update(rnn=50.0)), "every number needs a known source"),
    (_broken(lambda d: d["tasks"]["parity_check"]["sources"].update(rnn="nowhere")), "known source"),
    (_broken(lambda d: d.update(tasks={})), "'tasks' is empty"),
])
def test_a_bad_table_file_is_one_line_before_the_store_is_read(tmp_path, text, message):
    table = tmp_path / "t.json"
    table.write_text(text)
    with pytest.raises(ValueError, match=re.escape(message)):
        published(str(table))
    res = CliRunner().invoke(app, ["results", "--db", str(tmp_path / "absent.sqlite"), "--compare", str(table)])
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert res.exit_code == 2 and len(lines) == 1 and message in lines[0], res.output


def test_a_missing_table_file_is_one_line(tmp_path):
    res = CliRunner().invoke(app, ["results", "--db", str(tmp_path / "r.sqlite"), "--compare", str(tmp_path / "x.json")])
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert res.exit_code == 2 and len(lines) == 1 and "does not exist" in lines[0]
