"""Bad input for models and position encodings (see tests/_bad_input.py for the contract):
unknown names list the valid ones, and combinations that cannot work say why."""

from __future__ import annotations

import pytest
from _bad_input import Case, api_rejects, cli_rejects

from expressivity.train import RunConfig, build_model
from expressivity.transformer import TransformerConfig

TRAIN = ["train", "--task", "parity", "--steps", "1", "--train-lengths", "2-4", "--test-lengths", "6"]

CASES = [
    Case("unknown model", [*TRAIN, "--model", "gru"],
         ("model", "'gru'", "'transformer', 'rnn', 'lstm', 'stack_rnn', 'stack_lstm', 'tape_rnn'")),
    Case("model name in the wrong case", [*TRAIN, "--model", "Stack_RNN"], ("model", "stack_rnn")),
    Case("unknown encoding", [*TRAIN, "--positional", "xpos"],
         ("positional", "'xpos'", "'learned', 'sinusoidal', 'none', 'relative', 'rope', 'alibi', 'i_over_n'")),
    Case("empty encoding", [*TRAIN, "--positional", ""], ("positional", "rope")),
    Case("rope with an odd head width", [*TRAIN, "--positional", "rope", "--d-model", "6", "--heads", "2"],
         ("rope", "d_head", "even")),
    Case("unknown task lists the tasks", ["train", "--task", "reverse", "--steps", "1"],
         ("unknown language or task", "'reverse'", "reverse_string", "binary_addition", "tomita7", "anbncndn")),
    Case("a function task asked for recognition", ["train", "--task", "reverse_string", "--kind", "recognition"],
         ("reverse_string", "transduction", "not 'recognition'")),
    Case("a transduction task on a recogniser (a construction)",
         ["train", "--task", "reverse_string", "--init", "construction:parity", "--steps", "1"],
         ("construction:parity", "recognisers", "transduction")),
    Case("a classification task on a recogniser under a preset",
         ["train", "--task", "parity_check", "--preset", "deletang", "--init", "construction:parity"],
         ("construction:parity", "recognisers", "classification")),
    Case("i/n for next-symbol prediction",
         ["train", "--task", "dyck", "--kind", "next_symbol", "--steps", "1", "--train-lengths", "2-4",
          "--test-lengths", "6", "--positional", "i_over_n"], ("positional", "i_over_n", "next-symbol")),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_cli_bad_input(case, tmp_path, monkeypatch):
    cli_rejects(case, tmp_path, monkeypatch)


BASE = dict(task="parity", train_lengths=(2, 4), test_lengths=(6,))


def test_api_unknown_model_lists_the_models():
    api_rejects(RunConfig, **BASE, model="gru", mentions=("RunConfig.model", "stack_rnn", "stack_lstm", "tape_rnn"))
    api_rejects(RunConfig, **BASE, model=None, mentions=("RunConfig.model", "rnn"))


def test_api_unknown_encoding_lists_the_encodings():
    api_rejects(RunConfig, **BASE, positional="xpos", mentions=("RunConfig.positional", "alibi", "i_over_n"))
    api_rejects(TransformerConfig, d_model=4, n_layers=1, n_heads=1, d_head=4, d_mlp=0, d_vocab=3,
                positional="t5", mentions=("positional", "relative", "rope"))
    api_rejects(TransformerConfig, d_model=4, n_layers=1, n_heads=1, d_head=3, d_mlp=0, d_vocab=3,
                positional="rope", mentions=("d_head", "even"))


def test_api_build_model_refuses_a_config_it_does_not_know():
    cfg = RunConfig(**BASE)
    object.__setattr__(cfg, "model", "gru")  # past validation, as a hand-edited config could be
    api_rejects(build_model, cfg, 6, 2, mentions=("model", "stack_rnn"))


def test_api_transduction_on_a_recogniser_and_unknown_task():
    api_rejects(RunConfig, task="reverse_string", kind="transduction", init="construction:first",
                mentions=("construction:first", "recognisers", "transduction"))
    api_rejects(RunConfig.from_dict, {"task": "duplicate_string", "init": "construction:parity"},
                mentions=("recognisers", "transduction"))
    api_rejects(RunConfig, task="reverse", mentions=("unknown language or task", "reverse_string", "tomita1"))
