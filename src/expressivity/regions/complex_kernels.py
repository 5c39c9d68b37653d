"""Compiled (numba) loops of the d-D subdivision counter (:mod:`.subdivide`). Single-threaded.

The complex is stored as

* ``store`` (cap_V, ncol) float64: vertex fields (coordinates in the domain's parameters and the
  network state), rows < V used;
* ``Z`` (cap_V, W) uint64: the zero set of every vertex as a bitset over the hyperplanes seen so
  far (bit h set: the vertex lies on hyperplane h; hyperplanes 0 … 2k − 1 are the box facets
  α_i = lo_i, α_i = hi_i);
* cells in CSR form: cell c has the vertices ``cverts[cstart[c]:cstart[c + 1]]`` (each cell is a
  convex polytope, given by its vertex set).

Adjacency (the combinatorial test of the double-description method; Motzkin et al. 1953,
Fukuda & Prodon 1996): two vertices a, b of a cell P are the ends of an edge of P iff no other
vertex r of P has Z(r) ⊇ Z(a) ∩ Z(b). (The smallest face of P containing a and b is P ∩ {the
hyperplanes in Z(a) ∩ Z(b)}; its vertices are those r; it is an edge iff it has no others.)
The test is exact for degenerate polytopes as well, which is why it is used instead of a count
of common zeros; |Z(a) ∩ Z(b)| ≥ k − 1 is only a quick necessary condition.
"""

from __future__ import annotations

import numpy as np
from numba import njit

HASH_PAIRS = 128  # hash the (k − 1)-subsets when the simple pairs outnumber HASH_PAIRS · k · (vertices)


@njit(cache=True, nogil=True, inline="always")
def _popcount(x):
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))  # int64: uint64 vs int compares go through float64


@njit(cache=True, nogil=True)
def _adjacent(Z, cverts, lo, hi, a, b, common, kdim):
    """Are vertices a, b of the cell cverts[lo:hi] the ends of one of its edges?"""
    W = Z.shape[1]
    n = 0
    for w in range(W):
        common[w] = Z[a, w] & Z[b, w]
        n += _popcount(common[w])
    if n < kdim - 1:
        return False
    for q in range(lo, hi):
        r = cverts[q]
        if r == a or r == b:
            continue
        sup = True
        for w in range(W):
            if (Z[r, w] & common[w]) != common[w]:
                sup = False
                break
        if sup:
            return False
    return True


@njit(cache=True, nogil=True)
def _grow_rows(a, n, need):
    if need <= a.shape[0]:
        return a
    cap = max(2 * a.shape[0], need)
    b = np.empty((cap,) + a.shape[1:], a.dtype)
    b[:n] = a[:n]
    return b


@njit(cache=True, nogil=True)
def _grow1(a, n, need):
    if need <= len(a):
        return a
    b = np.empty(max(2 * len(a), need), a.dtype)
    b[:n] = a[:n]
    return b


# ----------------------------------------------------------------- edge → new vertex table
# open addressing, keys a·stride + b ≥ 0, entries valid only with the current generation stamp
# (no clearing between hyperplanes)


@njit(cache=True, nogil=True, inline="always")
def _h_slot(key, m):
    h = np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)
    return np.int64((h ^ (h >> np.uint64(31))) & np.uint64(m))


@njit(cache=True, nogil=True)
def _h_put(tkey, tval, tgen, gen, key, val):
    m = len(tkey) - 1
    i = _h_slot(key, m)
    while tgen[i] == gen:
        i = (i + 1) & m
    tkey[i] = key
    tval[i] = val
    tgen[i] = gen


@njit(cache=True, nogil=True)
def _h_grow(tkey, tval, tgen, gen, need):
    """The table rehashed into a power of two ≥ need (≥ twice its size)."""
    size = 2 * len(tkey)
    while size < need:
        size *= 2
    nk = np.empty(size, np.int64)
    nv = np.empty(size, np.int64)
    ng = np.zeros(size, np.int64)
    for i in range(len(tkey)):
        if tgen[i] == gen:
            _h_put(nk, nv, ng, gen, tkey[i], tval[i])
    return nk, nv, ng


@njit(cache=True, nogil=True, inline="always")
def _mix(h, x):
    h = (h ^ x) * np.uint64(0x9E3779B97F4A7C15)
    return h ^ (h >> np.uint64(29))


