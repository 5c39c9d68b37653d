"""``compare`` (and ``results --compare``) on a small store of synthetic runs.

The rows are made up, so the expected numbers are recomputed here from them, independently of
the library: score of a run = 100 × mean of its accuracies at lengths 41–500; a cell = the
max over its runs; the transformer cell = the max over every encoding.
"""

from __future__ import annotations

import json

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
