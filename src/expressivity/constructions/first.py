"""FIRST (first bit is 1) by a 2-layer softmax transformer, in the style of Chiang & Cholak (2022).

Input w_1..w_n ∈ {0, 1} (n ≥ 1), then CLS at position n + 1; T = n + 1 tokens.
Positional features: first_j = I[j = 1] and its complement rest_j = 1 − first_j.

Ideal channels (6): is0, is1, cls, first, rest (embedding) | val (computed);
``one`` = is0 + is1 + cls is the constant 1 (no biases anywhere).

1. Attention: none (zero weights). FFN:
     val_j = ReLU(is1 + first − one) − ReLU(is0 + first − one) = ±1 at j = 1 (w_1 = 1 / 0),
     first −= ReLU(first)   (so every position keeps ‖x‖² = 2: symbol + first|rest|val).
2. Attention, uniform: every token (CLS included) gets val += (1/(n+1))·val_1 = ±1/(n+1).
   FFN at CLS (gated by cls): clear cls and rest, leaving only val.
Read-out: z = val at CLS = ±1/(n+1)  →  CE = log2(1 + e^(−1/(n+1))) → 1 bit (Hahn's O(1/n)).

Layer norm (ε = 0, post, doubled stream, d = 12): every position has the same norm at each
LN, the final CLS stream is ±e_val/(n+1), and LN maps it to ±√(d/2) = ±√6:
CE = log2(1 + e^(−√6)) = 0.1195 bits at every n.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ..languages import get as get_language
from ._stream import IdealStream
from .base import Construction, Encoded

CHANNELS = ["is0", "is1", "cls", "first", "rest", "val"]
FEATURES = ["is0", "is1", "cls", "first", "rest"]
_LANGUAGE = get_language("first")
D_HALF = 6  # ideal width; the layer-norm model has d_model = 12


def logit_margin(n: int) -> float:
    """|z| of the model without layer norm on any string of length n ≥ 1: 1/(n+1)."""
    return 1.0 / (n + 1)


def encode(strings: list[str]) -> Encoded:
    """Strings of one length n ≥ 1 -> features (B, n+1, 5); CLS last; read position n."""
    B = len(strings)
    n = len(strings[0]) if B else 0
    if B and n == 0:
        raise ValueError("first: the construction needs strings of length n >= 1 (the empty "
                         "string has no first bit)")
    T = n + 1
    bits = _LANGUAGE.to_ids(strings).astype(np.float64).reshape(B, n) if B else np.zeros((0, n))
    x = np.zeros((B, T, len(FEATURES)))
    x[:, :n, 0] = 1.0 - bits
    x[:, :n, 1] = bits
    x[:, n, 2] = 1.0
    x[:, 0, 3] = 1.0
    x[:, 1:, 4] = 1.0
    read = torch.full((B,), n, dtype=torch.long)
    return Encoded(torch.from_numpy(x), None, read)


def _ideal() -> IdealStream:
    s = IdealStream(CHANNELS, FEATURES, n_layers=2, n_heads=1, d_mlp=3)
    for f in FEATURES:
        s.embed(f, f)
    minus_one = {"is0": -1.0, "is1": -1.0, "cls": -1.0}
    s.unit(0, {**minus_one, "is1": 0.0, "first": 1.0}, {"val": 1.0})  # is1 + first − one
    s.unit(0, {**minus_one, "is0": 0.0, "first": 1.0}, {"val": -1.0})  # is0 + first − one
    s.unit(0, {"first": 1.0}, {"first": -1.0})
    s.head(1, 0, read={"val": 1.0}, write={"val": 1.0})
    gate = {"is0": -1.0, "is1": -1.0}  # −(one − cls)
    s.unit(1, {**gate, "cls": 1.0}, {"cls": -1.0})
    s.unit(1, {**gate, "rest": 1.0}, {"rest": -1.0})
    s.readout("val")
    return s


def build(layer_norm: bool = False, eps: float = 0.0) -> Construction:
    """The FIRST construction; ``layer_norm`` = post-LN(ε) on the doubled stream (d = 12)."""
    if not isinstance(layer_norm, bool):
        raise ValueError(f"first: layer_norm must be a bool, got {layer_norm!r}")  # noqa: TRY004
    if not (isinstance(eps, (int, float)) and math.isfinite(eps) and eps >= 0):
        raise ValueError(f"first: eps must be a finite number >= 0, got {eps!r}")
    model = _ideal().build(layer_norm=layer_norm, eps=float(eps), attention="softmax")
    d = model.cfg.d_model
    info = {
        "closed_form_logit": "±√(d/2) (ε = 0)" if layer_norm else "±1/(n+1)",
        "ln_margin": math.sqrt(d / 2) if layer_norm else None,
    }
    return Construction(
        name="first", transformer=model, attention="softmax", language=_LANGUAGE,
        encoder=encode, params={"layer_norm": layer_norm, "eps": float(eps)},
        description="Chiang & Cholak-style 2-layer FIRST: FFN marks ±1 at position 1, CLS averages",
        info=info,
    )
