"""Runs fine-tuned from a construction (``init="construction:NAME"``, weights ``transformer.*``,
the construction's own encoder) load through their RunConfig everywhere: ``load_run``, the hub
(``save_pretrained`` / ``from_pretrained`` / ``export RUN_DIR --hub``) and the limits analyses
(``resolve_model``, ``TrainedRun.encoder()``: the construction with the run's weights)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from expressivity import constructions as C
from expressivity.interop import from_pretrained, load_run, save_pretrained, transformer_of
from expressivity.limits import measure_flips
from expressivity.limits.models import resolve_model
from expressivity.train import RunConfig, train_run
from expressivity.transformer import read_tensors


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("ft") / "run"
    cfg = RunConfig(task="parity", init="construction:parity", perturb=0.01, train_lengths=(2, 8),
                    test_lengths=(9, 10), steps=2, batch_size=8, eval_batch=8)
    train_run(cfg, out_dir=d)
    return d


def _strings(n: int = 7) -> list[str]:
    lang = C.get("parity").language
    rng = np.random.default_rng(0)
    return lang.sample(rng, 5, n, positive=True) + lang.sample(rng, 5, n, positive=False)


def _z(run, strings):
    """z = logit(accept) − logit(reject) at CLS of the run's own model (token ids in)."""
    ids = run.config.make_task().vocab.encode(strings, cls=True)
    y = run(ids)
    return (y[:, -1, 1] - y[:, -1, 0]).double().numpy()


def test_encoder_is_the_construction_with_the_runs_weights(run_dir):
    run = load_run(run_dir)
    enc = run.encoder()
    assert isinstance(enc, C.Construction) and enc.name == "parity"
    saved = read_tensors(run_dir / "model.safetensors")
    for name, p in enc.transformer.named_parameters():
        assert torch.equal(p.detach(), saved["transformer." + name])
    strings = _strings()
    z = enc.logits(strings)
    np.testing.assert_allclose(z, _z(run, strings), rtol=0, atol=1e-9)  # the run's read-out
    assert np.abs(z - C.get("parity").logits(strings)).max() > 0  # fine-tuned: not the registry's weights
    # the limits CLI's model resolver gives the same Encoder from the checkpoint file
    again = resolve_model(str(run_dir / "model.safetensors"))
    assert isinstance(again, C.Construction)
    np.testing.assert_array_equal(again.logits(strings), z)
    m = measure_flips(enc, np.random.default_rng(1).integers(0, 2, (2, 8)))
    assert m.n == 8 and np.all(np.isfinite(m.other)) and m.output is not None


def test_hub_round_trip_and_cli_export(run_dir, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from expressivity.cli import app

    run = load_run(run_dir)
    strings = _strings(6)
    save_pretrained(run, tmp_path / "hub")
    back = from_pretrained(tmp_path / "hub")
    np.testing.assert_array_equal(_z(back, strings), _z(run, strings))
    np.testing.assert_array_equal(back.encoder().logits(strings), run.encoder().logits(strings))
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["export", str(run_dir), "--hub", "hub2"])
    assert r.exit_code == 0, r.output
    np.testing.assert_array_equal(_z(from_pretrained(tmp_path / "hub2"), strings), _z(run, strings))
    # the encoder saves as a construction with the fine-tuned weights and comes back the same
    save_pretrained(run.encoder(), tmp_path / "enc")
    np.testing.assert_array_equal(from_pretrained(tmp_path / "enc").logits(strings), run.encoder().logits(strings))


def test_token_id_exports_refuse_a_finetuned_run_in_one_line(run_dir, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from expressivity.cli import app

    with pytest.raises(ValueError, match="construction:parity reads its construction's encoding"):
        transformer_of(load_run(run_dir))
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["export", str(run_dir), "--onnx", "m.onnx"])
    assert r.exit_code != 0 and "Traceback" not in r.output
    assert "encoder()" in r.output and len(r.output.strip().splitlines()) <= 3
