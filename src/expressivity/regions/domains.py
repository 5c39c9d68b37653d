"""Domains for region counting: a segment, a planar slice, a box (validated, frozen).

* ``Segment(a, b)``: x(t) = a + t (b − a), t ∈ [0, 1].
* ``Plane(origin, u, v, bounds)``: x(α, β) = origin + α u + β v with (α, β) in a rectangle
  ``bounds = (α_lo, α_hi, β_lo, β_hi)`` or a convex polygon given as a (k, 2) vertex list.
  ``Plane.through(x1, x2, x3)``: the plane through three inputs of any shape (x1 at (0, 0), x2 at
  (1, 0), x3 at (α₃, β₃) with β₃ > 0, axes orthogonal and of equal length |x2 − x1|).
* ``Box(lo, hi)``: the full input space [lo, hi] (small input dimension).
* ``Slice(origin, basis, lo, hi)``: a k-D affine slice (k ≤ 6).

A new domain validates its arrays with the same checks: :func:`check_vector`,
:func:`check_array`, :func:`check_polygon`, :func:`check_input_shape` (each raises a one-line
``ValueError`` naming the field).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .ir import _arr
from .tolerances import AREA_RTOL, COLLINEAR_RTOL, DEGENERATE_RTOL, SCALE_FLOOR


def check_array(a, what: str, ndim: int) -> np.ndarray:
    """``a`` as a finite float64 array with exactly ``ndim`` dimensions, read-only (a view of
    float64 input, else a converted copy); ``ValueError`` naming ``what`` otherwise (not
    numeric, wrong number of dimensions, NaN or inf). The check the IR runs on its weights."""
    return _arr(a, what, ndim)


def check_vector(a, what: str) -> np.ndarray:
    """``a`` as a finite, non-empty, real, read-only float64 vector (a copy; scalars become
    length 1); ``ValueError`` naming ``what`` otherwise (complex, not numeric, not 1-D, NaN or
    inf, empty). Every domain point and direction goes through it."""
    if np.iscomplexobj(a) or (isinstance(a, (list, tuple)) and any(isinstance(v, complex) for v in a)):
        raise ValueError(f"{what} must be real, got complex numbers")
    try:
        a = np.atleast_1d(np.array(a, dtype=np.float64))
    except (TypeError, ValueError):
        raise ValueError(f"{what}: not a numeric vector") from None
    out = check_array(a, what, 1)  # dimension and finiteness checks shared with the IR
    if out.size == 0:
        raise ValueError(f"{what} must be a non-empty vector")
    return out


@dataclass(frozen=True)
class Segment:
    """The segment from a to b (a ≠ b)."""

    a: np.ndarray
    b: np.ndarray

    def __post_init__(self):
        object.__setattr__(self, "a", check_vector(self.a, "Segment.a"))
        object.__setattr__(self, "b", check_vector(self.b, "Segment.b"))
        if self.a.shape != self.b.shape:
            raise ValueError(f"Segment.a and Segment.b differ in dimension: {self.a.size} vs {self.b.size}")
        if np.allclose(self.a, self.b, rtol=0, atol=DEGENERATE_RTOL * (1 + np.abs(self.a).max())):
            raise ValueError("Segment is degenerate: a == b")

    def corners(self, in_dim: int) -> np.ndarray:
        """Points whose bounding box is the domain's (here: the two ends), for the compile-domain check."""
        return np.stack([self.a, self.b])

    @property
    def dim(self) -> int:
        return self.a.size

    def points(self, t: np.ndarray) -> np.ndarray:
        """x(t) for t (N,) → (N, dim)."""
        return self.a + np.asarray(t, dtype=np.float64)[:, None] * (self.b - self.a)


