"""The four FLaRe claims (report/flare_claims.py): at size "test" through reproduce (units into
the results store, Lemma 5 of the trained transformer kept with its unit), and their verdict
rule on made-up scores."""

from __future__ import annotations

import pytest

from expressivity.report import flare_claims as F
from expressivity.report.claims import Context, measure_and_judge
from expressivity.report.registry import all_specs

IDS = ("flare.regular", "flare.dcf", "flare.cf", "flare.cs")


def _spec(claim_id):
    return next(s for s in all_specs() if s.id == claim_id)


def test_reproduce_runs_a_claim_as_units_with_lemma5_of_the_transformer(tmp_path):
    from expressivity.report.reproduce import reproduce
    from expressivity.runs.store import Store

    db = tmp_path / "results.sqlite"
    res = reproduce(tmp_path / "out", size="test", db=db, only=["flare.regular"], workers=2)
    (claim,) = res.claims
    assert claim.units == {"done": 3, "total": 3} and claim.status == "not applicable"  # 3 steps: nothing fits
    assert "FAILED requirement parity: best RNN/LSTM on its training lengths 0–8" in claim.reason
    h = claim.numbers["lemma5"]["flare.parity"]
    assert h["n"] == 12 and h["applicable"] and h["output_bound"] >= h["output_change"] >= 0
    assert "Hahn's Lemma 5 for the trained transformer at n = 12" in claim.measured
    with Store(db, read_only=True) as s:
        runs = s.runs()
    assert {__import__("json").loads(r["config"])["model"] for r in runs} == set(F.MODELS)


def _fake(scores: dict, fits: dict | None = None):
    def runs(ctx, task, model, b):
        s = scores[task][model]
        f = (fits or {}).get(task, {}).get(model, 1.0)
        return [{"seed": 0, "score": s, "fit": f, "accuracy": {20: s, 32: s}, "lemma5": None}]
    return runs


@pytest.mark.parametrize("scores,status", [
    ({"rnn": 1.0, "lstm": 0.7, "transformer": 0.55}, "holds"),
    ({"rnn": 0.9, "lstm": 0.7, "transformer": 0.55}, "violated"),  # the regular language not learned
    ({"rnn": 1.0, "lstm": 0.7, "transformer": 1.0}, "holds"),  # the transformer as good: still no better
    ({"rnn": 0.6, "lstm": 0.96, "transformer": 1.0}, "holds"),  # 0.04 above: within the slack
    ({"rnn": 0.6, "lstm": 0.90, "transformer": 0.97}, "violated"),  # better than the RNN/LSTM
])
def test_regular_verdict(monkeypatch, scores, status):
    monkeypatch.setattr(F, "_runs", _fake({"flare.parity": scores}))
    claim, fig = measure_and_judge(_spec("flare.regular"), Context(size="standard"))
    assert claim.status == status, claim.reason
    assert fig[:4] == b"\x89PNG" and claim.numbers["score"]["flare.parity"] == scores


@pytest.mark.parametrize("majority,reversal,fit,status", [
    (0.99, 0.7, 1.0, "holds"),
    (0.99, 0.96, 1.0, "violated"),  # marked reversal generalized: against their Figure 1
    (0.80, 0.7, 1.0, "violated"),  # Majority not learned
    (0.99, 0.7, 0.8, "not applicable"),  # nothing fits marked reversal's training lengths
])
def test_dcf_verdict_needs_fitted_models(monkeypatch, majority, reversal, fit, status):
    scores = {"flare.majority": {"rnn": 0.6, "lstm": majority, "transformer": 0.9},
              "flare.marked_reversal": {"rnn": 0.6, "lstm": reversal, "transformer": 0.6}}
    fits = {"flare.marked_reversal": {"rnn": fit, "lstm": fit, "transformer": fit}}
    monkeypatch.setattr(F, "_runs", _fake(scores, fits))
    claim, _ = measure_and_judge(_spec("flare.dcf"), Context(size="standard"))
    assert claim.status == status, claim.reason
    required = [c for c in claim.checks if c.get("requires")]
    assert len(required) == 2 and all("0–16" in c["what"] for c in required)


@pytest.mark.parametrize("claim_id,task", [("flare.cf", "flare.unmarked_reversal"), ("flare.cs", "flare.marked_copy")])
def test_non_regular_levels_hold_when_nothing_generalizes(monkeypatch, claim_id, task):
    monkeypatch.setattr(F, "_runs", _fake({task: {"rnn": 0.7, "lstm": 0.8, "transformer": 0.6}}))
    assert measure_and_judge(_spec(claim_id), Context(size="quick"))[0].status == "holds"
    monkeypatch.setattr(F, "_runs", _fake({task: {"rnn": 0.7, "lstm": 0.8, "transformer": 0.9}}))
    claim = measure_and_judge(_spec(claim_id), Context(size="quick"))[0]
    assert claim.status == "violated" and "transformer − best RNN/LSTM" in claim.reason


def test_budgets_test_beyond_training_on_lengths_every_language_has():
    from expressivity import languages as L

    for size, b in F._BUDGETS.items():
        assert min(b.test_lengths) > b.train_lengths[1], size
        for tasks, _ in F.LEVELS.values():
            for t in tasks:
                task = L.get_task(t, "recognition")
                assert task.valid_lengths(b.test_lengths), (size, t)
    assert F._BUDGETS["full"].train_lengths == (0, 40) and max(F._BUDGETS["full"].test_lengths) <= 500
    assert {s.id for s in all_specs()} >= set(IDS)
