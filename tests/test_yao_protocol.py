"""Yao et al. (2021)'s Dyck protocol: the length windows of Hewitt et al. (2020)'s data for
Dyck-(k, D), and closing-bracket accuracy binned by the distance to the matching open
bracket — the distances checked against a slow stack on every short string."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from _dyck_reference import balanced_words
from hypothesis import given, settings
from hypothesis import strategies as st

from expressivity import languages as L
from expressivity.languages.dyck import match_distance
from expressivity.train import ResultStore, RunConfig, preset, protocol_score, train_run
from expressivity.train.bracket_distance import P_THRESHOLD, closing_bracket_metrics, distance_bin


def slow_distances(ids: list[int]) -> list[int]:
    """Reference: a Python list as the stack of open positions; a close pops the top."""
    stack: list[int] = []
    out = []
    for j, a in enumerate(ids):
        if a % 2 == 0:
            stack.append(j)
            out.append(0)
        elif stack:
            out.append(j - stack.pop())
        else:
            out.append(0)
    return out


@pytest.mark.parametrize("n", range(0, 9))
def test_match_distance_on_every_string_up_to_length_8(n):
    """Every string over ()[] (4^n of them), members or not."""
    ids = np.array(list(itertools.product(range(4), repeat=n)), dtype=np.int64).reshape(4**n, n)
    got = match_distance(ids)
    assert got.shape == ids.shape
    for row, d in zip(ids, got):
        assert list(d) == slow_distances(list(row))


def test_match_distance_on_every_dyck_2_word_up_to_length_12():
    alphabet = "".join(L.PAIRS[:2])
    for n in range(0, 13, 2):
        words = balanced_words(2, n, n)
        ids = np.array([[alphabet.index(c) for c in w] for w in words], dtype=np.int64).reshape(len(words), n)
        for row, d in zip(ids, match_distance(ids)):
            ref = slow_distances(list(row))
            assert list(d) == ref
            # a matched pair encloses a balanced word, so every distance is odd
            assert all(x % 2 == 1 for x, a in zip(ref, row) if a % 2 == 1)


@settings(max_examples=60, deadline=None)
@given(k=st.sampled_from([8, 32, 128]), D=st.integers(1, 6), n=st.integers(1, 40), seed=st.integers(0, 2**31))
def test_match_distance_on_sampled_dyck_k_d(k, D, n, seed):
    lang = L.get("dyck", k=k, max_depth=D)
    n = 2 * n
    ids = lang.sample_ids(np.random.default_rng(seed), 4, n, True)
    for row, d in zip(ids, match_distance(ids)):
        assert list(d) == slow_distances(list(row))


def test_match_distance_example_and_bad_shape():
    alphabet = "".join(L.PAIRS[:2])
    ids = np.array([[alphabet.index(c) for c in "([]())"]])
    assert match_distance(ids).tolist() == [[0, 0, 1, 0, 1, 5]]
    with pytest.raises(ValueError, match="shape"):
        match_distance(np.zeros(3, dtype=np.int64))


def slow_close_metrics(logits: torch.Tensor, ids: np.ndarray) -> dict[tuple[int, int], list[int]]:
    """Reference per bin: [right, count], string by string, position by position."""
    q = torch.softmax(logits.double(), -1).numpy()
    C = q.shape[-1]
    out: dict[tuple[int, int], list[int]] = {}
    for b, row in enumerate(ids):
        for j, d in enumerate(slow_distances(list(row))):
            if d == 0:
                continue
            closes = sum(q[b, j, c] for c in range(1, C - 1, 2))
            right = q[b, j, row[j]] / closes > P_THRESHOLD
            cell = out.setdefault(distance_bin(d), [0, 0])
            cell[0] += int(right)
            cell[1] += 1
    return out


@pytest.mark.parametrize("k", [2, 8])
def test_closing_bracket_metrics_against_a_slow_reference(k):
    task = L.get_task("dyck", "next_symbol", k=k, max_depth=4)
    rng = np.random.default_rng(k)
    batch = task.sample_batch(rng, 16, 60)
    ids = batch["input"][:, 1:].numpy() - 4
    g = torch.Generator().manual_seed(k)
    logits = 3 * torch.randn(batch["output"].shape, generator=g, dtype=torch.float64)
    # make about half the closes confidently right so both outcomes occur
    target = torch.from_numpy(ids)
    boost = torch.zeros_like(logits[:, :60])
    boost.scatter_(2, target[:, :, None], 6.0 * (torch.rand(target.shape, generator=g) < 0.5)[:, :, None].double())
    logits[:, :60] += boost
    m = closing_bracket_metrics(logits, batch)
    ref = slow_close_metrics(logits, ids)
    got = {(int(key.split("_")[2]), int(key.split("_")[3])): [m[key], m[key.replace("right", "count")]]
           for key in m if key.startswith("close_right_")}
    assert got == {b: v for b, v in ref.items()}
    right, count = sum(v[0] for v in ref.values()), sum(v[1] for v in ref.values())
    assert 0 < right < count and m["close_accuracy"] == pytest.approx(right / count)


def test_the_optimal_predictor_is_always_right_and_the_uniform_never():
    task = L.get_task("dyck", "next_symbol", k=8, max_depth=3)
    batch = task.sample_batch(np.random.default_rng(0), 8, 84)
    optimal = batch["output"].double().clamp_min(1e-300).log()
    m = closing_bracket_metrics(optimal, batch)
    assert m["close_accuracy"] == 1.0
    uniform = closing_bracket_metrics(torch.zeros_like(optimal), batch)  # ratio 1/8 < 0.8
    assert uniform["close_accuracy"] == 0.0
    counts = sum(v for key, v in m.items() if key.startswith("close_count_"))
    assert counts == 8 * 42  # every closing bracket of every string is scored once


def test_yao_preset_windows_and_task():
    cfg = preset("yao", "dyck")
    assert cfg.kind == "next_symbol" and cfg.task_params == {"k": 8, "max_depth": 3}
    assert cfg.train_lengths == (1, 84) and cfg.test_lengths == tuple(range(85, 169))
    assert cfg.make_task().valid_lengths(cfg.test_lengths) == list(range(86, 169, 2))  # Dyck strings are even
    cfg = preset("yao", "dyck", task_params={"k": 128})
    assert cfg.task_params == {"k": 128, "max_depth": 3}
    cfg = preset("yao", "dyck", task_params={"k": 32, "max_depth": 5})
    assert cfg.train_lengths == (1, 180) and min(cfg.test_lengths) == 181 and max(cfg.test_lengths) == 360
    with pytest.raises(ValueError, match="max_depth"):
        preset("yao", "dyck", task_params={"max_depth": 4})
    assert preset("yao", "dyck", task_params={"max_depth": 4}, train_lengths=(2, 10),
                  test_lengths=(12,)).test_lengths == (12,)
    with pytest.raises(ValueError, match="dyck"):
        preset("yao", "parity")


def test_a_yao_run_stores_and_reports_distance_bins(tmp_path):
    cfg = preset("yao", "dyck", layers=1, heads=1, d_model=8, steps=2, batch_size=4, eval_batch=4,
                 train_lengths=(2, 8), test_lengths=(40, 50))
    result = train_run(cfg)
    assert [m["length"] for m in result.metrics] == [40, 50]
    for m in result.metrics:
        counts = {k: v for k, v in m.items() if k.startswith("close_count_")}
        assert sum(counts.values()) == 4 * m["length"] // 2  # every closing bracket once
        assert set(counts) <= {"close_count_1_20", "close_count_21_40", "close_count_41_60"}
    with ResultStore(tmp_path / "r.sqlite") as store:
        store.record_result(result)
    with ResultStore(tmp_path / "r.sqlite") as store:
        rows = store.rows()
    assert all(r["close_count_1_20"] == m["close_count_1_20"] for r, m in zip(rows, result.metrics))
    score = protocol_score(rows, "yao")
    assert score == protocol_score([dict(m) for m in result.metrics], "yao")
    assert "close_accuracy" in score and "close_1_20" in score
    assert 0.0 <= score["close_accuracy"] <= 1.0


def test_results_command_shows_the_distance_bins(tmp_path):
    from typer.testing import CliRunner

    from expressivity.cli import app

    cfg = RunConfig(task="dyck", kind="next_symbol", task_params={"k": 2, "max_depth": 3}, layers=1, heads=1,
                    d_model=8, steps=2, batch_size=4, eval_batch=4, train_lengths=(2, 8), test_lengths=(10,),
                    protocol="yao")
    with ResultStore(tmp_path / "r.sqlite") as store:
        store.record_result(train_run(cfg))
    out = CliRunner().invoke(app, ["results", "--db", str(tmp_path / "r.sqlite")], env={"COLUMNS": "250"})
    assert out.exit_code == 0, out.output
    assert "close_1_20" in out.output


def test_the_example_sweep_runs_their_three_alphabets():
    from pathlib import Path

    from expressivity.train import load_sweep

    cfgs = load_sweep(Path(__file__).resolve().parents[1] / "examples" / "sweeps" / "yao.yaml")
    assert sorted({c.task_params["k"] for c in cfgs}) == [8, 32, 128]
    assert all(c.protocol == "yao" and c.kind == "next_symbol" and c.task_params["max_depth"] == 3
               and c.train_lengths == (1, 84) and max(c.test_lengths) == 168 for c in cfgs)
