"""Theorem 4.4 of Gu et al. (2026): linear regions grow exponentially with transformer depth.

``regions.depth``: the rank-q sawtooth maxout family of depth L (exactly q^L pieces on [0, 1])
compiled to hardmax transformers of D = L + 1 blocks; the linear regions of the compiled
model on [0, 1] are counted exactly (``expressivity.regions``) and must equal q^L — the
family's predicted count — and the source net's own count, and lie above the paper's
C·q^(⌊D/3⌋ − 1) (C = 1: the summaries state no constant). Random maxout nets of the same
shape (width 2, rank q, depth L), and nets of that shape fitted to the sawtooth by Adam,
show how far typical and trained nets are from this.
"""

from __future__ import annotations

import numpy as np

from . import figures
from .claims import Check, ClaimSpec, Context, Measurement


def depth(ctx: Context) -> Measurement:
    from ..compile import compile_maxout
    from ..cpwl.families import sawtooth_maxout
    from ..regions import Segment, count_regions
    from ..regions.theorem44 import depth_table

    plan = ctx.pick({
        "test": {2: range(1, 6), 3: range(1, 4)},
        "quick": {2: range(1, 9), 3: range(1, 8), 4: range(1, 7), 5: range(1, 6)},
        "full": {2: range(1, 11), 3: range(1, 9), 4: range(1, 8), 5: range(1, 8)},
    })
    n_random = ctx.pick({"test": 2, "quick": 3, "full": 10})
    trained = ctx.size != "test"  # also fit a net of the same shape to the sawtooth (Adam)
    rows = []
    for k, (q, depths) in enumerate(plan.items()):
        rows += depth_table(qs=(q,), depths=depths, n_random=n_random, seed=ctx.seed, trained=trained)
        ctx.progress((k + 1) / (len(plan) + 1))
    checks = []
    for r in rows:
        checks.append(Check(f"q={r.q} L={r.L} (D={r.D}): counted = q^L", r.counted, "==", r.predicted))
        checks.append(Check(f"q={r.q} L={r.L}: counted = maxout net's count", r.counted, "==", r.maxout))
        checks.append(Check(f"q={r.q} L={r.L}: counted ≥ C·q^(⌊D/3⌋−1)", r.counted, ">=", r.paper_bound))
    for q in plan:
        deep = max((r for r in rows if r.q == q), key=lambda r: r.L)
        checks.append(Check(f"q={q} L={deep.L}: random nets' max count < constructed",
                            deep.random_max, "<=", deep.counted - 1))
        if deep.trained >= 0:
            checks.append(Check(f"q={q} L={deep.L}: trained net's count < constructed",
                                deep.trained, "<=", deep.counted - 1))

    # figure: counts vs D (log) and one compiled sawtooth with its breakpoints
    fig, (ax1, ax2) = figures.new(2)
    for q in plan:
        rr = [r for r in rows if r.q == q]
        D = [r.D for r in rr]
        (line,) = ax1.semilogy(D, [r.counted for r in rr], "o-", label=f"compiled, q={q}")
        ax1.semilogy(D, [r.predicted for r in rr], "+", color=line.get_color(), ms=10)
        ax1.semilogy(D, [r.paper_bound for r in rr], ":", color=line.get_color(), alpha=0.8)
        ax1.semilogy(D, [max(r.random_mean, 1) for r in rr], "x--", color=line.get_color(), alpha=0.5)
        if all(r.trained >= 0 for r in rr):
            ax1.semilogy(D, [max(r.trained, 1) for r in rr], "v", color=line.get_color(), alpha=0.7)
    ax1.set_ylim(0.1, 300 * max(r.counted for r in rows))  # room for the legend above the lines
    ax1.set_xlabel("transformer blocks D")
    ax1.set_ylabel("linear regions on [0, 1]")
    ax1.legend(fontsize=7, title="+ q^L, ⋯ C·q^(⌊D/3⌋−1), x random, ▼ trained", title_fontsize=7)
    figures.status_title(ax1, "Thm 4.4: regions vs depth", all(c.ok() for c in checks))
    q, L = 3, 2
    cm = compile_maxout(sawtooth_maxout(q, L), domain=(0.0, 1.0))
    reg = count_regions(cm, Segment([0.0], [1.0]))
    x = np.linspace(0, 1, 2001)[:, None]
    ax2.plot(x[:, 0], cm.evaluate(x)[:, 0], "k-", lw=1.2)
    for b in reg.breakpoints:
        ax2.axvline(b, color="tab:red", lw=0.5, alpha=0.6)
    ax2.set_xlabel("x")
    ax2.set_title(f"compiled sawtooth q={q}, L={L}: {reg.linear_regions} linear regions "
                  f"(D = {cm.n_blocks} blocks)", fontsize=9)
    ctx.progress(1.0)
    deepest = max(rows, key=lambda r: r.counted)
    return Measurement(
        checks=tuple(checks),
        summary=(f"counted = q^L exactly for all {len(rows)} (q, L) pairs, up to {deepest.counted} regions "
                 f"(q={deepest.q}, D={deepest.D}); random nets of that shape: ≤ {deepest.random_max}"
                 + (f", trained: {deepest.trained}" if deepest.trained >= 0 else "")),
        numbers={"rows": [r.as_dict() for r in rows]},
        figure=figures.png(fig),
        notes=("Our compiler uses D = L + 1 blocks per depth-L maxout net (the paper's construction "
               "about 3L), so at equal D the count q^(D−1) is far above the paper's q^(⌊D/3⌋−1)."),
    )


SPECS = [
    ClaimSpec(
        id="regions.depth",
        title="Linear regions grow exponentially with transformer depth",
        source="Gu et al. 2026, Thm 4.4",
        bound="N(F) ≥ C·q^(⌊D/3⌋−1) (C = 1); for the sawtooth family exactly q^L with D = L + 1",
        bound_value=None,
        run=depth,
        depends=("regions", "compile"),
        how_to_read=(
            "Solid lines: linear regions of the compiled transformers on [0, 1], counted exactly "
            "(breakpoints inserted layer by layer), against the number of blocks D on a log axis "
            "— straight lines mean exponential growth. Crosses: the family's exact count q^L, "
            "dotted: the paper's lower bound, dashed: random maxout nets of the same shape, "
            "triangles: nets of that shape trained to fit the sawtooth — both stay far below."
        ),
        budget_s={"test": 10, "quick": 60, "full": 900},
    ),
]
