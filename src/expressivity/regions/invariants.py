"""Invariant checks of the region meshes, on with ``EXPRESSIVITY_CHECK=1`` (in the manner of
regioncam's ``check_invariants``). Off by default and then free: a counter asks :func:`enabled`
once per count and holds no checker otherwise.

After every cut — one neuron or hyperplane: a ReLU channel, a maxout round of one unit, a
hardmax key round; in 1-D a whole step, whose breakpoints are inserted together — the mesh is
checked against the reference interpreter (:func:`.ir.walk`), which recomputes the cut function
g from the input coordinates alone:

* **the complex.** 1-D: the pieces tile the segment. 2-D: every face is a convex, positively
  oriented polygon; every interior edge is shared by exactly two faces, in opposite
  directions; every other edge lies on the domain's boundary; every vertex is used; Euler's
  relation V − E + F = 1 (a subdivided convex polygon). d-D: every facet of a cell is shared
  by exactly two cells or lies on a facet of the box; Euler's relation Σ_i (−1)^i f_i = 1
  (f_i: the i-faces; k ≤ 3 from the edges and facets, k ≥ 4 from every cell's face lattice
  while the complex has ≤ LATTICE_MAX_CELLS cells).
* **vertices.** The value of g the mesh carries at a vertex equals the reference value there
  (to CHECK_RTOL·max|g|); every vertex the cut made lies on the cut, and in d-D every vertex
  lies on every hyperplane its zero set names (the box facets included).
* **cells.** No cell has vertices strictly on both sides of the cut, and every cell's side is
  the sign of the reference g at an interior point (its centroid).

A failure raises :class:`InvariantError` (an ``AssertionError``) naming the invariant and the cut.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from . import ir
from .tolerances import CHECK_GEOM_RTOL, CHECK_PROBE, CHECK_RTOL, SCALE_FLOOR

LATTICE_MAX_CELLS = 300  # d ≥ 4: Euler's relation from the face lattice (Python) up to this size


def enabled() -> bool:
    """``EXPRESSIVITY_CHECK`` is set (and not 0)."""
    return os.environ.get("EXPRESSIVITY_CHECK", "") not in ("", "0")


class InvariantError(AssertionError):
    """A region mesh broke an invariant (a bug in a counter, never bad input)."""


@dataclass(frozen=True)
class Cut:
    """One cut of a counter: step ``step`` of ``Program.steps()``; kind "relu" (index: the
    channel, tokens flattened), "max" (round j, unit u: z_j − max_{i<j} z_i) or "select" (head,
    query, keys: the last key's score minus the others' maximum); "layer" (1-D: every channel
    of the step at once)."""

    step: int
    kind: str
    index: tuple = ()

    def __str__(self) -> str:
        if self.kind == "relu":
            return f"ReLU channel {self.index[0]} of step {self.step}"
        if self.kind == "max":
            return f"maxout round {self.index[0]} of unit {self.index[1]} at step {self.step}"
        if self.kind == "select":
            h, q, keys = self.index
            return f"hardmax head {h}, query {q}, key {keys[-1]} of step {self.step}"
        return f"step {self.step}"


def fail(invariant: str, cut, detail: str):
    raise InvariantError(f"region mesh invariant '{invariant}' broken by the cut along {cut}: {detail}")


def pre_at(prog, step: int, x: np.ndarray) -> np.ndarray:
    """What activation step ``step`` decides on at points x (:func:`.ir.walk`'s ``pre``)."""
    got = {}

    def visit(i, s, pre, choice):
        if i == step:
            got["pre"] = pre

    ir.walk(prog, x, visit, stop=step)
    return got["pre"]


def reference(prog, cut: Cut, x: np.ndarray) -> np.ndarray:
    """The cut function g at points x (N, n), from the reference interpreter: (N,)."""
    return cut_values(cut, pre_at(prog, cut.step, x))


def cut_values(cut: Cut, pre: np.ndarray) -> np.ndarray:
    """The cut function g from what its step decides on (:func:`pre_at`): (N,)."""
    N = len(pre)
    if cut.kind == "relu":
        return pre.reshape(N, -1)[:, cut.index[0]]
    if cut.kind == "max":
        j, u = cut.index
        g = pre.reshape(N, -1, pre.shape[-1])[:, u]
        return g[:, j] - g[:, :j].max(axis=1)
    h, q, keys = cut.index
    a = pre[:, h, q]
    return a[:, keys[-1]] - a[:, list(keys[:-1])].max(axis=1)


class Memo:
    """What the checks of one count carry between cuts. Vertices are only ever appended, so the
    reference at vertex v is computed once per step; centroids again when the mesh changed; and
    the mesh's size at the last check of its structure (a cut that made nothing leaves it)."""

    def __init__(self, prog, to_input):
        self.prog, self.to_input = prog, to_input
        self.vert: dict = {}
        self.cen: dict = {}
        self.shape = None
        self.lattice: dict = {}  # a cell's vertex set → its faces with their dimensions (d ≥ 4)

    def vertices(self, step: int, X: np.ndarray) -> np.ndarray:
        got = self.vert.get(step)
        n = 0 if got is None else len(got)
        if len(X) > n:
            new = pre_at(self.prog, step, self.to_input(X[n:]))
            got = new if got is None else np.concatenate([got, new])
            self.vert[step] = got
        return got[: len(X)]

    def centroids(self, step: int, key, cen) -> np.ndarray:
        got = self.cen.get(step)
        if got is None or got[0] != key:
            got = self.cen[step] = (key, pre_at(self.prog, step, self.to_input(cen())))
        return got[1]

    def changed(self, shape) -> bool:
        """Whether the mesh differs in size from the last structural check (and remember it)."""
        if shape == self.shape:
            return False
        self.shape = shape
        return True


def scale_of(*gs) -> float:
    """max |g| over the given value arrays (the scale of a cut function)."""
    return max(float(np.abs(g).max(initial=0.0)) for g in gs if g is not None)


def check_vertices(g_ref, g_store, made, scale, cut) -> None:
    """The carried g equals the reference at every vertex; the vertices ``made`` lie on the cut."""
    tol = CHECK_RTOL * scale
    if g_store is not None:
        bad = np.nonzero(np.abs(g_store - g_ref) > tol)[0]
        if len(bad):
            v = bad[0]
            fail("carried state = network", cut, f"vertex {v} carries g = {g_store[v]:.6g}, the network has "
                 f"{g_ref[v]:.6g} there ({len(bad)} vertices off)")
    bad = made[np.abs(g_ref[made]) > tol]
    if len(bad):
        fail("vertex on its hyperplanes", cut, f"new vertex {bad[0]} has g = {g_ref[bad[0]]:.6g} ≠ 0 (scale {scale:.3g})")


def check_sides(g_side, eps, members, g_centre, scale, cut, what: str = "cell") -> None:
    """No cell (rows of the padded vertex index array ``members``, −1 = none) has vertices with
    g > eps and g < −eps; each cell's side is the sign of g at its interior point."""
    valid = members >= 0
    gv = np.where(valid, g_side[np.maximum(members, 0)], 0.0)
    pos, neg = (gv > eps).any(axis=1), (gv < -eps).any(axis=1)
    both = np.nonzero(pos & neg)[0]
    if len(both):
        fail("cell on one side", cut, f"{what} {both[0]} has vertices on both sides ({len(both)} {what}s)")
    side = pos.astype(float) - neg
    wrong = np.nonzero(side * g_centre < -CHECK_RTOL * scale)[0]
    if len(wrong):
        c = wrong[0]
        fail("sign vector = interior point", cut, f"{what} {c} lies on the {'+' if side[c] > 0 else '−'} side, "
             f"its centroid has g = {g_centre[c]:.6g}")


# ---------------------------------------------------------------- 1-D


def check_segment(prog, seg, step: int, t0, t1, new_t, span) -> None:
    """After 1-D step ``step``: the pieces [t0, t1] tile ``span``; the new breakpoints are zeros
    of the step (a channel, or two top pieces / scores tie); within a piece the step's decision
    does not change (its reference at both ends — just inside them where f may jump — agrees
    with the midpoint's)."""
    cut = Cut(step, "layer")
    if not (np.all(t1 > t0) and np.all(t1[:-1] == t0[1:]) and t0[0] == span[0] and t1[-1] == span[1]):
        fail("pieces tile the segment", cut, f"{len(t0)} pieces from {t0[0]} to {t1[-1]}, not contiguous")
    kind = prog.steps()[step]
    # where f may jump (hardmax), the reference averages the tied values near a switch: read the
    # ends CHECK_PROBE of the piece inside; a continuous program's ends are exact
    jumps = any(isinstance(s, ir.SelectStep) for s in prog.steps()[:step + 1])
    mid, d = (t0 + t1) / 2, (CHECK_PROBE if jumps else 0.0) * (t1 - t0)
    pts = seg.points(np.concatenate([t0 + d, t1 - d, mid, new_t]))
    pre = pre_at(prog, step, pts)
    P, N = len(t0), len(new_t)
    L, R, M, B = pre[:P], pre[P:2 * P], pre[2 * P:3 * P], pre[3 * P:]
    if isinstance(kind, ir.ReluStep):
        L, R, M, B = (a.reshape(len(a), int(np.prod(a.shape[1:]))) for a in (L, R, M, B))
        scale = np.abs(pre).reshape(len(pre), -1).max(axis=0) + SCALE_FLOOR
        tol = CHECK_RTOL * scale
        cross = ((L > tol) & (R < -tol)) | ((L < -tol) & (R > tol))
        if cross.any():
            p, c = np.argwhere(cross)[0]
            fail("cell on one side", cut, f"channel {c} changes sign inside piece {p} ([{t0[p]:.9g}, {t1[p]:.9g}])")
        on = np.abs(B) <= tol
        if N and not on.any(axis=1).all():
            b = np.nonzero(~on.any(axis=1))[0][0]
            fail("vertex on its hyperplanes", cut, f"breakpoint t = {new_t[b]:.9g} is a zero of no channel")
        return
    top = _top_gap(kind, L, M), _top_gap(kind, R, M)
    scale = np.abs(pre[np.isfinite(pre)]).max(initial=0.0) + SCALE_FLOOR
    if max(t.max(initial=0.0) for t in top) > CHECK_RTOL * scale:
        fail("sign vector = interior point", cut, "a piece's decision (read at its midpoint) is not the one "
             "at its ends")
    if N and _second_gap(B).max(initial=0.0) > CHECK_RTOL * scale:
        fail("vertex on its hyperplanes", cut, "a breakpoint where no two top values tie")


def _top_gap(kind, end, mid):
    """How far the choice made at the midpoint is below the maximum at the end: (P, ...)."""
    arg = np.argmax(ir.tied(mid), axis=-1)[..., None]
    e = np.where(np.isfinite(end), end, -np.inf)
    return e.max(axis=-1) - np.take_along_axis(e, arg, axis=-1)[..., 0]


def _second_gap(B):
    """The gap between the largest and the second largest value, minimised over the units: (N,)."""
    s = np.sort(np.where(np.isfinite(B), B, -np.inf), axis=-1)
    gap = s[..., -1] - s[..., -2]
    gap = np.where(np.isfinite(gap), gap, np.inf)
    return gap.reshape(len(B), int(np.prod(gap.shape[1:]))).min(axis=1)


# ---------------------------------------------------------------- 2-D


def check_plane(memo: Memo, plane, mesh, cut: Cut, g_store, eps: float, V0: int) -> None:
    """After one cut of the 2-D mesh (module doc); ``g_store`` the carried g (None: not kept)."""
    faces, X = mesh.faces(), mesh.field("X")
    if memo.changed((len(X), len(faces))):
        _check_polygons(faces, X, plane.polygon, cut)
    g_ref = cut_values(cut, memo.vertices(cut.step, X))
    g_cen = cut_values(cut, memo.centroids(cut.step, (len(X), len(faces)), mesh.centroids))
    scale = scale_of(g_ref, g_store)
    check_vertices(g_ref, g_store, np.arange(V0, len(X)), scale, cut)
    check_sides(g_ref if g_store is None else g_store, eps, faces, g_cen, scale, cut, "face")


def _check_polygons(faces, X, polygon, cut) -> None:
    F, K = faces.shape
    n = (faces >= 0).sum(axis=1)
    if np.any(n < 3):
        fail("faces are polygons", cut, f"face {np.nonzero(n < 3)[0][0]} has fewer than 3 vertices")
    ext = np.ptp(polygon, axis=0).max()
    pos = np.arange(K)[None, :]
    valid = pos < n[:, None]
    rows = np.arange(F)[:, None]
    a = faces[valid]
    b = faces[rows, (pos + 1) % n[:, None]][valid]
    c = faces[rows, (pos + 2) % n[:, None]][valid]
    fid = np.repeat(np.arange(F), n)
    area = np.bincount(fid, X[a, 0] * X[b, 1] - X[b, 0] * X[a, 1], minlength=F) / 2
    if np.any(area <= 0):
        fail("faces are polygons", cut, f"face {np.nonzero(area <= 0)[0][0]} has no area or runs clockwise")
    d1, d2 = X[b] - X[a], X[c] - X[b]
    if np.any(d1[:, 0] * d2[:, 1] - d1[:, 1] * d2[:, 0] < -CHECK_GEOM_RTOL * ext**2):
        fail("faces are convex", cut, f"face {fid[np.argmin(d1[:, 0] * d2[:, 1] - d1[:, 1] * d2[:, 0])]} turns "
             "clockwise at a vertex")
    key = np.minimum(a, b) * (len(X) + 1) + np.maximum(a, b)
    uniq, inv, cnt = np.unique(key, return_inverse=True, return_counts=True)
    if np.any(cnt > 2):
        fail("edges shared by two faces", cut, f"an edge is used by {cnt.max()} faces")
    twice = cnt[inv] == 2
    turn = np.zeros(len(uniq), np.int64)
    np.add.at(turn, inv[twice], np.where(a[twice] < b[twice], 1, -1))
    if np.any(turn[cnt == 2] != 0):
        fail("edges shared by two faces", cut, "two faces run along an edge in the same direction")
    P, e = polygon, np.roll(polygon, -1, axis=0) - polygon

    def on_boundary(pts):
        r = pts[:, None, :] - P[None]
        return np.abs(e[None, :, 0] * r[..., 1] - e[None, :, 1] * r[..., 0]) / np.linalg.norm(e, axis=1) <= CHECK_GEOM_RTOL * ext

    once = ~twice
    if not (on_boundary(X[a[once]]) & on_boundary(X[b[once]])).any(axis=1).all():
        fail("edges shared by two faces", cut, "an edge of one face only lies inside the domain (a hanging vertex)")
    used = np.unique(a)
    if len(used) != len(X):
        fail("every vertex is used", cut, f"{len(X) - len(used)} vertices belong to no face")
    if len(used) - len(uniq) + F != 1:
        fail("Euler's relation", cut, f"V − E + F = {len(used)} − {len(uniq)} + {F} ≠ 1")


# ---------------------------------------------------------------- d-D


def check_complex(memo: Memo, dom, cx, cut: Cut, h: int, g_store, eps: float, V0: int, cuts: dict) -> None:
    """After the cut of hyperplane h of the d-D complex (module doc); ``cuts``: hyperplane →
    (Cut, scale), filled in here."""
    from . import complex_kernels as ck

    k = cx.k
    X = cx.field("X")
    Z = cx.Z[: cx.V]
    cstart, cverts = cx.csr()
    if memo.changed((len(X), len(cstart))):
        _check_faces(ck, X, Z, cstart, cverts, k, cut, memo.lattice)
    cells = _padded(cstart, cverts)
    g_ref = cut_values(cut, memo.vertices(cut.step, X))
    g_cen = cut_values(cut, memo.centroids(cut.step, (len(X), len(cstart)), lambda: ck.centroids(
        np.ascontiguousarray(X), cstart[:-1], np.diff(cstart), cverts)))
    scale = scale_of(g_ref, g_store)
    cuts[h] = (cut, scale)
    bit = (Z[:, h // 64] >> np.uint64(h % 64)) & np.uint64(1)
    check_vertices(g_ref, g_store, np.nonzero(bit)[0], scale, cut)
    check_sides(g_store, eps, cells, g_cen, scale, cut)
    _check_zero_sets(memo, dom, X, Z, V0, h, k, cuts, cut)


def _check_zero_sets(memo, dom, X, Z, V0, h, k, cuts, cut) -> None:
    """Every vertex made by the cut lies on every hyperplane of its zero set: the box facets
    (α_i = lo_i, hi_i) and the earlier cuts (``cuts``: hyperplane → (Cut, scale))."""
    on: dict = {}
    for v in range(V0, len(X)):
        for b in _bits(Z[v]):
            on.setdefault(b, []).append(v)
    for b, vs in on.items():
        if b < 2 * k:
            i, bound = b % k, (dom.lo if b < k else dom.hi)[b % k]
            off = np.abs(X[vs, i] - bound) > CHECK_RTOL * (dom.hi[i] - dom.lo[i])
            if off.any():
                fail("vertex on its hyperplanes", cut, f"vertex {vs[int(np.argmax(off))]} is off the box facet "
                     f"α_{i} = {bound:g} its zero set names")
        elif b != h and b in cuts:
            c, sb = cuts[b]
            g = cut_values(c, memo.vertices(c.step, X)[vs])
            if np.any(np.abs(g) > CHECK_RTOL * sb):
                v = vs[int(np.argmax(np.abs(g)))]
                fail("vertex on its hyperplanes", cut, f"vertex {v} has g = {np.abs(g).max():.6g} on the "
                     f"hyperplane of {c} its zero set names")


def _bits(row) -> list[int]:
    out = []
    for w, x in enumerate(row):
        x = int(x)
        while x:
            low = x & -x
            out.append(64 * w + low.bit_length() - 1)
            x ^= low
    return out


def _padded(cstart, cverts) -> np.ndarray:
    n = np.diff(cstart)
    out = np.full((len(n), max(int(n.max(initial=0)), 1)), -1, np.int64)
    rows = np.repeat(np.arange(len(n)), n)
    cols = np.arange(len(cverts)) - np.repeat(cstart[:-1], n)
    out[rows, cols] = cverts
    return out


def _check_faces(ck, X, Z, cstart, cverts, k, cut, lattice: dict) -> None:
    from .cells import vertex_keys

    keys, _, planes = ck.cell_facets(Z, cstart, cverts, vertex_keys(len(X)))
    uniq, inv, cnt = np.unique(keys, return_inverse=True, return_counts=True)
    if np.any(cnt > 2):
        fail("facets shared by two cells", cut, f"a facet belongs to {cnt.max()} cells")
    if np.any((cnt[inv] == 1) & (planes >= 2 * k)):
        fail("facets shared by two cells", cut, "a facet inside the box belongs to one cell only")
    C, V = len(cstart) - 1, len(np.unique(cverts))
    if V != len(X):
        fail("every vertex is used", cut, f"{len(X) - V} vertices belong to no cell")
    if k == 1:
        f = [V, C]
    elif k <= 3:
        E = len(np.unique(ck.cell_edges(Z, cstart, cverts, k), axis=0))
        f = [V, E, C] if k == 2 else [V, E, len(uniq), C]
    elif C <= LATTICE_MAX_CELLS:
        f = _f_vector(X, Z, cstart, cverts, k, lattice)
    else:
        return
    chi = sum((-1) ** i * fi for i, fi in enumerate(f))
    if chi != 1:
        fail("Euler's relation", cut, f"Σ (−1)^i f_i = {chi} ≠ 1 (f = {f})")


def _f_vector(X, Z, cstart, cverts, k, lattice: dict) -> list[int]:
    """Faces of every cell as the intersection closure of its facets (S_h = its vertices on
    hyperplane h, inclusion-maximal), de-duplicated over the complex; dimension by the rank of
    the vertices' coordinates. A cell's faces depend on its geometry only: ``lattice`` keeps
    them by vertex set between cuts."""
    faces: dict = {}
    ext = np.ptp(X, axis=0).max()
    for c in range(len(cstart) - 1):
        vs = cverts[cstart[c]:cstart[c + 1]]
        key = frozenset(vs.tolist())
        if key not in lattice:
            lattice[key] = _cell_faces(X, Z, vs, ext)
        faces.update(lattice[key])
    f = [0] * (k + 1)
    for dim in faces.values():
        f[dim] += 1
    return f


def _cell_faces(X, Z, vs, ext) -> dict:
    """{face (frozenset of vertex ids): dimension} of the cell with vertices vs."""
    bits = np.unpackbits(Z[vs].view(np.uint8), axis=1, bitorder="little").astype(bool)  # (n, 64 W)
    cols = np.nonzero(bits.any(axis=0) & ~bits.all(axis=0))[0]
    sets = {frozenset(vs[bits[:, h]].tolist()) for h in cols}
    facets = [a for a in sets if not any(a < b for b in sets)]
    level, seen = set(facets), set(facets)
    while level:
        level = {a & b for a in level for b in facets if a & b} - seen
        seen |= level
    seen.add(frozenset(vs.tolist()))
    faces = list(seen)
    m = max(len(f) for f in faces)
    D = np.zeros((len(faces), m, X.shape[1]))  # rows: vertices minus the first (zero rows pad)
    for i, face in enumerate(faces):
        P = X[list(face)]
        D[i, : len(P) - 1] = P[1:] - P[0]
    sv = np.linalg.svd(D, compute_uv=False)  # one batched call for the cell
    dims = (sv > CHECK_GEOM_RTOL * ext).sum(axis=1)
    return dict(zip(faces, dims.tolist()))


__all__ = ["Cut", "InvariantError", "Memo", "check_complex", "check_plane", "check_segment", "enabled", "reference"]
