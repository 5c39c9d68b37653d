"""Regions: the partition a counter found, with activation and linear region counts.

Activation region: a maximal connected set of pieces with one activation pattern (ReLU
signs, maxout argmaxes, hardmax selections). Linear region: adjacent pieces whose affine maps
of the output agree are merged (connected components of the "same map" adjacency graph).

Linear merge: two adjacent pieces have the same affine map when the exact gradients of their
activation patterns agree to MAP_RTOL of their own magnitude and, where the output may jump
(1-D with hardmax), it does not (:mod:`.maps`, :func:`.merge.merge_linear`). Never relative to the
output values: f + c has the same regions as f.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .tolerances import ZERO_RTOL, reported


@dataclass(frozen=True, eq=False)
class SegmentPieces:
    """The pieces of a 1-D count: piece i is t ∈ [t0[i], t1[i]] of ``segment`` (x(t) = a + t (b − a)),
    with outputs ``out_L`` / ``out_R`` (P, out) at its ends and activation-region id ``region`` (P,)."""

    t0: np.ndarray
    t1: np.ndarray
    out_L: np.ndarray
    out_R: np.ndarray
    region: np.ndarray
    program: object = field(repr=False)
    segment: object = None

    @cached_property
    def linear(self) -> np.ndarray:
        """Linear-region id per piece."""
        return _linear_1d(self)

    @cached_property
    def points(self) -> np.ndarray:
        """Midpoint of every piece in the input space: (P, n)."""
        return self.segment.points((self.t0 + self.t1) / 2)


@dataclass(frozen=True, eq=False)
class PlanePieces:
    """The pieces of a 2-D count: ``vertices`` (V, 2) in (α, β) of ``plane``, ``faces`` (F, K)
    padded with −1 (counter-clockwise cycles), activation-region id ``region`` (F,), vertex
    outputs ``out`` (V, out) — a view into the counter's vertex store of exactly V rows."""

    vertices: np.ndarray
    faces: np.ndarray
    out: np.ndarray
    region: np.ndarray
    program: object = field(repr=False)
    plane: object = None

    @cached_property
    def linear(self) -> np.ndarray:
        """Linear-region id per face."""
        from .merge import linear_labels_plane

        return linear_labels_plane(self)

    @cached_property
    def points(self) -> np.ndarray:
        """The centroid of every face in the input space: (F, n)."""
        from .merge import face_centroids

        return self.plane.points(face_centroids(self.faces, self.vertices))


_CELL_DERIVED = ("A", "b", "maps", "linear", "adjacent", "edges", "facets")


