"""Exact 1-D partition along a segment: breakpoints inserted step by step, vectorised.

Along x(t) = a + t (b − a), every piece [t0, t1] stores the state y at both ends, YL and YR
(P, T, d); inside a piece y is affine in t, so the state anywhere is YL + s (YR − YL),
s ∈ [0, 1]. Storing both ends (not shared vertices) keeps jumps exact: a hardmax head whose
value differs between the tokens it switches between makes f discontinuous.

* ReLU (fused with its Affine): channel g crosses 0 inside a piece iff g(YL), g(YR) have
  strict opposite signs; breakpoint s = gL / (gL − gR).
* GroupMax: for every pair of pieces j < k of a unit, the crossing of z_j − z_k is a
  breakpoint when z_j = z_k is the maximum there (upper envelope).
* Hardmax: a_ij(s) = λ (q_i + s dq_i)·(k_j + s dk_j) is quadratic in s; roots of a_ij − a_ik in
  (0, 1) where j, k are the top scores are breakpoints (jumps of the selected value included).
  On each new piece the selection is fixed at its midpoint and both ends use it.

Tolerance policy (float64): a value g counts as 0 when |g| ≤ ZERO_RTOL·max|g| (max over the
pieces processed together, per channel); breakpoints closer than MERGE_S in the local
parameter coincide. Every piece carries a 64-bit hash of its activation pattern (ReLU signs,
argmaxes, selections, read at the piece midpoint); activation regions = runs of equal hash.
"""

from __future__ import annotations

import numpy as np

from . import invariants, ir
from .domains import Segment
from .ir import Program, affine, scores, select_output, tied
from .tolerances import MERGE_S, ROOT_SIGN_DS, ROOT_TOP_RTOL, SCALE_FLOOR, ZERO_RTOL

CHUNK = 4096  # pieces processed together before recursing on the remaining steps
_MULT = np.uint64(0x9E3779B97F4A7C15)


def partition_segment(prog: Program, seg: Segment, progress=None) -> dict:
    """Pieces of ``prog`` along ``seg``: t0, t1 (P,), out_L, out_R (P, out), code (P,) uint64."""
    if seg.dim != prog.in_dim:
        raise ValueError(f"segment has dimension {seg.dim} but the model's input dimension is {prog.in_dim}")
    steps = prog.steps()
    E, c = steps[0].E, steps[0].c
    a, b = seg.a, seg.b
    YL = (np.einsum("k,ktd->td", a, E) + c)[None]
    YR = (np.einsum("k,ktd->td", b, E) + c)[None]
    st = {"t0": np.zeros(1), "t1": np.ones(1), "L": YL, "R": YR, "SL": [], "SR": [],
          "code": np.zeros(1, np.uint64)}
    out = []
    _run(steps, 1, st, out, progress, (prog, seg) if invariants.enabled() else None)
    return {k: np.concatenate([o[k] for o in out]) for k in ("t0", "t1", "L", "R", "code")}


def _run(steps, i, st, out, progress, check=None):
    """Apply steps i, … to the pieces ``st``; ``check``: (program, segment) for the invariant
    checks after every activation step (:func:`.invariants.check_segment`)."""
    while i < len(steps):
        before = st["t0"]
        span = (st["t0"][0], st["t1"][-1])
        st = _apply(steps[i], i, st)
        if check is not None and isinstance(steps[i], ir.ACTIVATIONS):
            invariants.check_segment(*check, i, st["t0"], st["t1"], np.setdiff1d(st["t0"], before), span)
        i += 1
        P = len(st["t0"])
        if P > CHUNK and i < len(steps):
            for lo in range(0, P, CHUNK):
                sub = _take(st, slice(lo, lo + CHUNK))
                _run(steps, i, sub, out, progress, check)
            return
    out.append(st)
    if progress is not None:
        progress(len(st["t0"]))


def _take(st, idx):
    return {"t0": st["t0"][idx], "t1": st["t1"][idx], "L": st["L"][idx], "R": st["R"][idx],
            "SL": [s[idx] for s in st["SL"]], "SR": [s[idx] for s in st["SR"]], "code": st["code"][idx]}


