"""Theorem 4.4 measured: linear regions of compiled transformers grow exponentially with depth.

Paper 1 (Gu, Yang, Zhou 2026), Thm 4.4: a fixed-architecture transformer family of depth D
realises CPWL functions with N(F) ≥ C·q^(⌊D/3⌋ − 1) linear regions. We build the rank-q
sawtooth maxout network of depth L (:func:`~expressivity.cpwl.families.sawtooth_maxout`,
exactly q^L pieces on [0, 1]), compile it with hardmax attention (``compile_maxout``: D = L + 1
blocks, T = q tokens) and count the linear regions of both on the segment [0, 1] exactly.
The paper's bound is evaluated at our D with C = 1 (the summaries give no constant; the
construction behind the bound uses 3 layers per maxout layer, ours uses one block).
Contrast: random maxout networks of the same shape (width 2, rank q, depth L), and the same
shape trained (Adam, MSE) to fit the sawtooth target z_q^∘L from a random start.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from ..cpwl import MaxoutNetwork
from ..cpwl.families import sawtooth_maxout
from ..regions import Segment, count_regions

C_PAPER = 1.0  # the constant C in C·q^(⌊D/3⌋−1) (not stated in the summaries; we use 1)


@dataclass(frozen=True)
class DepthRow:
    q: int  # rank = tokens of the compiled model
    L: int  # maxout depth
    D: int  # transformer blocks
    T: int  # tokens
    counted: int  # linear regions of the compiled transformer on [0, 1]
    maxout: int  # linear regions of the source maxout network on [0, 1]
    predicted: int  # q^L
    paper_bound: float  # C·q^(⌊D/3⌋ − 1)
    random_mean: float  # mean linear regions of random width-2 rank-q depth-L maxout nets
    random_max: int
    seconds: float  # counting time of the transformer
    trained: int = -1  # linear regions of a trained net of the same shape (−1: not run)
    trained_mse: float = float("nan")  # its final mean squared error to z_q^∘L

    def as_dict(self) -> dict:
        return asdict(self)


def train_maxout(q: int, L: int, steps: int = 400, seed: int = 0) -> tuple[MaxoutNetwork, float]:
    """Width-2 rank-q depth-L maxout net fitted by Adam to z_q^∘L on 1024 points of [0, 1]."""
    import torch

    from ..cpwl.families import zigzag

    start = MaxoutNetwork.random(1, [2] * L, q, seed=seed)
    gen = torch.Generator().manual_seed(seed)
    params = [torch.tensor(a, dtype=torch.float64, requires_grad=True)
              for layer in start.layers for a in (layer.W, layer.b)]
    A = torch.tensor(start.readout[0], requires_grad=True)
    c = torch.tensor(start.readout[1], requires_grad=True)
    x = torch.rand(1024, 1, generator=gen, dtype=torch.float64)
    y = torch.as_tensor(zigzag(q, x.numpy()[:, 0], L))[:, None]
    opt = torch.optim.Adam(params + [A, c], lr=1e-2)
    for _ in range(steps):
        h = x
        for W, b in zip(params[0::2], params[1::2]):
            h = (torch.einsum("nd,mpd->nmp", h, W) + b).amax(dim=2)
        loss = ((h @ A.T + c - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    layers = [(W.detach().numpy(), b.detach().numpy()) for W, b in zip(params[0::2], params[1::2])]
    return MaxoutNetwork.from_weights(layers, (A.detach().numpy(), c.detach().numpy())), float(loss.detach())


def depth_table(qs=(2, 3, 4, 5), depths=range(1, 9), n_random: int = 3, seed: int = 0,
                progress=None, trained: bool = False) -> list[DepthRow]:
    """One row per (q, L): exact counts for the compiled transformer and the maxout net."""
    from ..compile import compile_maxout

    seg = Segment([0.0], [1.0])
    rows = []
    for q in qs:
        for L in depths:
            net = sawtooth_maxout(q, L)
            cm = compile_maxout(net, domain=(0.0, 1.0))
            r_t = count_regions(cm, seg)
            r_m = count_regions(net, seg)
            rand = [count_regions(MaxoutNetwork.random(1, [2] * L, q, seed=seed + 1000 * k + L), seg).linear_regions
                    for k in range(n_random)]
            D = cm.n_blocks
            n_tr, mse = -1, float("nan")
            if trained:
                net_tr, mse = train_maxout(q, L, seed=seed + L)
                n_tr = count_regions(net_tr, seg).linear_regions
            rows.append(DepthRow(q, L, D, cm.n_tokens, r_t.linear_regions, r_m.linear_regions, q**L,
                                 C_PAPER * float(q) ** (D // 3 - 1), float(np.mean(rand)) if rand else 0.0,
                                 int(max(rand)) if rand else 0, r_t.seconds, n_tr, mse))
            if progress is not None:
                progress(rows[-1])
    return rows
