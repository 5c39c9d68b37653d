"""The Chomsky-hierarchy benchmark files: the sweep YAMLs, the published table, the cost estimate.

The YAMLs must cover every task of the published table × {transformer with each position
encoding, rnn, lstm, stack_rnn, tape_rnn} × their seeds, once each, under the deletang preset;
the quick grid's estimated wall time on 2 cores must be within its 30-minute budget (the
estimate, not a timing: train/budget.py).
"""

from __future__ import annotations

import json
from dataclasses import replace
from functools import cache
from importlib import resources
from pathlib import Path

import pytest

from expressivity.languages import REGISTRY, kinds_of
from expressivity.train import MODELS, load_sweep, preset
from expressivity.train.budget import estimate_seconds, estimate_sweep
from expressivity.train.published import COMPARISONS, published
from expressivity.transformer.positions import POSITIONALS

SWEEPS = Path(__file__).resolve().parents[1] / "examples" / "sweeps"
RECURRENT = ("rnn", "lstm", "stack_rnn", "tape_rnn")
QUICK_BUDGET_S = 30 * 60


@cache
def _load(name: str):
    return tuple(load_sweep(SWEEPS / name))


def _variants(cfg):
    return (cfg.model, cfg.positional if cfg.model == "transformer" else "")


@pytest.mark.parametrize("name", ["chomsky.yaml", "chomsky-quick.yaml"])
def test_sweep_covers_every_task_model_and_encoding(name):
    configs = _load(name)
    table = published("deletang")
    seeds = sorted({c.seed for c in configs})
    expected = {(t, m, p, s) for t in table.tasks for s in seeds
                for m, p in [("transformer", e) for e in POSITIONALS] + [(r, "") for r in RECURRENT]}
    got = [(c.task, *_variants(c), c.seed) for c in configs]
    assert len(got) == len(set(got)), "a (task, model, encoding, seed) appears twice"
    assert set(got) == expected
    for c in configs:
        assert c.task in REGISTRY and c.model in MODELS and c.positional in POSITIONALS
        assert c.protocol == "deletang" and c.train_lengths == (1, 40)
        assert c.kind == kinds_of(c.task)[0]  # the preset gave each function task its kind
        assert all(41 <= n <= 500 for n in c.test_lengths)
    # within one file, every transformer shares one size and every recurrent model another
    assert len({(c.layers, c.d_model, c.heads) for c in configs if c.model == "transformer"}) == 1
    assert len({(c.layers, c.d_model) for c in configs if c.model != "transformer"}) == 1


def test_full_sweep_tests_every_length_and_uses_the_paper_sizes():
    configs = _load("chomsky.yaml")
    assert all(c.test_lengths == tuple(range(41, 501)) and c.batch_size == 128 for c in configs)
    tr = next(c for c in configs if c.model == "transformer")
    rec = next(c for c in configs if c.model != "transformer")
    assert (tr.layers, tr.d_model) == (5, 64) and (rec.layers, rec.d_model) == (1, 256)  # paper §A.2


def test_quick_grid_fits_its_budget_on_two_cores():
    configs = _load("chomsky-quick.yaml")
    wall = estimate_sweep(configs, workers=2)
    # half the budget: the estimate is good to about a factor of 2 (docs/benchmark.md)
    assert 0 < wall <= QUICK_BUDGET_S / 2, wall
    full = _load("chomsky.yaml")
    assert estimate_sweep(full, workers=2) > 10 * wall  # the full budget is for a cluster


def test_cost_estimate_grows_with_the_work():
    cfg = preset("deletang", "reverse_string", model="stack_rnn", d_model=32, steps=100, eval_batch=8,
                 test_lengths=(41, 100))
    base = estimate_seconds(cfg)
    assert base > 0
    for bigger in (replace(cfg, steps=200), replace(cfg, test_lengths=(41, 100, 400)),
                   replace(cfg, model="tape_rnn"), replace(cfg, d_model=256),
                   replace(cfg, task="duplicate_string")):  # output 2n instead of n
        assert estimate_seconds(bigger) > base, bigger.label()
    tr = replace(cfg, model="transformer", layers=2, heads=2)
    assert estimate_seconds(replace(tr, layers=4)) > estimate_seconds(tr)
    assert estimate_seconds(replace(tr, test_lengths=(500,))) > estimate_seconds(replace(tr, test_lengths=(41,)))