@njit(cache=True, nogil=True)
def _subset_keys(Z, v, kdim, keys, drops):
    """Hashes of Z(v) − {h} for each h ∈ Z(v) (a simple vertex: |Z(v)| = kdim)."""
    W = Z.shape[1]
    m = 0
    for w in range(W):
        x = Z[v, w]
        while x:
            low = x & (~x + np.uint64(1))
            h = np.uint64(0x243F6A8885A308D3)
            for u in range(W):
                y = Z[v, u]
                if u == w:
                    y = y & ~low
                h = _mix(h, y + np.uint64(u))
            keys[m] = h
            drops[m] = w * 64 + _popcount(low - np.uint64(1))
            m += 1
            x = x & (x - np.uint64(1))
    return m


@njit(cache=True, nogil=True)
def _same_but_one(Z, a, da, b, db):
    """Z(a) − {da} == Z(b) − {db}."""
    for w in range(Z.shape[1]):
        x = Z[a, w]
        y = Z[b, w]
        if da // 64 == w:
            x &= ~(np.uint64(1) << np.uint64(da % 64))
        if db // 64 == w:
            y &= ~(np.uint64(1) << np.uint64(db % 64))
        if x != y:
            return False
    return True


@njit(cache=True, nogil=True)
def _crossing_edges(Z, pc, pool, lo, n, pos, npos, neg, nneg, kdim, common, ea, eb, zn, cnt, hit, deg, hash_pairs):
    """Edges (a, b) of the cell pool[lo:lo + n] with a ∈ pos, b ∈ neg, into ea, eb (capacity
    npos · nneg); returns their number. Scratch: ``zn`` ≥ nneg · W words, ``cnt`` and ``deg``
    ≥ nneg, ``hit`` (uint8) ≥ nneg rounded up to a multiple of 8.

    A vertex is simple if it lies on exactly k hyperplanes (pc[v] = k; then they are
    independent). Two simple vertices are adjacent iff they share k − 1 of them (the face cut
    out by those is a line, so the cell meets it in an edge). Found by the popcounts
    |Z(a) ∩ Z(b)| of a against every b at once, over neg's zero sets gathered word-major into
    ``zn`` (contiguous, so the loop vectorises), the few b with k − 1 then read off ``hit``
    eight bytes at a time; or, once the simple pairs outnumber hash_pairs · k · (their
    vertices), by hashing every (k − 1)-subset (:func:`_hashed_simple_pairs`, O(k n)). Pairs
    with a degenerate vertex use the general test (:func:`_adjacent`)."""
    W = Z.shape[1]
    km1 = kdim - 1
    one = np.uint64(1)
    hit64 = hit.view(np.uint64)
    for j in range(nneg, 8 * ((nneg + 7) >> 3)):
        hit[j] = 0
    m = 0
    ns = 0
    nd = 0
    for j in range(nneg):
        if pc[neg[j]] == kdim:
            ns += 1
        else:
            deg[nd] = neg[j]
            nd += 1
    ps = 0
    for i in range(npos):
        ps += pc[pos[i]] == kdim
    use_hash = ps * ns > hash_pairs * kdim * (ps + ns)
    if use_hash:
        m = _hashed_simple_pairs(Z, pc, pos, npos, neg, nneg, kdim, ns, ea, eb)
    else:  # neg's zero sets word-major; degenerate ones all-ones (|Z(a) ∩ ·| = k, never k − 1)
        full = ~np.uint64(0)
        for w in range(W):
            for j in range(nneg):
                b = neg[j]
                zn[w * nneg + j] = Z[b, w] if pc[b] == kdim else full
    for i in range(npos):
        a = pos[i]
        if pc[a] != kdim:  # degenerate: the general test against every b
            for j in range(nneg):
                if _adjacent(Z, pool, lo, lo + n, a, neg[j], common, kdim):
                    ea[m] = a
                    eb[m] = neg[j]
                    m += 1
            continue
        if not use_hash:
            za = Z[a, 0]
            if W == 1:
                for j in range(nneg):
                    hit[j] = _popcount(za & zn[j]) == km1
            else:
                for j in range(nneg):
                    cnt[j] = _popcount(za & zn[j])
                for w in range(1, W):
                    za = Z[a, w]
                    for j in range(nneg):
                        cnt[j] += _popcount(za & zn[w * nneg + j])
                for j in range(nneg):
                    hit[j] = cnt[j] == km1
            for q in range((nneg + 7) >> 3):  # the hits, eight bytes at a time (bytes past nneg are 0)
                x = hit64[q]
                while x:
                    j = q * 8 + (_popcount((x & (~x + one)) - one) >> 3)
                    x &= x - one
                    ea[m] = a
                    eb[m] = neg[j]
                    m += 1
        for j in range(nd):  # a simple, b degenerate
            if _adjacent(Z, pool, lo, lo + n, a, deg[j], common, kdim):
                ea[m] = a
                eb[m] = deg[j]
                m += 1
    return m


