"""Constructed networks with known numbers of linear regions (oracles and Theorem 4.4).

* ``sawtooth_maxout(q, L)``: the zigzag z_q: [0, 1] → [0, 1] with q pieces of slope ±q
  (z_q(k/q) = k mod 2) written as a width-2, rank-q maxout layer, z_q = P − N with P, N convex
  (P bends up at the valleys, N at the peaks); L layers compose it, so f = z_q^∘L has exactly
  q^L linear pieces on [0, 1] (each piece of z_q^∘(L−1) maps onto [0, 1]). Pieces beyond the
  envelope are parallel copies shifted down by 1 (never active on [0, 1]) so every unit has
  rank exactly q (the compiled transformer then has q tokens).
* ``tent_map(L)``: t(x) = 2 ReLU(x) − 4 ReLU(x − 1/2) composed L times: 2^L pieces on [0, 1].
* ``serra_net(widths)``: a 1-input ReLU network with n_l ≥ 3 units in layer l whose number of
  activation regions on the line is Serra et al. (2018)'s maximum ∏_l (n_l + 1). Layer l
  computes G(u) = b + Σ_j a_j ReLU(σ_j (u − s_j)) with knots s_j = j/(n+1) ∈ (0, 1) and all
  n + 1 pieces of G mapping onto ⊇ [0, 1] (the two unbounded ones too), so every region of
  layer l − 1 is cut by all n_l knots of layer l. Use ``serra_domain()`` as the segment.
"""

from __future__ import annotations

import numpy as np

from ..memory import check_memory
from ..rules import check_int
from .maxout import MaxoutNetwork


def _convex_pieces(s0: float, c0: float, knots, deltas) -> list[tuple[float, float]]:
    """Affine pieces (slope, intercept) of s0 x + c0 + Σ δ_k ReLU(x − t_k) (δ_k ≥ 0)."""
    pieces = [(s0, c0)]
    s, c = s0, c0
    for t, d in zip(knots, deltas):
        s, c = s + d, c - d * t
        pieces.append((s, c))
    return pieces


def zigzag_pieces(q: int) -> tuple[list, list]:
    """(P pieces, N pieces) with z_q = max P − max N on [0, 1]."""
    q = check_int(q, "q", min=2)
    check_memory(64 * q, f"the zigzag pieces of q = {q}", hint="use a smaller q")
    peaks = [k / q for k in range(1, q) if k % 2 == 1]
    valleys = [k / q for k in range(1, q) if k % 2 == 0]
    P = _convex_pieces(float(q), 0.0, valleys, [2.0 * q] * len(valleys))
    N = _convex_pieces(0.0, 0.0, peaks, [2.0 * q] * len(peaks))
    return P, N


def sawtooth_maxout(q: int, L: int) -> MaxoutNetwork:
    """Width-2 rank-q maxout network computing z_q^∘L on [0, 1] (q^L linear pieces).

    ``q`` and ``L`` must be integers (2.9 is refused, not rounded); a network whose weights do
    not fit in memory is refused before it is built."""
    q = check_int(q, "q", min=2)
    L = check_int(L, "depth L", min=1)
    check_memory(L * (2 * q * 3 * 8 + 1000), f"sawtooth_maxout(q={q}, L={L}) ({L} layers)",
                 hint="use a smaller depth L or rank q")
    P, N = zigzag_pieces(q)
    rows = []
    for pieces in (P, N):
        pad = [(pieces[0][0], pieces[0][1] - 1.0)] * (q - len(pieces))  # never active on [0, 1]
        rows.append(pieces + pad)
    ab = np.array(rows)  # (2, q, 2): slope, intercept acting on the layer's scalar input
    layers = []
    for l in range(L):
        if l == 0:
            W = ab[:, :, :1].copy()  # (2, q, 1): input x
        else:
            W = np.stack([ab[:, :, 0], -ab[:, :, 0]], axis=-1)  # input x_l = h1 − h2
        layers.append((W, ab[:, :, 1].copy()))
    return MaxoutNetwork.from_weights(layers, (np.array([[1.0, -1.0]]), np.zeros(1)))


