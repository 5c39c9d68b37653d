"""Models for a task: the project's Transformer or an LSTM baseline, both ids (B, T) -> logits (B, T, C)."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from ..transformer import Transformer, TransformerConfig
from .config import RunConfig


class LSTMModel(nn.Module):
    """Embedding → torch.nn.LSTM (``layers`` stacked, hidden = d_model) → linear read-out."""

    def __init__(self, d_vocab: int, d_model: int, layers: int, d_out: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(d_vocab, d_model)
        self.lstm = nn.LSTM(d_model, d_model, num_layers=layers, batch_first=True)
        self.unembed = nn.Linear(d_model, d_out)

    def forward(self, inputs: Tensor, key_mask: Tensor | None = None) -> Tensor:
        h, _ = self.lstm(self.embed(inputs))  # (B, T, d_model)
        return self.unembed(h)  # (B, T, d_out)


def transformer_config(cfg: RunConfig, d_vocab: int, d_out: int) -> TransformerConfig:
    """Soft attention with λ = 1/sqrt(d_head); causal for next-symbol prediction."""
    d_head = cfg.d_model // cfg.heads
    return TransformerConfig(
        d_model=cfg.d_model, n_layers=cfg.layers, n_heads=cfg.heads, d_head=d_head,
        d_mlp=cfg.d_mlp or 4 * cfg.d_model, d_vocab=d_vocab, d_out=d_out, n_ctx=cfg.max_length + 2,
        positional=cfg.positional, attention="softmax", lam=1.0 / math.sqrt(d_head),
        log_length_scaling=cfg.log_length_scaling, causal=cfg.kind == "next_symbol",
        layer_norm=cfg.layer_norm, ln_eps=cfg.ln_eps,
    )


def build_model(cfg: RunConfig, d_vocab: int, d_out: int) -> nn.Module:
    """The model of ``cfg``, initialised deterministically from ``cfg.seed``."""
    if cfg.model == "transformer":
        model = Transformer(transformer_config(cfg, d_vocab, d_out))
        model.reset_parameters(cfg.seed)
        return model
    with torch.random.fork_rng():
        torch.manual_seed(cfg.seed)
        return LSTMModel(d_vocab, cfg.d_model, cfg.layers, d_out)
