"""Exact 2-D partition of a planar slice: a conforming polygon mesh split one channel at a time.

Vertices carry the state y (continuous piecewise affine in (α, β)); on every face it is affine,
so a channel g crosses a face iff g takes both signs at its vertices, and the new vertex on
edge (a, b) is at t = g_a / (g_a − g_b) with every field interpolated there. A split face keeps
its g ≥ 0 part and its g ≤ 0 part becomes a new face; the shared cut vertices (one per cut
edge, reused by both faces) keep the mesh conforming. This is regioncam's algorithm; the face
loops run compiled (:func:`.kernels.split_faces`), with two savings:

* ReLU layers (the hot path) keep in the vertex store either all pre-activations G = H W + b
  (H dropped) or the layer input H and one block of ≤ 64 columns of G, whichever is narrower;
  channels are cut in blocks of ≤ 64, and a face can only be cut by channel j if the face it
  descends from at the start of the block was (one bit per channel and face), so each channel
  touches only those faces (:func:`.kernels.split_channels`).
* GroupMax units (in rounds over their pieces, each round cut like a ReLU layer's channels)
  and hardmax selections (scores affine: the query must be constant on the slice, as in
  compiled models) are split incrementally against the running maximum; this
  may over-split, so activation regions are then the connected components of faces with equal
  activation pattern (read at each face's centroid).

Tie policy: a vertex with |g| ≤ ZERO_RTOL·max|g| lies on the cut. Hardmax selections must be
continuous on the slice (tied tokens carry equal values); otherwise ValueError (use a Segment).
"""

from __future__ import annotations

import numpy as np

from . import invariants, ir, kernels
from .domains import Plane
from .ir import Program, constant_queries, continuous_select, key_rounds, round_scores
from .merge import adjacent_faces, components
from .tolerances import SCALE_FLOOR, ZERO_RTOL

_BLOCK = 64  # channels per block: one bit each in a uint64


def relayout(store: np.ndarray, cols: dict, V: int, new: dict, capacity: int) -> tuple[np.ndarray, dict]:
    """A fresh vertex store (capacity rows) holding the fields of ``store`` (named column slices
    ``cols``, V rows in use) with ``new`` applied: name → values (V, w) sets, None drops."""
    keep = {k: store[:V, sl] for k, sl in cols.items() if k not in new}
    keep.update({k: v for k, v in new.items() if v is not None})
    out = np.empty((capacity, sum(v.shape[1] for v in keep.values())))
    cols, at = {}, 0
    for k, v in keep.items():
        out[:V, at:at + v.shape[1]] = v
        cols[k] = slice(at, at + v.shape[1])
        at += v.shape[1]
    return out, cols


