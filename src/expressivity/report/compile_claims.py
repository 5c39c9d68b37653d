"""Claims of Gu et al. (2026) about the Maxout/ReLU → Transformer compiler.

* ``compile.hardmax-exact`` (Thm 3.1/3.2, Cor 3.3): with hardmax attention the compiled
  transformer F equals the maxout net f: max_x |F(x) − f(x)| ≤ 1e-9 in float64 on ≥ 10^4
  random points per net plus points exactly on ties w_ij·x + b_ij = w_ik·x + b_ik, for random
  maxout nets and a ReLU MLP.
* ``compile.softmax-rate``: with σ_λ attention, sup_x |F_λ(x) − f(x)| ≤ error_bound() for
  λ ∈ {1, 10, …, 10^6}, and the error falls as O(1/λ): log-log slope ≈ −1. The sup is taken
  over a grid plus points at distance s/λ from every breakpoint (where σ_λ errs most).
* ``compile.complexity``: blocks per maxout layer ≤ 3 (the paper's figure; ours D + 1 for
  depth D) and "comparable" parameter counts (non-zero parameters a bounded multiple of the
  net's, not growing with width).
"""

from __future__ import annotations

import numpy as np

from . import figures
from .claims import Check, ClaimSpec, Context, Measurement, fmt

LAMBDAS = (1.0, 10.0, 1e2, 1e3, 1e4, 1e5, 1e6)

# --------------------------------------------------------------------------- helpers


def _nets(ctx: Context):
    """(name, MaxoutNetwork) pairs: random maxout nets and one ReLU MLP, per size."""
    import torch
    from torch import nn

    from ..cpwl import MaxoutNetwork, from_relu_mlp

    shapes = ctx.pick(
        {
            "test": [(1, (3, 3), 3), (3, (6, 6), (2, 4))],
            "quick": [(1, (4, 4, 4), 3), (2, (8, 8), (2, 5)), (4, (12, 12, 12), 4), (8, (16,) * 4, 3)],
            "standard": [(1, (6,) * 6, 4), (2, (16,) * 4, (2, 3, 5, 6)), (4, (16,) * 5, 4), (8, (16,) * 6, 6)],
            "full": [(1, (6,) * 6, 4), (2, (16,) * 4, (2, 3, 5, 6)), (4, (16,) * 5, 4),
                     (8, (16,) * 6, 6), (8, (32,) * 4, 3)],
        }
    )
    out = []
    for k, (d, widths, ranks) in enumerate(shapes):
        net = MaxoutNetwork.random(d, widths, ranks, seed=ctx.seed + k)
        out.append((f"maxout d={d} widths={'×'.join(map(str, widths))} ranks={ranks}", net))
    torch.manual_seed(ctx.seed)
    hidden = ctx.pick({"test": (6,), "quick": (16, 16), "standard": (32, 32), "full": (32, 32, 32)})
    layers: list[nn.Module] = []
    prev = 2
    for h in hidden:
        layers += [nn.Linear(prev, h), nn.ReLU()]
        prev = h
    mlp = nn.Sequential(*layers, nn.Linear(prev, 1)).double()
    out.append((f"ReLU MLP 2-{'-'.join(map(str, hidden))}-1", from_relu_mlp(mlp)))
    return out


def _tie_points(net, n: int, rng: np.random.Generator, lo: float, hi: float) -> np.ndarray:
    """Points on first-layer ties: project random x onto {x: (w_ij − w_ik)·x + b_ij − b_ik = 0}."""
    W, b = net.layers[0].W, net.layers[0].b  # (m, p, d), (m, p)
    m, p, d = W.shape
    if p < 2:
        return np.zeros((0, d))
    x = rng.uniform(lo, hi, (n, d))
    i = rng.integers(0, m, n)
    j = rng.integers(0, p, n)
    k = (j + rng.integers(1, p, n)) % p  # k ≠ j
    a = W[i, j] - W[i, k]  # (n, d)
    c = b[i, j] - b[i, k]  # (n,)
    nn2 = np.einsum("nd,nd->n", a, a)
    keep = nn2 > 1e-12
    t = (np.einsum("nd,nd->n", a, x) + c) / np.where(keep, nn2, 1.0)
    y = x - t[:, None] * a
    inside = keep & np.all((y >= lo) & (y <= hi), axis=1)
    return y[inside]


