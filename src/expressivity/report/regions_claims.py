"""Theorem 4.4 of Gu et al. (2026): linear regions grow exponentially with transformer depth;
and regions of ReLU nets in input dimension d = 1 … 4 against Zaslavsky and Serra et al.

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
    from .theorem44 import depth_table

    plan = ctx.pick({
        "test": {2: range(1, 6), 3: range(1, 4)},
        "quick": {2: range(1, 9), 3: range(1, 8), 4: range(1, 7), 5: range(1, 6)},
        "standard": {2: range(1, 10), 3: range(1, 9), 4: range(1, 7), 5: range(1, 6)},
        "full": {2: range(1, 11), 3: range(1, 9), 4: range(1, 8), 5: range(1, 8)},
    })
    n_random = ctx.pick({"test": 2, "quick": 3, "standard": 5, "full": 10})
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
    figures.legend(ax1, title=r"+ $q^L$, ⋯ $C\,q^{\lfloor D/3 \rfloor - 1}$, x random, ▼ trained", title_fontsize=7)
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
        summary=(f"counted = $q^L$ exactly for all {len(rows)} (q, L) pairs, up to {deepest.counted} regions "
                 f"(q={deepest.q}, D={deepest.D}); random nets of that shape: ≤ {deepest.random_max}"
                 + (f", trained: {deepest.trained}" if deepest.trained >= 0 else "")),
        numbers={"rows": [r.as_dict() for r in rows]},
        figure=figures.png(fig),
        notes=("Our compiler uses D = L + 1 blocks per depth-L maxout net (the paper's construction "
               r"about $3L$), so at equal $D$ the count $q^{D-1}$ is far above the paper's $q^{\lfloor D/3 \rfloor - 1}$."),
    )


def serra_bound(d: int, widths) -> int:
    """Serra, Tjandraatmadja, Ramalingam (ICML 2018), Thm 1: a ReLU net with n_0 = d inputs and
    hidden widths n_1 … n_L has at most Σ_{(j_1 … j_L) ∈ J} ∏_l C(n_l, j_l) linear regions, with
    J = {0 ≤ j_l ≤ min(n_0, n_1 − j_1, …, n_{l−1} − j_{l−1}, n_l)}."""
    from math import comb

    def rec(l: int, cap: int) -> int:
        if l == len(widths):
            return 1
        n = widths[l]
        return sum(comb(n, j) * rec(l + 1, min(cap, n - j)) for j in range(min(cap, n) + 1))

    return rec(0, d)


def dimension(ctx: Context) -> Measurement:
    """One hidden layer in general position: exactly Zaslavsky's Σ_{i≤d} C(n, i) regions in a box
    containing every vertex; random deep nets on [−1, 1]^d: at most Serra et al.'s bound."""
    import itertools
    from math import comb

    from ..regions import Box, count_regions
    from ..regions.ir import Affine, Embed, Program, Read, ReLU

    dims = (1, 2, 3, 4)
    ns = ctx.pick({"test": (2, 4), "quick": (2, 4, 6, 8), "standard": (2, 4, 6, 8, 10), "full": (2, 4, 6, 8, 10, 12)})
    deep_n = ctx.pick({"test": (2, 3), "quick": (2, 3, 4, 6), "standard": (2, 3, 4, 6, 8), "full": (2, 3, 4, 6, 8)})
    rng = np.random.default_rng(ctx.seed)
    rows, checks = [], []
    for k, d in enumerate(dims):
        for n in ns:
            W, b = rng.normal(size=(n, d)), 0.5 * rng.normal(size=n)
            pts = [np.linalg.solve(W[list(c)], -b[list(c)]) for c in itertools.combinations(range(n), d)]
            R = 1.5 * (1 + np.abs(np.array(pts)).max()) if pts else 2.0
            prog = Program(d, (Embed(np.eye(d)[:, None, :], np.zeros((1, d))), Affine(W.T, b), ReLU(), Read((0,))))
            got = count_regions(prog, Box(np.full(d, -R), np.full(d, R))).activation_regions
            z = sum(comb(n, i) for i in range(d + 1))
            rows.append({"d": d, "layers": 1, "neurons": n, "counted": got, "bound": z})
            checks.append(Check(f"d={d}, one layer of {n}: counted = Σ C(n, i≤d)", got, "==", z))
        for n in deep_n:
            widths = [n, n, n]
            layers = [Affine(rng.normal(size=(a, c)) / np.sqrt(a), 0.5 * rng.normal(size=c))
                      for a, c in zip([d] + widths[:-1], widths)]
            ops = [Embed(np.eye(d)[:, None, :], np.zeros((1, d)))]
            for lay in layers:
                ops += [lay, ReLU()]
            prog = Program(d, tuple(ops) + (Read((0,)),))
            got = count_regions(prog, Box(np.full(d, -1.0), np.full(d, 1.0))).activation_regions
            sb = serra_bound(d, widths)
            rows.append({"d": d, "layers": 3, "neurons": 3 * n, "counted": got, "bound": sb})
            checks.append(Check(f"d={d}, random {d}-{n}-{n}-{n} on [−1, 1]^d: counted ≤ Serra bound",
                                got, "<=", sb))
        ctx.progress((k + 1) / len(dims))
    fig, (ax1, ax2) = figures.new(2)
    for d in dims:
        one = [r for r in rows if r["d"] == d and r["layers"] == 1]
        deep = [r for r in rows if r["d"] == d and r["layers"] == 3]
        (line,) = ax1.semilogy([r["neurons"] for r in one], [r["counted"] for r in one], "o", label=f"d={d}")
        ax1.semilogy([r["neurons"] for r in one], [r["bound"] for r in one], "-", color=line.get_color(), alpha=0.6)
        ax2.semilogy([r["neurons"] for r in deep], [r["counted"] for r in deep], "o-", color=line.get_color(),
                     label=f"d={d}")
        ax2.semilogy([r["neurons"] for r in deep], [r["bound"] for r in deep], ":", color=line.get_color())
    ax1.set_xlabel("neurons (one hidden layer)")
    ax1.set_ylabel("activation regions")
    figures.legend(ax1, title="o counted, — Zaslavsky", title_fontsize=7)
    ax2.set_xlabel("neurons (three hidden layers of equal width)")
    figures.legend(ax2, title=r"o counted on $[-1, 1]^d$, ⋯ Serra bound", title_fontsize=7)
    ok = all(c.ok() for c in checks)
    figures.status_title(ax1, "regions vs neurons: one layer", ok)
    figures.status_title(ax2, "random deep nets", ok)
    n_exact = sum(r["layers"] == 1 for r in rows)
    worst = max((r for r in rows if r["layers"] == 3), key=lambda r: r["counted"] / r["bound"])
    return Measurement(
        checks=tuple(checks),
        summary=(f"one layer: Zaslavsky's count exactly in all {n_exact} cases (d = 1 … 4); random deep nets "
                 f"at most {worst['counted'] / worst['bound']:.2g} of Serra's bound (d={worst['d']})"),
        numbers={"rows": rows},
        figure=figures.png(fig),
        notes=("Counts are exact (Box: the subdivision counter; d = 1: the segment counter). Random nets on "
               "$[-1, 1]^d$ count regions inside the box only, so they lie below the whole-space bound."),
    )


