"""The three Chomsky-hierarchy claims (report/chomsky_claims.py) at size "test", and their
verdict rule on made-up scores."""

from __future__ import annotations

import pytest

from expressivity.report import chomsky_claims as C
from expressivity.report.claims import Context, measure_and_judge
from expressivity.report.registry import all_specs
from expressivity.train.published import published

IDS = ("chomsky.regular", "chomsky.dcf", "chomsky.cs")


def _spec(claim_id):
    return next(s for s in all_specs() if s.id == claim_id)


@pytest.mark.parametrize("claim_id", IDS)
def test_claim_runs_at_test_size_with_the_published_numbers(claim_id):
    claim, fig = measure_and_judge(_spec(claim_id), Context(size="test"))
    task, memory, _, _ = C.LEVELS[claim_id.split(".")[1]]
    fit = claim.numbers["fit"][memory]  # the memory model's best run on its training lengths, %
    t_fit = claim.numbers["fit"]["transformer"]
    # a verdict only for fitted models (4 steps: they are not, so not applicable)
    fitted = fit >= C.FIT and t_fit >= C.TRANSFORMER_FIT
    assert claim.status == (claim.status if fitted else "not applicable"), claim.reason
    assert claim.status != "not applicable" or "FAILED requirement" in claim.reason
    assert fig[:8] == b"\x89PNG\r\n\x1a\n" and len(claim.checks) == 5
    assert [c.get("requires", False) for c in claim.checks] == [True, True, False, False, False]
    assert claim.checks[0]["measured"] == pytest.approx(fit) and f"{fit:.1f} %" in claim.measured
    assert claim.checks[1]["measured"] == pytest.approx(t_fit) and claim.checks[1]["bound"] == C.TRANSFORMER_FIT
    table = published("deletang")
    assert claim.numbers["published"] == {memory: table.score(task, memory),
                                          "transformer": table.score(task, "transformer")}
    for model, res in claim.numbers["runs"].items():
        scores = [r["score"] for r in res["runs"]]
        assert res["best"] == max(scores) == claim.numbers["ours"][model]
        assert 0 <= res["fit"] <= 100 and res["fit"] == max(res["runs"], key=lambda r: r["score"])["fit"]
        for r in res["runs"]:  # a run's score is its mean accuracy over the test lengths, in percent
            acc = list(r["accuracy"].values())
            assert r["score"] == pytest.approx(100 * sum(acc) / len(acc))


def test_context_sensitive_claim_is_not_applicable_at_quick_with_the_reason():
    claim, fig = measure_and_judge(_spec("chomsky.cs"), Context(size="quick"))
    assert claim.status == "not applicable" and fig is None
    assert "not measured at quick" in claim.measured and "--standard" in claim.measured
    assert claim.numbers["published"]["tape_rnn"] == 100.0


def test_context_sensitive_claim_is_judged_at_standard(monkeypatch):
    """At standard chomsky.cs is measured like the other levels (three checks, two fit rules)."""
    monkeypatch.setattr(C, "_train", _fake({"tape_rnn": 97.0, "transformer": 53.0},
                                           {"tape_rnn": 100.0, "transformer": 99.0}))
    claim, fig = measure_and_judge(_spec("chomsky.cs"), Context(size="standard"))
    assert claim.status == "holds", claim.reason
    assert fig is not None and "Tape-RNN 97.0 %" in claim.measured


def test_duplicate_string_runs_with_a_computation_step_and_a_tape_that_does_not_wrap():
    """Both models read s EOS EOS CLS^{2n}; the Tape-RNN trains with 2T + 1 cells for its
    longest training sequence and is evaluated with 2T + 1 for the longest test sequence."""
    b = C.LEVELS["cs"][3]["standard"]
    assert b.computation_steps == 1 and len(b.seeds) == 5
    tape, tr = (C.unit_config("cs", m, 0, "standard") for m in ("tape_rnn", "transformer"))
    for cfg in (tape, tr):
        task = cfg.make_task()
        assert task.computation_steps == 1 and task.n_tokens(10) == 10 + 2 + 20
    lo, hi = b.train_lengths
    assert tape.memory_size == 2 * (3 * hi + 2) + 1 and tape.eval_memory_size == 2 * (3 * max(b.test_lengths) + 2) + 1
    assert tr.memory_size == tr.eval_memory_size == 0
    dcf = C.unit_config("dcf", "stack_rnn", 0, "standard")  # the other levels keep their format and memory
    assert dcf.eval_memory_size == 0 and "computation_steps" not in dcf.task_params


