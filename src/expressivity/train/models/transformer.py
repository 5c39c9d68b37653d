"""The project's Transformer (expressivity.transformer) configured for a training run."""

from __future__ import annotations

import math

from ...transformer import TransformerConfig
from ..config import RunConfig


def transformer_config(cfg: RunConfig, d_vocab: int, d_out: int) -> TransformerConfig:
    """Soft attention with λ = 1/sqrt(d_head); causal for next-symbol prediction (and with
    ``cfg.causal``); n_ctx = the
    longest token sequence of the run (max_length + 2, or input + EOS + output placeholders for
    transduction tasks)."""
    d_head = cfg.d_model // cfg.heads
    n_ctx = max(cfg.max_length + 2, cfg.make_task().n_tokens(cfg.max_length))
    return TransformerConfig(
        d_model=cfg.d_model, n_layers=cfg.layers, n_heads=cfg.heads, d_head=d_head,
        d_mlp=cfg.d_mlp or 4 * cfg.d_model, d_vocab=d_vocab, d_out=d_out, n_ctx=n_ctx,
        positional=cfg.positional, attention="softmax", lam=1.0 / math.sqrt(d_head),
        log_length_scaling=cfg.log_length_scaling, causal=cfg.kind == "next_symbol" or cfg.causal,
        layer_norm=cfg.layer_norm, ln_eps=cfg.ln_eps,
    )