SPECS = [
    ClaimSpec(
        id="regions.depth",
        title="Linear regions grow exponentially with transformer depth",
        source="Gu et al. 2026, Thm 4.4",
        bound=r"$N(F) \ge C\, q^{\lfloor D/3 \rfloor - 1}$ ($C = 1$); for the sawtooth family exactly $q^L$ with $D = L + 1$",
        bound_value=None,
        run=depth,
        how_to_read=(
            "Linear regions of the compiled transformers counted exactly on [0, 1] (breakpoints "
            "inserted layer by layer) vs blocks D on a log axis: straight lines = exponential growth. "
            "Plus signs mark the family's exact count $q^L$, dotted lines the paper's lower bound, "
            "dashed crosses random maxout nets of the same shape and triangles nets of that shape "
            "trained to fit the sawtooth — both a handful of regions. Right: one compiled sawtooth with "
            "its linear pieces."
        ),
        budget_s={"test": 10, "quick": 60, "standard": 240, "full": 900},
    ),
    ClaimSpec(
        id="regions.dimension",
        title="Linear regions of ReLU nets in input dimension d: Zaslavsky for one layer, Serra's bound for deep nets",
        source="Zaslavsky 1975; Serra, Tjandraatmadja, Ramalingam 2018, Thm 1",
        bound=r"one layer in general position: exactly $\sum_{i \le d} \binom{n}{i}$; deep: $\le \sum_J \prod_l \binom{n_l}{j_l}$",
        bound_value=None,
        run=dimension,
        how_to_read=(
            "Exact region counts of random ReLU nets in input dimension d = 1…4 (the d-D subdivision "
            "counter on the box) against neurons. Left: one hidden layer of n random hyperplanes in a "
            r"box containing all their vertices (dots) lies on Zaslavsky's $\sum_{i \le d} \binom{n}{i}$ "
            "(lines); right: three-layer nets on $[-1, 1]^d$ stay under Serra et al.'s bound (dotted), "
            "log axis."
        ),
        budget_s={"test": 5, "quick": 15, "standard": 60, "full": 120},
    ),
]
