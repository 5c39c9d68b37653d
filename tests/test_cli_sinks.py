"""``--log tensorboard:DIR`` / ``--log wandb`` on train and sweep, and the sink interface that
``train_run`` calls: what is logged is read back (TensorBoard's EventAccumulator, the W&B
offline run file) and compared with what the store recorded."""

from __future__ import annotations

import glob
import sys

import pytest
import yaml
from typer.testing import CliRunner

from expressivity.cli import app
from expressivity.runs.sinks import check_sinks, open_sinks, parse_sink
from expressivity.train import ResultStore, RunConfig, train_run

TRAIN = ["train", "--task", "parity", "--steps", "20", "--d-model", "8", "--layers", "1", "--heads", "1",
         "--train-lengths", "2-6", "--test-lengths", "8,10", "--eval-batch", "4", "--batch-size", "4"]
SWEEP = {
    "base": {"task": "parity", "layers": 1, "heads": 1, "d_model": 8, "train_lengths": "2-6",
             "test_lengths": "8,10", "steps": 4, "batch_size": 4, "eval_batch": 4},
    "grid": {"model": ["transformer", "lstm"], "seed": [0]},
}


def _scalars(directory):
    tb = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator",
                             reason="the tensorboard package is not installed (pip install 'expressivity[tensorboard]')")
    acc = tb.EventAccumulator(str(directory))
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


def _stored(db):
    with ResultStore(db, read_only=True) as st:
        return st.runs(), st.rows()


def test_train_logs_loss_and_metrics_to_tensorboard(tmp_path):
    pytest.importorskip("tensorboard", reason="the tensorboard package is not installed "
                        "(pip install 'expressivity[tensorboard]')")
    db, tb = tmp_path / "r.sqlite", tmp_path / "tb"
    res = CliRunner().invoke(app, [*TRAIN, "--db", str(db), "--out", str(tmp_path / "ck"), "--log", f"tensorboard:{tb}",
                                   "-q"])
    assert res.exit_code == 0, res.output
    (run,), rows = _stored(db)
    got = _scalars(tb / run["run_id"])  # one subdirectory per run
    loss = got["train/loss"]
    assert [s for s, _ in loss] == list(range(1, 21))  # 20 steps < 100: every step
    assert sum(v for _, v in loss[-2:]) / 2 == pytest.approx(run["final_loss"], rel=1e-5)  # the last 10 %
    for r in rows:
        assert got[f"accuracy/n={r['length']}"] == [(20, pytest.approx(r["accuracy"]))]
        assert got[f"ce_bits/n={r['length']}"] == [(20, pytest.approx(r["ce_bits"], rel=1e-5))]
    assert got["eval/mean_accuracy"] == [(20, pytest.approx(run["score"]))]


def test_sweep_logs_each_run_into_its_own_directory(tmp_path):
    pytest.importorskip("tensorboard", reason="the tensorboard package is not installed")
    cfg = tmp_path / "sweep.yaml"
    cfg.write_text(yaml.safe_dump(SWEEP))
    db, tb = tmp_path / "r.sqlite", tmp_path / "tb"
    res = CliRunner().invoke(app, ["sweep", str(cfg), "--db", str(db), "--workers", "2", "--log", f"tensorboard:{tb}"])
    assert res.exit_code == 0, res.output
    runs, _ = _stored(db)
    assert sorted(p.name for p in tb.iterdir()) == sorted(r["run_id"] for r in runs)
    for r in runs:
        got = _scalars(tb / r["run_id"])
        assert [s for s, _ in got["train/loss"]] == [1, 2, 3, 4]
        assert got["eval/mean_accuracy"] == [(4, pytest.approx(r["score"]))]


def test_train_logs_to_wandb_offline(tmp_path, monkeypatch):
    pytest.importorskip("wandb", reason="the wandb package is not installed (pip install 'expressivity[wandb]')")
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    monkeypatch.setenv("WANDB_SILENT", "true")
    db = tmp_path / "r.sqlite"
    res = CliRunner().invoke(app, [*TRAIN, "--db", str(db), "--out", str(tmp_path / "ck"), "--log", "wandb:exprtest",
                                   "-q"])
    assert res.exit_code == 0, res.output
    (run,), _ = _stored(db)
    (path,) = glob.glob(str(tmp_path / "wandb" / "offline-run-*" / "run-*.wandb"))
    data = open(path, "rb").read()  # the offline run's records (protobuf): names and keys as strings
    for key in (b"exprtest", run["run_id"].encode(), b"train/loss", b"accuracy/n=8", b"ce_bits/n=10",
                b"eval/mean_accuracy"):
        assert key in data, key


class Recorder:
    def __init__(self):
        self.calls, self.closed = [], False

    def log(self, step, scalars):
        self.calls.append((step, dict(scalars)))

    def close(self):
        self.closed = True


def test_train_run_calls_its_sinks_every_hundredth_step_and_after_evaluation():
    cfg = RunConfig(task="parity", model="rnn", layers=1, d_model=4, train_lengths=(2, 3), test_lengths=(8, 10),
                    steps=201, batch_size=2, eval_batch=4)  # a tiny RNN: the steps are what is tested
    rec = Recorder()
    result = train_run(cfg, sinks=[rec])
    losses = [(s, d) for s, d in rec.calls if "train/loss" in d]
    assert [s for s, _ in losses] == [*range(2, 201, 2), 201]  # every max(1, 201 // 100) = 2 steps, and the last
    (last_step, metrics), = [(s, d) for s, d in rec.calls if "train/loss" not in d]
    assert last_step == 201
    for m in result.metrics:
        assert metrics[f"accuracy/n={m['length']}"] == pytest.approx(m["accuracy"])
        assert metrics[f"excess_bits/n={m['length']}"] == pytest.approx(m["excess_bits"])
    assert metrics["eval/mean_accuracy"] == pytest.approx(result.score)
    assert not rec.closed  # the caller closes what it opened
    with pytest.raises(ValueError, match="sinks"):
        train_run(cfg, sinks=[object()])


@pytest.mark.parametrize("spec, mentions", [
    ("tensorboard", "give the event directory"),
    ("mlflow:x", "unknown sink 'mlflow'"),
    ("wandb:bad project", "W&B project name"),
    ("", "expected tensorboard:DIR"),
])
def test_bad_sink_specs(spec, mentions, tmp_path, monkeypatch):
    with pytest.raises(ValueError, match=mentions):
        parse_sink(spec)
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, [*TRAIN, "--log", spec])
    assert res.exit_code == 2 and "--log" in res.stderr and mentions in res.stderr
    assert list(tmp_path.iterdir()) == []  # refused before anything is written


@pytest.mark.parametrize("package, spec", [("tensorboard", "tensorboard:tb"), ("wandb", "wandb")])
def test_a_missing_package_names_its_extra(package, spec, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, package, None)  # import → ImportError
    with pytest.raises(ImportError, match=rf"pip install 'expressivity\[{package}\]'"):
        check_sinks([spec])
    monkeypatch.chdir(tmp_path)
    for cmd in (TRAIN, ["sweep", "sweep.yaml"]):
        (tmp_path / "sweep.yaml").write_text(yaml.safe_dump(SWEEP))
        res = CliRunner().invoke(app, [*cmd, "--log", spec])
        assert res.exit_code == 2, res.output
        assert res.stderr.count("\n") == 1 and f"expressivity[{package}]" in res.stderr
    assert open_sinks([], "x") == []
