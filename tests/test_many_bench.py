"""bench/many_bench.py, bench/chomsky_peer.py and bench/peer_rounds.py without running a bench: the
JAX column is skipped without a checkout, bad arguments are refused with the flag named, the FLOP
count is the formula, the rounds' best-of table is the maximum per column."""

from __future__ import annotations

import sys
from dataclasses import asdict
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))
import chomsky_peer  # noqa: E402
import many_bench  # noqa: E402
import peer_rounds  # noqa: E402


@pytest.mark.parametrize("where", [None, "", "no/such/checkout"])
def test_no_checkout_skips_the_jax_column(where, tmp_path, capsys):
    chomsky = None if where is None else (where and str(tmp_path / where))
    assert many_bench.peer_checkout(chomsky, "/no/such/python") is None  # the python is not even looked at
    assert "JAX column is skipped" in capsys.readouterr().err


def test_a_checkout_needs_a_jax_python(tmp_path):
    with pytest.raises(ValueError, match="--chomsky .* not a neural_networks_chomsky_hierarchy checkout"):
        many_bench.peer_checkout(str(tmp_path), str(tmp_path / "python"))
    (tmp_path / "experiments").mkdir()
    (tmp_path / "experiments" / "training.py").write_text("")
    with pytest.raises(ValueError, match="--jax-python"):
        many_bench.peer_checkout(str(tmp_path), str(tmp_path / "python"))
    python = tmp_path / "python"
    python.write_text("")
    assert many_bench.peer_checkout(str(tmp_path), str(python)) == str(tmp_path)


@pytest.mark.parametrize("argv, flag", [
    (["--runs", "0,8"], "--runs"), (["--runs", "1,x"], "--runs"), (["--runs", ""], "--runs"),
    (["--models", "transformer,gru"], "--models"), (["--steps", "2"], "--steps"),
    (["--baseline-runs", "0"], "--baseline-runs"),
    (["--chomsky", "."], "--chomsky"),
])
def test_bad_arguments_are_refused_before_any_training(argv, flag, capsys):
    extra = ["--jax-python", "/no/such/python"] if "--chomsky" in argv else []
    with pytest.raises(SystemExit) as e:
        many_bench.main(argv + extra)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert flag in err and "Traceback" not in err


def test_parse_runs():
    assert many_bench.parse_runs("1, 8,32") == [1, 8, 32]


def test_rnn_flops_are_six_per_weight_per_token():
    # one Elman layer, d = 16: W_ih (d×d), W_hh (d×d), the read-out (2×d); the embedding is a
    # lookup. Parity check at lengths 2–12 (every length valid) has T = n + 1 tokens, mean 8.
    cfg = many_bench.peer_config("rnn", "small", 3, "cpu")
    d, batch = cfg.d_model, cfg.batch_size
    flops, n_params = many_bench.step_flops(cfg)
    assert (cfg.layers, cfg.train_lengths) == (1, (2, 12))
    assert flops == 6 * batch * 8 * (2 * d * d + 2 * d)
    assert n_params > 2 * d * d + 2 * d  # biases and the embedding are parameters, not FLOPs


def test_transformer_flops_count_attention_per_length_squared():
    # L blocks of d = 16: Q, K, V, O (4·d² over the heads) and the MLP (2·d·4d) = 12·d² each, the
    # read-out 2·d; tokens T = n + 1 for n in 2–12: E[T] = 8, E[T²] = (3² + … + 13²) / 11 = 74.
    cfg = many_bench.sized("transformer", "small", 3, "cpu")
    L, d, batch = cfg.layers, cfg.d_model, cfg.batch_size
    weights = 12 * L * d * d + 2 * d
    assert many_bench.step_flops(cfg)[0] == batch * (6 * weights * 8 + 12 * L * d * 74)
    wider = many_bench.replace(cfg, batch_size=2 * batch)
    assert many_bench.step_flops(wider)[0] == 2 * many_bench.step_flops(cfg)[0]


def test_step_phases_time_every_phase_of_a_step():
    ms = many_bench.step_phases(many_bench.peer_config("rnn", "small", 3, "cpu"), steps=4, warm=1)
    assert list(ms) == ["data", "loss+grad", "clip+adam"]
    assert all(isinstance(v, float) and v > 0 for v in ms.values())


def test_peer_refuses_what_is_not_its_checkout(tmp_path):
    with pytest.raises(ValueError, match="experiments/training.py"):
        chomsky_peer.import_peer(str(tmp_path))


@pytest.mark.parametrize("text", ["12", "0-4", "5-2", "a-b"])
def test_peer_lengths_must_be_a_range(text):
    with pytest.raises(Exception, match="--lengths"):
        chomsky_peer.length_range(text)
    assert chomsky_peer.length_range("2-12") == (2, 12)


def test_peer_model_sizes_follow_ours():
    class Args:
        d_model, layers, heads = 32, 3, 4
    assert chomsky_peer.model_kwargs("transformer", Args) == dict(
        embedding_dim=32, num_layers=3, num_heads=4, widening_factor=4, dropout_prob=0.0)
    assert chomsky_peer.model_kwargs("stack_lstm", Args)["hidden_size"] == 32
    assert chomsky_peer.model_kwargs("tape_rnn", Args)["memory_size"] == 40


def test_main_refuses_a_missing_jax_python(tmp_path, capsys):
    (tmp_path / "experiments").mkdir()
    (tmp_path / "experiments" / "training.py").write_text("")
    with pytest.raises(SystemExit):
        many_bench.main(["--chomsky", str(tmp_path), "--jax-python", str(tmp_path / "none")])
    assert "--jax-python" in capsys.readouterr().err.strip().splitlines()[-1]


@pytest.mark.parametrize("argv, flag", [
    (["--rounds", "0"], "--rounds"), (["--steps", "2"], "--steps"), (["--models", "rnn,gru"], "--models"),
    (["--before", "no/such/checkout"], "--before"),
])
def test_peer_rounds_refuses_bad_arguments_before_any_run(argv, flag, capsys):
    with pytest.raises(SystemExit) as e:
        peer_rounds.main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert flag in err and "Traceback" not in err


def test_peer_rounds_best_table_is_the_best_round_per_column():
    rows = [{"model": "rnn", "theirs": 100.0, "ours": 150.0}, {"model": "rnn", "theirs": 200.0, "ours": 120.0},
            {"model": "lstm", "theirs": 50.0, "ours": 40.0}]
    header, rnn, lstm = peer_rounds.best_table(rows, ["theirs", "ours"])
    assert header.split() == ["model", "theirs", "ours", "ours/theirs"]
    assert rnn.split() == ["rnn", "200.0", "150.0", "0.75"]
    assert lstm.split() == ["lstm", "50.0", "40.0", "0.80"]


def test_peer_rounds_times_a_checkout_in_a_child_python():
    fields = asdict(many_bench.peer_config("rnn", "small", 4, "cpu"))
    assert peer_rounds.ours_rate(peer_rounds.HERE, fields) > 0
    with pytest.raises(RuntimeError, match="failed"):
        peer_rounds.ours_rate(peer_rounds.HERE, fields | {"model": "gru"})