def test_sweep_estimate_schedules_like_a_pool():
    cfgs = [preset("deletang", "parity_check", model="rnn", d_model=32, steps=s, test_lengths=(41,)) for s in
            (100, 200, 300)]
    costs = [estimate_seconds(c) for c in cfgs]
    assert estimate_sweep(cfgs, workers=1) == pytest.approx(sum(costs))
    assert estimate_sweep(cfgs, workers=3) == pytest.approx(max(costs))
    assert estimate_sweep(cfgs, workers=2) == pytest.approx(max(costs[2], costs[0] + costs[1]))
    with pytest.raises(ValueError, match="workers"):
        estimate_sweep(cfgs, workers=0)


def test_preset_gives_function_tasks_their_kind_and_keeps_an_explicit_one():
    assert preset("deletang", "reverse_string").kind == "transduction"
    assert preset("deletang", "parity_check").kind == "classification"
    assert preset("deletang", "parity").kind == "recognition"  # a language: recognition by default
    assert preset("deletang", "parity", kind="next_symbol").kind == "next_symbol"
    with pytest.raises(ValueError, match="supports kinds"):
        preset("deletang", "reverse_string", kind="recognition")


# ------------------------------------------------------------------ the published table
def _raw():
    path = resources.files("expressivity.train").joinpath("data", COMPARISONS["deletang"])
    return json.loads(path.read_text(encoding="utf-8"))


def test_published_table_is_cited_and_every_number_has_a_source():
    raw = _raw()
    assert raw["arxiv"] == "2207.02098" and raw["table"] == "Table 2" and "41-500" in raw["metric"]
    table = published("deletang")
    assert table.models == ("rnn", "stack_rnn", "tape_rnn", "transformer", "lstm")
    assert {t.level for t in table.tasks.values()} == {"R", "DCF", "CS"}
    assert len(table.tasks) == 15 and all(t in REGISTRY for t in table.tasks)
    for name, t in table.tasks.items():
        for m in table.models:
            value = raw["tasks"][name]["scores"][m]
            assert table.score(name, m) == value
            if value is not None:
                assert 0 <= value <= 100 and t.sources[m] in table.sources
            else:
                assert m not in t.sources
    assert sum(v is not None for t in table.tasks.values() for v in t.scores.values()) >= 20


def test_published_table_agrees_with_the_papers_text():
    """Two statements of the paper's text the numbers must agree with: the transformer's
    Cycle Navigation score is 61.9 (Appendix B.3.2), and on each DCF task with numbers the
    Stack-RNN and Tape-RNN are solved (≥ 90) while the RNN and Transformer are not (§5.1)."""
    table = published("deletang")
    assert table.score("cycle_navigation", "transformer") == 61.9
    for t in table.tasks.values():
        if t.level == "DCF" and t.scores["stack_rnn"] is not None:
            assert t.scores["stack_rnn"] >= 90 and t.scores["tape_rnn"] >= 90
            assert t.scores["rnn"] < 90 and t.scores["transformer"] < 90


def test_unknown_comparison_lists_the_valid_names():
    with pytest.raises(ValueError, match="unknown comparison 'bhattamishra'; choose one of: deletang"):
        published("bhattamishra")


def test_memory_models_can_hold_the_longest_test_input_above_regular():
    """A stack or tape smaller than the input caps the score of a memory task by construction
    (docs/benchmark.md), so above the regular level every Stack-RNN / Tape-RNN run has a cell per
    symbol of its longest test input plus EOS; regular tasks keep the models' own sizes."""
    from expressivity.train.models import memory_cells

    table = published("deletang")
    for c in _load("chomsky.yaml"):
        if c.model in ("stack_rnn", "tape_rnn"):
            if table.tasks[c.task].level == "R":
                assert c.memory_size == 0
            else:
                assert memory_cells(c) >= max(c.test_lengths) + 1, c.label()


def test_cost_estimate_grows_with_the_memory():
    for model in ("stack_rnn", "stack_lstm", "tape_rnn"):
        cfg = preset("deletang", "reverse_string", model=model, d_model=32, steps=100, eval_batch=8,
                     test_lengths=(41, 100))
        assert estimate_seconds(replace(cfg, memory_size=501)) > estimate_seconds(cfg) > 0
