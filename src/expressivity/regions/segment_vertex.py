"""Fast 1-D path for continuous programs (ReLU / GroupMax / residuals, no hardmax): the state
is stored once per vertex t_0 < t_1 < … < t_P (shared by the two pieces it bounds) instead of
at both ends of every piece, and every inserted breakpoint is a strict sign change (ReLU) or a
change of the argmax on the upper envelope (GroupMax), so every piece is one activation region.
Same tolerance policy as :mod:`.segment`.
"""

from __future__ import annotations

import numpy as np

from .domains import Segment
from .ir import Program, affine
from .segment import MERGE_S, ZERO_RTOL


def _insert(t, fields, vi, s):
    """Insert points at local parameter s ∈ (0, 1) of intervals vi (between vertex vi and vi+1).
    ``fields``: arrays (P+1, ...) interpolated; returns new t, fields and vertex order."""
    order = np.lexsort((s, vi))
    vi, s = vi[order], s[order]
    keep = np.ones(len(vi), bool)
    keep[1:] = ~((vi[1:] == vi[:-1]) & (s[1:] - s[:-1] <= MERGE_S))
    vi, s = vi[keep], s[keep]
    P1 = len(t)
    pos_old = np.arange(P1) + np.searchsorted(vi, np.arange(P1), side="left")
    pos_new = np.arange(len(vi)) + vi + 1
    n_tot = P1 + len(vi)
    t_new = np.empty(n_tot)
    t_new[pos_old] = t
    t_new[pos_new] = t[vi] + s * (t[vi + 1] - t[vi])
    out = []
    for F in fields:
        G = np.empty((n_tot,) + F.shape[1:])
        G[pos_old] = F
        A, B = F[vi], F[vi + 1]
        G[pos_new] = A + s.reshape((-1,) + (1,) * (A.ndim - 1)) * (B - A)
        out.append(G)
    return t_new, out


def partition_segment_vertex(prog: Program, seg: Segment) -> dict:
    steps = prog.steps()
    E, c = steps[0][1], steps[0][2]
    t = np.array([0.0, 1.0])
    x = seg.points(t)
    Y = np.einsum("nk,ktd->ntd", x, E) + c  # (P+1, T, d)
    stack: list[np.ndarray] = []
    for step in steps[1:]:
        kind = step[0]
        if kind == "affine":
            Y = affine(Y, step[1], step[2])
        elif kind == "save":
            stack.append(Y)
        elif kind == "add":
            Y = stack.pop() + Y
        elif kind == "read":
            tok = list(step[1])
            Y = Y.reshape(len(Y), -1) if tok == list(range(Y.shape[1])) else Y[:, tok].reshape(len(Y), -1)
        elif kind == "relu":
            g = affine(Y, step[1], step[2])
            P1 = len(g)
            g2 = g.reshape(P1, -1)
            eps = ZERO_RTOL * np.maximum(g2.max(axis=0), -g2.min(axis=0))
            sp, sn = g2 > eps, g2 < -eps
            vi, ch = np.nonzero((sp[:-1] & sn[1:]) | (sn[:-1] & sp[1:]))
            a, b = g2[:-1], g2[1:]
            if len(vi):
                s = a[vi, ch] / (a[vi, ch] - b[vi, ch])
                if step[1] is not None and Y.shape[-1] <= 8:  # narrow input: recompute g from it
                    t, (Y, *stack) = _insert(t, [Y, *stack], vi, s)
                    g = affine(Y, step[1], step[2])
                else:
                    t, (g, *stack) = _insert(t, [g, *stack], vi, s)
            Y = np.maximum(g, 0, out=g)
        elif kind == "max":
            idx = step[3]
            g = affine(Y, step[1], step[2])
            p = idx.shape[1]
            if p > 1:
                z = g[..., idx].reshape(len(g), -1, p)  # (P+1, U, p)
                eps = ZERO_RTOL * np.abs(z).max(axis=(0, 2))[None, :, None]
                ja, ka = np.triu_indices(p, 1)
                d = z[..., ja] - z[..., ka]
                a, b = d[:-1], d[1:]
                vi, ui, pr = np.nonzero(((a > eps) & (b < -eps)) | ((a < -eps) & (b > eps)))
                if len(vi):
                    s = a[vi, ui, pr] / (a[vi, ui, pr] - b[vi, ui, pr])
                    za, zb = z[vi, ui], z[vi + 1, ui]
                    zs = za + s[:, None] * (zb - za)
                    top = zs.max(axis=1)
                    on_top = zs[np.arange(len(s)), ja[pr]] >= top - eps[0, ui, 0] - ZERO_RTOL * np.abs(top)
                    if on_top.any():
                        t, (g, *stack) = _insert(t, [g, *stack], vi[on_top], s[on_top])
            Y = g[..., idx].max(axis=-1)
        else:
            raise ValueError(f"step {kind} needs the general segment counter")
    return {"t0": t[:-1], "t1": t[1:], "L": Y[:-1], "R": Y[1:]}


def argmax_pattern_free(prog: Program) -> bool:
    """True if the fast path applies (no hardmax selection steps)."""
    return not any(s[0] == "select" for s in prog.steps())


__all__ = ["argmax_pattern_free", "partition_segment_vertex"]