def _fake(scores, fit=None):
    def train(ctx, level, model, b):
        s = scores[model]
        f = (fit or {}).get(model, 100.0)
        return {"best": s, "fit": f, "runs": [{"seed": 0, "score": s, "fit": f, "accuracy": {12: s / 100, 20: s / 100}}]}
    return train


@pytest.mark.parametrize("memory,transformer,status", [
    (100.0, 50.0, "holds"),
    (89.0, 50.0, "violated"),  # memory-augmented model not solved
    (100.0, 90.0, "violated"),  # transformer far above its published 62.3
    (95.0, 76.0, "violated"),  # each bound met, but the gap is under 20 points
])
def test_verdict_follows_the_three_checks(monkeypatch, memory, transformer, status):
    monkeypatch.setattr(C, "_train", _fake({"stack_rnn": memory, "transformer": transformer}))
    claim, _ = measure_and_judge(_spec("chomsky.dcf"), Context(size="quick"))
    assert claim.status == status, claim.reason
    pub = published("deletang").score("reverse_string", "transformer")
    checks = {c["what"].split(" ")[0]: c for c in claim.checks if not c.get("requires")}
    assert checks["Transformer"]["bound"] == pytest.approx(pub + C.TRANSFORMER_SLACK)
    assert claim.numbers["ours"] == {"stack_rnn": memory, "transformer": transformer}


@pytest.mark.parametrize("memory,fit,status", [
    (85.5, 100.0, "violated"),  # fitted, yet not extrapolating: a verdict
    (85.5, 98.0, "not applicable"),  # not fitted: the budget, not the claim
    (100.0, 98.0, "not applicable"),  # not judged either way
    (100.0, 99.0, "holds"),
])
def test_a_verdict_needs_the_memory_model_to_fit_its_training_range(monkeypatch, memory, fit, status):
    monkeypatch.setattr(C, "_train", _fake({"stack_rnn": memory, "transformer": 50.0},
                                           {"stack_rnn": fit, "transformer": 97.0}))
    claim, _ = measure_and_judge(_spec("chomsky.dcf"), Context(size="standard"))
    assert claim.status == status, claim.reason
    req, t_req = [c for c in claim.checks if c.get("requires")]
    lo, hi = C.LEVELS["dcf"][3]["standard"].train_lengths
    assert req["measured"] == fit and req["bound"] == C.FIT and f"{lo}–{hi}" in req["what"]
    assert t_req["measured"] == 97.0 and t_req["ok"]
    assert "on the training lengths Stack-RNN" in claim.measured and "Transformer 97.0 %" in claim.measured
    assert (status == "not applicable") == ("FAILED requirement" in claim.reason)


@pytest.mark.parametrize("level", ["regular", "dcf"])
@pytest.mark.parametrize("t_fit,status", [
    (60.0, "not applicable"),  # a transformer that did not fit its training range: its failure beyond it says nothing
    (94.9, "not applicable"),
    (float("nan"), "not applicable"),  # its fit was not evaluated
    (95.0, "holds"),  # fitted: judged
    (100.0, "holds"),
])
def test_a_verdict_needs_the_transformer_to_fit_its_training_range(monkeypatch, level, t_fit, status):
    memory = C.LEVELS[level][1]
    monkeypatch.setattr(C, "_train", _fake({memory: 100.0, "transformer": 50.0}, {memory: 100.0, "transformer": t_fit}))
    claim, _ = measure_and_judge(_spec(f"chomsky.{level}"), Context(size="standard"))
    assert claim.status == status, claim.reason
    if status == "not applicable":  # the reason names the transformer's requirement, and only it
        assert claim.reason.count("FAILED requirement") == 1 and "Transformer on its training lengths" in claim.reason
        assert f"≥ {C.TRANSFORMER_FIT:g}" in claim.reason