def _pattern(net, x: np.ndarray) -> np.ndarray:
    """Argmax pattern of every maxout unit of every layer: (N, Σ m_l) ints."""
    h, cols = x, []
    for layer in net.layers:
        pre = layer.pre(h)  # (N, m, p)
        cols.append(pre.argmax(axis=2))
        h = pre.max(axis=2)
    return np.concatenate(cols, axis=1)


def _breakpoints_1d(net, lo: float, hi: float, n_grid: int = 4001, iters: int = 55) -> np.ndarray:
    """Breakpoints of a 1-input maxout net on [lo, hi]: pattern changes on a grid, bisected."""
    g = np.linspace(lo, hi, n_grid)
    pat = _pattern(net, g[:, None])
    change = np.any(pat[1:] != pat[:-1], axis=1)
    a, b = g[:-1][change], g[1:][change]
    pa = pat[:-1][change]
    for _ in range(iters):  # vectorised bisection over all bracketing intervals at once
        mid = (a + b) / 2
        same = np.all(_pattern(net, mid[:, None]) == pa, axis=1)
        a, b = np.where(same, mid, a), np.where(same, b, mid)
    return (a + b) / 2


# --------------------------------------------------------------------------- claims


def hardmax_exact(ctx: Context) -> Measurement:
    from ..compile import compile_maxout

    rng = np.random.default_rng(ctx.seed)
    n_points = ctx.pick({"test": 10_000, "quick": 10_000, "standard": 50_000, "full": 100_000})
    n_ties = ctx.pick({"test": 1_000, "quick": 2_000, "standard": 10_000, "full": 20_000})
    lo, hi = -1.0, 1.0
    nets = _nets(ctx)
    rows, checks = [], []
    for k, (name, net) in enumerate(nets):
        cm = compile_maxout(net, domain=(lo, hi), attention="hardmax")
        x = np.concatenate([rng.uniform(lo, hi, (n_points, net.in_dim)),
                            _tie_points(net, n_ties, rng, lo, hi)])
        err = float(np.max(np.abs(cm.evaluate(x) - net(x))))
        rows.append({"net": name, "points": len(x), "ties": len(x) - n_points, "max_abs_error": err,
                     "depth": net.depth, "blocks": cm.n_blocks, "tokens": cm.n_tokens})
        checks.append(Check(f"max |F − f| ({name}, {len(x)} points)", err, "<=", 1e-9))
        ctx.progress((k + 1) / (len(nets) + 1))

    # figure: a 1-D net and its compiled transformer, and the error per net
    net1 = nets[0][1]
    cm1 = compile_maxout(net1, domain=(lo, hi), attention="hardmax")
    g = np.linspace(lo, hi, 2001)[:, None]
    fig, (ax1, ax2) = figures.new(2)
    ax1.plot(g[:, 0], net1(g)[:, 0], lw=3, alpha=0.4, label="maxout net f")
    ax1.plot(g[:, 0], cm1.evaluate(g)[:, 0], "k--", lw=1, label="compiled transformer F (hardmax)")
    ax1.set_xlabel("x")
    ax1.set_title(f"{nets[0][0]}", fontsize=9)
    figures.legend(ax1, fontsize=8)
    errs = np.array([r["max_abs_error"] for r in rows])
    floor = 1e-18
    ax2.bar(range(len(rows)), np.maximum(errs, floor), color="tab:blue")
    ax2.axhline(1e-9, color="red", ls="--", label="bound 1e-9")
    ax2.set_yscale("log")
    ax2.set_ylim(floor / 10, 1e-6)
    ax2.set_xticks(range(len(rows)), [f"net {i + 1}" for i in range(len(rows))])
    ax2.set_ylabel("max |F(x) − f(x)|  (0 shown at 1e-18)")
    figures.legend(ax2, fontsize=8)
    figures.status_title(ax2, "hardmax: error per network (float64)", all(c.ok() for c in checks))
    ctx.progress(1.0)
    worst = max(r["max_abs_error"] for r in rows)
    total = sum(r["points"] for r in rows)
    return Measurement(
        checks=tuple(checks),
        summary=f"max |error| = {fmt(worst)} over {len(rows)} nets, {total} points (incl. ties)",
        numbers={"nets": rows},
        figure=figures.png(fig),
    )


