"""Exact d-D partition (d ≤ 6) of a box or a k-D slice by subdivision, one hyperplane at a time.

The complex K starts as the box [lo, hi]^k (2^k vertices, one cell) and is refined by every
neuron in turn (the idea of Berzins, "Polyhedral complex extraction from ReLU networks using
edge subdivision", ICML 2023; our own formulation and code):

* Every vertex v carries the network state (continuous, affine on every cell) and its zero set
  Z(v) ⊆ {hyperplanes so far} (the box facets α_i = lo_i, α_i = hi_i and every cut made).
* A neuron's pre-activation g (ReLU: g = z_j; maxout round j: g = z_j − max_{i<j} z_i; hardmax:
  score differences with constant queries) is affine on every cell of K, because the cell fixes
  every earlier sign. A cell P is cut iff it has vertices with g > 0 and g < 0. For every edge
  (a, b) of P with g_a > 0 > g_b the new vertex is x = x_a + t (x_b − x_a), t = g_a / (g_a − g_b),
  every field interpolated, Z = Z(a) ∩ Z(b) ∪ {g}; P becomes P⁺ = {v : g_v ≥ 0} ∪ new and
  P⁻ = {v : g_v ≤ 0} ∪ new. Vertices with g = 0 (within the tolerance) get g in their zero set.
* Edges are not stored: (a, b) is an edge of the cell P iff no other vertex r of P has
  Z(r) ⊇ Z(a) ∩ Z(b) (the double-description adjacency test, exact in degenerate position).
  In general position it reduces to Berzins' rule — the new vertices of the edges e, e′ are
  joined iff e, e′ lie on a common 2-face, i.e. their zero sets share k − 2 hyperplanes.

So the number of cells grows by one per cut cell and the vertex count by one per cut edge;
the work per hyperplane is linear in the number of (cell, vertex) incidences. Cells are
activation regions for ReLU nets (every cut separates two patterns); maxout units of rank ≥ 3
and hardmax selections are cut in rounds against a running maximum (as in :mod:`.plane`),
which may over-split, so activation regions are the distinct patterns at cell centroids (the
set of one pattern is convex — an intersection of half-spaces once earlier patterns are fixed).

Resumable steps: the layer loop is :func:`advance` over a complex that carries where it stands
(:class:`At`: the next step; inside a ReLU layer, the next column of its G and the layer's
tolerance). :func:`partition_subdivide` runs it to the end once; the count-only mode
(:mod:`.stream`) stops it at a block or layer boundary, splits the cells into two groups
(:meth:`_Complex.part`) and resumes each group on its own.

Tolerance (float64): a vertex with |g| ≤ ZERO_RTOL · max |g| over the vertices at the start of
the layer lies on the cut (ZERO_RTOL = :data:`.tolerances.SUBDIVIDE_ZERO_RTOL` = 1e-12). Everything else is combinatorial.
"""


from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from ..memory import fmt_bytes, memory_budget
from . import complex_kernels as ck
from . import invariants, ir
from .domains import MAX_SLICE_DIM, Slice
from .ir import Program, constant_queries, continuous_select, key_rounds, round_scores
from .plane import _tokenwise, maxout_units, relayout
from .result import CellPieces, Counted
from .tolerances import SCALE_FLOOR, SUBDIVIDE_ZERO_RTOL, reported

ZERO_RTOL = SUBDIVIDE_ZERO_RTOL  # why 1e-12 and not the plane's 1e-9: see .tolerances


_BMAX = 64


@dataclass
class At:
    """Where a complex stands in its program (what a streamed group resumes from): ``li`` the
    next step; ``eps`` not None while the ReLU layer at ``li`` is under way (its G field exists,
    columns < ``j0`` are cut, ``eps`` its tolerances); the SaveStep stack depth, the token width
    and whether a step so far may over-split (maxout rank ≥ 3, hardmax with T ≥ 3)."""

    li: int
    d_tok: int
    j0: int = 0
    eps: np.ndarray | None = None
    n_stack: int = 0
    oversplit: bool = False


