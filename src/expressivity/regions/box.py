"""Exact d-D partition of a box by adjacency traversal of activation regions (LP via HiGHS).

An activation pattern π fixes every ReLU sign / argmax / hardmax selection, so on its region
the program is affine, y = A_π x + c_π, and the region is the polyhedron
    R_π = {x ∈ [lo, hi] : s_k (a_k·x + b_k) ≥ 0 for every constraint k of π}
(ReLU: sign of the pre-activation; argmax j*: z_j* − z_j ≥ 0; selection: a_ij* − a_ij ≥ 0,
queries constant on the region). Starting from the pattern at the box centre, breadth-first
search: for every constraint k, the LP  max r  s.t.  s_j (a_j·x + b_j) ≥ r‖a_j‖ (j ≠ k),
a_k·x + b_k = 0, x ∈ box, finds a point in the relative interior of the facet if r > 0;
stepping δ across it gives the neighbouring pattern. A facet of a deep net may border several
regions: the parts into which the neighbours cut it are visited breadth-first (an LP per facet
of each part, with the part's facet held tight, then a step across it within the facet's
hyperplane). Every LP is posed in the box's own coordinates u ∈ [−1, 1]^d (x = centre +
half-width·u), so radii, steps and rounding of the constraint offsets are relative to the box:
a shift or per-coordinate scaling of the input changes nothing. Regions with interior radius
≤ RADIUS_RTOL (in u) are not counted. Linear regions: :func:`.merge.merge_linear`.
"""

from __future__ import annotations

from collections import deque

import numpy as np
from scipy.optimize import linprog

from . import ir
from .domains import Box
from .ir import Program, scores, tied
from .tolerances import (
    BOX_QUERY_RTOL,
    LP_INSIDE_RTOL,
    LP_PARALLEL_TOL,
    LP_ROW_RTOL,
    LP_STEP,
    RADIUS_RTOL,
)

MAX_REGIONS = 20000


def _affine_pass(prog: Program, x: np.ndarray):
    """Pattern at x, the affine output map (A (out, n), c), constraint rows (G (k, n), h)
    meaning G x + h ≥ 0 on the region (redundant rows included) and the rows' magnitudes Ga
    (k, n): the same products with |weights| (the scale of their rounding). Carries state as
    (T, d, n+1), magnitudes of the x-coefficients as (T, d, n)."""
    n = prog.in_dim
    xe = np.append(x, 1.0)
    code: list = []
    rows: list = []
    mags: list = []
    stack: list = []
    Y = Ya = None
    T = prog.n_tokens
    for step in prog.steps():
        if isinstance(step, ir.EmbedStep):
            Y = np.concatenate([np.transpose(step.E, (1, 2, 0)), step.c[..., None]], axis=-1)  # (T, d, n+1)
            Ya = np.abs(Y[..., :-1])
        elif isinstance(step, (ir.AffineStep, ir.ReluStep, ir.MaxStep)) and step.W is not None:
            Y = np.einsum("tdk,de->tek", Y, step.W)
            Y[..., -1] += np.broadcast_to(step.b, (T, step.W.shape[1]))
            Ya = np.einsum("tdk,de->tek", Ya, np.abs(step.W))
        if isinstance(step, ir.ReluStep):
            val = Y @ xe  # (T, n_ch)
            on = val > 0
            code.append(on.ravel())
            sgn = np.where(on, 1.0, -1.0)
            rows.append((sgn[..., None] * Y).reshape(-1, n + 1))
            mags.append(Ya.reshape(-1, n))
            Y, Ya = Y * on[..., None], Ya * on[..., None]
        elif isinstance(step, ir.MaxStep):
            idx = step.idx
            Z, Za = Y[:, idx], Ya[:, idx]  # (T, m, p, n+1), (T, m, p, n)
            val = Z @ xe
            arg = np.argmax(tied(val), axis=-1)  # (T, m)
            code.append(arg.ravel())
            win = np.take_along_axis(Z, arg[..., None, None], axis=2)  # (T, m, 1, n+1)
            wina = np.take_along_axis(Za, arg[..., None, None], axis=2)
            rows.append((win - Z).reshape(-1, n + 1))
            mags.append((wina + Za).reshape(-1, n))
            Y, Ya = win[:, :, 0], wina[:, :, 0]
        elif isinstance(step, ir.SelectStep):
            Y, Ya = _select_pass(step.op, Y, Ya, xe, code, rows, mags)
        elif isinstance(step, ir.SaveStep):
            stack.append((Y, Ya))
        elif isinstance(step, ir.AddStep):
            Y0, Ya0 = stack.pop()
            Y, Ya = Y0 + Y, Ya0 + Ya
        elif isinstance(step, ir.ReadStep):
            Y = Y[list(step.tokens)].reshape(-1, n + 1)
    G = np.concatenate(rows) if rows else np.zeros((0, n + 1))
    Ga = np.concatenate(mags) if mags else np.zeros((0, n))
    code_bytes = b"".join(np.asarray(c, np.int64).tobytes() for c in code)
    return code_bytes, Y[:, :-1], Y[:, -1], G[:, :-1], G[:, -1], Ga


