"""RunConfig and the training loop on the new task kinds (classification, transduction) and the
new languages: tiny runs that must not crash, and clear refusals where a kind cannot train."""

from __future__ import annotations

import pytest

from expressivity.train import RunConfig, train_run


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
