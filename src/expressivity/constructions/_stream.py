"""Writing hand-set weights by channel name, optionally on a doubled stream [x, −x].

A construction is written for an *ideal* residual stream with named channels c_1..c_m
(no biases anywhere: constants come from channels that are 1 on every token, so every
sublayer is positively homogeneous, f(s·y) = s·f(y) for s > 0), written with the one weight
builder :class:`~expressivity.transformer.Weights` (:func:`ideal_stream`).
:func:`ideal_transformer` turns it into a :class:`Transformer`:

* ``layer_norm=False``: d_model = m, the weights as written.
* ``layer_norm=True`` (Chiang & Cholak 2022, §5): the stream is doubled to y = [x, −x]
  (d_model = 2m), so mean(y) = 0 and post-layer-norm LN(y) = y·√(d/2)/‖x‖ when ε = 0 —
  a positive rescaling per position. Sublayers read the first copy and write ±.
  If every position of a sequence has the same ‖x‖ at each LN (the constructions arrange
  this with filler channels), the rescaling is common to all positions, commutes with
  uniform attention and homogeneous FFNs, and the computation is that of the ideal stream
  up to a positive factor. A final stream x = ±m·e_out then becomes ±√(d/2) on e_out.

The Chiang & Cholak constructions (PARITY, FIRST) also share their input layout and their
``build`` entry point: :func:`encode_bits_cls` and :func:`softmax_construction`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch

from ..languages import Language
from ..rules import check_float
from ..transformer import ChannelMap, Transformer, Weights
from .base import Construction, Encoded


def ideal_stream(channels: list[str], features: list[str], n_layers: int) -> Weights:
    """The builder for an ideal stream: one channel per name, feature i embedded by row i of
    W_E (continuous input), heads of width d_head = 1, one output (the logit z)."""
    return Weights(ChannelMap(tuple(channels)), n_layers=n_layers, n_heads=1, d_head=1,
                   d_input=len(features))


def ideal_transformer(w: Weights, layer_norm: bool, eps: float, attention: str = "softmax") -> Transformer:
    """The Transformer of an ideal stream ``w``: as written, or doubled to [x, −x]
    (:meth:`~expressivity.transformer.Weights.doubled`) with post-LN(ε)."""
    if layer_norm:
        w = w.doubled()
    return w.transformer(n_ctx=1 << 16, positional="none", attention=attention,
                         layer_norm="post" if layer_norm else "none", ln_eps=float(eps), dtype="float64")


def encode_bits_cls(language: Language, strings: list[str],
                    positional: Callable[[int], np.ndarray]) -> Encoded:
    """Bit strings of one length n -> features (B, n+1, 3 + P); CLS last; read position n.

    Columns: is0, is1 (the bit w_j, j ≤ n), cls (j = n + 1), then ``positional(n)`` (n+1, P),
    the length-dependent positional features, the same for every string of the batch.
    """
    B = len(strings)
    n = len(strings[0]) if B else 0
    T = n + 1
    bits = language.to_ids(strings).astype(np.float64).reshape(B, n) if B else np.zeros((0, n))
    pos = positional(n)  # (T, P)
    x = np.zeros((B, T, 3 + pos.shape[1]))
    x[:, :n, 0] = 1.0 - bits
    x[:, :n, 1] = bits
    x[:, n, 2] = 1.0
    x[:, :, 3:] = pos
    read = torch.full((B,), n, dtype=torch.long)
    return Encoded(torch.from_numpy(x), None, read)


def softmax_construction(name: str, ideal: Callable[[float], Weights], language: Language,
                         encoder: Callable[[list[str]], Encoded], layer_norm: bool, eps: float,
                         scale: float, plain_logit: str, description: str) -> Construction:
    """A 2-layer softmax construction on ``ideal(scale)``; ``layer_norm`` = post-LN(ε) on [x, −x].

    ``ideal(s)`` writes the read-out z = s·y_out (the confidence ``scale``, Chiang & Cholak's
    ``--big``): every logit, hence the margin, is multiplied by s. Validates ``layer_norm``
    (bool), ``eps`` (finite, ≥ 0) and ``scale`` (finite, > 0). ``info`` records the closed-form
    logit: s·``plain_logit`` without layer norm, ±s·√(d/2) with it (ε = 0; ``ln_margin`` = s·√(d/2)).
    """
    if not isinstance(layer_norm, (bool, np.bool_)):
        raise ValueError(f"{name}: layer_norm must be true or false, got {layer_norm!r}")  # noqa: TRY004
    layer_norm = bool(layer_norm)
    eps = check_float(eps, f"{name}: eps", min=0.0)
    scale = check_float(scale, f"{name}: scale", min=0.0, min_open=True)
    model = ideal_transformer(ideal(scale), layer_norm=layer_norm, eps=float(eps), attention="softmax")
    d = model.cfg.d_model
    s = "" if scale == 1.0 else f"{scale:g}·"
    info = {
        "closed_form_logit": f"±{s}√(d/2) (ε = 0)" if layer_norm else f"±{s}{plain_logit.lstrip('±')}",
        "ln_margin": scale * math.sqrt(d / 2) if layer_norm else None,
    }
    return Construction(
        name=name, transformer=model, attention="softmax", language=language,
        encoder=encoder, params={"layer_norm": layer_norm, "eps": float(eps), "scale": float(scale)},
        description=description, info=info,
    )
