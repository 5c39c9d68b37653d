"""Theorem 4.4 measured: linear regions of compiled transformers grow exponentially with depth.

Paper 1 (Gu, Yang, Zhou 2026), Thm 4.4: a fixed-architecture transformer family of depth D
realises CPWL functions with N(F) ≥ C·q^(⌊D/3⌋ − 1) linear regions. We build the rank-q
sawtooth maxout network of depth L (:func:`~expressivity.cpwl.families.sawtooth_maxout`,
exactly q^L pieces on [0, 1]), compile it with hardmax attention (``compile_maxout``: D = L + 1
blocks, T = q tokens) and count the linear regions of both on the segment [0, 1] exactly.
The paper's bound is evaluated at our D with C = 1 (the summaries give no constant; the
construction behind the bound uses 3 layers per maxout layer, ours uses one block).
Contrast: random maxout networks of the same shape (width 2, rank q, depth L).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from ..cpwl import MaxoutNetwork
from ..cpwl.families import sawtooth_maxout
from .count import count_regions
from .domains import Segment

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

    def as_dict(self) -> dict:
        return asdict(self)


def depth_table(qs=(2, 3, 4, 5), depths=range(1, 9), n_random: int = 3, seed: int = 0,
                progress=None) -> list[DepthRow]:
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
            rows.append(DepthRow(q, L, D, cm.n_tokens, r_t.linear_regions, r_m.linear_regions, q**L,
                                 C_PAPER * float(q) ** (D // 3 - 1), float(np.mean(rand)) if rand else 0.0,
                                 int(max(rand)) if rand else 0, r_t.seconds))
            if progress is not None:
                progress(rows[-1])
    return rows


def quick_table() -> list[DepthRow]:
    """A few-second variant: q ∈ {2, 3}, L ∈ 1..5."""
    return depth_table(qs=(2, 3), depths=range(1, 6), n_random=2)


def format_table(rows: list[DepthRow]) -> str:
    head = "| q | L | blocks D | tokens T | counted (transformer) | maxout | q^L | C·q^(⌊D/3⌋−1), C=1 | random mean / max |"
    sep = "|---|---|---|---|---|---|---|---|---|"
    lines = [head, sep]
    for r in rows:
        lines.append(f"| {r.q} | {r.L} | {r.D} | {r.T} | {r.counted} | {r.maxout} | {r.predicted} | "
                     f"{r.paper_bound:g} | {r.random_mean:.1f} / {r.random_max} |")
    return "\n".join(lines)


def plot_depth_table(rows: list[DepthRow], path) -> None:
    """PNG: counted linear regions vs transformer blocks D (log scale), one line per q."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4), dpi=120)
    for q in sorted({r.q for r in rows}):
        rr = [r for r in rows if r.q == q]
        D = [r.D for r in rr]
        line, = ax.plot(D, [r.counted for r in rr], "o-", label=f"compiled sawtooth, q={q}")
        ax.plot(D, [r.paper_bound for r in rr], ":", color=line.get_color(), alpha=0.7)
        ax.plot(D, [max(r.random_mean, 1) for r in rr], "x--", color=line.get_color(), alpha=0.5)
    ax.set_yscale("log")
    ax.set_xlabel("transformer blocks D")
    ax.set_ylabel("linear regions on [0, 1]")
    ax.set_title("Thm 4.4: counted (solid), C·q^(⌊D/3⌋−1) (dotted), random (dashed)", fontsize=8)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
