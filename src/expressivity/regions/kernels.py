"""Compiled (numba) loops of the exact counters: one pass per job instead of a chain of numpy
temporaries. Single-threaded.

1-D (:mod:`.segment_vertex`): vertices t_0 < … < t_P are the rows of 2-D float64 arrays;
"edges" are consecutive row pairs (v, v + 1).
2-D (:mod:`.plane`): :func:`split_faces` cuts the faces of the polygon mesh along one line.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.typed import Dict


@njit(cache=True, nogil=True)
def _grow(x, k):
    y = np.empty(2 * len(x), x.dtype)
    y[:k] = x[:k]
    return y


@njit(cache=True, nogil=True, fastmath=True)
def _scan(g, relu, m, vi, ch, a, b, v0, k):
    """sign_changes from row v0 on, until the buffers are full; returns (next row, count)."""
    P, n = g.shape
    for v in range(v0, P):
        row = g[v]
        for i in range(n):
            m[i] = max(m[i], abs(row[i]))
        if v + 1 < P:
            nxt = g[v + 1]
            c = 0
            for i in range(n):
                c += (row[i] > 0) != (nxt[i] > 0)
            if k + c > len(vi):
                return v, k  # row v again after growing (its max is idempotent)
            if c:
                for i in range(n):
                    if (row[i] > 0) != (nxt[i] > 0):
                        vi[k], ch[k], a[k], b[k] = v, i, row[i], nxt[i]
                        k += 1
        if relu and v:
            prev = g[v - 1]
            for i in range(n):
                prev[i] = max(prev[i], 0.0)
    if relu:
        last = g[P - 1]
        for i in range(n):
            last[i] = max(last[i], 0.0)
    return P, k


@njit(cache=True, nogil=True)
def sign_changes(g, rtol, relu):
    """Every edge/channel pair whose sign flips, (g[v, i] > 0) ≠ (g[v+1, i] > 0), in one pass.

    Returns (vi, ch, a, b, strict): edge, channel, the values at both ends, and whether the
    flip is strict (|a|, |b| > rtol · max_v |g[v, i]|: a breakpoint; otherwise the channel
    only touches 0). With ``relu`` each row is clamped at 0 in place once both its edges are
    read. Order: by edge, then channel.
    """
    P, n = g.shape
    m = np.zeros(n)
    cap = 2 * (P + n)
    vi = np.empty(cap, np.int64)
    ch = np.empty(cap, np.int64)
    a = np.empty(cap)
    b = np.empty(cap)
    v, k = 0, 0
    while True:
        v, k = _scan(g, relu, m, vi, ch, a, b, v, k)
        if v == P:
            break
        vi, ch, a, b = _grow(vi, k), _grow(ch, k), _grow(a, k), _grow(b, k)
    strict = np.empty(k, np.bool_)
    for j in range(k):
        eps = rtol * m[ch[j]]
        strict[j] = abs(a[j]) > eps and abs(b[j]) > eps
    return vi[:k].copy(), ch[:k].copy(), a[:k].copy(), b[:k].copy(), strict


@njit(cache=True, nogil=True)
def plan_inserts(n_vertices, vi, ch, a, b, strict, merge_s):
    """From the sign changes (sorted by edge, then channel; see :func:`sign_changes`) to the
    breakpoints to insert: each edge's changes sorted by their zero s = a / (a − b); a strict
    change becomes a vertex unless it lies within merge_s of the previous strict one on its
    edge. Returns (estart, ech, eza, ezb, kstart, ks, krank): per-edge offsets (length
    n_vertices) into the sorted changes (channel, |a|, |b|) and into the inserted vertices
    (s, index of their change)."""
    J = len(vi)
    n_edges = n_vertices - 1
    estart = np.zeros(n_vertices, np.int64)
    kstart = np.zeros(n_vertices, np.int64)
    ech = np.empty(J, np.int64)
    eza = np.empty(J)
    ezb = np.empty(J)
    es = np.empty(J)
    ks = np.empty(J)
    krank = np.empty(J, np.int64)
    for j in range(J):
        estart[vi[j] + 1] += 1
    for e in range(n_edges):
        estart[e + 1] += estart[e]
    k = 0
    for e in range(n_edges):
        lo, hi = estart[e], estart[e + 1]
        kstart[e] = k
        if lo == hi:
            continue
        s = a[lo:hi] / (a[lo:hi] - b[lo:hi])
        order = np.argsort(s, kind="mergesort")
        last = -1.0
        for q in range(hi - lo):
            j = lo + order[q]
            r = lo + q
            ech[r], eza[r], ezb[r], es[r] = ch[j], abs(a[j]), abs(b[j]), s[order[q]]
            if strict[j]:
                if last < 0 or es[r] - last > merge_s:
                    ks[k] = es[r]
                    krank[k] = r
                    k += 1
                last = es[r]
    kstart[n_edges] = k
    return estart, ech, eza, ezb, kstart, ks[:k].copy(), krank[:k].copy()


@njit(cache=True, nogil=True)
def insert_rows(F, kstart, ks, relu, out):
    """out (P_old + N, d) = rows of F (P_old, d) with new rows spliced in: edge e gets
    kstart[e+1] − kstart[e] new rows F[e] + s (F[e+1] − F[e]), s = ks[k] (sorted).
    Optionally clamped at 0."""
    P_old, d = F.shape
    lo = 0.0 if relu else -np.inf
    for e in range(P_old):
        r = e + kstart[e]
        for c in range(d):
            out[r, c] = max(F[e, c], lo)
        if e + 1 < P_old:
            for k in range(kstart[e], kstart[e + 1]):
                s = ks[k]
                r = e + 1 + k
                for c in range(d):
                    out[r, c] = max(F[e, c] + s * (F[e + 1, c] - F[e, c]), lo)


_CB = 32  # output channels per block in next_preactivations (4 cache lines of a row)


@njit(cache=True, nogil=True)
def next_preactivations(G_old, WT, estart, ech, eza, ezb, kstart, ks, krank, out):
    """Pre-activations of the next layer at all vertices after a ReLU layer inserted some.

    G_old (P_old, n′): y W + b at the old vertices (y = the ReLU output there); WT (n′, n) =
    Wᵀ, C order. Sign changes of the ReLU layer's pre-activation z, sorted by (edge, s): on edge
    e the entries estart[e] ≤ j < estart[e+1], channel ech[j], |z(a)| = eza[j], |z(b)| = ezb[j].
    Inserted vertices: on edge e, kstart[e] ≤ k < kstart[e+1], at s = ks[k], own entry krank[k].
    Row of vertex k (see segment_vertex):
        (1 − s)(G_a − Σ_{j ≤ r} |z_j(a)| W_j) + s (G_b − Σ_{j > r} |z_j(b)| W_j).
    Written to out (P_old + N, n′). Output channels are done in blocks of _CB: the block's
    weights of every sign change are gathered once (contiguous per change), the running sums
    are short vectors.
    """
    P_old, n_out = G_old.shape
    J = len(ech)
    for e in range(P_old):
        r = e + kstart[e]
        for c in range(n_out):
            out[r, c] = G_old[e, c]
    Wb = np.zeros((J, _CB))
    tb = np.empty(_CB)
    pa = np.empty(_CB)
    cb = np.empty(_CB)
    for c0 in range(0, n_out, _CB):
        cw = min(_CB, n_out - c0)
        for c in range(cw):  # columns past cw stay 0 (last block)
            row = WT[c0 + c]
            for j in range(J):
                Wb[j, c] = row[ech[j]]
        for e in range(P_old - 1):
            k0, k1 = kstart[e], kstart[e + 1]
            if k0 == k1:
                continue
            j0, j1 = estart[e], estart[e + 1]
            tb[:] = 0.0
            pa[:] = 0.0
            cb[:] = 0.0
            for j in range(j0, j1):
                zb, w = ezb[j], Wb[j]
                for c in range(_CB):
                    tb[c] += zb * w[c]
            j = j0
            ga, gb = G_old[e, c0:c0 + cw], G_old[e + 1, c0:c0 + cw]
            for k in range(k0, k1):
                while j <= krank[k]:
                    za, zb, w = eza[j], ezb[j], Wb[j]
                    for c in range(_CB):
                        pa[c] += za * w[c]
                        cb[c] += zb * w[c]
                    j += 1
                s = ks[k]
                o = out[e + 1 + k, c0:c0 + cw]
                for c in range(cw):
                    o[c] = (1.0 - s) * (ga[c] - pa[c]) + s * (gb[c] - (tb[c] - cb[c]))


@njit(cache=True, nogil=True, inline="always")
def _is_cut(g, cyc, nv, f, e):
    """Face f has a vertex with g > e and one with g < −e."""
    hp = False
    hn = False
    for p in range(nv[f]):
        x = g[cyc[f, p]]
        hp |= x > e
        hn |= x < -e
    return hp and hn


@njit(cache=True, nogil=True)
def cut_faces(cyc, nv, cand, g, eps):
    """The faces of ``cand`` that g = 0 cuts, and their largest vertex count."""
    out = np.empty(len(cand), np.int64)
    k = 0
    width = 0
    for f in cand:
        if _is_cut(g, cyc, nv, f, eps):
            out[k] = f
            k += 1
            width = max(width, nv[f])
    return out[:k], width


@njit(cache=True, nogil=True)
def split_faces(store, V, cyc, nv, origin, F, cand, g, eps, zero_col):
    """Cut the convex faces ``cand`` of the mesh along g = 0 (g: values at the vertices).

    store (cap_V, cols): vertex fields, rows < V used; a new vertex on edge (a, b) is at
    t = g_a / (g_a − g_b) with every field interpolated (column ``zero_col`` set to 0 if ≥ 0),
    created once per edge (the two faces sharing it reuse it). cyc (cap_F, K): face cycles,
    padded with their first vertex; nv: lengths; origin: the face each descends from. A face
    with vertices above eps and below −eps keeps its g ≥ 0 part; the g ≤ 0 part becomes face F.
    Capacity for 2 new vertices and 1 new face per candidate, and K ≥ max nv + 2, must be
    there. Returns (V, F, faces split).
    """
    K = cyc.shape[1]
    ncol = store.shape[1]
    stride = store.shape[0] + 1
    made = Dict.empty(key_type=types.int64, value_type=types.int64)
    ext = np.empty(2 * K, np.int64)
    es = np.empty(2 * K, np.int64)
    n_split = 0
    for f in cand:
        n = nv[f]
        if not _is_cut(g, cyc, nv, f, eps):
            continue
        m = 0
        for p in range(n):
            a = cyc[f, p]
            b = cyc[f, p + 1] if p + 1 < n else cyc[f, 0]
            ga, gb = g[a], g[b]
            sa = 1 if ga > eps else (-1 if ga < -eps else 0)
            sb = 1 if gb > eps else (-1 if gb < -eps else 0)
            ext[m] = a
            es[m] = sa
            m += 1
            if sa * sb < 0:
                key = min(a, b) * stride + max(a, b)
                vid = made.get(key, -1)
                if vid < 0:
                    t = ga / (ga - gb)
                    for c in range(ncol):
                        store[V, c] = store[a, c] + t * (store[b, c] - store[a, c])
                    if zero_col >= 0:
                        store[V, zero_col] = 0.0
                    vid = V
                    made[key] = V
                    V += 1
                ext[m] = vid
                es[m] = 0
                m += 1
        kp = 0
        for q in range(m):
            if es[q] >= 0:
                cyc[f, kp] = ext[q]
                kp += 1
        kn = 0
        for q in range(m):
            if es[q] <= 0:
                cyc[F, kn] = ext[q]
                kn += 1
        for q in range(kp, K):
            cyc[f, q] = cyc[f, 0]
        for q in range(kn, K):
            cyc[F, q] = cyc[F, 0]
        nv[f] = kp
        nv[F] = kn
        origin[F] = origin[f]
        F += 1
        n_split += 1
    return V, F, n_split


@njit(cache=True, nogil=True)
def face_sign_bits(store, cyc, nv, F, gcol, B, eps):
    """Bit j of the result for face f: channel j (store column gcol + j) is > eps[j] at some
    vertex of f and < −eps[j] at another, i.e. the line of channel j may cut f (B ≤ 64).
    Sign words are made once per vertex, then OR-ed over each face's cycle."""
    V = 0
    for f in range(F):
        for p in range(nv[f]):
            V = max(V, cyc[f, p] + 1)
    pos = np.zeros(V, np.uint64)
    neg = np.zeros(V, np.uint64)
    for v in range(V):
        row = store[v, gcol:gcol + B]
        p_ = np.uint64(0)
        n_ = np.uint64(0)
        for j in range(B):
            bit = np.uint64(1) << np.uint64(j)
            if row[j] > eps[j]:
                p_ |= bit
            elif row[j] < -eps[j]:
                n_ |= bit
        pos[v] = p_
        neg[v] = n_
    out = np.zeros(F, np.uint64)
    for f in range(F):
        p_ = np.uint64(0)
        n_ = np.uint64(0)
        for q in range(nv[f]):
            v = cyc[f, q]
            p_ |= pos[v]
            n_ |= neg[v]
        out[f] = p_ & n_
    return out


