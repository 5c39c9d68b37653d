"""PARITY (odd number of 1s) by a 2-layer softmax transformer, in the style of Chiang & Cholak (2022).

Input w_1..w_n ∈ {0, 1}, then CLS at position j = n + 1; T = n + 1 tokens, a = 1/(n+1),
k = #1s. Length-dependent positional features (as in Chiang & Cholak):
p_j = j·a, q_j = (j − 1)·a, c_j = cos(jπ) = (−1)^j and a filler f_j = √(2 − p_j² − q_j²)
that makes every embedding have the same norm (needed for the layer-norm variant).

Ideal channels (10): is0, is1, cls, p, q, cos, fill (embedding) | frac, sgn, f (computed).
``one`` = is0 + is1 + cls is the constant 1 (no biases: every sublayer is homogeneous).

1. Attention, uniform (W_Q = W_K = 0): frac = k/(n+1) on every token.
   FFN: with e_j = [j even] = (one + cos)/2 and o_j = (one − cos)/2,
     I[j ≤ k]·a = ReLU(frac − q) − ReLU(frac − p)             (integers on the grid a)
     sgn_j = (−1)^(j+1)·a·I[j ≤ k]   (two gated copies: ReLU(· − e_j), ReLU(· − o_j))
     f_j   = a·I[j > k]              (so sgn_j² + f_j² = a² on every bit position)
     CLS:  sgn = −a/2, f = (√3/2)·a  (a = ReLU(p − q − (one − cls)), gated to CLS).
2. Attention, uniform: CLS gets sgn += (1/(n+1))·Σ_j sgn_j = (a·[k odd] − a/2)/(n+1).
   FFN at CLS (gated by cls): sgn += a/2, and every other channel is cleared.
Read-out: z = sgn at CLS = ±1/(2(n+1)²)  →  CE = log2(1 + e^(−1/(2(n+1)²))) → 1 bit.

Layer norm (ε = 0, post, doubled stream, d = 20): every position has the same ‖x‖ at every
LN (embedding: 1 + p² + q² + fill² + 1 = 4; after FFN 1: + frac² + a²), so LN rescales all
positions alike and the computation survives; the final CLS stream is ±m·e_sgn, which LN
maps to ±√(d/2) = ±√10: CE = log2(1 + e^(−√10)) = 0.0598 bits at every n. With ε > 0,
LN(x) = x/√(‖x‖²/d + ε) and the tiny m ∝ 1/n² lets ε win: CE → 1 bit again.

Confidence ``scale`` s > 0 (Chiang & Cholak's ``--big``): the read-out is z = s·sgn, so every
logit and margin is multiplied by s: ±s/(2(n+1)²) without layer norm, ±s·√10 with it; on every
string the model classifies correctly CE = log2(1 + e^(−margin)) falls strictly as s grows.
"""

from __future__ import annotations

import math

import numpy as np

from ..languages import get as get_language
from ..transformer import Weights
from ._stream import encode_bits_cls, ideal_stream, softmax_construction
from .base import Construction, Encoded

CHANNELS = ["is0", "is1", "cls", "p", "q", "cos", "fill", "frac", "sgn", "f"]
FEATURES = ["is0", "is1", "cls", "p", "q", "cos", "fill"]
_LANGUAGE = get_language("parity")
D_HALF = 10  # ideal width; the layer-norm model has d_model = 20
_C = 2.0  # p² + q² + fill² = C on every token


def logit_margin(n: int, scale: float = 1.0) -> float:
    """|z| of the model without layer norm on any string of length n: s/(2(n+1)²), s = ``scale``."""
    return scale / (2.0 * (n + 1) ** 2)


def _positional(n: int) -> np.ndarray:
    """p_j, q_j, cos(jπ), fill_j for j = 1..n+1 (CLS at j = n + 1), (n+1, 4)."""
    T = n + 1
    j = np.arange(1, T + 1, dtype=np.float64)  # 1-based positions
    p, q = j / T, (j - 1) / T
    cos = np.where(j % 2 == 0, 1.0, -1.0)  # cos(jπ)
    return np.stack([p, q, cos, np.sqrt(_C - p**2 - q**2)], axis=1)


