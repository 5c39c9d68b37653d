"""Regions: the partition a counter found, with activation and linear region counts.

Activation region: a maximal connected set of pieces with one activation pattern (ReLU
signs, maxout argmaxes, hardmax selections). Linear region: adjacent pieces whose affine maps
of the output agree are merged (connected components of the "same map" adjacency graph).

Linear-merge tolerance (float64): two adjacent pieces have the same affine map when, for every
output, their gradients differ by at most LINEAR_RTOL·(G + V/D) and (1-D) their values at the shared
point by at most LINEAR_RTOL·(V + G), where G is the largest gradient norm and V the largest
|value| over the whole domain (:data:`.tolerances.LINEAR_RTOL`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .tolerances import LINEAR_RTOL, ZERO_RTOL, gradient_scale, reported


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


def runs(code: np.ndarray) -> np.ndarray:
    """Ids of maximal runs of equal consecutive codes: (P,) → (P,)."""
    if len(code) == 0:
        return np.zeros(0, np.int64)
    change = np.ones(len(code), bool)
    change[1:] = code[1:] != code[:-1]
    return np.cumsum(change) - 1


def _linear_1d(p: dict) -> np.ndarray:
    L, R = p["out_L"], p["out_R"]
    dt = (p["t1"] - p["t0"])[:, None]
    slope = (R - L) / dt  # (P, out)
    G = np.abs(slope).max() if slope.size else 0.0
    V = max(np.abs(L).max(), np.abs(R).max()) if L.size else 0.0
    same = np.all(np.abs(slope[1:] - slope[:-1]) <= LINEAR_RTOL * gradient_scale(slope, V, 1.0), axis=1)
    same &= np.all(np.abs(L[1:] - R[:-1]) <= LINEAR_RTOL * (V + G), axis=1)
    change = np.ones(len(L), bool)
    change[1:] = ~same
    return np.cumsum(change) - 1