def softmax_rate(ctx: Context) -> Measurement:
    from ..compile import compile_maxout
    from ..cpwl import MaxoutNetwork

    lo, hi = -1.0, 1.0
    rng = np.random.default_rng(ctx.seed)
    widths, ranks = ctx.pick({"test": ((3, 3), 3), "quick": ((4, 4, 4), 3), "standard": ((6, 6, 6), 4),
                              "full": ((6, 6, 6, 6), 4)})
    net = MaxoutNetwork.random(1, widths, ranks, seed=ctx.seed)
    net2 = MaxoutNetwork.random(3, (6, 6), 3, seed=ctx.seed + 1)
    bps = _breakpoints_1d(net, lo, hi)
    offsets = np.concatenate([-np.logspace(-1.5, 1.5, 13), np.logspace(-1.5, 1.5, 13)])
    grid = np.linspace(lo, hi, ctx.pick({"test": 2001, "quick": 4001, "standard": 10001, "full": 20001}))
    x2 = rng.uniform(lo, hi, (ctx.pick({"test": 2000, "quick": 5000, "standard": 20000, "full": 50000}), 3))
    f2 = net2(x2)
    rows, checks = [], []
    for k, lam in enumerate(LAMBDAS):
        x = np.concatenate([grid, (bps[:, None] + offsets[None, :] / lam).ravel()])
        x = np.clip(x, lo, hi)[:, None]
        cm = compile_maxout(net, domain=(lo, hi), attention="softmax", lam=lam)
        out = cm.evaluate(x)
        err = float(np.max(np.abs(out - net(x)))) if np.all(np.isfinite(out)) else float("nan")
        cm2 = compile_maxout(net2, domain=(lo, hi), attention="softmax", lam=lam)
        out2 = cm2.evaluate(x2)
        err2 = float(np.max(np.abs(out2 - f2))) if np.all(np.isfinite(out2)) else float("nan")
        rows.append({"lam": lam, "error": err, "bound": cm.error_bound(),
                     "error_3d": err2, "bound_3d": cm2.error_bound()})
        checks.append(Check(f"sup error, λ={lam:g} (1-D net)", err, "<=", cm.error_bound()))
        checks.append(Check(f"sup error, λ={lam:g} (3-D net)", err2, "<=", cm2.error_bound()))
        ctx.progress((k + 1) / len(LAMBDAS))
    lam = np.array([r["lam"] for r in rows])
    err = np.array([r["error"] for r in rows])
    use = (lam >= 10) & np.isfinite(err) & (err > 0)
    slope = float(np.polyfit(np.log10(lam[use]), np.log10(err[use]), 1)[0]) if use.sum() >= 2 else float("nan")
    checks.append(Check("log-log slope of sup error vs λ (λ ≥ 10)", slope, "~", -1.0, tol=0.2))

    fig, (ax,) = figures.new(1, width=6.0, height=4.0)
    ax.loglog(lam, [r["bound"] for r in rows], "r--", marker="v", label="error_bound() (1-D net)")
    ax.loglog(lam, err, "o-", color="tab:blue", label="measured sup error (1-D net)")
    ax.loglog(lam, [r["bound_3d"] for r in rows], ":", color="salmon", marker="v", label="error_bound() (3-D net)")
    ax.loglog(lam, [r["error_3d"] for r in rows], "s-", color="tab:green", label="measured max error (3-D net)")
    ax.loglog(lam, err[0] / lam, color="gray", lw=0.8, label="slope −1 reference")
    ax.set_xlabel("λ (softmax scale)")
    ax.set_ylabel(r"$\sup_x |F_\lambda(x) - f(x)|$")
    figures.legend(ax, fontsize=8)
    figures.status_title(ax, rf"$\sigma_\lambda$ attention: error vs $\lambda$ (fitted slope {slope:.2f})", all(c.ok() for c in checks))
    ratio = max(r["error"] / r["bound"] for r in rows)
    return Measurement(
        checks=tuple(checks),
        summary=(f"slope {slope:.3f}; error at λ=1e6: {fmt(rows[-1]['error'])} "
                 f"(bound {fmt(rows[-1]['bound'])}); max error/bound = {ratio:.3f}"),
        numbers={"rows": rows, "slope": slope, "breakpoints": len(bps)},
        figure=figures.png(fig),
        notes=(f"The 1-D net ({len(bps)} breakpoints) is probed at distances s/λ, "
               "s ∈ ±[0.03, 30], from every breakpoint, where $\\sigma_\\lambda$'s error peaks; the 3-D net only "
               "on random points, so its error can fall faster than 1/λ."),
    )