def _keys(step_index: int, n: int) -> np.ndarray:
    rng = np.random.default_rng(1_000_003 * (step_index + 1))
    return rng.integers(1, 2**63, size=n, dtype=np.uint64) | np.uint64(1)


def _mix(code, codes2d, step_index):
    keys = _keys(step_index, codes2d.shape[1])
    with np.errstate(over="ignore"):
        return code * _MULT + (codes2d.astype(np.uint64) * keys).sum(axis=1, dtype=np.uint64)


def _eps(gL, gR):
    return ZERO_RTOL * np.maximum(np.abs(gL).max(axis=0), np.abs(gR).max(axis=0))


def _strict_cross(gL, gR, eps):
    return ((gL > eps) & (gR < -eps)) | ((gL < -eps) & (gR > eps))


def maxout_crossings(zL: np.ndarray, zR: np.ndarray, eps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where maxout units change their argmax along P edges (both 1-D counters use this).

    zL, zR (P, U, p): the p pieces of U units at the two ends of every edge (affine in between);
    eps (U,): the zero tolerance per unit. For every pair j < k of pieces of a unit whose
    difference z_j − z_k changes sign strictly (beyond eps) on an edge, the crossing is at
    s = d_L / (d_L − d_R); it is a breakpoint when z_j = z_k is the unit's maximum there (upper
    envelope, within eps + ZERO_RTOL·|max|). Returns (edge index, s) per breakpoint.
    """
    p = zL.shape[2]
    ja, ka = np.triu_indices(p, 1)
    dL, dR = zL[..., ja] - zL[..., ka], zR[..., ja] - zR[..., ka]  # (P, U, pairs)
    pi, ui, pr = np.nonzero(_strict_cross(dL, dR, eps[None, :, None]))
    s = dL[pi, ui, pr] / (dL[pi, ui, pr] - dR[pi, ui, pr])
    zs = zL[pi, ui] + s[:, None] * (zR[pi, ui] - zL[pi, ui])  # (n, p)
    top = zs.max(axis=1)
    on_top = zs[np.arange(len(s)), ja[pr]] >= top - eps[ui] - ZERO_RTOL * np.abs(top)
    return pi[on_top], s[on_top]


def _split(st, pi, s):
    """Insert breakpoints s ∈ (0, 1) (local parameter) into pieces pi; returns the new state."""
    P = len(st["t0"])
    if len(pi) == 0:
        return st
    allp = np.concatenate([np.arange(P), pi])
    alls = np.concatenate([np.zeros(P), s])
    order = np.lexsort((alls, allp))
    allp, alls = allp[order], alls[order]
    keep = np.ones(len(allp), bool)
    keep[1:] = ~((allp[1:] == allp[:-1]) & (alls[1:] - alls[:-1] <= MERGE_S))
    allp, alls = allp[keep], alls[keep]
    sr = np.ones(len(allp))
    same = allp[1:] == allp[:-1]
    sr[:-1][same] = alls[1:][same]
    sl = alls
    dt = (st["t1"] - st["t0"])[allp]

    mL = sl > 0  # rows whose left end is a new breakpoint
    mR = sr < 1  # rows whose right end is one (= the next row's left end)
    pin, sin = allp[mL], sl[mL]

    def lr(FLall, FRall):
        FL, FR = FLall[allp], FRall[allp]
        A, B = FLall[pin], FRall[pin]
        FL[mL] = A + sin.reshape((-1,) + (1,) * (A.ndim - 1)) * (B - A)
        FR[:-1][mR[:-1]] = FL[1:][mR[:-1]]
        return FL, FR

    L, R = lr(st["L"], st["R"])
    SL, SR = [], []
    for a, b in zip(st["SL"], st["SR"]):
        x, y = lr(a, b)
        SL.append(x)
        SR.append(y)
    t0 = st["t0"][allp]
    t1 = np.where(sr < 1, t0 + sr * dt, st["t1"][allp])  # an old end stays exact (t0 + dt may round)
    return {"t0": t0 + sl * dt, "t1": t1, "L": L, "R": R, "SL": SL, "SR": SR,
            "code": st["code"][allp]}


def _apply(step, i, st):
    match step:
        case ir.AffineStep(W, b):
            gL, gR = _pre(st, W, b)
            return {**st, "L": gL, "R": gR}
        case ir.SaveStep():
            return {**st, "SL": st["SL"] + [st["L"]], "SR": st["SR"] + [st["R"]]}
        case ir.AddStep():
            return {**st, "L": st["SL"][-1] + st["L"], "R": st["SR"][-1] + st["R"],
                    "SL": st["SL"][:-1], "SR": st["SR"][:-1]}
        case ir.ReadStep(tokens):
            tok = list(tokens)
            P = len(st["t0"])
            return {**st, "L": st["L"][:, tok].reshape(P, -1), "R": st["R"][:, tok].reshape(P, -1)}
        case ir.ReluStep():
            return _relu(step, i, st)
        case ir.MaxStep():
            return _groupmax(step, i, st)
        case ir.SelectStep(op):
            return _select(op, i, st)
    raise ValueError(f"unknown step {type(step).__name__}")


def _pre(st, W, b):
    """Pre-activations at both ends; computed once per shared vertex when f is continuous."""
    L, R = st["L"], st["R"]
    if len(L) > 1 and np.array_equal(R[:-1], L[1:]):
        gV = affine(np.concatenate([L, R[-1:]]), W, b)
        return gV[:-1], gV[1:]
    return affine(L, W, b), affine(R, W, b)


def _relu(step: ir.ReluStep, i, st):
    W, b = step.W, step.b
    gL, gR = _pre(st, W, b)  # (P, T, n)
    P = gL.shape[0]
    gL2, gR2 = gL.reshape(P, -1), gR.reshape(P, -1)
    eps = _eps(gL2, gR2)
    pi, ch = np.nonzero(_strict_cross(gL2, gR2, eps))
    if len(pi):
        s = gL2[pi, ch] / (gL2[pi, ch] - gR2[pi, ch])
        st = _split({**st, "L": gL, "R": gR}, pi, s)  # interpolating g is exact (affine on pieces)
        gL, gR = st["L"], st["R"]
        P = gL.shape[0]
    mid = (gL + gR).reshape(P, -1) > 0
    code = _mix(st["code"], mid, i)
    return {**st, "L": np.maximum(gL, 0), "R": np.maximum(gR, 0), "code": code}


def _groupmax(step: ir.MaxStep, i, st):
    W, b, idx = step.W, step.b, step.idx
    gL, gR = _pre(st, W, b)
    P = gL.shape[0]
    zL, zR = gL[..., idx].reshape(P, -1, idx.shape[1]), gR[..., idx].reshape(P, -1, idx.shape[1])  # (P, U, p)
    p = idx.shape[1]
    if p > 1:
        eps = ZERO_RTOL * np.maximum(np.abs(zL).max(axis=(0, 2)), np.abs(zR).max(axis=(0, 2)))  # (U,)
        pi, s = maxout_crossings(zL, zR, eps)
        if len(pi):
            st = _split({**st, "L": gL, "R": gR}, pi, s)
            gL, gR = st["L"], st["R"]
            P = gL.shape[0]
    zL, zR = gL[..., idx], gR[..., idx]  # (P, T, m, p)
    arg = np.argmax(tied((zL + zR) / 2), axis=-1).reshape(P, -1)
    code = _mix(st["code"], arg, i)
    return {**st, "L": zL.max(axis=-1), "R": zR.max(axis=-1), "code": code}


def _select(op, i, st):
    YL, YR = st["L"], st["R"]
    qL = np.einsum("ptd,hde->phte", YL, op.W_Q) + op.b_Q[None, :, None]
    qR = np.einsum("ptd,hde->phte", YR, op.W_Q) + op.b_Q[None, :, None]
    kL = np.einsum("ptd,hde->phte", YL, op.W_K) + op.b_K[None, :, None]
    kR = np.einsum("ptd,hde->phte", YR, op.W_K) + op.b_K[None, :, None]
    dq, dk = qR - qL, kR - kL
    lam = op.lam
    c0 = lam * np.einsum("phie,phje->phij", qL, kL)
    c1 = lam * (np.einsum("phie,phje->phij", qL, dk) + np.einsum("phie,phje->phij", dq, kL))
    c2 = lam * np.einsum("phie,phje->phij", dq, dk)  # (P, H, T, T): a_ij(s) = c0 + c1 s + c2 s²
    T = YL.shape[1]
    allowed = np.tril(np.ones((T, T), bool)) if op.causal else np.ones((T, T), bool)
    if T > 1:
        ja, ka = np.triu_indices(T, 1)
        D0, D1, D2 = (c[..., ja] - c[..., ka] for c in (c0, c1, c2))  # (P, H, T, pairs)
        scale = np.abs(D0).max() + np.abs(D1).max() + np.abs(D2).max()
        tol = ZERO_RTOL * (scale + SCALE_FLOOR)
        roots, valid = _roots01(D0, D1, D2, tol)  # (2, P, H, T, pairs)
        ok = valid & allowed[:, ja][None, None, :, :] & allowed[:, ka][None, None, :, :]
        r, pi, hi, qi, pr = np.nonzero(ok)
        if len(pi):
            s = roots[r, pi, hi, qi, pr]
            a = c0[pi, hi, qi] + s[:, None] * c1[pi, hi, qi] + (s * s)[:, None] * c2[pi, hi, qi]  # (n, T)
            a = np.where(allowed[qi], a, -np.inf)
            top = a.max(axis=1)
            thr = top - ROOT_TOP_RTOL * (np.abs(top) + scale)
            on_top = (a[np.arange(len(s)), ja[pr]] >= thr) & (a[np.arange(len(s)), ka[pr]] >= thr)
            st = _split(st, pi[on_top], s[on_top])
    Ym = (st["L"] + st["R"]) / 2
    a, _ = scores(op, Ym)
    sel = tied(a)
    P = len(st["t0"])
    code = _mix(st["code"], np.argmax(sel, axis=-1).reshape(P, -1), i)
    return {**st, "L": select_output(op, st["L"], sel), "R": select_output(op, st["R"], sel), "code": code}


def _roots01(D0, D1, D2, tol):
    """Roots in (0, 1) of D0 + D1 s + D2 s² with a sign change; identically-zero differences
    give none. Returns roots (2, ...) and validity (2, ...)."""
    zero = (np.abs(D0) <= tol) & (np.abs(D1) <= tol) & (np.abs(D2) <= tol)
    lin = (np.abs(D2) <= tol) & ~zero
    with np.errstate(divide="ignore", invalid="ignore"):
        r_lin = -D0 / D1
        disc = D1 * D1 - 4 * D2 * D0
        sq = np.sqrt(np.maximum(disc, 0))
        qq = -0.5 * (D1 + np.where(D1 >= 0, sq, -sq))
        r1 = qq / D2
        r2 = D0 / qq
    quad = ~lin & ~zero & (disc > tol * tol)
    R1 = np.where(lin, r_lin, r1)
    R2 = r2
    v1 = (lin | quad) & np.isfinite(R1) & (R1 > MERGE_S) & (R1 < 1 - MERGE_S)
    v2 = quad & np.isfinite(R2) & (R2 > MERGE_S) & (R2 < 1 - MERGE_S)
    # a sign change is needed: the difference at both sides of the root must differ in sign
    for R, v in ((R1, v1), (R2, v2)):
        Rs = np.where(v, R, 0.5)
        lo, hi = np.maximum(Rs - ROOT_SIGN_DS, 0), np.minimum(Rs + ROOT_SIGN_DS, 1)
        f_lo = D0 + D1 * lo + D2 * lo * lo
        f_hi = D0 + D1 * hi + D2 * hi * hi
        v &= (f_lo * f_hi < 0) | lin
    return np.stack([R1, R2]), np.stack([v1, v2])