@dataclass(frozen=True)
class Plane:
    """origin + α u + β v over a rectangle (4 numbers) or a convex polygon ((k, 2) vertices)."""

    origin: np.ndarray
    u: np.ndarray
    v: np.ndarray
    bounds: object = (-1.0, 1.0, -1.0, 1.0)
    input_shape: tuple | None = field(default=None, compare=False)
    """The shape of one model input (``Plane.through``; the counters lower torch modules with it)."""
    marks: np.ndarray | None = field(default=None, compare=False, repr=False)
    """(k, 2) (α, β) points to mark in pictures (``Plane.through``: the three inputs)."""

    def __post_init__(self):
        for name in ("origin", "u", "v"):
            object.__setattr__(self, name, check_vector(getattr(self, name), f"Plane.{name}"))
        if not (self.origin.shape == self.u.shape == self.v.shape):
            raise ValueError("Plane.origin, u and v must have the same dimension")
        G = np.stack([self.u, self.v])
        s = np.linalg.svd(G, compute_uv=False)
        if s[-1] <= DEGENERATE_RTOL * max(s[0], SCALE_FLOOR):
            raise ValueError("Plane is degenerate: u and v are collinear (or zero)")
        object.__setattr__(self, "bounds", check_polygon(self.bounds))
        if self.input_shape is not None:
            object.__setattr__(self, "input_shape", check_input_shape(self.input_shape, self.dim))
        if self.marks is not None:
            object.__setattr__(self, "marks", check_array(np.array(self.marks, dtype=np.float64), "Plane.marks", 2))
            if self.marks.shape[1] != 2:
                raise ValueError(f"Plane.marks must be (k, 2) (α, β) points, got shape {self.marks.shape}")

    @property
    def dim(self) -> int:
        return self.origin.size

    @property
    def polygon(self) -> np.ndarray:
        """Counter-clockwise vertices (k, 2) of the (α, β) domain."""
        return self.bounds

    def points(self, ab: np.ndarray) -> np.ndarray:
        """x(α, β) for ab (N, 2) → (N, dim)."""
        ab = np.asarray(ab, dtype=np.float64)
        return self.origin + ab[:, :1] * self.u + ab[:, 1:2] * self.v

    def corners(self, in_dim: int) -> np.ndarray:
        """The polygon's vertices in the input space."""
        return self.points(self.polygon)

    @classmethod
    def through(cls, x1, x2, x3, margin: float = 0.25) -> Plane:
        """The plane through three inputs of one shape (e.g. (C, H, W) images; flattened in
        C-order): origin x1, u = x2 − x1, v ⊥ u with |v| = |u| in the plane of x3, so x1, x2, x3
        sit at (0, 0), (1, 0), (α₃, β₃); bounds: their bounding box widened by ``margin`` × its
        size on every side. The three points travel as ``marks``, their shape as ``input_shape``."""
        arrs = []
        for i, x in enumerate((x1, x2, x3), 1):
            if np.iscomplexobj(x):
                raise ValueError(f"Plane.through: x{i} must be real, got complex numbers")
            try:
                a = np.array(x, dtype=np.float64)
            except (TypeError, ValueError):
                raise ValueError(f"Plane.through: x{i} is not a numeric array") from None
            if a.size == 0:
                raise ValueError(f"Plane.through: x{i} is empty")
            if not np.all(np.isfinite(a)):
                raise ValueError(f"Plane.through: x{i} contains NaN or inf")
            arrs.append(a)
        shapes = [a.shape for a in arrs]
        if len(set(shapes)) != 1:
            raise ValueError(f"Plane.through: the three inputs must have one shape, got {', '.join(map(str, shapes))}")
        if not (isinstance(margin, (int, float)) and np.isfinite(margin) and margin >= 0):
            raise ValueError(f"Plane.through: margin must be a finite number ≥ 0, got {margin!r}")
        p1, p2, p3 = (a.reshape(-1) for a in arrs)
        u, w = p2 - p1, p3 - p1
        uu = float(u @ u)
        scale = max(np.abs(arrs[0]).max(), np.abs(arrs[1]).max(), np.abs(arrs[2]).max(), SCALE_FLOOR)
        if np.sqrt(uu) <= DEGENERATE_RTOL * scale:
            raise ValueError("Plane.through: x1 and x2 coincide; give three points that span a plane")
        alpha3 = float(w @ u) / uu
        w_perp = w - alpha3 * u
        norm = float(np.linalg.norm(w_perp))
        if norm <= COLLINEAR_RTOL * max(np.sqrt(uu), float(np.linalg.norm(w))):
            raise ValueError("Plane.through: the three inputs are collinear (or two coincide); they span no plane")
        beta3 = norm / np.sqrt(uu)
        v = w_perp / beta3
        marks = np.array([[0.0, 0.0], [1.0, 0.0], [alpha3, beta3]])
        lo, hi = marks.min(0), marks.max(0)
        pad = margin * (hi - lo).max()
        bounds = (lo[0] - pad, hi[0] + pad, lo[1] - pad, hi[1] + pad)
        marks.setflags(write=False)
        return cls(p1, u, v, bounds, input_shape=tuple(int(s) for s in arrs[0].shape), marks=marks)

    @classmethod
    def square(cls, size: float = 1.0, dim: int = 2) -> Plane:
        """The square [−size, size]² of the first two coordinates (regioncam's default)."""
        e = np.eye(dim)
        return cls(np.zeros(dim), e[0], e[1], (-size, size, -size, size))