def _select_pass(op, Y, Ya, xe, code, rows, mags):
    """One hardmax sublayer of :func:`_affine_pass` (queries must be constant in x)."""
    T = Y.shape[0]
    val = Y @ xe  # (T, d)
    q = np.einsum("tdk,hde->htek", Y, op.W_Q)
    qa = np.einsum("tdk,hde->htek", Ya, np.abs(op.W_Q))
    if np.abs(q[..., :-1]).max(initial=0.0) > BOX_QUERY_RTOL * qa.max(initial=0.0):
        raise ValueError("Box counting needs hardmax queries that are constant in x "
                         "(compiled models); use a Segment for input-dependent queries")
    a, _ = scores(op, val[None])
    sel = tied(a)[0]  # (H, T, T)
    first = np.argmax(sel, axis=-1)
    code.append(first.ravel())
    qc = q[..., -1] + op.b_Q[:, None, :]  # (H, T, e) constant queries
    K = np.einsum("tdk,hde->htek", Y, op.W_K)
    K[..., -1] += op.b_K[:, None, :]
    Ka = np.einsum("tdk,hde->htek", Ya, np.abs(op.W_K))
    S = op.lam * np.einsum("hie,htek->hitk", qc, K)  # scores as affine maps (H, Tq, Tk, n+1)
    Sa = op.lam * np.einsum("hie,htek->hitk", np.abs(qc), Ka)
    win = np.take_along_axis(S, first[..., None, None], axis=2)
    wina = np.take_along_axis(Sa, first[..., None, None], axis=2)
    allowed = np.tril(np.ones((T, T), bool)) if op.causal else np.ones((T, T), bool)
    rows.append((win - S)[:, allowed].reshape(-1, S.shape[-1]))
    mags.append((wina + Sa)[:, allowed].reshape(-1, Sa.shape[-1]))
    w = sel / sel.sum(-1, keepdims=True)
    V = np.einsum("tdk,hde->htek", Y, op.W_V)
    V[..., -1] += op.b_V[:, None, :]
    Va = np.einsum("tdk,hde->htek", Ya, np.abs(op.W_V))
    Y = np.einsum("hiek,hed->idk", np.einsum("hij,hjek->hiek", w, V), op.W_O)
    Y[..., -1] += op.b_O
    Ya = np.einsum("hiek,hed->idk", np.einsum("hij,hjek->hiek", w, Va), np.abs(op.W_O))
    return Y, Ya


def _facet_point(G, h, k, lo, hi, EG=None, Eh=None, tight=None):
    """Relative-interior point of facet k of {G x + h ≥ 0} ∩ {EG x + Eh ≥ 0} ∩ box, or None.
    ``tight``: an extra row (g, c) also held at equality (a facet of that facet)."""
    n = G.shape[1]
    keep = np.arange(len(G)) != k
    Gs, hs = G[keep], h[keep]
    A_eq, b_eq = np.append(G[k], 0.0)[None], [-h[k]]
    if EG is not None and len(EG):
        Gs, hs = np.vstack([Gs, EG]), np.concatenate([hs, Eh])
    if tight is not None:
        A_eq = np.vstack([A_eq, np.append(tight[0], 0.0)])
        b_eq = [-h[k], -tight[1]]
    eye = np.eye(n)  # the box faces keep the point (and the step across) inside the box
    Gs, hs = np.vstack([Gs, eye, -eye]), np.concatenate([hs, -lo, hi])
    norms = np.linalg.norm(Gs, axis=1)
    A_ub = np.hstack([-Gs, norms[:, None]])  # −(G x + h) + r‖g‖ ≤ 0
    c = np.zeros(n + 1)
    c[-1] = -1.0
    bounds = [(l, u) for l, u in zip(lo, hi)] + [(None, 1.0)]
    res = linprog(c, A_ub=A_ub, b_ub=hs, A_eq=A_eq, b_eq=b_eq, bounds=bounds, method="highs")
    if res.status != 0 or -res.fun <= RADIUS_RTOL:
        return None
    return res.x[:-1]


