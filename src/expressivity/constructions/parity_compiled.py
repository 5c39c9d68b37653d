"""Bounded-length PARITY through the maxout compiler: exact for every n ≤ N, size grows with N.

Hahn (2020): no fixed transformer decides PARITY at every length, but for n ≤ N one can be
built whose size grows with N. Here the growth is made concrete with the project's compiler.

Tokens (T of them, fixed): [CLS, w_1, …, w_n, PAD, …, PAD], read at token 0 (CLS).
Block 0's attention (one extra head, hardmax over equal scores = uniform average) writes
x = k/T to channel x[0] of every token, k = #1s (PAD and CLS count as 0). Parity is then a
function of x alone, g(k/T) = +1 if k is odd, −1 if even, on the grid k = 0..N, and
g is compiled by :func:`expressivity.compile.compile_maxout` (hardmax: exact):

* ``method="interpolate"`` (default): T = N + 1 and g = ``interpolate_1d`` through the
  N + 1 knots (k/T, ±1) — one ReLU layer of N + 1 units: 2 blocks, N + 1 heads; the width
  (heads, parameters) grows linearly and the dense parameter count quadratically in N.
* ``method="sawtooth"``: T = 2^L with L = ⌈log2(N + 1)⌉ and g = 2·t^{∘L} − 1, with the tent
  map t(x) = 2·min(x, 1 − x) (Telgarsky): t^{∘L}(k/2^L) = k mod 2. One rank-2 maxout unit
  per layer: L + 1 blocks, 1 head each — the depth grows as log2 N.

The compiled blocks treat every token t ≥ (compiled token count) like token 0 (its learned
position row is copied), so the max-by-attention over the T tokens is unchanged.
The logit is z = g(x) = ±1, so P(accept) = σ(±1) and z > 0 ⇔ n-bit string has odd weight.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ..compile import compile_maxout
from ..cpwl import MaxoutNetwork, interpolate_1d
from ..languages import CLS, PAD, Vocab, token_layout
from ..languages import get as get_language
from ..memory import check_memory
from ..rules import check_int, parse_lengths
from ..transformer import ChannelMap, Weights
from .base import Construction, Encoded

METHODS = ("interpolate", "sawtooth")
VOCAB = Vocab("01")
LANGUAGE = get_language("parity")


def parity_net(max_length: int, method: str = "interpolate") -> tuple[MaxoutNetwork, int]:
    """(g, T): the maxout network with g(k/T) = +1 (k odd) / −1 (k even) for k = 0..N."""
    N = max_length
    if method == "interpolate":
        T = N + 1
        k = np.arange(N + 1)
        return interpolate_1d(k / T, np.where(k % 2 == 1, 1.0, -1.0)), T
    L = max(1, math.ceil(math.log2(N + 1)))
    first = (np.array([[[-2.0], [2.0]]]), np.array([[0.0, -2.0]]))  # g_1 = max(−2x, 2x − 2) = −t(x)
    later = (np.array([[[2.0], [-2.0]]]), np.array([[0.0, -2.0]]))  # g_{l+1} = max(2g, −2g − 2) = −t(−g)
    layers = [first] + [later] * (L - 1)
    readout = (np.array([[-2.0]]), np.array([-1.0]))  # 2·t^L − 1 = −2·g_L − 1
    return MaxoutNetwork.from_weights(layers, readout), 2**L


def _encoder(T: int, N: int):
    def encode(strings: list[str]) -> Encoded:
        B = len(strings)
        n = len(strings[0]) if B else 0
        if n > N:
            raise ValueError(f"parity-compiled: strings have length {n} > max_length = {N}")
        ids = torch.from_numpy(token_layout(VOCAB.ids_of(LANGUAGE.to_ids(strings)), prefix=(CLS,),
                                            suffix=(PAD,) * (T - 1 - n)))
        return Encoded(ids, None, torch.zeros(B, dtype=torch.long))
    return encode


def build(max_length: int = 12, method: str = "interpolate") -> Construction:
    """PARITY for all lengths n ≤ ``max_length`` (hardmax, exact)."""
    N = check_int(max_length, "parity-compiled: max_length", min=1)
    if method not in METHODS:
        raise ValueError(f"parity-compiled: method must be one of {METHODS}, got {method!r}")
    if method == "interpolate":  # N + 1 heads on ~2N channels: parameters grow like 40·N²
        check_memory(3 * 8.0 * (40.0 * (N + 1) ** 2 + 1000), f"parity-compiled (interpolate) with max_length = {N}",
                     hint="use a smaller max_length, or method=sawtooth (depth log2 N instead of width N)")
    net, T = parity_net(N, method)
    compiled = compile_maxout(net, domain=(0.0, 1.0), attention="hardmax")
    src = compiled.transformer
    # the compiled model on one more channel, bit1 = [w_j = 1], read from token ids
    w = Weights.from_model(src).relabel(ChannelMap(src.channels.names + ("bit1",)))
    w.reset_embedding(d_vocab=len(VOCAB))
    w.embed(int(VOCAB.ids_of(1)), {"bit1": 1.0})
    w.repeat_position(T, row=0)  # extra tokens behave like token 0
    # block 0 attention (empty in the compiled model): head 0 averages bit1 into x[0]
    w.head(0, 0, value={"bit1": 1.0}, out={"x[0]": 1.0})
    model = w.transformer(d_mlp=src.cfg.d_mlp, positional="learned", attention="hardmax", dtype="float64")
    cfg = model.cfg
    info = {
        "method": method,
        "n_tokens": T,
        "n_blocks": cfg.n_layers,
        "n_heads": cfg.n_heads,
        "maxout_depth": net.depth,
        "maxout_widths": list(net.widths),
        "closed_form_logit": "±1 (hardmax, exact)",
    }
    return Construction(
        name="parity-compiled", transformer=model, attention="hardmax", language=LANGUAGE,
        encoder=_encoder(T, N), params={"max_length": N, "method": method},
        n_tokens=lambda n: T, max_length=N,
        description=f"PARITY for n ≤ {N}: uniform attention computes k/T, compiled CPWL g(k/T) = ±1 ({method})",
        info=info,
    )


def growth_table(lengths, method: str = "interpolate") -> list[dict]:
    """Rows (N, blocks, heads, d_model, params, nonzero params) for each N in ``lengths``."""
    rows = []
    for N in parse_lengths(lengths, "lengths"):
        c = build(N, method)
        cfg = c.transformer.cfg
        rows.append({"N": int(N), "method": method, "blocks": cfg.n_layers, "heads": cfg.n_heads,
                     "d_model": cfg.d_model, "d_mlp": cfg.d_mlp, "n_tokens": cfg.n_ctx,
                     "params": c.transformer.n_params(), "nonzero": c.transformer.n_params(nonzero=True)})
    return rows