@njit(cache=True, nogil=True)
def _hashed_simple_pairs(Z, pc, pos, npos, neg, nneg, kdim, ns, ea, eb):
    """The pairs (a ∈ pos, b ∈ neg), both simple, sharing k − 1 hyperplanes, by a table of the
    (k − 1)-subsets of the simple b's zero sets (:func:`_subset_keys`); into ea, eb, returns
    their number."""
    m = 0
    size = 16
    while size < 2 * kdim * ns:
        size *= 2
    tkey = np.empty(size, np.uint64)
    tver = np.full(size, -1, np.int64)
    tdrop = np.empty(size, np.int64)
    keys = np.empty(64 * Z.shape[1], np.uint64)
    drops = np.empty(64 * Z.shape[1], np.int64)
    msk = np.uint64(size - 1)
    for j in range(nneg):
        b = neg[j]
        if pc[b] != kdim:
            continue
        q = _subset_keys(Z, b, kdim, keys, drops)
        for r in range(q):
            s = np.int64(keys[r] & msk)
            while tver[s] >= 0:
                s = (s + 1) & (size - 1)
            tkey[s] = keys[r]
            tver[s] = b
            tdrop[s] = drops[r]
    for i in range(npos):
        a = pos[i]
        if pc[a] != kdim:
            continue
        q = _subset_keys(Z, a, kdim, keys, drops)
        for r in range(q):
            s = np.int64(keys[r] & msk)
            while tver[s] >= 0:
                if tkey[s] == keys[r] and _same_but_one(Z, a, drops[r], tver[s], tdrop[s]):
                    ea[m] = a
                    eb[m] = tver[s]
                    m += 1
                s = (s + 1) & (size - 1)
    return m


@njit(cache=True, nogil=True, inline="always")
def _append_cell(pool, npool, side, nside, zer, nzer, new, nnew):
    """Write one half of a cut cell — its vertices on one side, those on the cut, the new ones —
    at pool[npool:]; returns the new end."""
    for i in range(nside):
        pool[npool] = side[i]
        npool += 1
    for i in range(nzer):
        pool[npool] = zer[i]
        npool += 1
    for i in range(nnew):
        pool[npool] = new[i]
        npool += 1
    return npool


@njit(cache=True, nogil=True)
def _sign_words(store, V, gcol, B, eps):
    """Per vertex, bit j of pw (nw) says g_j > eps[j] (g_j < −eps[j]): (pw, nw) of shape (V,)."""
    one = np.uint64(1)
    pw = np.zeros(V, np.uint64)
    nw = np.zeros(V, np.uint64)
    for v in range(V):
        p_ = np.uint64(0)
        n_ = np.uint64(0)
        for j in range(B):
            x = store[v, gcol + j]
            if x > eps[j]:
                p_ |= one << np.uint64(j)
            elif x < -eps[j]:
                n_ |= one << np.uint64(j)
        pw[v] = p_
        nw[v] = n_
    return pw, nw


@njit(cache=True, nogil=True)
def _mixed_cells(pw, nw, cs, cl, pool, C):
    """Bit j of mixed[c]: cell c has vertices of both strict signs of g_j (only those g_j can
    cut it, or a cell cut from it); also the longest cell's vertex count."""
    mixed = np.empty(C, np.uint64)
    maxlen = 1
    for c in range(C):
        p_ = np.uint64(0)
        n_ = np.uint64(0)
        for q in range(cs[c], cs[c] + cl[c]):
            p_ |= pw[pool[q]]
            n_ |= nw[pool[q]]
        mixed[c] = p_ & n_
        maxlen = max(maxlen, cl[c])
    return mixed, maxlen