def encode(strings: list[str]) -> Encoded:
    """Strings of one length n -> features (B, n+1, 7); CLS last; read position n."""
    return encode_bits_cls(_LANGUAGE, strings, _positional)


def _ideal(scale: float = 1.0) -> Weights:
    """The ideal stream (module docstring); read-out z = scale·y_{sgn} at CLS."""
    s = ideal_stream(CHANNELS, FEATURES, n_layers=2)
    for i, f in enumerate(FEATURES):
        s.embed(i, {f: 1.0})
    one = {"is0": 1.0, "is1": 1.0, "cls": 1.0}

    def plus(*terms: dict[str, float]) -> dict[str, float]:
        out: dict[str, float] = {}
        for t in terms:
            for c, v in t.items():
                out[c] = out.get(c, 0.0) + v
        return out

    def scaled(t: dict[str, float], c: float) -> dict[str, float]:
        return {k: c * v for k, v in t.items()}

    even = plus(scaled(one, 0.5), {"cos": 0.5})  # [j even]
    odd = plus(scaled(one, 0.5), {"cos": -0.5})  # [j odd]
    # block 0: frac = k/(n+1) by uniform attention
    s.head(0, 0, value={"is1": 1.0}, out={"frac": 1.0})
    # sgn_j = (−1)^(j+1)·a·I[j ≤ k]
    s.unit(0, plus({"frac": 1.0, "q": -1.0}, scaled(even, -1.0)), {"sgn": 1.0})
    s.unit(0, plus({"frac": 1.0, "p": -1.0}, scaled(even, -1.0)), {"sgn": -1.0})
    s.unit(0, plus({"frac": 1.0, "q": -1.0}, scaled(odd, -1.0)), {"sgn": -1.0})
    s.unit(0, plus({"frac": 1.0, "p": -1.0}, scaled(odd, -1.0)), {"sgn": 1.0})
    # f_j = a·I[j > k] on bits
    s.unit(0, {"p": 1.0, "frac": -1.0, "cls": -1.0}, {"f": 1.0})
    s.unit(0, {"q": 1.0, "frac": -1.0, "cls": -1.0}, {"f": -1.0})
    # CLS: sgn = −a/2, f = (√3/2)·a
    a_at_cls = plus({"p": 1.0, "q": -1.0}, scaled(one, -1.0), {"cls": 1.0})
    s.unit(0, a_at_cls, {"sgn": -0.5, "f": math.sqrt(3.0) / 2.0})
    # block 1: CLS averages sgn
    s.head(1, 0, value={"sgn": 1.0}, out={"sgn": 1.0})
    # FFN at CLS: undo the −a/2 offset, clear every other channel (gate G = 2·(one − cls))
    s.unit(1, a_at_cls, {"sgn": 0.5})
    gate = plus(scaled(one, -2.0), {"cls": 2.0})
    for c in ("cls", "p", "q", "fill", "frac", "f"):  # non-negative channels, ≤ 2
        s.unit(1, plus({c: 1.0}, gate), {c: -1.0})
    s.unit(1, plus({"cos": 1.0}, gate), {"cos": -1.0})
    s.unit(1, plus({"cos": -1.0}, gate), {"cos": 1.0})
    s.readout({"sgn": scale})
    return s


def build(layer_norm: bool = False, eps: float = 0.0, scale: float = 1.0) -> Construction:
    """The PARITY construction; ``layer_norm`` = post-LN(ε) on the doubled stream (d = 20);
    ``scale`` s > 0 multiplies the logit (the confidence): z = s·z_1, margin s·|z_1|."""
    return softmax_construction(
        "parity", _ideal, _LANGUAGE, encode, layer_norm, eps, scale, plain_logit="±1/(2(n+1)²)",
        description="Chiang & Cholak-style 2-layer PARITY: uniform attention counts 1s, "
                    "FFN marks j ≤ k with sign (−1)^(j+1), CLS averages",
    )
