"""Count only, in bounded memory: the d-D subdivision (:mod:`.subdivide`) carried group by group
(``count_regions(model, Box | Slice, stream=True)``).

Why groups may be carried apart: once the complex K after some hyperplane is fixed, every cell
P of K is cut by the later hyperplanes independently of every other cell — the network is
affine on P up to there, and the cut of P by a later g depends only on P's vertices, their
fields and zero sets (the adjacency test reads P's vertices only; a new vertex on an edge
shared by two cells is the same point, interpolated from the same two ends, in both). So for
any partition of K's cells into groups, the final cells are the disjoint union over the groups
of the cells each group's sub-complex is cut into, and the count is the sum over the groups.
A group carried to the last step is counted and dropped ("streamed out"): no later hyperplane
can cut its cells.

The walk is depth-first: the complex is carried on (:func:`.subdivide.advance`) until it holds
more than ``stream_rows`` vertex rows at a layer boundary or between two cut blocks of a ReLU
layer (blocks of at most :data:`STREAM_BLOCK` hyperplanes here, so the check comes often; a
maxout layer's rounds and a hardmax layer run through, checked only before them); then its
cells are split in two by the median of their centroids along the axis where the centroids
spread widest, and the halves again until each part has about half the limit (one pass of a
k-d tree over the centroids, :func:`split_cells`; the vertices on a border between parts are
copied into each), each part becomes its own complex (:meth:`.subdivide._Complex.part`:
re-indexed vertices, every field and zero set copied, the same hyperplane numbering and run
state), and the parts are carried on one after the other. A group of one cell is never split.

Activation regions: for ReLU programs every final cell is one region, so the count is the
sum of the groups' cells. Programs that over-split (maxout rank ≥ 3, hardmax with T ≥ 3) count
the distinct activation patterns at the cells' centroids, as the full count does; here the
64-bit pattern hashes (:func:`.subdivide.pattern_codes`, the same as the full count's) of every
group are kept — 8 bytes per distinct pattern — instead of the cells.

Tolerance: a ReLU layer's zero tolerance is ZERO_RTOL · max |g| over the vertices of the group
that starts the layer (the whole complex when it is not split yet; a layer resumed after a
split keeps its tolerance). A group's vertices are a subset of the whole complex's, so the
tolerance is never larger than the full count's; the counts differ only where a vertex lies
within 1e-12 (relative) of a hyperplane. The invariant checks (``EXPRESSIVITY_CHECK``) look at
the whole box: they run until the first split, not in the parts.
"""

from __future__ import annotations

import numpy as np

from .result import Counted, CountOnly
from .subdivide import _Complex, advance, pattern_codes, plane_fraction, start_complex
from .tolerances import SUBDIVIDE_ZERO_RTOL, reported

STREAM_SHARE = 4
"""Default ``stream_rows``: the vertex rows the memory budget holds (the full count's plan, see
:func:`.subdivide.start_complex`), divided by this (a split holds the parent and both parts)."""

STREAM_BLOCK = 8
"""The most hyperplanes one cut block takes in a streamed count (the rows are looked at between
blocks; the full count's blocks take up to 64)."""

_COMPACT_MIN = 1 << 20  # pattern hashes gathered before the first de-duplication