@njit(cache=True, nogil=True)
def _zero_set_sizes(Z, V):
    """|Z(v)| per vertex, with room to grow: (2V,)."""
    pc = np.empty(2 * V, np.int64)
    for v in range(V):
        t = 0
        for w in range(Z.shape[1]):
            t += _popcount(Z[v, w])
        pc[v] = t
    return pc


@njit(cache=True, nogil=True)
def _column_signs(store, Z, pc, V, col, e, word, mask, sgn):
    """sgn[v] = sign of g at vertex v with |g| ≤ e as 0; vertices on the cut get its zero bit."""
    for v in range(V):  # one sequential pass; cells then read the small sign array
        x = store[v, col]
        if x > e:
            sgn[v] = 1
        elif x < -e:
            sgn[v] = -1
        else:
            sgn[v] = 0
            if not (Z[v, word] & mask):
                Z[v, word] |= mask
                pc[v] += 1


@njit(cache=True, nogil=True)
def _split_by_sign(pool, lo, n, sgn, pos, neg, zer):
    """The cell pool[lo : lo + n]'s vertices by sign into pos, neg, zer: their counts."""
    npos = 0
    nneg = 0
    nzer = 0
    for q in range(lo, lo + n):
        v = pool[q]
        sv = sgn[v]
        if sv > 0:
            pos[npos] = v
            npos += 1
        elif sv < 0:
            neg[nneg] = v
            nneg += 1
        else:
            zer[nzer] = v
            nzer += 1
    return npos, nneg, nzer


@njit(cache=True, nogil=True)
def _split_cell(pool, cs, cl, origin, npool, C, c, pos, npos, neg, nneg, zer, nzer, new, nnew):
    """Cell c keeps its id for P⁺ = {g ≥ 0 vertices, new}; cell C becomes P⁻ = {g ≤ 0 vertices,
    new}, with c's block-start ancestor. The larger half that fits is written over c's old
    entries (the vertices are read from pos, neg, zer, not from the pool), the other appended:
    (pool, cs, cl, origin, npool, entries left dead)."""
    n_old = cl[c]
    slot = cs[c]
    sp = npos + nzer + nnew
    sn = nneg + nzer + nnew
    cs = _grow1(cs, C, C + 1)
    cl = _grow1(cl, C, C + 1)
    origin = _grow1(origin, C, C + 1)
    plus_in_place = sp <= n_old and (sp >= sn or sn > n_old)
    minus_in_place = not plus_in_place and sn <= n_old
    need = (0 if plus_in_place else sp) + (0 if minus_in_place else sn)
    pool = _grow1(pool, npool, npool + need)
    if plus_in_place:
        cs[c] = slot
        _append_cell(pool, slot, pos, npos, zer, nzer, new, nnew)
        dead = n_old - sp
    else:
        cs[c] = npool
        npool = _append_cell(pool, npool, pos, npos, zer, nzer, new, nnew)
        dead = n_old if not minus_in_place else n_old - sn
    cl[c] = sp
    if minus_in_place:
        cs[C] = slot
        _append_cell(pool, slot, neg, nneg, zer, nzer, new, nnew)
    else:
        cs[C] = npool
        npool = _append_cell(pool, npool, neg, nneg, zer, nzer, new, nnew)
    cl[C] = sn
    origin[C] = origin[c]
    return pool, cs, cl, origin, npool, dead


@njit(cache=True, nogil=True)
def _compact_pool(pool, cs, cl, C, npool, garbage):
    """Drop the pool's dead entries (cells kept in order): (pool, npool)."""
    out = np.empty(npool - garbage + 64, pool.dtype)
    at = 0
    for c in range(C):
        s0 = cs[c]
        cs[c] = at
        for q in range(s0, s0 + cl[c]):
            out[at] = pool[q]
            at += 1
    return out, at


@njit(cache=True, nogil=True, inline="always")
def _edge_vertex(store, Z, pc, v, a, b, col, word, mask):
    """Row v: the vertex where g = store[:, col] vanishes on the edge (a, b), every field
    interpolated at t = g_a / (g_a − g_b) (column col set to 0), its zero set Z(a) ∩ Z(b) plus
    the cut's bit (``word``, ``mask``) and that set's size in pc[v]."""
    ga = store[a, col]
    t = ga / (ga - store[b, col])
    for r in range(store.shape[1]):
        store[v, r] = store[a, r] + t * (store[b, r] - store[a, r])
    store[v, col] = 0.0
    cnt = 1
    for w in range(Z.shape[1]):
        Z[v, w] = Z[a, w] & Z[b, w]
        cnt += _popcount(Z[v, w])
    Z[v, word] |= mask
    pc[v] = cnt


