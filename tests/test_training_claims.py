"""The verdict rule of train.parity and train.dyck2 (report/training_claims.py) on made-up unit
results: a transformer that "fails to extrapolate" is judged only if it fitted its training range."""

from __future__ import annotations

import math

import pytest

from expressivity.report import training_claims as T
from expressivity.report.claims import Context, measure_and_judge
from expressivity.report.registry import all_specs


def _spec(claim_id):
    return next(s for s in all_specs() if s.id == claim_id)


def _units(task, size, acc, fit):
    """ctx.units as reproduce passes them: per model × seed the metrics on the test lengths
    (accuracy ``acc[model]`` everywhere) and on fresh strings of the training lengths (``fit``;
    None: not evaluated, as a unit stored before fits were)."""
    (lo, hi), tests, _steps, seeds, _ = T._SIZES[task][size]
    units = {}
    for model in T._MODELS:
        for seed in seeds:
            value = {"metrics": [{"length": n, "accuracy": acc[model]} for n in tests]}
            if fit[model] is not None:
                value["train_range"] = [{"length": n, "accuracy": fit[model]} for n in range(lo, hi + 1)]
            units[f"{model}/s{seed}"] = value
    return units


@pytest.mark.parametrize("claim_id,task,fails", [("train.parity", "parity", 0.5), ("train.dyck2", "dyck", 0.5)])
@pytest.mark.parametrize("t_fit,status", [
    (0.6, "not applicable"),  # never learned its training lengths: its failure beyond them says nothing
    (0.949, "not applicable"),
    (None, "not applicable"),  # fit not evaluated (NaN)
    (0.96, "holds"),
    (1.0, "holds"),
])
def test_a_transformer_failure_is_judged_only_when_it_fits(claim_id, task, fails, t_fit, status):
    ctx = Context(size="standard", units=_units(task, "standard", {"transformer": fails, "lstm": 1.0},
                                                {"transformer": t_fit, "lstm": 1.0}))
    claim, fig = measure_and_judge(_spec(claim_id), ctx)
    assert claim.status == status, claim.reason
    req = [c for c in claim.checks if c.get("requires")]
    assert len(req) == 1 and req[0]["bound"] == T.FIT
    measured = req[0]["measured"]
    assert (isinstance(measured, str) and t_fit is None) or measured == pytest.approx(t_fit)
    if status == "not applicable":
        assert "FAILED requirement" in claim.reason and "training lengths" in claim.reason
    fit = claim.numbers["fit"]["transformer"]
    assert (t_fit is None and math.isnan(float(fit))) or fit == pytest.approx(t_fit)
    assert fig[:4] == b"\x89PNG"


@pytest.mark.parametrize("claim_id,task", [("train.parity", "parity"), ("train.dyck2", "dyck")])
def test_a_fitted_transformer_that_extrapolates_violates_the_claim(claim_id, task):
    ctx = Context(size="quick", units=_units(task, "quick", {"transformer": 0.97, "lstm": 1.0},
                                             {"transformer": 1.0, "lstm": 1.0}))
    claim, _ = measure_and_judge(_spec(claim_id), ctx)
    assert claim.status == "violated" and "FAILED transformer mean accuracy" in claim.reason
    assert "FAILED requirement" not in claim.reason


def test_the_lstm_side_of_parity_is_judged_on_its_own_check():
    ctx = Context(size="quick", units=_units("parity", "quick", {"transformer": 0.5, "lstm": 0.6},
                                             {"transformer": 1.0, "lstm": 0.6}))
    claim, _ = measure_and_judge(_spec("train.parity"), ctx)
    assert claim.status == "violated" and "FAILED LSTM mean accuracy" in claim.reason


def test_the_transformer_is_judged_on_its_seeds_that_fit():
    """Seeds that did not fit their training lengths are left out of the transformer's verdict
    (standard: 3 seeds); the claim is judged on the others, and says how many."""
    (lo, hi), tests, _steps, seeds, _ = T._SIZES["parity"]["standard"]
    assert len(seeds) == 3
    units = _units("parity", "standard", {"transformer": 0.5, "lstm": 1.0}, {"transformer": 1.0, "lstm": 1.0})
    # seed 2 did not fit, and its accuracy beyond the range (0.9) would have broken the bound if counted
    units["transformer/s2"] = {"metrics": [{"length": n, "accuracy": 0.9} for n in tests],
                               "train_range": [{"length": n, "accuracy": 0.8} for n in range(lo, hi + 1)]}
    units["transformer/s1"]["train_range"] = [{"length": n, "accuracy": 0.97} for n in range(lo, hi + 1)]
    claim, _ = measure_and_judge(_spec("train.parity"), Context(size="standard", units=units))
    assert claim.status == "holds", claim.reason
    assert claim.numbers["judged_seeds"] == [0, 1] and claim.numbers["mean"]["transformer"] == pytest.approx(0.5)
    assert claim.numbers["fit"]["transformer"] == pytest.approx(0.985) and "2 of 3 transformer seeds fit" in claim.measured
    assert claim.numbers["fit_by_seed"]["transformer"]["2"] == pytest.approx(0.8)
    # with no seed fitted: all seeds, their mean fit, and not applicable
    for s in seeds:
        units[f"transformer/s{s}"]["train_range"] = [{"length": n, "accuracy": 0.9} for n in range(lo, hi + 1)]
    claim, _ = measure_and_judge(_spec("train.parity"), Context(size="standard", units=units))
    assert claim.status == "not applicable" and claim.numbers["judged_seeds"] == [0, 1, 2]
    assert "FAILED requirement" in claim.reason and claim.numbers["fit"]["transformer"] == pytest.approx(0.9)


@pytest.mark.parametrize("claim_id,task", [("train.parity", "parity"), ("train.dyck2", "dyck")])
def test_quick_judges_two_seeds_and_names_each_seeds_score(claim_id, task):
    """At quick the transformer trains two seeds and the claim is judged on their mean; the
    measured text names each seed's score, so a mean under the bound cannot hide a seed that
    extrapolates (0.85 and 0.5: mean 0.675, under both bounds)."""
    (_lo, hi), tests, _steps, seeds, _ = T._SIZES[task]["quick"]
    assert seeds == (0, 1)
    units = _units(task, "quick", {"transformer": 0.5, "lstm": 1.0}, {"transformer": 1.0, "lstm": 1.0})
    units["transformer/s0"]["metrics"] = [{"length": n, "accuracy": 0.85 if n > hi else 1.0} for n in tests]
    claim, _ = measure_and_judge(_spec(claim_id), Context(size="quick", units=units))
    assert "(seeds 0: 0.85, 1: 0.50)" in claim.measured, claim.measured
    assert claim.status == "holds", claim.reason
    # one seed alone carries no per-seed text
    one = Context(size="test", units=_units(task, "test", {"transformer": 0.5, "lstm": 1.0},
                                            {"transformer": 1.0, "lstm": 1.0}))
    assert "(seeds" not in measure_and_judge(_spec(claim_id), one)[0].measured