def zigzag(q: int, x: np.ndarray, L: int = 1) -> np.ndarray:
    """Reference z_q^∘L(x) on [0, 1] (closed form, for tests)."""
    x = np.asarray(x, dtype=np.float64)
    for _ in range(L):
        y = q * x
        k = np.minimum(np.floor(y), q - 1)
        frac = y - k
        x = np.where(k % 2 == 0, frac, 1 - frac)
    return x


def tent_map(L: int) -> MaxoutNetwork:
    """t^∘L with t(x) = 2 ReLU(x) − 4 ReLU(x − 1/2): ReLU units as rank-2 maxout (2^L pieces)."""
    L = check_int(L, "depth L", min=1)
    check_memory(L * 1100, f"tent_map(L={L}) ({L} layers)", hint="use a smaller depth L")
    layers = []
    for l in range(L):
        w_in = np.array([[1.0], [1.0]]) if l == 0 else np.array([[2.0, -4.0], [2.0, -4.0]])
        W = np.zeros((2, 2, w_in.shape[1]))
        W[:, 0, :] = w_in
        b = np.array([[0.0, 0.0], [-0.5, 0.0]])
        layers.append((W, b))
    return MaxoutNetwork.from_weights(layers, (np.array([[2.0, -4.0]]), np.zeros(1)))


def _serra_layer(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Knots s (n,), signs σ (n,), coefficients a (n,) and offset b of G for n >= 3 units."""
    s = np.arange(1, n + 1) / (n + 1)
    v = np.array([0.0 if j % 2 == 1 else 1.0 for j in range(1, n + 1)])  # G(s_j), alternating
    if n % 2 == 0:
        v[1] = 2.0  # steeper first bounded piece so the last piece can decrease
    m = np.empty(n + 1)
    m[0] = -2.0 * (n + 1)
    m[1:n] = np.diff(v) / np.diff(s)
    S = [0, n - 1] if n % 2 == 0 else [n - 1]  # units with σ = −1 (0-based)
    # slope at −∞ is −Σ_{σ=−1} a_j with a_j = m_j − m_{j−1}; solve for the last slope m_n
    if n % 2 == 0:
        m[n] = m[n - 1] - m[1]
    else:
        m[n] = m[n - 1] - m[0]
    a = np.diff(m)
    sigma = np.ones(n)
    sigma[S] = -1.0
    b = v[0] - sum(a[j] * (s[j] - s[0]) for j in S)
    return s, sigma, a, float(b)


def serra_net(widths) -> MaxoutNetwork:
    """1-input ReLU net (rank-2 maxout with a zero piece) attaining ∏(n_l + 1) regions."""
    if isinstance(widths, (str, bytes)) or not hasattr(widths, "__iter__"):
        raise ValueError(f"widths must be a list of layer widths n_l >= 3, got {widths!r}")
    widths = list(widths)
    if not widths:
        raise ValueError("widths must list at least one layer (serra_net needs widths n_l >= 3)")
    widths = [check_int(n, f"widths[{i}]", min=3) for i, n in enumerate(widths)]
    check_memory(8 * 4 * sum(a * b for a, b in zip(widths, [1] + widths[:-1])), f"serra_net({widths})",
                 hint="use smaller widths")
    layers = []
    prev = None  # (a, b) of the previous layer's G
    for n in widths:
        s, sigma, a, b = _serra_layer(n)
        W = np.zeros((n, 2, 1 if prev is None else len(prev[0])))
        bias = np.zeros((n, 2))
        if prev is None:
            W[:, 0, 0] = sigma
            bias[:, 0] = -sigma * s
        else:
            W[:, 0, :] = sigma[:, None] * prev[0][None, :]
            bias[:, 0] = sigma * (prev[1] - s)
        layers.append((W, bias))
        prev = (a, b)
    return MaxoutNetwork.from_weights(layers, (prev[0][None, :], np.array([prev[1]])))


def serra_domain() -> tuple[float, float]:
    """A segment of the input line containing every region of :func:`serra_net`."""
    return (-2.0, 3.0)


__all__ = ["sawtooth_maxout", "serra_domain", "serra_net", "tent_map", "zigzag", "zigzag_pieces"]
