"""Protocol presets as published: Delétang et al.'s training and metric, best of seeds;
Bhattamishra et al.'s length bins."""

from __future__ import annotations

import math

import pytest
import torch

from expressivity.train import (
    RunResult,
    batch_metrics,
    best_of_seeds,
    preset,
    protocol_score,
    seed_configs,
    train_run,
    transformer_config,
)


def test_deletang_preset_follows_their_training():
    cfg = preset("deletang", "parity")
    assert cfg.train_lengths == (1, 40) and cfg.test_lengths == tuple(range(41, 501))
    assert cfg.batch_size == 128 and cfg.lr == 1e-3 and cfg.accuracy == "per_position"
    assert preset("deletang", "parity", batch_size=8).batch_size == 8  # still overridable


def test_deletang_accuracy_is_argmax_per_token():
    """A transduction position is right iff argmax q = target, even when q(target) < ½."""
    labels = torch.tensor([[0, 1, 2, 0], [2, 2, 1, 0]])  # (B, T) targets, C = 3
    target = torch.nn.functional.one_hot(labels, 3).float()
    mask = torch.tensor([[False, True, True, True], [False, True, True, True]])  # position 0 is the input
    batch = {"output": target, "mask": mask}
    q = torch.where(target > 0, 0.4, 0.3)  # argmax right everywhere, q(target) = 0.4 < ½
    assert batch_metrics(q.log(), batch, "transduction", "per_position")["accuracy"] == 1.0
    assert batch_metrics(q.log(), batch, "classification", "per_position")["accuracy"] == 1.0
    q[0, 1] = torch.tensor([0.5, 0.2, 0.3])  # string 0: one of 3 scored positions wrong
    m = batch_metrics(q.log(), batch, "transduction", "per_position")
    assert m["accuracy"] == pytest.approx((2 / 3 + 1) / 2)
    assert batch_metrics(q.log(), batch, "transduction", "per_string")["accuracy"] == 0.5
    q[0, 0] = torch.tensor([0.0, 1.0, 0.0])  # unscored positions do not count
    assert batch_metrics(q.clamp_min(1e-9).log(), batch, "transduction", "per_position")["accuracy"] == m["accuracy"]


def test_a_transformer_trains_on_transduction_past_the_input_length():
    """n_ctx covers the whole token sequence (input, EOS, output placeholders)."""
    cfg = preset("quick", "reverse_string", kind="transduction", positional="learned", steps=2,
                 train_lengths=(2, 4), test_lengths=(5, 6))
    result = train_run(cfg)
    assert [m["length"] for m in result.metrics] == [5, 6]
    assert transformer_config(cfg, 6, 3).n_ctx >= cfg.make_task().n_tokens(6)


def test_best_of_seeds_picks_the_best_score_and_refuses_mixed_runs():
    cfgs = seed_configs(preset("quick", "parity"), 3)
    assert [c.seed for c in cfgs] == [0, 1, 2] and len({c.run_id for c in cfgs}) == 3

    def result(cfg, accs):
        rows = tuple({"accuracy": a, "length": 14 + 2 * i} for i, a in enumerate(accs))
        return RunResult(cfg, rows, 0.0, 0.0, 0)

    runs = [result(cfgs[0], [0.5, 0.6]), result(cfgs[1], [0.9, 1.0]), result(cfgs[2], [])]
    best = best_of_seeds(runs)
    assert best.config.seed == 1 and best.score == pytest.approx(0.95)
    assert math.isnan(runs[2].score)
    with pytest.raises(ValueError, match="differ in more than the seed"):
        best_of_seeds([runs[0], result(preset("quick", "dyck"), [1.0])])
    with pytest.raises(ValueError, match="at least one"):
        best_of_seeds([])


def test_bhattamishra_bins():
    cfg = preset("bhattamishra", "dyck")
    assert cfg.train_lengths == (2, 50) and cfg.accuracy == "per_string"
    # their character-prediction task: next-symbol by default for a language, a function task keeps its kind
    assert cfg.kind == "next_symbol" and preset("bhattamishra", "tomita3").kind == "next_symbol"
    assert preset("bhattamishra", "reverse_string").kind == "transduction"
    assert preset("bhattamishra", "parity", kind="recognition").kind == "recognition"  # still overridable
    rows = [{"length": n, "accuracy": 1.0 if n <= 100 else 0.0} for n in range(52, 151, 2)]
    score = protocol_score(rows, "bhattamishra")
    assert score["accuracy_51_100"] == 1.0 and score["accuracy_101_150"] == 0.0
    assert score["mean_accuracy"] == pytest.approx(25 / 50)
