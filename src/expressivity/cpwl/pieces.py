"""CPWL functions given by affine pieces, as MaxoutNetworks.

* Max-min (Ovchinnikov 2002): on a convex domain every CPWL f with affine components
  ℓ_k(x) = a_k·x + b_k equals f(x) = max_g min_{k ∈ S_g} ℓ_k(x) for some index sets S_g.
  Network: layer 1 computes u_g = max_{k∈S_g} (−ℓ_k) = −min_{k∈S_g} ℓ_k (rank max|S_g|, short
  groups padded by repeating a piece); layer 2 one unit max_g (−u_g); identity read-out.
* Difference of max (Kripfganz–Schulze; Wang 2004): f = max_i ℓ⁺_i − max_j ℓ⁻_j.
  One layer of two units, read-out (1, −1).
* 1-D interpolation: the CPWL g on ℝ through knots (t_k, v_k), linear outside, as
  g(x) = v_0 + s_0(x − t_0) + Σ_k (s_k − s_{k−1}) ReLU(x − t_k) — one ReLU layer.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .maxout import MaxoutNetwork, _as_float_array


def _pieces(a, b, what: str) -> tuple[np.ndarray, np.ndarray]:
    a = _as_float_array(a, f"{what} slopes")
    b = _as_float_array(b, f"{what} offsets")
    if a.ndim != 2 or a.shape[0] == 0:
        raise ValueError(f"{what} slopes must have shape (K, d) with K >= 1, got {a.shape}")
    if b.shape != (a.shape[0],):
        raise ValueError(f"{what} offsets must have shape ({a.shape[0]},), got {b.shape}")
    return a, b


def max_of_affine(a, b) -> MaxoutNetwork:
    """f(x) = max_k (a_k·x + b_k): one maxout unit of rank K (a convex CPWL function)."""
    a, b = _pieces(a, b, "max_of_affine")
    return MaxoutNetwork.from_weights([(a[None], b[None])])


def max_min(a, b, groups: Sequence[Sequence[int]]) -> MaxoutNetwork:
    """f(x) = max_g min_{k ∈ groups[g]} (a_k·x + b_k), as a depth-2 maxout network."""
    a, b = _pieces(a, b, "max_min")
    K, d = a.shape
    if len(groups) == 0 or any(len(g) == 0 for g in groups):
        raise ValueError("max_min: groups must be non-empty lists of piece indices")
    for g in groups:
        for k in g:
            if not (0 <= int(k) < K):
                raise ValueError(f"max_min: piece index {k} out of range [0, {K})")
    G, p = len(groups), max(len(g) for g in groups)
    W1, b1 = np.zeros((G, p, d)), np.zeros((G, p))
    for gi, g in enumerate(groups):
        idx = [int(k) for k in g] + [int(g[0])] * (p - len(g))  # pad by repeating a piece
        W1[gi], b1[gi] = -a[idx], -b[idx]
    W2 = -np.eye(G)[None]  # (1, G, G): unit max_g (−u_g)
    return MaxoutNetwork.from_weights([(W1, b1), (W2, np.zeros((1, G)))])


def difference_of_max(a_plus, b_plus, a_minus, b_minus) -> MaxoutNetwork:
    """f(x) = max_i (a⁺_i·x + b⁺_i) − max_j (a⁻_j·x + b⁻_j)."""
    ap, bp = _pieces(a_plus, b_plus, "difference_of_max (+)")
    am, bm = _pieces(a_minus, b_minus, "difference_of_max (−)")
    if ap.shape[1] != am.shape[1]:
        raise ValueError(f"difference_of_max: input dimensions differ ({ap.shape[1]} vs {am.shape[1]})")
    p = max(len(ap), len(am))
    pad = lambda a, b: (np.concatenate([a, np.repeat(a[:1], p - len(a), 0)]),
                        np.concatenate([b, np.repeat(b[:1], p - len(b))]))
    ap, bp = pad(ap, bp)
    am, bm = pad(am, bm)
    W = np.stack([ap, am])
    bb = np.stack([bp, bm])
    return MaxoutNetwork.from_weights([(W, bb)], readout=(np.array([[1.0, -1.0]]), np.zeros(1)))


def interpolate_1d(knots, values) -> MaxoutNetwork:
    """The continuous piecewise-linear g: ℝ → ℝ with g(t_k) = v_k, affine beyond the ends."""
    t = _as_float_array(knots, "knots")
    v = _as_float_array(values, "values")
    if t.ndim != 1 or t.shape != v.shape or len(t) < 2:
        raise ValueError("interpolate_1d: knots and values must be 1-D of equal length >= 2")
    if np.any(np.diff(t) <= 0):
        raise ValueError("interpolate_1d: knots must be strictly increasing")
    s = np.diff(v) / np.diff(t)  # slope on each of the len(t) − 1 intervals
    kinks = t[1:-1]
    jumps = np.diff(s)  # slope change at each inner knot
    # units: ReLU(x − t_0) and ReLU(−(x − t_0)) give x − t_0 exactly; then one per kink
    n = 2 + len(kinks)
    W = np.zeros((n, 2, 1))
    bb = np.zeros((n, 2))
    W[0, 0, 0], bb[0, 0] = 1.0, -t[0]
    W[1, 0, 0], bb[1, 0] = -1.0, t[0]
    W[2:, 0, 0], bb[2:, 0] = 1.0, -kinks
    A = np.concatenate([[s[0], -s[0]], jumps])[None]
    return MaxoutNetwork.from_weights([(W, bb)], readout=(A, np.array([v[0]])))
