"""Training harness: learning, metrics against closed forms, determinism, checkpoints, presets."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from expressivity import languages as L
from expressivity.train import (
    RunConfig,
    batch_metrics,
    build_model,
    parse_lengths,
    preset,
    train_run,
    transformer_config,
)
from expressivity.transformer import Transformer, load_transformer


def tiny(**kw) -> RunConfig:
    base = dict(task="parity", model="transformer", layers=1, heads=2, d_model=16, train_lengths=(2, 8),
                test_lengths=(10, 12), steps=12, batch_size=8, eval_batch=8, checkpoint_every=5)
    base.update(kw)
    return RunConfig(**base)


def test_lstm_learns_parity_at_short_lengths():
    cfg = RunConfig(task="parity", model="lstm", layers=1, d_model=32, train_lengths=(1, 10),
                    test_lengths=tuple(range(1, 11)), steps=200, lr=1e-2, batch_size=64, eval_batch=64, seed=0)
    result = train_run(cfg)
    assert min(m["accuracy"] for m in result.metrics) >= 0.95
    assert [m["length"] for m in result.metrics] == list(range(1, 11))


def test_metrics_of_the_optimal_and_uniform_predictor():
    task = L.get_task("dyck", "next_symbol", k=2)
    batch = task.sample_batch(np.random.default_rng(0), 16, 10)
    target = batch["output"]
    optimal = torch.log(target.clamp_min(1e-30))
    m = batch_metrics(optimal, batch, "next_symbol")
    assert m["accuracy"] == 1.0 and abs(m["excess_bits"]) < 1e-6
    assert abs(m["ce_bits"] - m["optimal_bits"]) < 1e-6
    # entropy by hand: 1.5 bits at depth 0 (¼, ¼, ½) and at depth > 0 (¼, ¼, ½)
    assert abs(m["optimal_bits"] - 1.5) < 1e-9
    uniform = batch_metrics(torch.zeros_like(target), batch, "next_symbol")
    assert abs(uniform["ce_bits"] - math.log2(5)) < 1e-9 and uniform["accuracy"] == 0.0
    rec = L.get_task("parity", "recognition").sample_batch(np.random.default_rng(1), 8, 5)
    chance = batch_metrics(torch.zeros(8, 6, 2), rec, "recognition")
    assert abs(chance["ce_bits"] - 1.0) < 1e-12 and chance["optimal_bits"] == 0.0


def test_runs_are_deterministic_given_the_seed():
    a, b = train_run(tiny(seed=3)), train_run(tiny(seed=3))
    c = train_run(tiny(seed=4))
    assert a.metrics == b.metrics and a.final_loss == b.final_loss
    assert a.final_loss != c.final_loss


@pytest.mark.parametrize("model", ["transformer", "lstm"])
def test_checkpoint_resume_equals_uninterrupted(tmp_path, model):
    cfg = tiny(model=model, kind="next_symbol", task="dyck", train_lengths=(2, 8), test_lengths=(10,))
    whole = train_run(cfg, tmp_path / "whole")

    class Stop(Exception):
        pass

    def crash(step, loss):
        if step == 7:  # after the checkpoint at step 5
            raise Stop

    with pytest.raises(Stop):
        train_run(cfg, tmp_path / "resumed", on_step=crash)
    resumed = train_run(cfg, tmp_path / "resumed")
    assert resumed.resumed_from == 5
    assert resumed.metrics == whole.metrics
    if model == "transformer":
        assert isinstance(load_transformer(tmp_path / "whole" / "model.safetensors"), Transformer)


def test_transformer_settings_follow_the_task():
    cfg = tiny(kind="next_symbol", heads=4, d_model=32, log_length_scaling=True, positional="learned")
    tc = transformer_config(cfg, 6, 3)
    assert tc.causal and tc.attention == "softmax" and tc.lam == pytest.approx(1 / math.sqrt(8))
    assert tc.log_length_scaling and tc.n_ctx >= 12
    assert not transformer_config(tiny(), 6, 2).causal
    assert isinstance(build_model(cfg, 6, 3), Transformer)


def test_presets():
    d = preset("deletang", "parity")
    assert d.train_lengths == (1, 40) and d.test_lengths == tuple(range(41, 501))
    b = preset("bhattamishra", "dyck", kind="next_symbol")
    assert b.train_lengths == (2, 50) and b.test_lengths == tuple(range(51, 151)) and b.accuracy == "per_string"
    q = preset("quick", "dyck", steps=5)
    assert q.steps == 5
    with pytest.raises(ValueError, match="unknown preset"):
        preset("chomsky", "parity")


def test_bad_configs():
    with pytest.raises(ValueError, match="unknown language"):
        tiny(task="palindrome")
    with pytest.raises(ValueError, match="test_lengths holds no valid length"):
        tiny(task="dyck", kind="next_symbol", test_lengths=(11, 13))
    with pytest.raises(ValueError, match="d_model"):
        tiny(d_model=15)
    with pytest.raises(ValueError, match="empty"):
        parse_lengths("40-1")
    assert parse_lengths("51-53,60") == (51, 52, 53, 60)


def test_cli_train_records_run_and_rejects_bad_input(tmp_path):
    from typer.testing import CliRunner

    from expressivity.cli import app
    from expressivity.train import ResultStore

    db = tmp_path / "r.sqlite"
    args = ["train", "--task", "dyck", "--kind", "next_symbol", "--param", "k=2", "--model", "lstm",
            "--layers", "1", "--d-model", "8", "--train-lengths", "2-6", "--test-lengths", "8-10",
            "--steps", "5", "--seed", "1", "--db", str(db), "--out", str(tmp_path / "run")]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    rows = ResultStore(db).rows()
    assert [r["length"] for r in rows] == [8, 10]  # 9 is odd: no Dyck strings
    assert rows[0]["config"]["task_params"] == {"k": 2}
    assert (tmp_path / "run" / "model.safetensors").is_file()
    bad = [
        (["--task", "palindrome"], "unknown language"),
        (["--task", "parity", "--preset", "chomsky"], "'chomsky' is not one of 'deletang'"),
        (["--task", "parity", "--test-lengths", "50-41"], "is empty"),
        (["--task", "dyck", "--kind", "next_symbol", "--test-lengths", "41"], "no valid length"),
    ]
    for extra, msg in bad:
        res = CliRunner().invoke(app, ["train", *extra, "--db", str(db)])
        assert res.exit_code == 2 and msg in res.output, (extra, res.output)
    foreign = tmp_path / "foreign.sqlite"
    foreign.write_bytes(b"SQLite format 3\x00" + b"\x00" * 200)
    res = CliRunner().invoke(app, ["train", "--task", "parity", "--db", str(foreign)])
    assert res.exit_code == 2 and "not an expressivity results database" in res.output


def test_fit_evaluates_the_trained_model_on_every_training_length():
    cfg = tiny(task="dyck", kind="next_symbol", train_lengths=(2, 8), test_lengths=(10,), steps=3)
    fitted, plain = train_run(cfg, fit=True), train_run(cfg)
    rows = fitted.extra["train_range"]
    assert [r["length"] for r in rows] == [2, 4, 6, 8]  # the valid (even) Dyck lengths of 2–8
    assert all(0 <= r["accuracy"] <= 1 for r in rows)
    assert plain.extra == {} and fitted.metrics == plain.metrics  # the test metrics are not touched


@pytest.mark.parametrize("model,own", [("stack_rnn", 30), ("stack_lstm", 30), ("tape_rnn", 40)])
def test_memory_size_sets_the_cells_and_keeps_old_run_ids(model, own):
    cfg = tiny(task="reverse_string", kind="transduction", model=model, layers=1)
    sized = RunConfig.from_dict({**cfg.to_dict(), "memory_size": 77})
    assert build_model(cfg, 5, 3).K == own and build_model(sized, 5, 3).K == 77
    assert "memory_size" not in cfg.to_dict() and sized.to_dict()["memory_size"] == 77
    assert sized.run_id != cfg.run_id
    with pytest.raises(ValueError, match="memory_size sizes the stack or tape"):
        tiny(memory_size=5)  # a transformer has no memory
    with pytest.raises(ValueError, match="memory_size"):
        tiny(task="reverse_string", kind="transduction", model=model, memory_size=-1)


@pytest.mark.parametrize("lengths", [[2, 3, 5, 8, 13], [7], list(range(1, 41))])
def test_draw_length_is_the_stream_of_rng_choice(lengths):
    from expressivity.train.loop import draw_length

    ours, theirs = np.random.default_rng(11), np.random.default_rng(11)
    drawn = [draw_length(ours, lengths) for _ in range(300)]
    assert drawn == [int(theirs.choice(lengths)) for _ in range(300)]
    assert ours.bit_generator.state == theirs.bit_generator.state  # the batches after it too
    assert set(drawn) <= set(lengths)