@njit(cache=True, nogil=True)
def split_channels(store, V, cyc, nv, origin, F, gcol, j0, j1, eps, mixed):
    """Cut the mesh along channels j0 ≤ j < j1 of a block, one after the other (channel j's
    values are store column gcol + j; new vertices get 0 there). Only faces whose block-start
    ancestor ``origin`` has bit j in ``mixed`` are tried. Stops before a channel that needs
    more capacity than there is. Returns (V, F, next channel, faces it would cut, their max
    vertex count)."""
    K = cyc.shape[1]
    cand = np.empty(cyc.shape[0], np.int64)
    for j in range(j0, j1):
        bit = np.uint64(1) << np.uint64(j)
        col = gcol + j
        e = eps[j]
        need = 0
        width = 0
        g = store[:, col]
        for f in range(F):
            if mixed[origin[f]] & bit and _is_cut(g, cyc, nv, f, e):
                cand[need] = f
                need += 1
                width = max(width, nv[f])
        if need == 0:
            continue
        if V + 2 * need > store.shape[0] or F + need > cyc.shape[0] or width + 2 > K:
            return V, F, j, need, width
        V, F, _ = split_faces(store, V, cyc, nv, origin, F, cand[:need], g, e, col)
    return V, F, j1, 0, 0


__all__ = ["cut_faces", "face_sign_bits", "insert_rows", "next_preactivations", "plan_inserts", "sign_changes",
           "split_channels", "split_faces"]