@njit(cache=True, nogil=True)
def _edge_vertices(store, Z, pc, V, ea, eb, n_e, new, col, word, mask, stride, tkey, tval, tgen, gen, max_rows):
    """new[q] = the vertex of crossing edge (ea[q], eb[q]): the one made already for that edge in
    this cut (the hash table tkey/tval, entries of generation ``gen``), else a new vertex at row
    V, V + 1, … (:func:`_edge_vertex`; the rows are allocated by the caller). Returns the number
    made, or −1 when a vertex would exceed ``max_rows`` rows."""
    tm = len(tkey) - 1
    made = 0
    for q in range(n_e):
        a = ea[q]
        b = eb[q]
        key = min(a, b) * stride + max(a, b)
        s = _h_slot(key, tm)  # the edge's vertex if made already, else its free slot
        vid = -1
        while tgen[s] == gen:
            if tkey[s] == key:
                vid = tval[s]
                break
            s = (s + 1) & tm
        if vid < 0:  # a new vertex, made once per edge and shared by the cells on it
            vid = V + made
            if vid + 1 > max_rows:
                return -1
            _edge_vertex(store, Z, pc, vid, a, b, col, word, mask)
            tkey[s] = key
            tval[s] = vid
            tgen[s] = gen
            made += 1
        new[q] = vid
    return made


