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


@dataclass(frozen=True)
class Regions:
    """Result of :func:`~expressivity.regions.count_regions`.

    ``pieces`` holds arrays: segment — ``t0, t1`` (P,), ``out_L, out_R`` (P, out), ``region``
    (P,) activation-region id; plane — ``vertices`` (V, 2) in (α, β), ``faces`` (F, K) padded
    with −1 (counter-clockwise cycles), ``region`` (F,), ``out`` (V, out) vertex outputs; box —
    ``A, b`` lists (one H-representation {x: A x ≤ b} per activation region), ``maps`` (R, out,
    d + 1).
    """

    kind: str  # "segment" | "plane" | "box"
    domain: object
    activation_regions: int
    n_pieces: int
    pieces: dict = field(repr=False)
    seconds: float = 0.0
    exact: bool = True
    note: str = ""
    tolerances: dict = field(default_factory=lambda: reported(ZERO_RTOL))  # those the counter used

    @cached_property
    def linear_labels(self) -> np.ndarray:
        """Linear-region id per piece (segment), face (plane) or activation region (box)."""
        if self.kind == "segment":
            return _linear_1d(self.pieces)
        if self.kind == "plane":
            from .merge import linear_labels_plane

            return linear_labels_plane(self.pieces)
        return self.pieces["linear"]

    @cached_property
    def linear_regions(self) -> int:
        return int(self.linear_labels.max()) + 1 if len(self.linear_labels) else 0

    @property
    def breakpoints(self) -> np.ndarray:
        """Segment only: the interior breakpoints t ∈ (0, 1) between activation regions."""
        if self.kind != "segment":
            raise ValueError("breakpoints exist for Segment domains only")
        r = self.pieces["region"]
        return self.pieces["t0"][1:][r[1:] != r[:-1]]

    def interior_points(self) -> np.ndarray:
        """One input-space point inside every piece (segment midpoints, face centroids): (P, n)."""
        p = self.pieces
        if self.kind == "segment":
            return self.domain.points((p["t0"] + p["t1"]) / 2)
        if self.kind == "plane":
            C, X = p["faces"], p["vertices"]
            valid = C >= 0
            cen = np.where(valid[..., None], X[C], 0.0).sum(1) / valid.sum(1)[:, None]
            return self.domain.points(cen)
        return p["points"]

    def summary(self) -> dict:
        return {
            "kind": self.kind,
            "activation_regions": int(self.activation_regions),
            "linear_regions": int(self.linear_regions),
            "pieces": int(self.n_pieces),
            "seconds": round(float(self.seconds), 6),
            "exact": self.exact,
            "note": self.note,
            "tolerances": dict(self.tolerances),
        }


@dataclass(frozen=True)
class Counted:
    """What a counter returns; :func:`~expressivity.regions.count_regions` wraps it into a
    :class:`Regions` (adding the kind, the domain and the time)."""

    activation_regions: int
    n_pieces: int
    pieces: dict
    tolerances: dict = field(default_factory=lambda: reported(ZERO_RTOL))


def runs(code: np.ndarray) -> np.ndarray:
    """Ids of maximal runs of equal consecutive codes: (P,) → (P,)."""
    if len(code) == 0:
        return np.zeros(0, np.int64)
    change = np.ones(len(code), bool)
    change[1:] = code[1:] != code[:-1]
    return np.cumsum(change) - 1


def _linear_1d(p: dict) -> np.ndarray:
    from . import ir
    from .maps import jumps
    from .merge import merge_linear

    prog, seg = p["program"], p["segment"]
    t0, t1 = p["t0"], p["t1"]
    P = len(t0)
    pairs = np.stack([np.arange(P - 1), np.arange(1, P)], axis=1)
    mid = seg.points((t0 + t1) / 2)
    continuous = None
    if any(isinstance(s, ir.SelectStep) for s in prog.steps()) and P > 1:
        continuous = jumps(prog, seg.points(t1[:-1]), mid[:-1], mid[1:])  # ReLU / maxout: continuous
    return merge_linear(prog, mid, (seg.b - seg.a)[None], pairs, p["region"], continuous)