def test_a_transformer_that_fits_but_extrapolates_is_a_violation_not_a_skip(monkeypatch):
    # fitted models, and the transformer extrapolates far above its published score: the claim is violated
    monkeypatch.setattr(C, "_train", _fake({"stack_rnn": 100.0, "transformer": 99.0},
                                           {"stack_rnn": 100.0, "transformer": 100.0}))
    claim, _ = measure_and_judge(_spec("chomsky.dcf"), Context(size="standard"))
    assert claim.status == "violated" and "FAILED requirement" not in claim.reason
    assert "Transformer score" in claim.reason


def test_memory_is_sized_to_the_longest_test_string_where_the_models_own_is_smaller():
    levels = C.LEVELS
    assert C.memory_size("dcf", "stack_rnn", levels["dcf"][3]["standard"]) == 101  # tested to n = 100
    assert C.memory_size("dcf", "stack_rnn", levels["dcf"][3]["quick"]) == 41
    assert C.memory_size("dcf", "stack_rnn", levels["dcf"][3]["test"]) == 0  # n ≤ 12: its own 30 cells
    assert C.memory_size("dcf", "transformer", levels["dcf"][3]["standard"]) == 0
    assert C.memory_size("regular", "stack_rnn", levels["regular"][3]["standard"]) == 0  # a finite automaton
    full = levels["cs"][3]["full"]  # the tape: one that does not wrap (2T + 1 cells, T tokens of the sequence)
    assert C.memory_size("cs", "tape_rnn", full) == C.tape_cells(40, full) == 2 * (3 * 40 + 2) + 1
    assert C.eval_memory_size("cs", "tape_rnn", full) == C.tape_cells(max(full.test_lengths), full)


def test_quick_budgets_test_beyond_their_training_range():
    for level, (_task, _mem, _name, budgets) in C.LEVELS.items():
        for size, b in budgets.items():
            if b is not None:
                assert min(b.test_lengths) > b.train_lengths[1], (level, size)
        assert budgets["full"].train_lengths == (1, 40) and max(budgets["full"].test_lengths) <= 500


def test_reproduce_runs_the_claims_as_units_into_the_results_store(tmp_path):
    """Through ``reproduce``: one unit per model × seed, each recorded as a training run of the
    one results store; a level without a budget (cs below full) is judged without units."""
    from expressivity.report.reproduce import reproduce
    from expressivity.runs.store import Store

    db = tmp_path / "results.sqlite"
    res = reproduce(tmp_path / "out", size="test", db=db, only=["chomsky.dcf"], workers=2)
    (claim,) = res.claims
    assert claim.status in ("holds", "violated", "not applicable") and claim.units == {"done": 2, "total": 2}
    with Store(db, read_only=True) as st:
        units = st.units(group="chomsky.dcf")
        runs = {r["run_id"]: r for r in st.runs()}
        metrics = {u["value"]["run_id"]: st.run_record(u["value"]["run_id"])["metrics"] for u in units.values()}
    assert sorted(k.rsplit("|", 1)[-1] for k in units) == ["stack_rnn/s0", "transformer/s0"]
    assert {u["status"] for u in units.values()} == {"done"} and len(runs) == 2
    for model, r in claim.numbers["runs"].items():  # the claim is judged from the stored runs' metrics
        (unit,) = [u for k, u in units.items() if k.endswith(f"{model}/s0")]
        assert "metrics" not in unit["value"]  # the unit keeps the run id, not a second copy
        acc = {m["length"]: m["accuracy"] for m in metrics[unit["value"]["run_id"]]}
        assert r["runs"][0]["score"] == pytest.approx(100 * sum(acc.values()) / len(acc))
        fitted = [m["accuracy"] for m in unit["value"]["train_range"]]  # and its fit from their train-range rows
        assert [m["length"] for m in unit["value"]["train_range"]] == list(range(1, 7))
        assert r["fit"] == pytest.approx(100 * sum(fitted) / len(fitted))
        assert runs[unit["value"]["run_id"]]["status"] == "done"
    res_q = reproduce(tmp_path / "out2", size="quick", db=None, only=["chomsky.cs"])
    assert res_q.claims[0].status == "not applicable" and res_q.claims[0].units == {"done": 0, "total": 0}