def count_streamed(prog, dom, progress=None, stream_rows: int | None = None) -> Counted:
    """The activation regions and cells of ``prog`` on the slice ``dom`` (module doc), holding at
    most about ``stream_rows`` vertex rows per group (default :data:`STREAM_SHARE`)."""
    steps, T = prog.steps(), prog.n_tokens
    root = start_complex(prog, dom)
    limit = max(1, root.max_rows // STREAM_SHARE) if stream_rows is None else _checked_rows(stream_rows)
    root.bmax = STREAM_BLOCK
    stack: list[tuple[_Complex, float, float]] = [(root, 1.0, 0.0)]  # (group, share of the cells, start)
    del root
    cells = groups = largest = 0
    codes = _Codes()
    shown = [0.0, 0.0]  # the share finished, the last fraction reported

    def too_big(cx: _Complex) -> bool:
        return cx.C >= 2 and cx.V > limit

    while stack:
        cx, share, f0 = stack.pop()
        tick = None if progress is None else _ticker(progress, shown, share, f0)
        done = advance(cx, steps, T, tick, too_big)
        largest = max(largest, cx.V)
        if done:
            groups += 1
            cells += cx.C
            if cx.at.oversplit:
                codes.add(pattern_codes(prog, dom.points(cx.centroids())))
            shown[0] += share
        else:
            f = plane_fraction(cx)
            parts = [(cx.part(ids), share * len(ids) / cx.C, f) for ids in split_cells(cx, _n_parts(cx, limit))]
            stack += parts[::-1]  # the first part is carried on first
            del parts
        del cx  # the parent's arrays are freed before its first part is carried on
    if progress is not None:
        progress(1.0)
    n = codes.count() if codes.any else cells
    return Counted(n, cells, CountOnly(cells, groups, largest, limit), reported(SUBDIVIDE_ZERO_RTOL))


def split_cells(cx: _Complex, n_parts: int = 2) -> list[np.ndarray]:
    """The complex's cell ids in ``n_parts`` (a power of two ≤ C) groups of about equal size,
    each ascending: halved again and again at the median of the cells' centroids along the axis
    where the group's centroids spread widest (a k-d tree's leaves, in its order)."""
    cen = cx.centroids()
    groups = [np.arange(cx.C)]
    while len(groups) < n_parts:
        groups = [h for g in groups for h in _halves(g, cen[g])]
    return groups


def _halves(ids: np.ndarray, cen: np.ndarray) -> tuple[np.ndarray, ...]:
    if len(ids) < 2:
        return (ids,)
    axis = int(np.argmax(np.ptp(cen, axis=0)))
    order = np.argsort(cen[:, axis], kind="stable")
    half = len(ids) // 2
    return np.sort(ids[order[:half]]), np.sort(ids[order[half:]])


def _n_parts(cx: _Complex, limit: int) -> int:
    """Parts for a group over the limit: the fewest (a power of two, ≤ its cells) with about
    half the limit each, so that one split pass serves a group that grew far past it."""
    n = 2
    while cx.V > n * limit / 2 and 2 * n <= cx.C:
        n *= 2
    return n


def _checked_rows(rows) -> int:
    if isinstance(rows, bool) or not isinstance(rows, (int, np.integer)) or rows < 1:
        raise ValueError(f"stream_rows must be a positive int (vertex rows one group may hold), got {rows!r}")
    return int(rows)


def _ticker(progress, shown: list, share: float, f0: float):
    """``progress`` of the whole count while one group is carried: the shares finished, plus this
    group's share times its progress since it began; never backwards."""
    def tick(cx: _Complex) -> None:
        rest = 1.0 - f0
        f = shown[0] + (share * (plane_fraction(cx) - f0) / rest if rest > 0 else 0.0)
        shown[1] = max(shown[1], min(f, 1.0))
        progress(shown[1])

    return tick


class _Codes:
    """The distinct pattern hashes of the groups so far: per group its distinct ones, merged
    (one np.unique over them all) whenever the unmerged ones outnumber the merged."""

    def __init__(self):
        self.merged = np.zeros(0, np.uint64)
        self.parts: list[np.ndarray] = []
        self.pending = 0
        self.any = False

    def add(self, code: np.ndarray) -> None:
        self.any = True
        part = np.unique(code)
        self.parts.append(part)
        self.pending += len(part)
        if self.pending > max(len(self.merged), _COMPACT_MIN):
            self._merge()

    def _merge(self) -> None:
        self.merged = np.unique(np.concatenate([self.merged, *self.parts]))
        self.parts, self.pending = [], 0

    def count(self) -> int:
        self._merge()
        return len(self.merged)


__all__ = ["STREAM_BLOCK", "STREAM_SHARE", "count_streamed", "split_cells"]