def complexity(ctx: Context) -> Measurement:
    from ..compile import compile_maxout, complexity_report
    from ..cpwl import MaxoutNetwork

    shapes = ctx.pick(
        {
            "test": [(2, 4, 3, 2), (2, 16, 3, 2)],
            "quick": [(1, 4, 2, 1), (2, 8, 3, 2), (2, 32, 3, 2), (4, 16, 4, 3), (4, 64, 4, 3),
                      (8, 64, 8, 4), (2, 32, 3, 6)],
            "standard": [(1, 4, 2, 1), (2, 8, 3, 2), (2, 32, 3, 2), (4, 16, 4, 3), (4, 64, 4, 3),
                         (8, 64, 8, 4), (16, 128, 4, 4), (2, 32, 3, 6)],
            "full": [(1, 4, 2, 1), (2, 8, 3, 2), (2, 32, 3, 2), (4, 16, 4, 3), (4, 64, 4, 3),
                     (8, 64, 8, 4), (16, 128, 4, 4), (2, 32, 3, 6), (2, 128, 8, 8)],
        }
    )
    rows, checks = [], []
    for k, (d, m, p, D) in enumerate(shapes):
        net = MaxoutNetwork.random(d, (m,) * D, p, seed=ctx.seed + k)
        r = complexity_report(net, compile_maxout(net, domain=(-1.0, 1.0)))
        rows.append({"d": d, "m": m, "p": p, "D": D, **r.as_dict()})
        name = f"d={d} m={m} p={p} D={D}"
        checks.append(Check(f"blocks per maxout layer ({name})", r.blocks_per_layer, "<=", 3.0))
        checks.append(Check(f"blocks ({name}) = D + 1", r.blocks, "==", D + 1))
        checks.append(Check(f"non-zero parameter ratio ({name})", r.param_ratio_nonzero, "<=", 6.0))
        ctx.progress((k + 1) / len(shapes))
    # "comparable": the ratio does not grow with width (same d, p, D; larger m)
    by_key: dict[tuple, list] = {}
    for r in rows:
        by_key.setdefault((r["d"], r["p"], r["D"]), []).append(r)
    for key, group in by_key.items():
        if len(group) >= 2:
            group = sorted(group, key=lambda r: r["m"])
            checks.append(Check(
                f"ratio at m={group[-1]['m']} ≤ ratio at m={group[0]['m']} (d,p,D)={key}",
                group[-1]["param_ratio_nonzero"], "<=", group[0]["param_ratio_nonzero"]))

    fig, (ax1, ax2) = figures.new(2)
    net_p = np.array([r["net_nonzero"] for r in rows])
    ax1.loglog(net_p, [r["params_nonzero"] for r in rows], "o", label="transformer, non-zero")
    ax1.loglog(net_p, [r["params_dense"] for r in rows], "s", mfc="none", label="transformer, dense")
    xs = np.array([net_p.min(), net_p.max()])
    ax1.loglog(xs, 2 * xs, "k:", lw=0.8, label="2 × net")
    ax1.loglog(xs, 6 * xs, "r--", lw=0.8, label="6 × net (bound checked)")
    ax1.set_xlabel("maxout net parameters")
    ax1.set_ylabel("compiled transformer parameters")
    figures.legend(ax1, fontsize=8)
    ax1.set_title("parameters: comparable (non-zero ratio → 2)", fontsize=10)
    Ds = np.array([r["D"] for r in rows])
    ax2.plot(Ds, [r["blocks"] for r in rows], "o", ms=8, label="blocks (ours)")
    dd = np.arange(1, Ds.max() + 1)
    ax2.plot(dd, dd + 1, "g-", label="D + 1 (our target)")
    ax2.plot(dd, 3 * dd, "r--", label="3D (Thm 3.2's construction)")
    ax2.set_xlabel("maxout depth D")
    ax2.set_ylabel("transformer blocks")
    figures.legend(ax2, fontsize=8)
    figures.status_title(ax2, "depth", all(c.ok() for c in checks))
    worst_bpl = max(r["blocks_per_layer"] for r in rows)
    big = max(rows, key=lambda r: r["net_nonzero"])
    return Measurement(
        checks=tuple(checks),
        summary=(f"blocks = D + 1 for all {len(rows)} nets (max {worst_bpl:.2f} per layer); "
                 f"non-zero param ratio {min(r['param_ratio_nonzero'] for r in rows):.2f}–"
                 f"{max(r['param_ratio_nonzero'] for r in rows):.2f} "
                 f"({big['param_ratio_nonzero']:.2f} for the largest; dense {big['param_ratio_dense']:.1f})"),
        numbers={"nets": rows},
        figure=figures.png(fig),
        notes=("Dense counts include the zero entries of the shared FFN matrices (every token "
               "carries every piece's weights); non-zero counts are the construction's real size."),
    )