def _unit(score, fit, lo, hi, tests):
    return {"metrics": [{"length": n, "accuracy": score} for n in tests],
            "train_range": [{"length": n, "accuracy": fit} for n in range(lo, hi + 1)]}


@pytest.mark.parametrize("fits,expect_seed,status", [
    ((0.99, 0.89), 0, "holds"),  # seed 1 scores higher but did not fit: the fitted seed 0 is judged
    ((0.89, 0.99), 1, "holds"),
    ((0.89, 0.90), 1, "not applicable"),  # none fitted: the best run, and its fit requirement fails
])
def test_the_transformer_judged_is_its_best_fitted_run(fits, expect_seed, status):
    b = C.LEVELS["dcf"][3]["standard"]
    assert len(b.seeds) == 2
    lo, hi = b.train_lengths
    units = {f"stack_rnn/s{s}": _unit(1.0, 1.0, lo, hi, b.test_lengths) for s in b.seeds}
    for s, score, fit in zip(b.seeds, (0.52, 0.53), fits):
        units[f"transformer/s{s}"] = _unit(score, fit, lo, hi, b.test_lengths)
    claim, _ = measure_and_judge(_spec("chomsky.dcf"), Context(size="standard", units=units))
    assert claim.status == status, claim.reason
    t = claim.numbers["runs"]["transformer"]
    assert t["seed"] == expect_seed and t["best"] == pytest.approx(100 * (0.52, 0.53)[expect_seed])
    assert t["fit"] == pytest.approx(100 * fits[expect_seed]) == claim.checks[1]["measured"]


def test_the_tape_rnn_trains_every_seed_at_every_learning_rate_and_is_judged_on_its_best_run():
    """chomsky.cs at standard: the Tape-RNN's units are seeds × Budget.lrs (each at its own lr),
    the transformer's its seeds at its one rate; the verdict takes the best (seed, lr) run."""
    b = C.LEVELS["cs"][3]["standard"]
    ctx = Context(size="standard")
    keys = [u.key for u in _spec("chomsky.cs").units(ctx)]
    assert len(b.lrs) == 3 and len(set(keys)) == len(keys) == len(b.seeds) * (len(b.lrs) + 1)
    assert sum(k.startswith("tape_rnn/") for k in keys) == len(b.seeds) * len(b.lrs)
    for lr in b.lrs:  # the unit's lr reaches its RunConfig; the default is the budget's one rate
        assert C.unit_config("cs", "tape_rnn", 0, "standard", lr).lr == lr
    assert C.unit_config("cs", "transformer", 0, "standard").lr == b.lr_of("transformer")
    lo, hi = b.train_lengths
    units = {f"transformer/s{s}": _unit(0.5, 0.97, lo, hi, b.test_lengths) for s in b.seeds}
    for s in b.seeds:
        for lr in b.lrs:  # one run only extrapolates: seed 3 at the last rate
            units[f"tape_rnn/s{s}/lr{lr:g}"] = _unit(0.96 if (s, lr) == (3, b.lrs[-1]) else 0.75, 1.0, lo, hi,
                                                     b.test_lengths)
    claim, _ = measure_and_judge(_spec("chomsky.cs"), Context(size="standard", units=units))
    assert claim.status == "holds", claim.reason
    best = claim.numbers["runs"]["tape_rnn"]
    assert (best["seed"], best["lr"], best["best"]) == (3, b.lrs[-1], pytest.approx(96.0))
    assert len(best["runs"]) == len(b.seeds) * len(b.lrs) and claim.numbers["learning_rates"]["tape_rnn"] == list(b.lrs)
    units[f"tape_rnn/s3/lr{b.lrs[-1]:g}"] = units["tape_rnn/s0/lr0.001"]  # no run reaches 90 %: violated
    claim, _ = measure_and_judge(_spec("chomsky.cs"), Context(size="standard", units=units))
    assert claim.status == "violated" and claim.numbers["runs"]["tape_rnn"]["best"] == pytest.approx(75.0)