def check_input_shape(shape, dim: int, what: str = "Plane.input_shape") -> tuple[int, ...]:
    """``shape`` as a tuple of positive ints whose product is ``dim`` (the shape of one model
    input whose flattening is a point of the domain); ``ValueError`` naming ``what`` otherwise."""
    ok = isinstance(shape, (tuple, list)) and len(shape) > 0 and all(
        isinstance(k, (int, np.integer)) and not isinstance(k, bool) and k >= 1 for k in shape)
    if not ok or int(np.prod(shape)) != dim:
        raise ValueError(f"{what} must be positive ints whose product is the dimension {dim}, got {shape!r}")
    return tuple(int(k) for k in shape)


def check_polygon(bounds) -> np.ndarray:
    """A plane's (α, β) domain as counter-clockwise vertices (k, 2), read-only: ``bounds`` is a
    rectangle (α_lo, α_hi, β_lo, β_hi) with lo < hi, or a (k ≥ 3, 2) convex polygon of positive
    area in either orientation; ``ValueError`` (naming ``Plane.bounds``) otherwise."""
    if np.iscomplexobj(bounds):
        raise ValueError("Plane.bounds must be real, got complex numbers")
    try:
        arr = np.array(bounds, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("Plane.bounds: not numeric") from None
    if arr.shape == (4,):
        a0, a1, b0, b1 = arr
        if not (np.isfinite(arr).all() and a0 < a1 and b0 < b1):
            raise ValueError(f"Plane.bounds rectangle is empty or unbounded: {arr.tolist()}")
        arr = np.array([[a0, b0], [a1, b0], [a1, b1], [a0, b1]])
    if arr.ndim != 2 or arr.shape[1] != 2 or arr.shape[0] < 3 or not np.isfinite(arr).all():
        raise ValueError("Plane.bounds must be (α_lo, α_hi, β_lo, β_hi) or a (k ≥ 3, 2) convex polygon")
    e1 = np.roll(arr, -1, axis=0) - arr
    e2 = np.roll(e1, -1, axis=0)
    cross = e1[:, 0] * e2[:, 1] - e1[:, 1] * e2[:, 0]
    area = 0.5 * np.sum(arr[:, 0] * np.roll(arr[:, 1], -1) - np.roll(arr[:, 0], -1) * arr[:, 1])
    if area < 0:
        arr, cross = arr[::-1].copy(), -cross
    if abs(area) <= AREA_RTOL * (1 + np.abs(arr).max()) ** 2 or np.any(cross < -DEGENERATE_RTOL * np.abs(arr).max() ** 2):
        raise ValueError("Plane.bounds polygon must be convex with positive area")
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True)
class Box:
    """[lo, hi] ⊂ R^d with lo < hi in every coordinate (scalars broadcast when dim is given)."""

    lo: np.ndarray
    hi: np.ndarray

    def __post_init__(self):
        lo = check_vector(self.lo, "Box.lo")
        hi = check_vector(self.hi, "Box.hi")
        if lo.shape != hi.shape:
            if lo.size == 1:
                lo = np.full(hi.shape, lo[0])
            elif hi.size == 1:
                hi = np.full(lo.shape, hi[0])
            else:
                raise ValueError(f"Box.lo and Box.hi differ in dimension: {lo.size} vs {hi.size}")
        if np.any(lo >= hi):
            raise ValueError("Box is empty: need lo < hi in every coordinate")
        object.__setattr__(self, "lo", lo)
        object.__setattr__(self, "hi", hi)

    @property
    def dim(self) -> int:
        return self.lo.size

    def corners(self, in_dim: int) -> np.ndarray | None:
        """lo and hi in the model's dimension (None on a dimension mismatch, which the counter reports)."""
        if self.dim not in (1, in_dim):
            return None
        b = self.with_dim(in_dim)
        return np.stack([b.lo, b.hi])

    def with_dim(self, d: int) -> Box:
        if self.dim == d:
            return self
        if self.dim == 1:
            return Box(np.full(d, self.lo[0]), np.full(d, self.hi[0]))
        raise ValueError(f"Box has dimension {self.dim} but the model's input dimension is {d}")