SPECS = [
    ClaimSpec(
        id="compile.hardmax-exact",
        title="A hardmax transformer computes any maxout / ReLU network exactly",
        source="Gu et al. 2026, Thm 3.1, Thm 3.2, Cor 3.3",
        bound=r"$\max_x \lvert F(x) - f(x) \rvert \le 10^{-9}$ (float64) on $\ge 10^4$ random points plus tie points",
        bound_value=1e-9,
        run=hardmax_exact,
        how_to_read=(
            "Left: a 1-D net and its compiled transformer (the curves coincide); right: max |F(x) − "
            "f(x)| per network (random maxout nets and one ReLU MLP, via ReLU(t) = max(0, t)) on a log "
            "axis, below the dashed 1e-9 line. The points include ties between two pieces. Exactness, "
            "not approximation: the error is float64 round-off."
        ),
        budget_s={"test": 10, "quick": 30, "standard": 120, "full": 300},
    ),
    ClaimSpec(
        id="compile.softmax-rate",
        title=r"With softmax $\sigma_\lambda$ the compiled transformer is within $O(1/\lambda)$ of the net",
        source="Gu et al. 2026, §3 (softmax vs hardmax)",
        bound=(r"$\sup_x \lvert F_{\sigma_\lambda}(x) - f(x) \rvert \le$ error_bound() = per-layer $(T-1)/(e\lambda)$ "
               r"propagated, for $\lambda = 1 \ldots 10^6$; slope $\approx -1$"),
        bound_value=-1.0,
        run=softmax_rate,
        how_to_read=(
            "Measured sup error (blue: the 1-D net, green: a 3-D net) vs the bound computed from the "
            "weights (red, salmon) against λ on log-log axes. Holds if measured stays under the bound "
            "at every λ and the blue line has slope ≈ −1 (10× λ → 10× less error, the grey reference "
            "line), with no NaN or overflow at λ = 10^6."
        ),
        budget_s={"test": 10, "quick": 30, "standard": 120, "full": 300},
    ),
    ClaimSpec(
        id="compile.complexity",
        title="Compiled transformers have comparable complexity: ≤ 3 blocks per maxout layer",
        source="Gu et al. 2026, Thm 3.1, Thm 3.2 (comparable parameter count)",
        bound=r"blocks per layer $\le 3$ (ours: $D + 1$ blocks); non-zero params $\le 6\times$ the net's, not growing with width",
        bound_value=3.0,
        run=complexity,
        how_to_read=(
            "Left: compiled parameter counts vs the net's (non-zero ≈ 2× for large nets, under the "
            "dashed 6× bound; dense counts include the zeros of the shared FFN matrices); right: blocks "
            "vs maxout depth D: ours D + 1 against 3D for the paper's construction."
        ),
        budget_s={"test": 5, "quick": 15, "standard": 60, "full": 120},
    ),
]