@njit(cache=True, nogil=True)
def cut_block(store, Z, V, cs, cl, pool, npool, C, gcol, B, eps, plane0, kdim, max_rows):
    """Cut the complex along the B ≤ 64 functions g_j = store[:, gcol + j], one after the other
    (hyperplane plane0 + j), each affine on every cell of the complex at the block's start.

    Cells: cell c has the vertices pool[cs[c] : cs[c] + cl[c]]. Vertices with |g_j| ≤ eps[j] lie
    on the cut (their zero bit is set). A cell with vertices g_j > eps[j] and g_j < −eps[j] is
    split: for each of its edges (a, b) with g_a > 0 > g_b (the adjacency test) a vertex at
    t = g_a / (g_a − g_b) (every field interpolated, column gcol + j set to 0, zero set
    Z(a) ∩ Z(b) plus the new bit), made once per edge and shared by every cell containing it;
    the cell keeps its id for {g ≥ 0 vertices, new} and cell C becomes {g ≤ 0 vertices, new}.
    g_j can only cut a cell whose block-start ancestor has vertices of both strict signs (it is
    affine there), so only those cells are visited (one bit per function and ancestor).

    Returns (store, Z, V, cs, cl, pool, npool, C, cells cut, status); status 1: the vertex store
    would exceed ``max_rows`` rows (the caller refuses; the complex is unusable then).
    """
    W = Z.shape[1]
    one = np.uint64(1)
    pw, nw = _sign_words(store, V, gcol, B, eps)
    mixed, maxlen = _mixed_cells(pw, nw, cs, cl, pool, C)
    origin = np.arange(max(C, 16), dtype=np.int64)
    pos = np.empty(maxlen, np.int64)
    neg = np.empty(maxlen, np.int64)
    zer = np.empty(maxlen, np.int64)
    new = np.empty(maxlen, np.int64)
    zn = np.empty(maxlen * W, np.uint64)  # scratch of _crossing_edges
    shared = np.empty(maxlen, np.int64)
    hit = np.empty(8 * ((maxlen + 7) // 8), np.uint8)
    deg = np.empty(maxlen, np.int64)
    common = np.empty(W, np.uint64)
    sgn = np.empty(2 * V, np.int8)
    pc = _zero_set_sizes(Z, V)
    ea = np.empty(256, np.int64)
    eb = np.empty(256, np.int64)
    tkey = np.empty(1024, np.int64)
    tval = np.empty(1024, np.int64)
    tgen = np.zeros(1024, np.int64)
    n_cut = 0
    garbage = 0
    for j in range(B):
        h = plane0 + j
        word = h // 64
        mask = one << np.uint64(h % 64)
        col = gcol + j
        bit = one << np.uint64(j)
        gen = j + 1
        n_made = 0
        if len(sgn) < V:
            sgn = np.empty(2 * V, np.int8)
        _column_signs(store, Z, pc, V, col, eps[j], word, mask, sgn)
        stride = np.int64(V + 1)
        C0 = C
        for c in range(C0):
            if not (mixed[origin[c]] & bit):
                continue
            lo = cs[c]
            n = cl[c]
            if n > len(pos):
                pos = np.empty(2 * n, np.int64)
                neg = np.empty(2 * n, np.int64)
                zer = np.empty(2 * n, np.int64)
                zn = np.empty(2 * n * W, np.uint64)
                shared = np.empty(2 * n, np.int64)
                hit = np.empty(8 * ((2 * n + 7) // 8), np.uint8)
                deg = np.empty(2 * n, np.int64)
            npos, nneg, nzer = _split_by_sign(pool, lo, n, sgn, pos, neg, zer)
            if npos == 0 or nneg == 0:
                continue
            n_cut += 1
            if npos * nneg > len(ea):
                ea = np.empty(2 * npos * nneg, np.int64)
                eb = np.empty(2 * npos * nneg, np.int64)
            n_e = _crossing_edges(Z, pc, pool, lo, n, pos, npos, neg, nneg, kdim, common, ea, eb, zn, shared, hit, deg,
                                  HASH_PAIRS)
            # room for every crossing edge's vertex (grown here, once per cell at most, so that
            # the loop below reassigns no array)
            if V + n_e > min(store.shape[0], Z.shape[0], len(pc)):
                store = _grow_rows(store, V, V + n_e)
                Z = _grow_rows(Z, V, V + n_e)
                pc = _grow1(pc, V, V + n_e)
            if 2 * (n_made + n_e) > len(tkey):
                tkey, tval, tgen = _h_grow(tkey, tval, tgen, gen, 2 * (n_made + n_e))
            if n_e > len(new):
                new = np.empty(2 * n_e, np.int64)
            made = _edge_vertices(store, Z, pc, V, ea, eb, n_e, new, col, word, mask, stride, tkey, tval, tgen, gen,
                                  max_rows)
            if made < 0:
                return store, Z, V, cs, cl, pool, npool, C, n_cut, 1
            V += made
            n_made += made
            pool, cs, cl, origin, npool, dead = _split_cell(pool, cs, cl, origin, npool, C, c, pos, npos, neg,
                                                            nneg, zer, nzer, new, n_e)
            garbage += dead
            C += 1
        if 2 * garbage > npool:
            pool, npool = _compact_pool(pool, cs, cl, C, npool, garbage)
            garbage = 0
    return store, Z, V, cs, cl, pool, npool, C, n_cut, 0


@njit(cache=True, nogil=True)
def gather_cells(cs, cl, pool):
    """Cells as (cstart (C + 1) int64, cverts): cell c's vertices pool[cs[c] : cs[c] + cl[c]] at
    cverts[cstart[c] : cstart[c + 1]] (cverts of the pool's dtype)."""
    C = len(cl)
    cstart = np.zeros(C + 1, np.int64)
    for c in range(C):
        cstart[c + 1] = cstart[c] + cl[c]
    cverts = np.empty(cstart[C], pool.dtype)
    for c in range(C):
        cverts[cstart[c]:cstart[c + 1]] = pool[cs[c]:cs[c] + cl[c]]
    return cstart, cverts


@njit(cache=True, nogil=True)
def centroids(X, cs, cl, pool):
    """Mean of each cell's vertices (inside the cell: it is convex): (C, k)."""
    C = len(cl)
    k = X.shape[1]
    out = np.zeros((C, k))
    for c in range(C):
        for q in range(cs[c], cs[c] + cl[c]):
            for i in range(k):
                out[c, i] += X[pool[q], i]
        for i in range(k):
            out[c, i] /= cl[c]
    return out


@njit(cache=True, nogil=True)
def cell_edges(Z, cstart, cverts, kdim):
    """All edges of the complex: pairs (a < b) adjacent in some cell, one row each (with
    repeats across cells; the caller de-duplicates)."""
    C = len(cstart) - 1
    W = Z.shape[1]
    common = np.empty(W, np.uint64)
    out = np.empty((64, 2), np.int64)
    n = 0
    for c in range(C):
        lo, hi = cstart[c], cstart[c + 1]
        for i in range(lo, hi):
            for j in range(i + 1, hi):
                a, b = cverts[i], cverts[j]
                if _adjacent(Z, cverts, lo, hi, a, b, common, kdim):
                    out = _grow_rows(out, n, n + 1)
                    out[n, 0] = min(a, b)
                    out[n, 1] = max(a, b)
                    n += 1
    return out[:n].copy()


@njit(cache=True, nogil=True)
def cell_facets(Z, cstart, cverts, vkey):
    """Facets of every cell as (key, cell) rows: a facet of the cell P is an inclusion-maximal
    set S_h = {v ∈ P : h ∈ Z(v)} ≠ P over the hyperplanes h (every facet lies on a hyperplane,
    and a maximal S_h is not inside another face, so it is a facet). key = Σ_{v ∈ S_h} vkey[v]
    (random 64-bit words, wrapping): equal keys ⇔ the same vertex set, i.e. the same facet of the
    complex (face-to-face), seen from its two sides. Also returns the hyperplane h of each row."""
    C = len(cstart) - 1
    W = Z.shape[1]
    H = 64 * W
    keys = np.empty(64, np.uint64)
    cells = np.empty(64, np.int64)
    planes = np.empty(64, np.int64)
    n = 0
    for c in range(C):
        lo, hi = cstart[c], cstart[c + 1]
        k = hi - lo
        # hyperplanes tight somewhere on the cell but not everywhere
        anyz = np.zeros(W, np.uint64)
        allz = np.full(W, np.uint64(0xFFFFFFFFFFFFFFFF))
        for q in range(lo, hi):
            for w in range(W):
                anyz[w] |= Z[cverts[q], w]
                allz[w] &= Z[cverts[q], w]
        hs = np.empty(H, np.int64)
        nh = 0
        for h in range(H):
            w, m = h // 64, np.uint64(1) << np.uint64(h % 64)
            if (anyz[w] & m) and not (allz[w] & m):
                hs[nh] = h
                nh += 1
        inc = np.zeros((nh, k), np.bool_)
        for i in range(nh):
            w, m = hs[i] // 64, np.uint64(1) << np.uint64(hs[i] % 64)
            for q in range(k):
                inc[i, q] = (Z[cverts[lo + q], w] & m) != 0
        for i in range(nh):
            maximal = True
            for j in range(nh):
                if j == i:
                    continue
                sub = True
                strict = False
                for q in range(k):
                    if inc[i, q] and not inc[j, q]:
                        sub = False
                        break
                    if inc[j, q] and not inc[i, q]:
                        strict = True
                if sub and (strict or j < i):  # strictly inside, or a duplicate seen first
                    maximal = False
                    break
            if maximal:
                key = np.uint64(0)
                for q in range(k):
                    if inc[i, q]:
                        key += vkey[cverts[lo + q]]
                keys = _grow1(keys, n, n + 1)
                cells = _grow1(cells, n, n + 1)
                planes = _grow1(planes, n, n + 1)
                keys[n] = key
                cells[n] = c
                planes[n] = hs[i]
                n += 1
    return keys[:n].copy(), cells[:n].copy(), planes[:n].copy()


@njit(cache=True, nogil=True)
def cell_maps(X, out, cstart, cverts):
    """Affine map of ``out`` on every cell by least squares over its vertices (exact: the output
    is affine on the cell): (C, n_out, k + 1), last column the offset."""
    C = len(cstart) - 1
    k = X.shape[1]
    m = out.shape[1]
    maps = np.empty((C, m, k + 1))
    for c in range(C):
        lo, hi = cstart[c], cstart[c + 1]
        n = hi - lo
        A = np.empty((n, k + 1))
        B = np.empty((n, m))
        cen = np.zeros(k)
        for q in range(lo, hi):
            for i in range(k):
                cen[i] += X[cverts[q], i] / n
        for q in range(n):
            v = cverts[lo + q]
            for i in range(k):
                A[q, i] = X[v, i] - cen[i]
            A[q, k] = 1.0
            for j in range(m):
                B[q, j] = out[v, j]
        sol = np.linalg.lstsq(A, B)[0]  # (k + 1, m)
        for j in range(m):
            off = sol[k, j]
            for i in range(k):
                maps[c, j, i] = sol[i, j]
                off -= sol[i, j] * cen[i]
            maps[c, j, k] = off
    return maps


__all__ = ["cell_edges", "cell_facets", "cell_maps", "centroids", "cut_block", "gather_cells"]