class _Mesh:
    """Vertices with interpolated fields and face cycles.

    All vertex fields live in one (capacity, columns) float array (one gather per split for
    all of them); ``cols`` maps a field name to its column slice. Face cycles are rows of
    ``cyc`` padded with the face's first vertex (so min/max over a row ignore the padding);
    ``nv`` holds the true lengths.
    """

    def __init__(self, poly: np.ndarray):
        k = len(poly)
        self.V = k
        self.store = np.zeros((max(64, 4 * k), 2))
        self.store[:k] = poly
        self.cols: dict[str, slice] = {"X": slice(0, 2)}
        self.cyc = np.zeros((16, max(8, k)), np.int64)
        self.cyc[0, :k] = np.arange(k)
        self.nv = np.zeros(16, np.int64)
        self.nv[0] = k
        self.F = 1
        self.origin = np.zeros(16, np.int64)
        self.check = None  # (invariants.Memo, plane) when EXPRESSIVITY_CHECK is on

    # -------------------------------------------------------------- storage
    def field(self, name: str) -> np.ndarray:
        return self.store[: self.V, self.cols[name]]

    def set_field(self, name: str, values: np.ndarray) -> None:
        self.set_fields({name: values})

    def drop(self, name: str) -> None:
        self.set_fields({name: None})

    def set_fields(self, new: dict[str, np.ndarray | None]) -> None:
        """Set (values (V, ...)) or drop (None) fields with at most one re-layout of the store."""
        new = {k: (None if v is None else v.reshape(self.V, -1)) for k, v in new.items()}
        same = all(v is not None and k in self.cols and self.cols[k].stop - self.cols[k].start == v.shape[1]
                   for k, v in new.items())
        if same:
            for k, v in new.items():
                self.store[: self.V, self.cols[k]] = v
            return
        self.store, self.cols = relayout(self.store, self.cols, self.V, new, self.store.shape[0])

    def set_computed(self, name: str, width: int, rows, drop: tuple[str, ...] = ()) -> None:
        """Set field ``name`` to ``rows(lo, hi)`` (values of vertices lo … hi − 1, width
        columns), computed in chunks straight into the re-laid-out store: no full-size
        temporaries. ``rows`` may read the current fields (the old store lives until the end)."""
        gone = set(drop) | {name}
        keep = {k: sl for k, sl in self.cols.items() if k not in gone}
        # exactly V rows: usually the last layer's output, returned as a view (a later split
        # grows the store again)
        store = np.empty((self.V, sum(sl.stop - sl.start for sl in keep.values()) + width))
        cols, at = {}, 0
        for k, sl in keep.items():
            w = sl.stop - sl.start
            store[: self.V, at:at + w] = self.store[: self.V, sl]
            cols[k] = slice(at, at + w)
            at += w
        cols[name] = slice(at, at + width)
        step = max(1, (1 << 20) // max(width, 1))  # ≈ 8 MB of rows at a time
        for lo in range(0, self.V, step):
            hi = min(lo + step, self.V)
            store[lo:hi, at:at + width] = rows(lo, hi)
        self.store, self.cols = store, cols

    def rename(self, old: str, new: str) -> None:
        """Field ``old`` is called ``new`` from now on (no copy; a field ``new`` is dropped)."""
        if new in self.cols:
            self.drop(new)
        self.cols[new] = self.cols.pop(old)

    def _grow_vertices(self, n_new: int) -> None:
        cap = self.store.shape[0]
        if self.V + n_new <= cap:
            return
        store = np.empty((max(2 * cap, self.V + n_new), self.store.shape[1]))
        store[: self.V] = self.store[: self.V]
        self.store = store

    def _grow_faces(self, n_new: int, width: int) -> None:
        cap, K = self.cyc.shape
        if self.F + n_new > cap or width > K:
            new_cap = max(2 * cap, self.F + n_new) if self.F + n_new > cap else cap
            new_K = max(K, width)
            c = np.zeros((new_cap, new_K), np.int64)
            c[: self.F, :K] = self.cyc[: self.F]
            c[: self.F, K:] = self.cyc[: self.F, :1]
            self.cyc = c
            for name in ("nv", "origin"):
                a = getattr(self, name)
                b = np.zeros(new_cap, np.int64)
                b[: self.F] = a[: self.F]
                setattr(self, name, b)

    # -------------------------------------------------------------- the split
    def split(self, g: np.ndarray, eps: float, cand: np.ndarray | None, col: tuple[str, int] | None = None) -> int:
        """Cut the faces ``cand`` (None: all) along g = 0; g (V,) values at the vertices.
        Returns the number of faces split. ``col`` names a field column set to 0 on new vertices."""
        if cand is None:
            cand = np.arange(self.F)
        if len(cand) == 0:
            return 0
        g = np.ascontiguousarray(g, dtype=np.float64)
        cand, width = kernels.cut_faces(self.cyc, self.nv, np.ascontiguousarray(cand, np.int64), g, float(eps))
        if len(cand) == 0:
            return 0
        self._grow_vertices(2 * len(cand))  # convex faces: ≤ 2 cut edges each
        self._grow_faces(len(cand), width + 2)
        zero_col = -1 if col is None else self.cols[col[0]].start + col[1]
        self.V, self.F, n = kernels.split_faces(self.store, self.V, self.cyc, self.nv, self.origin,
                                                self.F, cand, g, float(eps), zero_col)
        return n

    # -------------------------------------------------------------- queries
    def faces(self) -> np.ndarray:
        """(F, K) cycles padded with −1."""
        K = int(self.nv[: self.F].max())
        C = self.cyc[: self.F, :K].copy()
        C[np.arange(K)[None, :] >= self.nv[: self.F, None]] = -1
        return C

    def centroids(self) -> np.ndarray:
        C = self.faces()
        X = self.field("X")
        valid = C >= 0
        s = np.where(valid[..., None], X[C], 0.0).sum(1)
        return s / valid.sum(1)[:, None]


def _eps(G: np.ndarray) -> np.ndarray:
    return ZERO_RTOL * np.abs(G).max(axis=0)


def partition_plane(prog: Program, plane: Plane, progress=None) -> dict:
    """Faces of ``prog`` on ``plane``: vertices, faces, outputs and activation-region ids."""
    if plane.dim != prog.in_dim:
        raise ValueError(f"plane lies in dimension {plane.dim} but the model's input dimension is {prog.in_dim}")
    steps = prog.steps()
    mesh = _Mesh(plane.polygon)
    if invariants.enabled():
        mesh.check = (invariants.Memo(prog, plane.points), plane)
    T = prog.n_tokens
    E, c = steps[0].E, steps[0].c
    X = mesh.field("X")
    x = plane.points(X)
    mesh.set_field("Y", (np.einsum("nk,ktd->ntd", x, E) + c).reshape(len(X), -1))
    d_tok = E.shape[2]
    oversplit = False
    n_stack = 0
    work = [i for i, s in enumerate(steps) if isinstance(s, ir.ACTIVATIONS)]
    i = 1
    while i < len(steps):
        step = steps[i]
        match step:
            case ir.AffineStep(W, b):
                Wb, bb = _tokenwise(W, b, T)
                mesh.set_field("Y", mesh.field("Y") @ Wb + bb)
                d_tok = W.shape[1]
            case ir.SaveStep():
                mesh.set_field(f"S{n_stack}", mesh.field("Y"))
                n_stack += 1
            case ir.AddStep():
                n_stack -= 1
                mesh.set_fields({"Y": mesh.field(f"S{n_stack}") + mesh.field("Y"), f"S{n_stack}": None})
            case ir.ReadStep(tokens) if list(tokens) != list(range(T)):  # reading every token: as is
                Y = mesh.field("Y").reshape(mesh.V, T, d_tok)
                mesh.set_field("Y", Y[:, list(tokens)].reshape(mesh.V, -1))
            case ir.ReluStep():
                d_tok = _relu_layer(mesh, step, T, d_tok, i)
            case ir.MaxStep(idx=idx):
                d_tok = _max_layer(mesh, step, T, i)
                oversplit |= idx.shape[1] >= 3
            case ir.SelectStep(op):
                _select_layer(mesh, op, T, d_tok, i)
                oversplit |= T >= 3
        if progress is not None and isinstance(step, ir.ACTIVATIONS):
            progress((work.index(i) + 1) / len(work))
        i += 1
    faces = mesh.faces()
    out = mesh.field("Y")  # a view into the vertex store (no copy of a possibly huge array)
    if out.base is not None and out.base.shape[0] > 2 * mesh.V:
        out = out.copy()  # … unless most of the store is spare capacity
    X = mesh.field("X").copy()
    pieces = {"vertices": X, "faces": faces, "out": out, "plane": plane}
    if oversplit:
        cen = plane.points(mesh.centroids())
        _, code = ir.outputs_and_patterns(prog, cen)
        pairs = adjacent_faces(faces)
        same = code[pairs[:, 0]] == code[pairs[:, 1]]
        region = components(len(faces), pairs[same])
    else:
        region = np.arange(len(faces))
    pieces["region"] = region
    pieces["n_regions"] = int(region.max()) + 1
    return pieces


def _tokenwise(W, b, T):
    """Token-wise affine map on the flattened state (V, T·d): kron(I_T, W), b per token."""
    if T == 1:
        return W, b.reshape(-1)
    bb = np.broadcast_to(b, (T, W.shape[1])).reshape(-1)
    return np.kron(np.eye(T), W), bb


def _relu_layer(mesh: _Mesh, step: ir.ReluStep, T: int, d_tok: int, si: int) -> int:
    """Cut along every channel of G = H W + b (H: the layer input at the vertices), block by
    block, then H ← relu(G).

    G is affine on every face of the mesh the layer starts from, so it can be interpolated at
    new vertices. Two layouts of the vertex store, whichever is narrower: all of G (H is
    dropped: one product for the layer, no recomputation), or H plus one block of G (a product
    per block, and G once more at the end; pays off when n ≫ d, e.g. a wide first layer)."""
    W, b = step.W, step.b
    if W is None:
        n = d_tok
        W, b = np.eye(n), np.zeros(n)
    Wb, bb = _tokenwise(W, b, T)
    n_in, n_ch = Wb.shape
    mesh.drop("G")
    whole = n_ch <= n_in + _BLOCK
    if whole:
        G = mesh.field("Y") @ Wb + bb
        eps_all = _eps(G)  # max |g| over the layer's start vertices = over all (interpolation)
        mesh.set_fields({"G": G, "Y": None})
    lo = 0
    while lo < n_ch:
        # ≤ 64 channels per block (one bit each in a uint64); small meshes use small blocks so
        # that the per-face candidate sets are refreshed often
        cols = np.arange(lo, min(lo + int(np.clip(2 * mesh.F, 8, _BLOCK)), n_ch))
        if whole:
            gcol, eps = mesh.cols["G"].start + lo, eps_all[cols]
        else:
            G = mesh.field("Y") @ Wb[:, cols] + bb[cols]  # (V, B)
            eps = _eps(G)
            # the G columns keep a fixed width of 64 (unused ones 0) so that the vertex store
            # is laid out once per layer, not once per block
            if "G" in mesh.cols:
                Gs = mesh.store[: mesh.V, mesh.cols["G"]]
                Gs[:, : len(cols)] = G
                Gs[:, len(cols):] = 0.0
            else:
                mesh.set_field("G", np.hstack([G, np.zeros((len(G), _BLOCK - len(cols)))]))
            gcol = mesh.cols["G"].start
        _cut_block(mesh, gcol, len(cols), eps, lambda j, c0=lo: invariants.Cut(si, "relu", (c0 + j,)))
        lo += len(cols)
    if whole:
        G = mesh.field("G")
        np.maximum(G, 0, out=G)
        mesh.rename("G", "Y")
    else:
        H = mesh.field("Y")
        mesh.set_computed("Y", n_ch, lambda lo, hi: np.maximum(H[lo:hi] @ Wb + bb, 0), drop=("G",))
    return W.shape[1]


def _cut_block(mesh: _Mesh, gcol: int, B: int, eps: np.ndarray, cut_of=None) -> None:
    """Cut along the B ≤ 64 channels in store columns gcol … gcol + B − 1, one after the other;
    a channel only tries the faces whose block-start ancestor it crosses. With the invariant
    checks on, the mesh is checked after every channel (``cut_of(j)`` names channel j's cut)."""
    F0 = mesh.F
    mesh.origin[:F0] = np.arange(F0)
    eps = np.ascontiguousarray(eps, dtype=np.float64)
    mixed = kernels.face_sign_bits(mesh.store, mesh.cyc, mesh.nv, F0, gcol, B, eps)
    j = 0
    while j < B:
        stop, V0 = (j + 1 if mesh.check else B), mesh.V
        mesh.V, mesh.F, j, need, width = kernels.split_channels(
            mesh.store, mesh.V, mesh.cyc, mesh.nv, mesh.origin, mesh.F, gcol, j, stop, eps, mixed)
        if j < stop:  # channel j needs room: ≤ 2 new vertices and 1 new face per cut face
            mesh._grow_vertices(2 * need)
            mesh._grow_faces(need, width + 2)
        elif mesh.check:
            memo, plane = mesh.check
            invariants.check_plane(memo, plane, mesh, cut_of(j - 1), mesh.store[: mesh.V, gcol + j - 1],
                                   eps[j - 1], V0)


def maxout_units(Y: np.ndarray, step: ir.MaxStep, T: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A maxout layer on the flattened vertex states Y (V, T·d): the pieces Z = Y W + b (V, T·n)
    (token-wise; Z = Y for a bare GroupMax), the unit index rows gidx (T·m, p) into Z's columns
    and A (T·m, p) = max |z_i| over the vertices (interpolation keeps it: the zero scale)."""
    W, b, idx = step.W, step.b, step.idx
    if W is not None:
        Wb, bb = _tokenwise(W, b, T)
        Z, n = Y @ Wb + bb, W.shape[1]
    else:
        Z, n = Y, Y.shape[1] // T
    gidx = (np.arange(T)[:, None, None] * n + idx[None]).reshape(-1, idx.shape[1])  # (T·m, p)
    A = np.abs(Z).max(axis=0)[gidx] if len(Z) else np.zeros(gidx.shape)
    return Z, gidx, A


def _max_layer(mesh: _Mesh, step: ir.MaxStep, T: int, si: int) -> int:
    idx = step.idx
    Z, gidx, A = maxout_units(mesh.field("Y"), step, T)
    U = len(gidx)
    mesh.set_fields({"Z": Z, "Y": None, "M": Z[:, gidx[:, 0]]})
    # round j cuts every unit along z_j = M, M = max_{i<j} z_i its running maximum: after the
    # rounds < j, M is affine on every face, so round j's cuts are affine columns G = z_j − M
    # (interpolated at new vertices), cut like a ReLU layer's
    for j in range(1, idx.shape[1]):
        Zj, M = mesh.field("Z")[:, gidx[:, j]], mesh.field("M")
        eps = ZERO_RTOL * A[:, : j + 1].max(axis=1)
        mesh.set_field("G", Zj - M)  # same width every round: written in place after the first
        gcol, lo = mesh.cols["G"].start, 0
        while lo < U:
            B = min(int(np.clip(2 * mesh.F, 8, _BLOCK)), U - lo)
            _cut_block(mesh, gcol + lo, B, eps[lo:lo + B], lambda jj, u0=lo, j=j: invariants.Cut(si, "max", (j, u0 + jj)))
            lo += B
        M = mesh.field("M")
        np.maximum(M, mesh.field("Z")[:, gidx[:, j]], out=M)
    mesh.set_fields({"Y": mesh.field("M"), "Z": None, "M": None, "G": None})
    return idx.shape[0]


def _select_layer(mesh: _Mesh, op, T: int, d_tok: int, si: int) -> None:
    """Hardmax with constant queries: every head's keys in rounds against the running maximum
    of the (affine) scores (:func:`.ir.key_rounds`); then the selected values must be continuous."""
    q0, qscale = constant_queries(op, mesh.field("Y").reshape(mesh.V, T, d_tok),
                                  "(2-D needs constant queries, as in compiled models); for a grid "
                                  "estimate use regions.estimate.sampled_regions")
    for h, i, keys in key_rounds(op, q0, qscale):
        a = round_scores(op, mesh.field("Y").reshape(mesh.V, T, d_tok), q0[h, i], h, keys)  # (V, j + 1)
        diff = a[:, -1] - a[:, :-1].max(axis=1)
        V0, eps = mesh.V, ZERO_RTOL * (np.abs(a).max() + SCALE_FLOOR)
        mesh.split(diff, eps, None)
        if mesh.check:
            invariants.check_plane(*mesh.check, mesh, invariants.Cut(si, "select", (h, i, tuple(keys))), None, eps, V0)
    Y3 = mesh.field("Y").reshape(mesh.V, T, d_tok)
    mesh.set_field("Y", continuous_select(op, Y3, "the 2-D mesh").reshape(mesh.V, -1))
