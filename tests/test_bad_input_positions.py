"""Analyses that read positions as the table W_pos refuse rope / alibi / relative / i_over_n
models instead of silently analysing a different model (regression: they ignored them); the
exports express what their target can (ONNX: every encoding; TransformerLens: tables and
rope) and refuse the rest, naming the encoding."""

from __future__ import annotations

import pytest
import torch
from _bad_input import api_rejects

from expressivity.transformer import Transformer, TransformerConfig

OTHERS = ("rope", "alibi", "relative", "i_over_n")


def model(positional: str, attention: str = "softmax") -> Transformer:
    t = Transformer(TransformerConfig(d_model=8, n_layers=1, n_heads=2, d_head=4, d_mlp=8, d_vocab=4, d_out=2,
                                      n_ctx=16, positional=positional, attention=attention,
                                      dtype="float64"))
    t.reset_parameters(0)
    return t


@pytest.mark.parametrize("positional", OTHERS)
def test_lemma5_and_sensitivity_refuse(positional):
    from expressivity.limits import flip_sensitivity
    from expressivity.limits.lemma5 import lemma5_bound

    t = model(positional)
    api_rejects(flip_sensitivity, t, lengths=(4,), alphabet_size=2, mentions=("flip_sensitivity", positional))
    api_rejects(lemma5_bound, t, torch.zeros(2, 4, 8, dtype=torch.float64), [(0, 1)],
                mentions=("lemma5_bound", positional))


@pytest.mark.parametrize("positional", OTHERS)
def test_depth_reduction_refuses(positional):
    from expressivity.limits.depth_reduction import depth_reduction

    api_rejects(depth_reduction, model(positional, "hardmax"), 8, mentions=("depth_reduction", positional))


TL_REFUSED = ("alibi", "relative", "i_over_n")  # TransformerLens's native model: a table or rotary only


@pytest.mark.parametrize("positional", TL_REFUSED)
def test_transformer_lens_refuses_what_it_cannot_express(positional):
    """ONNX expresses every encoding (tests/test_interop_onnx.py); TransformerLens 4's native
    model has a position table or rotary only, so these are refused, naming the encoding."""
    pytest.importorskip("transformer_lens", reason="TransformerLens export needs the extra: pip install 'expressivity[tl]'")
    from expressivity.interop.transformer_lens import to_transformer_lens

    api_rejects(to_transformer_lens, model(positional), mentions=("TransformerLens", positional, "ONNX"))


@pytest.mark.parametrize("positional", OTHERS)
def test_onnx_preflight_accepts_every_encoding(positional):
    pytest.importorskip("onnxruntime", reason="ONNX export needs the extra: pip install 'expressivity[onnx]'")
    from expressivity.interop.onnx_export import preflight

    assert preflight(model(positional)) is not None  # the onnx module: nothing refused


def test_table_positions_still_pass():
    from expressivity.limits import flip_sensitivity

    for positional in ("learned", "sinusoidal", "none"):
        report = flip_sensitivity(model(positional), lengths=(4,), alphabet_size=2, n_strings=1)
        assert report.table()
