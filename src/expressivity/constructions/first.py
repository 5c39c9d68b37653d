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

Confidence ``scale`` s > 0 (Chiang & Cholak's ``--big``): the read-out is z = s·val, so every
logit and margin is multiplied by s: ±s/(n+1) without layer norm, ±s·√6 with it; on every
string the model classifies correctly CE = log2(1 + e^(−margin)) falls strictly as s grows.
"""

from __future__ import annotations

import numpy as np

from ..languages import get as get_language
from ..transformer import Weights
from ._stream import encode_bits_cls, ideal_stream, softmax_construction
from .base import Construction, Encoded

CHANNELS = ["is0", "is1", "cls", "first", "rest", "val"]
FEATURES = ["is0", "is1", "cls", "first", "rest"]
_LANGUAGE = get_language("first")
D_HALF = 6  # ideal width; the layer-norm model has d_model = 12


def logit_margin(n: int, scale: float = 1.0) -> float:
    """|z| of the model without layer norm on any string of length n ≥ 1: s/(n+1), s = ``scale``."""
    return scale / (n + 1)


def _positional(n: int) -> np.ndarray:
    """first_j = I[j = 1] and rest_j = 1 − first_j for j = 1..n+1, (n+1, 2)."""
    first = np.zeros(n + 1)
    first[0] = 1.0
    return np.stack([first, 1.0 - first], axis=1)


def encode(strings: list[str]) -> Encoded:
    """Strings of one length n ≥ 1 -> features (B, n+1, 5); CLS last; read position n."""
    if strings and len(strings[0]) == 0:
        raise ValueError("first: the construction needs strings of length n >= 1 (the empty "
                         "string has no first bit)")
    return encode_bits_cls(_LANGUAGE, strings, _positional)


def _ideal(scale: float = 1.0) -> Weights:
    """The ideal stream (module docstring); read-out z = scale·y_{val} at CLS."""
    s = ideal_stream(CHANNELS, FEATURES, n_layers=2)
    for i, f in enumerate(FEATURES):
        s.embed(i, {f: 1.0})
    minus_one = {"is0": -1.0, "is1": -1.0, "cls": -1.0}
    s.unit(0, {**minus_one, "is1": 0.0, "first": 1.0}, {"val": 1.0})  # is1 + first − one
    s.unit(0, {**minus_one, "is0": 0.0, "first": 1.0}, {"val": -1.0})  # is0 + first − one
    s.unit(0, {"first": 1.0}, {"first": -1.0})
    s.head(1, 0, value={"val": 1.0}, out={"val": 1.0})
    gate = {"is0": -1.0, "is1": -1.0}  # −(one − cls)
    s.unit(1, {**gate, "cls": 1.0}, {"cls": -1.0})
    s.unit(1, {**gate, "rest": 1.0}, {"rest": -1.0})
    s.readout({"val": scale})
    return s


def build(layer_norm: bool = False, eps: float = 0.0, scale: float = 1.0) -> Construction:
    """The FIRST construction; ``layer_norm`` = post-LN(ε) on the doubled stream (d = 12);
    ``scale`` s > 0 multiplies the logit (the confidence): z = s·z_1, margin s·|z_1|."""
    return softmax_construction(
        "first", _ideal, _LANGUAGE, encode, layer_norm, eps, scale, plain_logit="±1/(n+1)",
        description="Chiang & Cholak-style 2-layer FIRST: FFN marks ±1 at position 1, CLS averages",
    )
