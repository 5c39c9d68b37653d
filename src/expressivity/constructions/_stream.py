"""Writing hand-set weights by channel name, optionally on a doubled stream [x, −x].

A construction is written for an *ideal* residual stream with named channels c_1..c_m
(no biases anywhere: constants come from channels that are 1 on every token, so every
sublayer is positively homogeneous, f(s·y) = s·f(y) for s > 0). ``build`` turns it into a
:class:`Transformer`:

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

from ..checks import check_float
from ..languages import Language
from ..transformer import ChannelMap, Transformer, TransformerConfig
from .base import Construction, Encoded, load_weights


class IdealStream:
    """Hand-set weights of an L-block transformer on named ideal channels."""

    def __init__(self, channels: list[str], features: list[str], n_layers: int, n_heads: int, d_mlp: int):
        self.ch = {c: i for i, c in enumerate(channels)}
        self.channels = list(channels)
        self.features = list(features)
        m, L, H = len(channels), n_layers, n_heads
        self.n_layers, self.n_heads, self.d_mlp = L, H, d_mlp
        self.E = np.zeros((len(features), m))  # input feature -> channel
        self.V = np.zeros((L, H, m))  # value read (d_head = 1)
        self.O = np.zeros((L, H, m))  # head output written
        self.Q = np.zeros((L, H, m))
        self.K = np.zeros((L, H, m))
        self.Win = np.zeros((L, m, d_mlp))
        self.Wout = np.zeros((L, d_mlp, m))
        self.U = np.zeros(m)
        self._units = [0] * L

    def embed(self, feature: str, channel: str, value: float = 1.0) -> None:
        self.E[self.features.index(feature), self.ch[channel]] += value

    def head(self, layer: int, h: int, read: dict[str, float], write: dict[str, float],
             query: dict[str, float] | None = None, key: dict[str, float] | None = None) -> None:
        """Head h of block ``layer``: value Σ read[c]·y_c, output written to ``write``."""
        for c, v in read.items():
            self.V[layer, h, self.ch[c]] += v
        for c, v in write.items():
            self.O[layer, h, self.ch[c]] += v
        for c, v in (query or {}).items():
            self.Q[layer, h, self.ch[c]] += v
        for c, v in (key or {}).items():
            self.K[layer, h, self.ch[c]] += v

    def unit(self, layer: int, read: dict[str, float], write: dict[str, float]) -> None:
        """One FFN unit of block ``layer``: write[c] += coef·ReLU(Σ read[c']·y_c')."""
        j = self._units[layer]
        if j >= self.d_mlp:
            raise ValueError(f"block {layer}: more than d_mlp = {self.d_mlp} FFN units")
        self._units[layer] += 1
        for c, v in read.items():
            self.Win[layer, self.ch[c], j] += v
        for c, v in write.items():
            self.Wout[layer, j, self.ch[c]] += v

    def readout(self, channel: str, value: float = 1.0) -> None:
        self.U[self.ch[channel]] += value

    def build(self, layer_norm: bool, eps: float, attention: str = "softmax", pad_to: int | None = None) -> Transformer:
        """The Transformer: plain stream, or doubled [x, −x] with post-LN(ε).

        ``pad_to`` pads the ideal stream with zero channels to that width first (the LN
        margin √(d/2) depends on the total width d).
        """
        m = len(self.channels)
        names = list(self.channels)
        if pad_to is not None:
            if pad_to < m:
                raise ValueError(f"pad_to={pad_to} is below the {m} channels of the construction")
            names += [f"pad[{i}]" for i in range(pad_to - m)]
        w = len(names)

        def grow_rows(a):  # (..., m, x) -> (..., w, x)
            out = np.zeros(a.shape[:-2] + (w, a.shape[-1]))
            out[..., :m, :] = a
            return out

        def grow_cols(a):  # (..., m) -> (..., w)
            out = np.zeros(a.shape[:-1] + (w,))
            out[..., :m] = a
            return out

        E, V, O, Q, K = (grow_cols(a) for a in (self.E, self.V, self.O, self.Q, self.K))
        Win, Wout, U = grow_rows(self.Win), grow_cols(self.Wout), grow_cols(self.U)
        if layer_norm:  # reads from the first copy, writes [v, −v]
            names = names + [f"−{c}" for c in names]
            zr = lambda a: np.concatenate([a, np.zeros_like(a)], axis=-1)
            pm = lambda a: np.concatenate([a, -a], axis=-1)
            E, O, Wout = pm(E), pm(O), pm(Wout)
            V, Q, K, U = zr(V), zr(Q), zr(K), zr(U)
            Win = np.concatenate([Win, np.zeros_like(Win)], axis=-2)
        d = len(names)
        cfg = TransformerConfig(
            d_model=d, n_layers=self.n_layers, n_heads=self.n_heads, d_head=1, d_mlp=self.d_mlp,
            d_input=len(self.features), d_out=1, n_ctx=1 << 16, positional="none", attention=attention,
            lam=1.0, layer_norm="post" if layer_norm else "none", ln_eps=float(eps), dtype="float64",
        )
        weights = {"W_E": E, "W_U": U[:, None]}
        for k in range(self.n_layers):
            a = f"blocks.{k}.attn."
            weights[a + "W_Q"] = Q[k][:, :, None]
            weights[a + "W_K"] = K[k][:, :, None]
            weights[a + "W_V"] = V[k][:, :, None]
            weights[a + "W_O"] = O[k][:, None, :]
            weights[f"blocks.{k}.mlp.W_in"] = Win[k]
            weights[f"blocks.{k}.mlp.W_out"] = Wout[k]
        return load_weights(Transformer(cfg, ChannelMap(tuple(names))), weights)


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


def softmax_construction(name: str, ideal: Callable[[], IdealStream], language: Language,
                         encoder: Callable[[list[str]], Encoded], layer_norm: bool, eps: float,
                         plain_logit: str, description: str) -> Construction:
    """A 2-layer softmax construction on ``ideal()``; ``layer_norm`` = post-LN(ε) on [x, −x].

    Validates ``layer_norm`` (bool) and ``eps`` (finite, ≥ 0). ``info`` records the closed-form
    logit: ``plain_logit`` without layer norm, ±√(d/2) with it (ε = 0; ``ln_margin`` = √(d/2)).
    """
    if not isinstance(layer_norm, (bool, np.bool_)):
        raise ValueError(f"{name}: layer_norm must be true or false, got {layer_norm!r}")  # noqa: TRY004
    layer_norm = bool(layer_norm)
    eps = check_float(eps, f"{name}: eps", min=0.0)
    model = ideal().build(layer_norm=layer_norm, eps=float(eps), attention="softmax")
    d = model.cfg.d_model
    info = {
        "closed_form_logit": "±√(d/2) (ε = 0)" if layer_norm else plain_logit,
        "ln_margin": math.sqrt(d / 2) if layer_norm else None,
    }
    return Construction(
        name=name, transformer=model, attention="softmax", language=language,
        encoder=encoder, params={"layer_norm": layer_norm, "eps": float(eps)},
        description=description, info=info,
    )