def _clean(G, h, Ga):
    """Unit-normalised, de-duplicated constraint rows G u + h ≥ 0; rows whose norm is within
    LP_ROW_RTOL of their magnitude's (Ga: the same products of |weights|) are 0 up to rounding
    and dropped."""
    norms = np.linalg.norm(G, axis=1)
    ok = norms > LP_ROW_RTOL * np.linalg.norm(Ga, axis=1)
    ok &= norms > 0
    G, h = G[ok] / norms[ok, None], h[ok] / norms[ok]
    _, uniq = np.unique(np.round(np.hstack([G, h[:, None]]), 11), axis=0, return_index=True)
    uniq = np.sort(uniq)
    return G[uniq], h[uniq]


def region_rows(prog: Program, x: np.ndarray, centre: np.ndarray, half: np.ndarray):
    """The pattern at x and its region's constraints in the box's coordinates u (x = centre +
    half·u): (code, A, c, G_u, h_u), rows cleaned (:func:`_clean`)."""
    code, A, c, G, h, Ga = _affine_pass(prog, x)
    return code, A, c, *_clean(G * half, h + G @ centre, Ga * half)


def partition_box(prog: Program, box: Box, progress=None) -> dict:
    centre, half = (box.lo + box.hi) / 2, (box.hi - box.lo) / 2
    n = prog.in_dim
    lo, hi = -np.ones(n), np.ones(n)  # the LPs run in u ∈ [−1, 1]^n
    diam = 2 * np.sqrt(n)
    start = np.zeros(n)
    code, A, c, G, h = region_rows(prog, centre, centre, half)
    seen = {code: 0}
    regions = [(A, c, G, h, start)]
    edges = set()
    queue = deque([0])

    def visit(y):
        code2, A2, c2, G2, h2 = region_rows(prog, centre + half * y, centre, half)
        if code2 not in seen:
            if len(regions) >= MAX_REGIONS:
                raise ValueError(f"more than {MAX_REGIONS} regions in the box: use a Plane or Segment")
            seen[code2] = len(regions)
            regions.append((A2, c2, G2, h2, y))
            queue.append(seen[code2])
        return seen[code2]

    facet_cache: dict = {}

    def facets(rid):
        """{k: relative-interior point} for the non-redundant constraints of region rid."""
        if rid not in facet_cache:
            G, h = regions[rid][2], regions[rid][3]
            pts = {k: _facet_point(G, h, k, lo, hi) for k in range(len(G))}
            facet_cache[rid] = {k: p for k, p in pts.items() if p is not None}
        return facet_cache[rid]

    def explore(rid, G, h, k, p):
        """All regions across facet k of region rid: breadth-first over the parts into which
        the neighbours cut the facet (a facet of a deep net may border several regions)."""
        step = 2 * LP_STEP
        todo, parts = [p], set()
        while todo:
            p = todo.pop()
            y = p - step * G[k]  # across the facet: G_k y + h_k < 0 (rows are unit)
            if np.any(y < lo) or np.any(y > hi):
                continue
            nid = visit(y)
            edges.add((min(rid, nid), max(rid, nid)))
            if nid in parts or n == 1:
                continue  # in 1-D a facet is a point: one region across it
            parts.add(nid)
            fac = sorted(facets(nid))  # only the neighbour's true facets can cut this facet
            Gn, hn = regions[nid][2][fac], regions[nid][3][fac]
            par = np.abs(Gn @ G[k]) > 1 - LP_PARALLEL_TOL  # rows parallel to the facet itself
            EG, Eh = Gn[~par], hn[~par]
            for j in range(len(EG)):
                # a facet of this part inside the facet: EG_j tight; step across it, in the plane
                q = _facet_point(G, h, k, lo, hi, np.delete(EG, j, 0), np.delete(Eh, j), (EG[j], Eh[j]))
                if q is None:
                    continue
                d = EG[j] - (EG[j] @ G[k]) * G[k]
                q2 = q - step * d / np.linalg.norm(d)
                if np.all(np.delete(G, k, 0) @ q2 + np.delete(h, k) >= -LP_INSIDE_RTOL * diam):
                    todo.append(q2)

    while queue:
        rid = queue.popleft()
        G, h = regions[rid][2], regions[rid][3]
        for k, p in facets(rid).items():
            explore(rid, G, h, k, p)
        if progress is not None:
            progress((len(regions) - len(queue)) / len(regions))
    from .merge import merge_linear

    maps = np.stack([np.concatenate([r[0], r[1][:, None]], axis=1) for r in regions])  # (R, out, n+1)
    points = centre + half * np.array([r[4] for r in regions])
    pairs = np.array(sorted(edges), dtype=np.int64).reshape(-1, 2)
    linear = merge_linear(prog, points, np.eye(n), pairs, np.arange(len(regions)))
    # H-representations in x: G_u u + h_u ≥ 0 with u = (x − centre)/half
    return {"A": [-r[2] / half for r in regions], "b": [r[3] - (r[2] / half) @ centre for r in regions],
            "maps": maps, "points": points, "linear": linear, "adjacent": pairs}