MAX_SLICE_DIM = 6  # the d-D subdivision counter works on boxes / slices of dimension ≤ 6


@dataclass(frozen=True)
class Slice:
    """A k-D affine slice x(α) = origin + Σ_i α_i basis[i] of the input space, α in the box
    ``bounds`` = (lo, hi) (two length-k vectors) — k ≤ 6 for exact counting.

    ``Slice.of_box(box)`` is the whole box (origin 0, basis I); a Plane with a rectangle and a
    Segment are its 2-D and 1-D cases (``Slice.of_plane``, ``Slice.of_segment``).
    """

    origin: np.ndarray
    basis: np.ndarray  # (k, n): row i is the direction of α_i
    lo: np.ndarray
    hi: np.ndarray

    def __post_init__(self):
        origin = check_vector(self.origin, "Slice.origin")
        try:
            B = np.atleast_2d(np.array(self.basis, dtype=np.float64))
        except (TypeError, ValueError):
            raise ValueError("Slice.basis: not a numeric (k, n) array") from None
        B = check_array(B, "Slice.basis", 2).copy()
        if B.shape[1] != origin.size:
            raise ValueError(f"Slice.basis must have {origin.size} columns (the input dimension), got {B.shape}")
        s = np.linalg.svd(B, compute_uv=False)
        if s[-1] <= DEGENERATE_RTOL * max(s[0], SCALE_FLOOR) or B.shape[0] > B.shape[1]:
            raise ValueError("Slice.basis is degenerate: its rows must be linearly independent")
        box = Box(self.lo, self.hi).with_dim(B.shape[0]) if np.size(self.lo) == 1 and np.size(self.hi) == 1 \
            else Box(self.lo, self.hi)
        if box.dim != B.shape[0]:
            raise ValueError(f"Slice.lo/hi have dimension {box.dim} but the basis has {B.shape[0]} rows")
        B.setflags(write=False)
        object.__setattr__(self, "origin", origin)
        object.__setattr__(self, "basis", B)
        object.__setattr__(self, "lo", box.lo)
        object.__setattr__(self, "hi", box.hi)

    @property
    def dim(self) -> int:
        """Dimension n of the input space."""
        return self.origin.size

    @property
    def k(self) -> int:
        """Dimension of the slice (number of parameters α)."""
        return self.basis.shape[0]

    def points(self, alpha: np.ndarray) -> np.ndarray:
        """x(α) for α (N, k) → (N, n)."""
        return self.origin + np.asarray(alpha, dtype=np.float64) @ self.basis

    def corners(self, in_dim: int) -> np.ndarray:
        """The 2^k corners of the parameter box, mapped into the input space."""
        k = self.k
        bits = (np.arange(2 ** k)[:, None] >> np.arange(k)) & 1
        return self.points(np.where(bits == 1, self.hi, self.lo))

    @classmethod
    def of_box(cls, box: Box) -> Slice:
        return cls(np.zeros(box.dim), np.eye(box.dim), box.lo, box.hi)

    @classmethod
    def of_plane(cls, plane: Plane) -> Slice:
        P = plane.polygon
        return cls(plane.origin, np.stack([plane.u, plane.v]), P.min(axis=0), P.max(axis=0))

    @classmethod
    def of_segment(cls, seg: Segment) -> Slice:
        return cls(seg.a, (seg.b - seg.a)[None], [0.0], [1.0])
