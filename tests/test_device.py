"""Devices (issue 21): RunConfig.device / dtype, train_run on a device, checkpoints that load
on any device, the one-line errors of --device / --dtype. Run on a GPU with
``pytest tests/test_device.py --device cuda``; cuda-only tests skip without one."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch
from typer.testing import CliRunner

from expressivity.cli import app
from expressivity.train import RunConfig, train_run
from expressivity.train import devices as D

TINY = dict(task="parity", layers=1, heads=1, d_model=8, train_lengths=(2, 6), test_lengths=(8,), steps=4,
            batch_size=4, eval_batch=4)
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")


def test_the_device_is_not_part_of_the_run():
    runs = [RunConfig(**TINY, device=d) for d in ("auto", "cpu", "cuda", "cuda:1", "mps")]
    assert len({r.run_id for r in runs}) == 1
    assert "device" not in runs[0].to_dict()
    again = RunConfig.from_dict({**runs[2].to_dict(), "device": "cpu"})
    assert again.run_id == runs[2].run_id and again.device == "cpu"


def test_bfloat16_is_part_of_the_run_and_float32_is_left_out():
    f32, bf16 = RunConfig(**TINY), RunConfig(**TINY, dtype="bfloat16")
    assert "dtype" not in f32.to_dict() and f32.run_id == RunConfig(**TINY, dtype="float32").run_id
    assert bf16.run_id != f32.run_id and bf16.to_dict()["dtype"] == "bfloat16"


@pytest.mark.parametrize("bad, field, mention", [
    ({"device": "tpu"}, "device", "cuda:N"),
    ({"device": "cuda:x"}, "device", "auto"),
    ({"dtype": "float16"}, "dtype", "float32"),
    ({"dtype": "bfloat16", "model": "lstm"}, "dtype", "transformer"),
])
def test_bad_device_or_dtype_in_a_config_is_one_line(bad, field, mention):
    with pytest.raises(ValueError) as info:
        RunConfig(**{**TINY, **bad})
    msg = str(info.value)
    assert f"RunConfig.{field}" in msg and mention in msg and "\n" not in msg


def test_auto_prefers_cuda_then_mps_then_cpu(monkeypatch):
    monkeypatch.delenv(D.DEVICE_ENV, raising=False)
    want = "cuda" if torch.cuda.is_available() else "mps" if D._mps_available() else "cpu"
    assert D.resolve_device("auto").type == want
    monkeypatch.setenv(D.DEVICE_ENV, "cpu")  # reproduce --device reaches its units this way
    assert D.resolve_device("auto") == torch.device("cpu")


def test_an_absent_device_names_the_option_and_what_is_present(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(D, "_mps_available", lambda: False)
    for name in ("cuda", "cuda:0", "mps"):
        with pytest.raises(ValueError, match=r"^--device .*present: cpu$"):
            D.resolve_device(name)
    monkeypatch.setenv(D.DEVICE_ENV, "cuda")
    with pytest.raises(ValueError, match=D.DEVICE_ENV):
        D.resolve_device("auto")


def test_bfloat16_on_a_cpu_without_it_is_refused(monkeypatch):
    monkeypatch.setattr(D, "cpu_has_bfloat16", lambda: False)
    with pytest.raises(ValueError, match=r"^--dtype bfloat16: this CPU has no native bfloat16"):
        D.check_dtype("bfloat16", torch.device("cpu"))
    cfg = RunConfig(**TINY, dtype="bfloat16", device="cpu")
    with pytest.raises(ValueError, match="bfloat16"):
        train_run(cfg)


def test_cli_device_errors_are_one_line(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(D, "_mps_available", lambda: False)
    base = ["train", "--task", "parity", "--layers", "1", "--heads", "1", "--d-model", "8", "--steps", "2"]
    for extra, text in ((["--device", "tpu"], "--device must be"), (["--device", "cuda"], "no CUDA device")):
        res = CliRunner().invoke(app, base + extra)
        assert res.exit_code == 2 and text in res.output and "Traceback" not in res.output, res.output
    res = CliRunner().invoke(app, ["sweep", "none.yaml", "--device", "mps"])
    assert res.exit_code == 2 and "--device mps" in res.output, res.output
    assert not list(tmp_path.iterdir())  # nothing written


def test_train_run_on_the_device_matches_the_cpu_and_resumes_anywhere(device, tmp_path):
    """Interrupted on ``device``, resumed on the CPU: the checkpoint (written from CPU copies,
    read with map_location) continues the same run; its result equals the run trained on the
    CPU in one go (to float round-off across devices)."""
    cfg = RunConfig(**{**TINY, "steps": 6, "checkpoint_every": 3}, device=device)

    def stop_at_4(step, loss):  # after the checkpoint of step 3
        if step == 4:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_run(cfg, tmp_path / "run", on_step=stop_at_4)
    resumed = train_run(replace(cfg, device="cpu"), tmp_path / "run")
    alone = train_run(replace(cfg, device="cpu"))
    assert resumed.resumed_from == 3 and resumed.config.run_id == alone.config.run_id
    assert resumed.final_loss == pytest.approx(alone.final_loss, abs=1e-4)
    for a, b in zip(resumed.metrics, alone.metrics):
        assert a["ce_bits"] == pytest.approx(b["ce_bits"], abs=1e-4)


@pytest.mark.parametrize("model", ["transformer", "lstm", "tape_rnn"])
def test_training_on_the_device_gives_the_cpu_result(device, model):
    cfg = RunConfig(**{**TINY, "model": model})
    on_dev, on_cpu = train_run(replace(cfg, device=device)), train_run(replace(cfg, device="cpu"))
    assert on_dev.final_loss == pytest.approx(on_cpu.final_loss, abs=1e-4)
    assert [m["ce_bits"] for m in on_dev.metrics] == pytest.approx([m["ce_bits"] for m in on_cpu.metrics], abs=1e-3)


def test_bfloat16_autocast_trains_the_transformer(device):
    where = D.resolve_device(device)
    if where.type == "cpu" and not D.cpu_has_bfloat16():
        pytest.skip("this CPU has no native bfloat16")
    res = train_run(RunConfig(**TINY, dtype="bfloat16", device=device))
    f32 = train_run(RunConfig(**TINY, device=device))
    assert res.status == "done" and abs(res.final_loss - f32.final_loss) < 0.05  # bfloat16: 3 digits
    assert all(0 <= m["accuracy"] <= 1 for m in res.metrics)


@needs_cuda
def test_cuda_n_names_a_present_gpu():
    assert D.resolve_device("cuda:0") == torch.device("cuda", 0)
    with pytest.raises(ValueError, match="CUDA device"):
        D.resolve_device(f"cuda:{torch.cuda.device_count()}")
