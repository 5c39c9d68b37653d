"""RunConfig and the training loop on the new task kinds (classification, transduction) and the
new languages: tiny runs that must not crash, and clear refusals where a kind cannot train."""

from __future__ import annotations

import pytest

from expressivity.languages import REGISTRY, kinds_of
from expressivity.train import MODELS, RunConfig, train_run


def tiny(**kw) -> RunConfig:
    base = dict(model="lstm", layers=1, heads=2, d_model=8, train_lengths=(3, 6), test_lengths=(7, 8, 9),
                steps=3, batch_size=4, eval_batch=4)
    base.update(kw)
    return RunConfig(**base)


@pytest.mark.parametrize("task,kind,model", [
    ("modular_arithmetic", "classification", "lstm"),
    ("cycle_navigation", "classification", "transformer"),
    ("binary_addition", "transduction", "lstm"),
    ("duplicate_string", "transduction", "lstm"),
    ("tomita3", "recognition", "transformer"),
    ("shuffle_dyck", "next_symbol", "lstm"),
])
def test_tiny_runs_on_new_tasks(task, kind, model):
    result = train_run(tiny(task=task, kind=kind, model=model))
    assert result.metrics and all(0.0 <= m["accuracy"] <= 1.0 for m in result.metrics)
    assert all(m["ce_bits"] >= 0 for m in result.metrics)


def test_run_config_refuses_what_cannot_train():
    with pytest.raises(ValueError, match=r"reverse_string supports kinds \('transduction',\), not 'recognition'"):
        tiny(task="reverse_string", kind="recognition")
    # a transformer's n_ctx now covers the output placeholders (train/models/transformer.py)
    assert tiny(task="reverse_string", kind="transduction", model="transformer").model == "transformer"
    with pytest.raises(ValueError, match=r"unknown RunConfig.kind .translation.; choose one of: recognition"):
        tiny(task="parity_check", kind="translation")
    with pytest.raises(ValueError, match="no valid length"):
        tiny(task="modular_arithmetic", kind="classification", train_lengths=(4, 4))


@pytest.mark.parametrize("task", sorted(REGISTRY))
def test_every_task_trains_and_evaluates_under_its_own_kind(task):
    """Every registered task, without a kind given (RunConfig.from_dict: a function task's own
    kind, recognition for a language), through one step and an evaluation."""
    cfg = RunConfig.from_dict(dict(task=task, model="lstm", layers=1, d_model=8, train_lengths=(2, 12),
                                   test_lengths=(13, 14, 15, 16), steps=1, batch_size=4, eval_batch=4))
    assert cfg.kind == kinds_of(task)[0]
    result = train_run(cfg)
    assert result.metrics and all(0.0 <= m["accuracy"] <= 1.0 for m in result.metrics)


@pytest.mark.parametrize("model", MODELS)
def test_every_model_trains_on_a_transduction_task(model):
    result = train_run(tiny(task="reverse_string", kind="transduction", model=model, steps=1))
    assert [m["length"] for m in result.metrics] == [7, 8, 9]
