"""Certificates for a ReLU net's region count: every counted cell is a distinct, nonempty open cell.

A cell is an activation pattern σ (one sign per ReLU neuron); its open polyhedron in the domain's
parameters α is {α : M_σ α < q_σ} (each pre-activation strictly of its sign, α strictly inside
the domain; :func:`.relu_chain.cell_rows`). Cells of distinct patterns are disjoint, so k counted
regions with distinct patterns, each with a proved interior point, prove count ≥ k.

A region's interior point is proved, cheapest first: (float) its stored point with every |ẑ| above
the float64 error bound of :mod:`.relu_chain`; (exact) the same point in exact dyadic arithmetic;
(lp) the Chebyshev centre of {M_σ α < q_σ} (max r: M_i α + r ‖M_i‖ ≤ q_i, HiGHS), refined in
local coordinates, then checked exactly.

:func:`refute_pattern` decides a pattern the other way: a Farkas (Motzkin) certificate y ≥ 0, y ≠ 0,
yᵀM = 0, yᵀq ≤ 0 — checked in exact rationals — proves {M α < q} empty (for any α in it,
0 = yᵀM α < yᵀq ≤ 0); or an exactly checked interior point proves it nonempty.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from .count import count_regions
from .lower import lower
from .merge import face_centroids
from .relu_chain import Chain, cell_rows, chain, exact_signs, float_signs
from .result import CellPieces, PlanePieces, SegmentPieces
from .tolerances import FARKAS_LP_TOL, STRICT_FLOOR

_CHUNK = 2048  # points per float pass


@dataclass(frozen=True)
class Certificate:
    """What :func:`certify_regions` proved. ``how[r]`` is "float", "exact", "lp" or "" (not proved)
    for region r; ``points`` (R, k) the proved interior points in the domain's parameters α;
    ``patterns`` (R, ⌈neurons/8⌉) the patterns proved, bit-packed (``np.unpackbits``, neurons in
    layer order); ``duplicates``: pairs of regions counted twice with one pattern."""

    n_regions: int
    how: np.ndarray
    points: np.ndarray
    patterns: np.ndarray
    duplicates: list
    seconds: float

    @property
    def certified(self) -> int:
        return int(np.count_nonzero(self.how != ""))

    @property
    def ok(self) -> bool:
        """Every counted region is proved nonempty and no two share a pattern: count ≤ the truth."""
        return self.certified == self.n_regions and not self.duplicates

    @property
    def failed(self) -> np.ndarray:
        return np.nonzero(self.how == "")[0]

    def summary(self) -> dict:
        return {"regions": self.n_regions, "certified": self.certified, "float": int(np.sum(self.how == "float")),
                "exact": int(np.sum(self.how == "exact")), "lp": int(np.sum(self.how == "lp")),
                "duplicates": len(self.duplicates), "seconds": round(self.seconds, 3)}


@dataclass(frozen=True)
class Refutation:
    """The answer of :func:`refute_pattern`: ``empty`` True with the Farkas ``multipliers`` (row
    index → Fraction, over the rows of :func:`.relu_chain.cell_rows`), False with an interior
    ``point`` (α), or None (neither certificate was found)."""

    empty: bool | None
    multipliers: dict = field(default_factory=dict)
    point: np.ndarray | None = None


def _representatives(regions) -> tuple[np.ndarray, np.ndarray]:
    """(points α (P, k), region id (P,)) of the counted pieces, in the domain's parameters."""
    p = regions.pieces
    if isinstance(p, CellPieces):  # the centroids are in α; counts without them are on a box (α = x)
        alpha = p.centroids if p.centroids is not None else p.points
        return np.asarray(alpha, dtype=np.float64), np.asarray(p.region)
    if isinstance(p, PlanePieces):
        return face_centroids(p.faces, p.vertices), np.asarray(p.region)
    if isinstance(p, SegmentPieces):
        return ((p.t0 + p.t1) / 2)[:, None], np.asarray(p.region)
    raise ValueError(f"certify_regions: cannot read the pieces of a {type(p).__name__}")