@dataclass(frozen=True, eq=False)
class CellPieces:
    """The cells of a d-D count (a box or a slice): one interior point ``points`` (C, n) and an
    activation-region id ``region`` (C,) per cell, in the parameters α of ``domain``.

    A subdivision count (:mod:`.subdivide`) also holds the complex: ``vertices`` (V, k) in α,
    cell c's vertices ``cverts[cstart[c]:cstart[c+1]]``, zero sets ``Z`` (V, words) and vertex
    outputs ``out`` (V, out); then ``edges``, ``facets``, ``adjacent``, ``maps`` (C, out, k + 1),
    ``linear`` (linear-region id per cell) and the H-representations ``A``, ``b`` ({α : A α ≤ b}
    per cell) are derived on first access (:mod:`.cells`). A counter without the complex (the
    LP traversal, a 1-D box) passes them to the constructor instead (``A=..., linear=...``).
    """

    points: np.ndarray
    region: np.ndarray
    program: object = field(repr=False)
    domain: object = None
    vertices: np.ndarray | None = field(default=None, repr=False)
    cstart: np.ndarray | None = field(default=None, repr=False)
    cverts: np.ndarray | None = field(default=None, repr=False)
    Z: np.ndarray | None = field(default=None, repr=False)
    out: np.ndarray | None = field(default=None, repr=False)
    centroids: np.ndarray | None = field(default=None, repr=False)

    def __init__(self, points, region, program, domain=None, *, vertices=None, cstart=None, cverts=None, Z=None,
                 out=None, centroids=None, **given):
        unknown = set(given) - set(_CELL_DERIVED)
        if unknown:
            raise TypeError(f"CellPieces: unknown fields {', '.join(sorted(unknown))}")
        for name, value in (("points", points), ("region", region), ("program", program), ("domain", domain),
                            ("vertices", vertices), ("cstart", cstart), ("cverts", cverts), ("Z", Z),
                            ("out", out), ("centroids", centroids), *given.items()):
            object.__setattr__(self, name, value)  # the given derived fields shadow the cached properties

    def _complex(self, what: str) -> None:
        if self.vertices is None:
            raise ValueError(f"CellPieces.{what}: this count holds no cell complex (count with method='subdivide')")

    @cached_property
    def edges(self) -> np.ndarray:
        self._complex("edges")
        from . import cells

        return cells.edges(self)

    @cached_property
    def facets(self) -> tuple[np.ndarray, np.ndarray]:
        self._complex("facets")
        from . import cells

        return cells.facets(self)

    @cached_property
    def adjacent(self) -> np.ndarray:
        self._complex("adjacent")
        from . import cells

        return cells.adjacent_cells(self)

    @cached_property
    def maps(self) -> np.ndarray:
        self._complex("maps")
        from . import complex_kernels as ck

        return ck.cell_maps(np.ascontiguousarray(self.vertices), np.ascontiguousarray(self.out), self.cstart,
                            self.cverts)

    @cached_property
    def linear(self) -> np.ndarray:
        self._complex("linear")
        from . import cells

        return cells.linear_labels(self)

    @cached_property
    def A(self) -> list:
        self._h_representations()
        return self.__dict__["A"]

    @cached_property
    def b(self) -> list:
        self._h_representations()
        return self.__dict__["b"]

    def _h_representations(self) -> None:
        from . import cells

        A, b = cells.h_representations(self)
        object.__setattr__(self, "A", A)
        object.__setattr__(self, "b", b)


_KEPT_BY_CELLS = ("region", "linear", "points", "vertices", "cstart", "cverts", "Z", "out", "centroids",
                  *_CELL_DERIVED)


@dataclass(frozen=True)
class CountOnly:
    """The pieces of a streamed d-D count (``count_regions(..., stream=True)``, :mod:`.stream`):
    only numbers, the cells were counted and dropped group by group. ``cells``: the pieces
    counted; ``groups``: the groups carried to the last step; ``largest_rows``: the most vertex
    rows one group held (what bounds the memory); ``stream_rows``: the limit above which a group
    was split. Every per-piece field (``region``, ``linear``, ``points``, the complex) raises a
    one-line ValueError."""

    cells: int
    groups: int
    largest_rows: int
    stream_rows: int

    def kept(self, what: str):
        raise ValueError(f"{what}: a streamed count (stream=True) keeps no cells; count without stream=True "
                         f"for linear regions, interior points, pictures or the complex")


for _name in _KEPT_BY_CELLS:
    setattr(CountOnly, _name, property(lambda self, _name=_name: self.kept(_name)))
del _name