class _Complex:
    """Vertices (fields in one float store, zero sets as bitsets) and cells (CSR)."""

    def __init__(self, lo: np.ndarray, hi: np.ndarray, n_planes: int, max_rows: int, bytes_per_row: int):
        k = len(lo)
        corners = (np.arange(2**k)[:, None] >> np.arange(k)[None, :]) & 1  # (2^k, k) bits
        self.k = k
        self.V = 2**k
        self.store = np.where(corners == 1, hi, lo).astype(np.float64)
        self.cols: dict[str, slice] = {"X": slice(0, k)}
        self.W = max(1, (n_planes + 63) // 64)
        self.Z = np.zeros((self.V, self.W), np.uint64)
        for i in range(k):
            for h, on in ((i, corners[:, i] == 0), (k + i, corners[:, i] == 1)):
                self.Z[on, h // 64] |= np.uint64(1) << np.uint64(h % 64)
        self.n_planes = n_planes
        self.next_plane = 2 * k
        self.cs = np.zeros(16, np.int64)  # cell c: vertices pool[cs[c] : cs[c] + cl[c]]
        self.cl = np.zeros(16, np.int64)
        self.cl[0] = self.V
        self.pool = np.arange(self.V, dtype=np.int32)  # vertex ids < 2^31 (max_rows is checked)
        self.npool = self.V
        self.C = 1
        self.max_rows = max_rows
        self.bytes_per_row = bytes_per_row
        self.bmax = _BMAX  # the most columns of one cut block (a streamed count splits between blocks)
        self.what = self.what_step = ""
        self.at = At(1, 0)
        self.check = None  # (invariants.Memo, domain, {hyperplane: (Cut, scale)}) with EXPRESSIVITY_CHECK on

    def field(self, name: str) -> np.ndarray:
        return self.store[: self.V, self.cols[name]]

    def set_fields(self, new: dict) -> None:
        """Set (values (V, w)) or drop (None) fields; one re-layout of the store."""
        new = {k: (None if v is None else np.asarray(v, np.float64).reshape(self.V, -1)) for k, v in new.items()}
        self.store, self.cols = relayout(self.store, self.cols, self.V, new, max(self.store.shape[0], self.V))

    def part(self, cells: np.ndarray) -> _Complex:
        """The sub-complex of the cells ``cells`` (ids, ascending): the vertices they use,
        re-indexed in their order, with every field and zero set copied; the same hyperplane
        numbering and run state (:class:`At`). Later cuts of these cells depend on nothing else
        (module doc), so the group can be carried on alone. The invariant checks, which look
        at the whole box, are off in a part."""
        cstart, cverts = ck.gather_cells(self.cs[cells], self.cl[cells], self.pool)
        used = np.zeros(self.V, bool)
        used[cverts] = True
        keep = np.flatnonzero(used)
        new_id = np.cumsum(used, dtype=np.int32) - 1
        sub = copy.copy(self)
        sub.store, sub.Z, sub.V = self.store[keep], self.Z[keep], len(keep)
        sub.pool, sub.npool = new_id[cverts], len(cverts)
        sub.cs, sub.cl, sub.C = cstart[:-1].copy(), np.diff(cstart), len(cells)
        sub.cols, sub.at, sub.check = dict(self.cols), replace(self.at), None
        return sub

    def cut(self, name: str, j0: int, B: int, eps: np.ndarray, cut_of=None) -> int:
        """Cut every cell along columns j0 … j0 + B − 1 (B ≤ 64) of field ``name``, one after
        the other; returns the number of cells cut. With the invariant checks on, one column at
        a time, each followed by :func:`.invariants.check_complex` (``cut_of(j)`` names column
        j0 + j's cut)."""
        if self.check is not None and B > 1:
            return sum(self.cut(name, j0 + j, 1, eps[j:j + 1], lambda _, j=j: cut_of(j)) for j in range(B))
        h, V0 = self.next_plane, self.V
        self.next_plane += B
        while self.next_plane > 64 * self.W:  # more hyperplanes than planned: widen the bitsets
            self.Z = np.hstack([self.Z, np.zeros((self.Z.shape[0], self.W), np.uint64)])
            self.W *= 2
        col = self.cols[name].start + j0
        out = ck.cut_block(self.store, self.Z, self.V, self.cs, self.cl, self.pool, self.npool, self.C,
                           col, B, np.ascontiguousarray(eps, np.float64), h, self.k, self.max_rows)
        store, Z, V, cs, cl, pool, npool, C, n, status = out
        if status:
            need = self.max_rows * self.bytes_per_row
            raise ValueError(
                f"domain: the complex outgrows {self.max_rows:,} vertices (≈ {fmt_bytes(need)} at "
                f"{self.bytes_per_row} B each) while cutting {self.what}, over the memory budget of "
                f"{fmt_bytes(memory_budget())} (set EXPRESSIVITY_MEMORY_BUDGET to change it); use a smaller "
                f"box or a lower-dimensional Slice")
        self.store, self.Z, self.V, self.pool, self.npool, self.C = store, Z, V, pool, npool, C
        self.cs, self.cl = cs, cl
        if self.check is not None:
            memo, dom, cuts = self.check
            invariants.check_complex(memo, dom, self, cut_of(0), h, self.store[: self.V, col], float(eps[0]), V0, cuts)
        return n

    def cut_all(self, name: str, eps: np.ndarray, tick=None, cut_of=None, start: int = 0, stop=None) -> int:
        """Cut along the columns ``start`` … of field ``name`` in blocks of ≤ ``bmax`` (small
        blocks while the complex is small, so that the per-cell candidate bits are refreshed
        often); ``cut_of(j)`` names column j's cut (for the invariant checks). Before each
        block, ``stop(self)`` true ends it early. Returns the next column to cut (all: n)."""
        n = self.cols[name].stop - self.cols[name].start
        lo = start
        while lo < n:
            if stop is not None and stop(self):
                return lo
            B = min(int(np.clip(2 * self.C, 8, self.bmax)), n - lo)
            self.what = f"columns {lo}…{lo + B - 1} of {self.what_step}"
            self.cut(name, lo, B, eps[lo:lo + B], cut_of and (lambda j, lo=lo: cut_of(lo + j)))
            lo += B
            if tick is not None:
                tick(self)
        return n

    def csr(self) -> tuple[np.ndarray, np.ndarray]:
        """Cells as (cstart (C + 1), cverts) with the vertices of cell c at cverts[cstart[c]:cstart[c+1]]."""
        return ck.gather_cells(self.cs[: self.C], self.cl[: self.C], self.pool)

    def centroids(self) -> np.ndarray:
        """The mean of every cell's vertices (inside it: cells are convex), in α: (C, k)."""
        return ck.centroids(np.ascontiguousarray(self.field("X")), self.cs[: self.C], self.cl[: self.C], self.pool)


def _n_planes(prog: Program, k: int) -> tuple[int, int]:
    """(hyperplanes incl. the 2k box facets, widest state) for the bitset and memory plans."""
    T = prog.n_tokens
    n, widest = 2 * k, prog.ops[0].E.shape[2] * T
    for step in prog.steps():
        match step:
            case ir.ReluStep(W):
                w = (W.shape[1] if W is not None else widest // T) * T
                n += w
                widest = max(widest, 2 * w)
            case ir.MaxStep(W, _, idx):
                m, p = idx.shape
                w = W.shape[1] * T if W is not None else widest
                n += T * m * (p - 1)
                widest = max(widest, w + 2 * T * m)
            case ir.SelectStep(op):
                n += op.W_Q.shape[0] * T * max(T - 1, 1)
            case ir.AffineStep(W):
                widest = max(widest, W.shape[1] * T)
    return n, widest


def start_complex(prog: Program, dom: Slice) -> _Complex:
    """The box complex of ``dom`` (one cell, 2^k vertices) with the program's first state Y = x E + c
    at its vertices, positioned before step 1; the domain and the memory plan checked."""
    k = dom.k
    if k > MAX_SLICE_DIM:
        raise ValueError(f"domain: dimension {k} > {MAX_SLICE_DIM}; exact counting is limited to "
                         f"{MAX_SLICE_DIM}-D, count on a Slice(origin, basis, lo, hi) of dimension ≤ {MAX_SLICE_DIM}")
    if dom.dim != prog.in_dim:
        raise ValueError(f"domain has dimension {dom.dim} but the model's input dimension is {prog.in_dim}")
    n_planes, widest = _n_planes(prog, k)
    W = max(1, (n_planes + 63) // 64)
    # per vertex: its fields and zero set, ≤ 2^k cell incidences (int32, double-buffered);
    # the arrays grow by doubling (up to twice the rows in use), so twice that
    per_row = 2 * (8 * (k + widest + 8) + 8 * W + 8 * 2**k)
    max_rows = min(max(2**k + 1, memory_budget() // per_row), 2**31 - 1)
    cx = _Complex(dom.lo, dom.hi, n_planes, max_rows, per_row)
    if invariants.enabled():
        cx.check = (invariants.Memo(prog, dom.points), dom, {})
    E, c = prog.steps()[0].E, prog.steps()[0].c
    x = dom.points(cx.field("X"))
    cx.set_fields({"Y": (np.einsum("nk,ktd->ntd", x, E) + c).reshape(cx.V, -1)})
    cx.at = At(1, E.shape[2])
    return cx


def plane_fraction(cx: _Complex) -> float:
    """The share of the program's hyperplanes cut so far (0 … 1)."""
    return min(1.0, (cx.next_plane - 2 * cx.k) / max(1, cx.n_planes - 2 * cx.k))


Stop = Callable[[_Complex], bool]


def advance(cx: _Complex, steps: list, T: int, tick=None, stop: Stop | None = None) -> bool:
    """Carry ``cx`` through ``steps`` from where it stands (``cx.at``) to the end: True; or, when
    ``stop(cx)`` holds before a step or between two cut blocks of a ReLU layer, False with
    ``cx.at`` where to resume. (Maxout rounds and hardmax selections run through: a stop is
    looked at only before them.) ``tick(cx)`` after every cut block."""
    at = cx.at
    while at.li < len(steps):
        if stop is not None and at.eps is None and stop(cx):
            return False
        if not _step(cx, steps[at.li], T, tick, stop):
            return False
        at.li += 1
    return True


def _step(cx: _Complex, step, T: int, tick, stop: Stop | None) -> bool:
    """One step of the program at the complex's vertices (False: a ReLU layer stopped early)."""
    at, li = cx.at, cx.at.li
    match step:
        case ir.AffineStep(W, b):
            Wb, bb = _tokenwise(W, b, T)
            cx.set_fields({"Y": cx.field("Y") @ Wb + bb})
            at.d_tok = W.shape[1]
        case ir.SaveStep():
            cx.set_fields({f"S{at.n_stack}": cx.field("Y")})
            at.n_stack += 1
        case ir.AddStep():
            at.n_stack -= 1
            cx.set_fields({"Y": cx.field(f"S{at.n_stack}") + cx.field("Y"), f"S{at.n_stack}": None})
        case ir.ReadStep(tokens) if list(tokens) != list(range(T)):
            Y = cx.field("Y").reshape(cx.V, T, at.d_tok)
            cx.set_fields({"Y": Y[:, list(tokens)].reshape(cx.V, -1)})
        case ir.ReluStep():
            return _relu_layer(cx, step, T, li, tick, stop)
        case ir.MaxStep(idx=idx):
            at.d_tok = _max_layer(cx, step, T, li, tick)
            at.oversplit |= idx.shape[1] >= 3
        case ir.SelectStep(op):
            _select_layer(cx, op, T, at.d_tok, li, tick)
            at.oversplit |= T >= 3
    return True


def partition_subdivide(prog: Program, dom: Slice, progress=None) -> dict:
    """Cells of ``prog`` on the slice ``dom`` (a Box is ``Slice.of_box``): see the module doc."""
    cx = start_complex(prog, dom)
    tick = (lambda c: progress(plane_fraction(c))) if progress is not None else None
    advance(cx, prog.steps(), prog.n_tokens, tick)
    X = cx.field("X").copy()
    out = cx.field("Y").copy()
    cx.store = None  # the fields are copied out: free them before the cells are gathered
    cstart, cverts = cx.csr()
    cx.pool = None
    cen = ck.centroids(X, cstart[:-1], np.diff(cstart), cverts)
    points = dom.points(cen)
    if cx.at.oversplit:
        code = pattern_codes(prog, points)
        _, first, region = np.unique(code, return_index=True, return_inverse=True)
        order = np.argsort(first)  # region ids in order of first appearance
        remap = np.empty(len(order), np.int64)
        remap[order] = np.arange(len(order))
        region = remap[region.ravel()]
    else:
        region = np.arange(cx.C)
    if progress is not None:
        progress(1.0)
    return {"vertices": X, "cstart": cstart, "cverts": cverts, "Z": cx.Z[: cx.V].copy(),
            "out": out, "points": points, "centroids": cen, "region": region,
            "n_regions": int(region.max()) + 1 if len(region) else 0}


def pattern_codes(prog: Program, points: np.ndarray) -> np.ndarray:
    """The 64-bit activation-pattern hash at every point (:func:`.ir.outputs_and_patterns`):
    over-split cells of one pattern form one activation region."""
    return ir.outputs_and_patterns(prog, points)[1].ravel()


def _eps(G: np.ndarray) -> np.ndarray:
    return ZERO_RTOL * np.abs(G).max(axis=0, initial=0.0)


def _relu_layer(cx: _Complex, step: ir.ReluStep, T: int, li: int, tick, stop: Stop | None) -> bool:
    """Cut along every channel of G = H W + b (G affine on every cell of the layer's start
    complex, so interpolated exactly at new vertices), then H ← relu(G). Resumes at column
    ``cx.at.j0`` when the layer is under way; False when ``stop`` ended it early."""
    at = cx.at
    W, b = step.W, step.b
    if W is None:
        W, b = np.eye(at.d_tok), np.zeros(at.d_tok)
    if at.eps is None:
        Wb, bb = _tokenwise(W, b, T)
        G = cx.field("Y") @ Wb + bb
        at.eps, at.j0 = _eps(G), 0
        cx.set_fields({"G": G, "Y": None})
    cx.what_step = f"the ReLU layer at step {li}"
    at.j0 = cx.cut_all("G", at.eps, tick, lambda c: invariants.Cut(li, "relu", (c,)), at.j0, stop)
    if at.j0 < len(at.eps):
        return False
    np.maximum(cx.field("G"), 0.0, out=cx.field("G"))  # H ← relu(G) in place: no second store
    cx.cols["Y"] = cx.cols.pop("G")
    at.d_tok, at.eps, at.j0 = W.shape[1], None, 0
    return True


def _max_layer(cx: _Complex, step: ir.MaxStep, T: int, li: int, tick) -> int:
    """Maxout units in rounds: round j cuts unit u along z_j − M_u, M_u = max_{i<j} z_i (affine
    on every cell once the rounds before are done), then M_u ← max(M_u, z_j)."""
    idx = step.idx
    Zs, gidx, A = maxout_units(cx.field("Y"), step, T)
    cx.set_fields({"Z": Zs, "Y": None, "M": Zs[:, gidx[:, 0]]})
    for j in range(1, idx.shape[1]):
        eps = ZERO_RTOL * A[:, : j + 1].max(axis=1)
        cx.set_fields({"G": cx.field("Z")[:, gidx[:, j]] - cx.field("M")})
        cx.what_step = f"round {j} of the maxout layer at step {li}"
        cx.cut_all("G", eps, tick, lambda u, j=j: invariants.Cut(li, "max", (j, u)))
        cx.set_fields({"M": np.maximum(cx.field("M"), cx.field("Z")[:, gidx[:, j]])})
    cx.set_fields({"Y": cx.field("M"), "Z": None, "M": None, "G": None})
    return idx.shape[0]


def _select_layer(cx: _Complex, op, T: int, d_tok: int, li: int, tick) -> None:
    """Hardmax with constant queries: for every head and query, keys in rounds against the
    running maximum of the (affine) scores (:func:`.ir.key_rounds`); then the selected values
    must be continuous."""
    q0, qscale = constant_queries(op, cx.field("Y").reshape(cx.V, T, d_tok),
                                  "(boxes and slices need constant queries, as in compiled models)")
    for h, i, keys in key_rounds(op, q0, qscale):
        a = round_scores(op, cx.field("Y").reshape(cx.V, T, d_tok), q0[h, i], h, keys)  # (V, j + 1)
        cx.set_fields({"G": (a[:, -1] - a[:, :-1].max(axis=1))[:, None]})
        cx.what = f"hardmax head {h}, query {i}, key {keys[-1]} of step {li}"
        cx.cut("G", 0, 1, np.array([ZERO_RTOL * (np.abs(a).max() + SCALE_FLOOR)]),
               lambda _, h=h, i=i, keys=tuple(keys): invariants.Cut(li, "select", (h, i, keys)))
        cx.set_fields({"G": None})
        if tick is not None:
            tick(cx)
    Y3 = cx.field("Y").reshape(cx.V, T, d_tok)
    cx.set_fields({"Y": continuous_select(op, Y3, "the d-D complex").reshape(cx.V, -1)})


def subdivide_regions(prog: Program, domain, progress, stream: bool = False, stream_rows: int | None = None):
    """The counter for a Box (d ≤ 6) or a Slice (``count_regions`` reports it as kind "box");
    ``stream``: the count only, in bounded memory (:mod:`.stream`)."""
    from .domains import Box

    if isinstance(domain, Box):
        box = domain.with_dim(prog.in_dim)
        if box.dim > MAX_SLICE_DIM:
            raise ValueError(
                f"domain: a Box of dimension {box.dim} > {MAX_SLICE_DIM} is too large for exact counting; "
                f"count on a Slice(origin, basis, lo, hi) of dimension ≤ {MAX_SLICE_DIM}, or use method='lp' "
                f"for a few regions")
        dom = Slice.of_box(box)
    else:
        dom = domain
    if stream:
        from .stream import count_streamed

        return count_streamed(prog, dom, progress, stream_rows)
    p = partition_subdivide(prog, dom, progress)
    pieces = CellPieces(p["points"], p["region"], prog, dom, vertices=p["vertices"], cstart=p["cstart"],
                        cverts=p["cverts"], Z=p["Z"], out=p["out"], centroids=p["centroids"])
    return Counted(p["n_regions"], len(p["region"]), pieces, reported(SUBDIVIDE_ZERO_RTOL))


__all__ = ["At", "advance", "partition_subdivide", "pattern_codes", "start_complex", "subdivide_regions"]