def certify_regions(model_or_prog, domain, regions=None) -> Certificate:
    """Prove every activation region of ``regions`` (counted here when None) nonempty and all
    patterns distinct, for a ReLU net (Linear/ReLU) on a Box, Segment, Plane or Slice."""
    start = time.perf_counter()
    prog = lower(model_or_prog)
    ch = chain(prog, domain)
    if regions is None:
        regions = count_regions(prog, domain)
    pts, rid = _representatives(regions)
    R = int(regions.activation_regions)
    if len(rid) == 0 or rid.max() + 1 != R:
        raise ValueError(f"certify_regions: the regions hold {len(rid)} pieces for {R} activation regions")
    _, first = np.unique(rid, return_index=True)
    alpha = pts[first]
    packed = np.zeros((R, (ch.n_neurons + 7) // 8), np.uint8)
    how = np.full(R, "", dtype=object)
    for lo in range(0, R, _CHUNK):
        sig, proved = float_signs(ch, alpha[lo:lo + _CHUNK])
        packed[lo:lo + _CHUNK] = np.packbits(sig, axis=1)
        how[lo:lo + _CHUNK][proved] = "float"
    alpha = alpha.copy()
    for r in np.nonzero(how == "")[0]:
        sigma = np.unpackbits(packed[r])[:ch.n_neurons].astype(bool)
        how[r], alpha[r] = _prove(ch, sigma, alpha[r])
    return Certificate(R, how.astype(str), alpha, packed, _duplicates(packed), time.perf_counter() - start)


def _prove(ch: Chain, sigma: np.ndarray, a: np.ndarray) -> tuple[str, np.ndarray]:
    """("exact" | "lp" | "", point) for one region of pattern σ whose float check failed at a."""
    s = exact_signs(ch, a)
    if s is not None and np.array_equal(s, sigma):
        return "exact", a
    c = interior_point(ch, sigma, a)
    if c is not None:
        return "lp", c
    return "", a


def _duplicates(packed: np.ndarray) -> list:
    """Pairs (r, r') of regions with one pattern."""
    view = np.ascontiguousarray(packed).view(np.dtype((np.void, packed.shape[1])))[:, 0]
    _, inv, counts = np.unique(view, return_inverse=True, return_counts=True)
    out = []
    for g in np.nonzero(counts > 1)[0]:
        members = np.nonzero(inv == g)[0]
        out += [(int(members[0]), int(m)) for m in members[1:]]
    return out


def _chebyshev(M: np.ndarray, q: np.ndarray, centre: np.ndarray, rho: float):
    """Max r over α = centre + ρ δ with M_i α + r ρ ‖M_i‖ ≤ q_i, |δ| ≤ 1, r ≤ 1: (α, r ρ) or None."""
    from scipy.optimize import linprog

    norms = np.linalg.norm(M, axis=1)
    keep = norms > 0
    Mk, nk = M[keep] / norms[keep, None], norms[keep]
    slack = (q[keep] - M[keep] @ centre) / (nk * rho)
    k = M.shape[1]
    A = np.hstack([Mk, np.ones((len(Mk), 1))])
    res = linprog(np.r_[np.zeros(k), -1.0], A_ub=A, b_ub=slack, bounds=[(-1, 1)] * k + [(None, 1)], method="highs")
    if res.status != 0 or res.x[-1] <= 0:
        return None
    return centre + rho * res.x[:k], res.x[-1] * rho


def interior_point(ch: Chain, sigma: np.ndarray, guess: np.ndarray | None = None, rows=None) -> np.ndarray | None:
    """A point α of the open cell of σ, proved exactly, from Chebyshev-centre LPs (first over the
    whole domain, then up to three times zoomed in on the centre found); None when none is
    proved. ``rows``: the cell's float (M, q) when already built."""
    M, q = rows if rows is not None else cell_rows(ch, sigma)
    centre = np.zeros(ch.k) if guess is None else np.asarray(guess, dtype=np.float64)
    rho = float(np.abs(ch.f).max()) * 2 + float(np.abs(centre).max())
    for _ in range(4):
        found = _chebyshev(M, q, centre, rho)
        if found is None:
            return None
        centre, r = found
        s = exact_signs(ch, centre)
        if s is not None and np.array_equal(s, sigma):
            return centre
        rho = max(4 * r, STRICT_FLOOR)
    return None


def _solve_exact(A: list, rhs: list, hint: list) -> list | None:
    """A solution y of A y = rhs in Fractions (free unknowns set to ``hint``), or None if inconsistent."""
    n = len(A[0])
    rows = [list(r) + [v] for r, v in zip(A, rhs)]
    piv, r = [], 0
    for c in range(n):
        p = next((i for i in range(r, len(rows)) if rows[i][c] != 0), None)
        if p is None:
            continue
        rows[r], rows[p] = rows[p], rows[r]
        inv = 1 / rows[r][c]
        rows[r] = [v * inv for v in rows[r]]
        for i in range(len(rows)):
            if i != r and rows[i][c] != 0:
                f = rows[i][c]
                rows[i] = [a - f * b for a, b in zip(rows[i], rows[r])]
        piv.append(c)
        r += 1
    if any(all(v == 0 for v in row[:n]) and row[n] != 0 for row in rows[r:]):
        return None
    y = [Fraction(h) for h in hint]
    for i, c in enumerate(piv):
        y[c] = rows[i][n] - sum(rows[i][j] * y[j] for j in range(n) if j not in piv)
    return y


def farkas(M: np.ndarray, q: np.ndarray, M_exact: list, q_exact: list) -> dict | None:
    """Multipliers {row: y_row} with y ≥ 0, Σ y = 1, yᵀM = 0, yᵀq ≤ 0 exactly (so {M α < q} is
    empty), from the support of the LP min yᵀq̂ (rows normalised) and an exact solve on it."""
    from scipy.optimize import linprog

    norms = np.linalg.norm(M, axis=1)
    for i in np.nonzero(norms == 0)[0]:
        if all(v == 0 for v in M_exact[i]) and q_exact[i] <= 0:
            return {int(i): Fraction(1)}  # 0 < q_i fails on its own
    keep = np.nonzero(norms > 0)[0]
    Mn, qn = M[keep] / norms[keep, None], q[keep] / norms[keep]
    k = M.shape[1]
    res = linprog(qn, A_eq=np.vstack([Mn.T, np.ones(len(keep))]), b_eq=np.r_[np.zeros(k), 1.0],
                  bounds=[(0, None)] * len(keep), method="highs")
    if res.status != 0 or res.fun > FARKAS_LP_TOL:
        return None
    pos = res.x > 0
    support, w = keep[pos], res.x[pos] / norms[keep[pos]]
    A = [[M_exact[i][j] for i in support] for j in range(k)] + [[Fraction(1)] * len(support)]
    y = _solve_exact(A, [Fraction(0)] * k + [Fraction(1)], list(w / w.sum()))
    if y is None or any(v < 0 for v in y) or sum(v * q_exact[i] for v, i in zip(y, support)) > 0:
        return None
    return {int(i): v for i, v in zip(support, y) if v != 0}


def check_farkas(M_exact: list, q_exact: list, y: dict) -> bool:
    """y ≥ 0, y ≠ 0, yᵀM = 0 and yᵀq ≤ 0 in exact rationals."""
    if not y or any(v < 0 for v in y.values()) or all(v == 0 for v in y.values()):
        return False
    k = len(M_exact[0])
    zero = all(sum((v * M_exact[i][j] for i, v in y.items()), Fraction(0)) == 0 for j in range(k))
    return zero and sum((v * q_exact[i] for i, v in y.items()), Fraction(0)) <= 0


def refute_pattern(model_or_prog, domain, pattern) -> Refutation:
    """Decide whether the open cell of ``pattern`` (one bool per ReLU neuron, layer after layer, or
    one bool array per ReLU layer) in ``domain`` is empty: a Farkas certificate or a point."""
    ch = chain(lower(model_or_prog), domain, "refute_pattern")
    if not isinstance(pattern, np.ndarray) and len(pattern) and np.ndim(pattern[0]) == 1:
        pattern = np.concatenate([np.asarray(p, dtype=bool).reshape(-1) for p in pattern])
    sigma = np.asarray(pattern, dtype=bool)
    M, q = cell_rows(ch, sigma)
    point = interior_point(ch, sigma, rows=(M, q))
    if point is not None:
        return Refutation(False, point=point)
    M_ex, q_ex = cell_rows(ch, sigma, exact=True)
    y = farkas(M, q, M_ex, q_ex)
    if y is not None and check_farkas(M_ex, q_ex, y):
        return Refutation(True, multipliers=y)
    return Refutation(None)