@dataclass(frozen=True)
class Regions:
    """Result of :func:`~expressivity.regions.count_regions`.

    ``pieces``: :class:`SegmentPieces` (kind "segment"), :class:`PlanePieces` ("plane") or
    :class:`CellPieces` ("box"); every one has ``region`` (activation-region id per piece),
    ``linear`` (linear-region id per piece) and ``points`` (one interior point per piece). A
    streamed count (``stream=True``) has :class:`CountOnly` pieces: the counts only; its
    ``linear_regions`` raises and its ``summary()`` reads ``"linear_regions": None``.
    """

    kind: str  # "segment" | "plane" | "box" | a registered domain's kind
    domain: object
    activation_regions: int
    n_pieces: int
    pieces: SegmentPieces | PlanePieces | CellPieces | CountOnly = field(repr=False)
    seconds: float = 0.0
    exact: bool = True
    note: str = ""
    tolerances: dict = field(default_factory=lambda: reported(ZERO_RTOL))  # those the counter used

    @cached_property
    def linear_labels(self) -> np.ndarray:
        """Linear-region id per piece (segment), face (plane) or cell (box)."""
        return self.pieces.linear

    @cached_property
    def linear_regions(self) -> int:
        return int(self.linear_labels.max()) + 1 if len(self.linear_labels) else 0

    @property
    def breakpoints(self) -> np.ndarray:
        """Segment only: the interior breakpoints t ∈ (0, 1) between activation regions."""
        if not isinstance(self.pieces, SegmentPieces):
            raise ValueError("breakpoints exist for Segment domains only")
        r = self.pieces.region
        return self.pieces.t0[1:][r[1:] != r[:-1]]

    def interior_points(self) -> np.ndarray:
        """One input-space point inside every piece (segment midpoints, face centroids): (P, n)."""
        return self.pieces.points

    @property
    def streamed(self) -> bool:
        """A count-only result (``stream=True``): no cells, no linear regions."""
        return isinstance(self.pieces, CountOnly)

    def headline(self) -> str:
        """The counts in one line (the CLI prints it): "N activation regions, M linear regions
        (P pieces, kind, s)"; a streamed count says its linear regions were not counted."""
        s = self.summary()
        linear = ("linear regions not counted (--stream)" if s["linear_regions"] is None
                  else f"{s['linear_regions']} linear regions")
        return (f"{s['activation_regions']} activation regions, {linear} ({s['pieces']} pieces, {s['kind']}, "
                f"{s['seconds']:.3f} s)")

    def summary(self) -> dict:
        """The counts as JSON-ready values; a streamed count has ``"linear_regions": None`` (not
        counted: the merge needs the cells) and a ``"stream"`` entry (groups, largest group's
        vertex rows, the row limit)."""
        out = {
            "kind": self.kind,
            "activation_regions": int(self.activation_regions),
            "linear_regions": None if self.streamed else int(self.linear_regions),
            "pieces": int(self.n_pieces),
            "seconds": round(float(self.seconds), 6),
            "exact": self.exact,
            "note": self.note,
            "tolerances": dict(self.tolerances),
        }
        if self.streamed:
            p = self.pieces
            out["stream"] = {"groups": p.groups, "largest_rows": p.largest_rows, "stream_rows": p.stream_rows}
        return out


@dataclass(frozen=True)
class Counted:
    """What a counter returns; :func:`~expressivity.regions.count_regions` wraps it into a
    :class:`Regions` (adding the kind, the domain and the time)."""

    activation_regions: int
    n_pieces: int
    pieces: SegmentPieces | PlanePieces | CellPieces | CountOnly
    tolerances: dict = field(default_factory=lambda: reported(ZERO_RTOL))


def runs(code: np.ndarray) -> np.ndarray:
    """Ids of maximal runs of equal consecutive codes: (P,) → (P,)."""
    if len(code) == 0:
        return np.zeros(0, np.int64)
    change = np.ones(len(code), bool)
    change[1:] = code[1:] != code[:-1]
    return np.cumsum(change) - 1


def _linear_1d(p: SegmentPieces) -> np.ndarray:
    from . import ir
    from .maps import jumps
    from .merge import merge_linear

    prog, seg = p.program, p.segment
    t0, t1 = p.t0, p.t1
    P = len(t0)
    pairs = np.stack([np.arange(P - 1), np.arange(1, P)], axis=1)
    mid = seg.points((t0 + t1) / 2)
    continuous = None
    if any(isinstance(s, ir.SelectStep) for s in prog.steps()) and P > 1:
        continuous = jumps(prog, seg.points(t1[:-1]), mid[:-1], mid[1:])  # ReLU / maxout: continuous
    return merge_linear(prog, mid, (seg.b - seg.a)[None], pairs, p.region, continuous)
