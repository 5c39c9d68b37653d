"""ONNX export checked with onnxruntime against our forward (float64 where the model is)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

pytest.importorskip("onnx", reason="ONNX export needs the extra: pip install 'expressivity[onnx]'")
pytest.importorskip("onnxruntime", reason="ONNX checks need the extra: pip install 'expressivity[onnx]'")

from expressivity import constructions  # noqa: E402
from expressivity.cli import app  # noqa: E402
from expressivity.compile import compile_maxout  # noqa: E402
from expressivity.cpwl import MaxoutNetwork  # noqa: E402
from expressivity.interop.onnx_export import check_onnx, export_onnx  # noqa: E402
from expressivity.transformer import Transformer, TransformerConfig  # noqa: E402


def _run(path, x: torch.Tensor) -> np.ndarray:
    import onnxruntime as ort

    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return sess.run(["output"], {"inputs": x.numpy()})[0]


@pytest.mark.parametrize("attention,lam", [("hardmax", None), ("softmax", 1e3)])
def test_compiled_model_on_ten_thousand_inputs(tmp_path, attention, lam):
    net = MaxoutNetwork.random(in_dim=2, widths=[6, 6], ranks=[3, 2], seed=0)
    cm = compile_maxout(net, domain=(-1.0, 1.0), attention=attention, lam=lam)
    export_onnx(cm, tmp_path / "m.onnx")
    res = check_onnx(cm, tmp_path / "m.onnx", n_inputs=10_000)
    assert res.n_inputs == 10_000 and res.dtype == "float64"
    assert res.max_abs_error < 1e-12, res.line()
    assert "max |error|" in res.line()


def test_hardmax_ties_average_as_in_our_model(tmp_path):
    """W_Q = 0: every score ties, so each head averages all values (our tie rule); partial
    ties from duplicated tokens too. ONNX must match exactly, not pick one argmax."""
    cfg = TransformerConfig(d_model=4, n_layers=1, n_heads=2, d_head=2, d_mlp=0, d_vocab=3, d_out=2, n_ctx=6,
                            attention="hardmax", dtype="float64", positional="none")
    m = Transformer(cfg)
    m.reset_parameters(seed=0)
    ids = torch.tensor([[0, 1, 2, 0, 1, 2], [1, 1, 1, 1, 1, 1], [2, 0, 2, 0, 2, 0]])
    export_onnx(m, tmp_path / "r.onnx")
    with torch.no_grad():
        assert np.abs(_run(tmp_path / "r.onnx", ids) - m(ids).numpy()).max() < 1e-14  # partial ties
        m.blocks[0].attn.W_Q.zero_()
        export_onnx(m, tmp_path / "t.onnx")
        cache: dict = {}
        ours = m(ids, cache=cache).numpy()
    theirs = _run(tmp_path / "t.onnx", ids)
    assert np.abs(theirs - ours).max() < 1e-14
    # the tie rule is the average: with all scores tied the pattern is uniform, 1/T
    assert torch.equal(cache["blocks.0.attn.hook_pattern"], torch.full((3, 2, 6, 6), 1 / 6, dtype=torch.float64))


@pytest.mark.parametrize("name,params", [("parity", {}), ("first", {}), ("parity-compiled", {"max_length": 8}),
                                         ("dyck", {"max_length": 16})])
def test_constructions(tmp_path, name, params):
    c = constructions.get(name, **params)
    export_onnx(c, tmp_path / "c.onnx")
    res = check_onnx(c, tmp_path / "c.onnx", n_inputs=500)
    assert res.max_abs_error < 1e-12, res.line()


def test_zero_eps_layer_norm_only_when_allowed(tmp_path):
    c = constructions.get("parity", layer_norm=True)  # post-LN, eps = 0
    with pytest.raises(ValueError, match="eps = 0"):
        export_onnx(c, tmp_path / "c.onnx")
    assert not (tmp_path / "c.onnx").exists()
    export_onnx(c, tmp_path / "c.onnx", allow_zero_eps=True)
    assert check_onnx(c, tmp_path / "c.onnx", n_inputs=500).max_abs_error < 1e-12


@pytest.mark.parametrize("layer_norm", ["none", "pre", "post"])
@pytest.mark.parametrize("causal,log_scaling", [(False, False), (True, False), (False, True), (True, True)])
def test_float32_transformers(tmp_path, layer_norm, causal, log_scaling):
    cfg = TransformerConfig(d_model=8, n_layers=2, n_heads=2, d_head=4, d_mlp=16, d_vocab=5, d_out=3, n_ctx=12,
                            layer_norm=layer_norm, causal=causal, log_length_scaling=log_scaling)
    m = Transformer(cfg)
    m.reset_parameters(seed=1)
    export_onnx(m, tmp_path / "t.onnx")
    res = check_onnx(m, tmp_path / "t.onnx", n_inputs=300)
    assert res.dtype == "float32" and res.max_abs_error <= 1e-5 * max(1.0, res.max_abs_output), res.line()
    # the token axis is dynamic: a shorter sequence works too
    ids = torch.randint(0, 5, (3, 5), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        assert np.abs(_run(tmp_path / "t.onnx", ids) - m(ids).numpy()).max() <= 1e-4


POSITIONALS = ("learned", "sinusoidal", "none", "rope", "alibi", "relative", "i_over_n")


@pytest.mark.parametrize("positional", POSITIONALS)
@pytest.mark.parametrize("causal", [False, True], ids=["bidirectional", "causal"])
def test_every_position_encoding(tmp_path, positional, causal):
    """Hardmax, float64, no LN: the graph computes our forward to round-off, at lengths past
    the 128 offsets of the relative-bucket table and with 3 heads (ALiBi's non-power-of-2
    slopes). A dropped or misplaced encoding would be off by O(1)."""
    cfg = TransformerConfig(d_model=12, n_layers=2, n_heads=3, d_head=4, d_mlp=16, d_vocab=5, d_out=3, n_ctx=150,
                            positional=positional, causal=causal, attention="hardmax", dtype="float64")
    m = Transformer(cfg)
    m.reset_parameters(seed=4)
    if positional == "relative":  # its tables start at zero
        with torch.no_grad():
            for block in m.blocks:
                block.attn.W_rel.normal_(generator=torch.Generator().manual_seed(5))
    export_onnx(m, tmp_path / "p.onnx")
    res = check_onnx(m, tmp_path / "p.onnx", n_inputs=200)
    assert res.max_abs_error < 1e-12, res.line()
    ids = torch.randint(0, 5, (2, 150), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        ours = m(ids).numpy()
        if positional != "none":  # the encoding matters: without it the output differs
            plain = Transformer(dataclasses.replace(cfg, positional="none", lam=None))
            plain.load_state_dict({k: v for k, v in m.state_dict().items() if k in plain.state_dict()})
            assert np.abs(plain(ids).numpy() - ours).max() > 1e-3
    assert np.abs(_run(tmp_path / "p.onnx", ids) - ours).max() < 1e-12


@pytest.mark.parametrize("positional", ["rope", "alibi", "relative", "i_over_n"])
def test_new_encodings_in_float32_softmax_pre_ln(tmp_path, positional):
    cfg = TransformerConfig(d_model=8, n_layers=2, n_heads=2, d_head=4, d_mlp=16, d_vocab=5, d_out=3, n_ctx=24,
                            positional=positional, layer_norm="pre", lam=0.5)
    m = Transformer(cfg)
    m.reset_parameters(seed=2)
    export_onnx(m, tmp_path / "p.onnx")
    res = check_onnx(m, tmp_path / "p.onnx", n_inputs=300)
    assert res.dtype == "float32" and res.max_abs_error <= 1e-5 * max(1.0, res.max_abs_output), res.line()


def test_cli_export_prints_the_measured_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    compile_maxout(MaxoutNetwork.random(in_dim=1, widths=[3], ranks=2, seed=2), (0.0, 1.0)).save("m.safetensors")
    r = CliRunner().invoke(app, ["export", "m.safetensors", "--onnx", "m.onnx", "--check", "2000"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "m.onnx").is_file() and "max |error|" in r.output and "2000 inputs" in r.output


def test_trained_checkpoint_through_the_cli(tmp_path, monkeypatch):
    """An `expressivity train` output (float32, sinusoidal, pre-LN) exports and checks."""
    from expressivity.train import RunConfig, train_run

    cfg = RunConfig(task="parity", layers=1, heads=2, d_model=8, d_mlp=8, steps=1, batch_size=4,
                    train_lengths=(2, 4), test_lengths=(6,), eval_batch=4, checkpoint_every=1)
    train_run(cfg, out_dir=tmp_path / "run")
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["export", "run", "--onnx", "t.onnx", "--check", "500"])
    assert r.exit_code == 0, r.output
    assert "float32" in r.output and "max |error|" in r.output
    err = float(r.output.split("max |error| = ")[1].split()[0])
    assert err < 1e-4
