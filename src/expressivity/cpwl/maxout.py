"""Maxout networks: the exact representation of CPWL functions we compile.

A maxout layer of width m and rank p maps h ∈ R^d to R^m with
    h_i(x) = max_{j ≤ p} (w_ij · x + b_ij),      W: (m, p, d), b: (m, p),
so it has m·p·(d + 1) parameters. A network stacks layers (ranks may differ per layer) and
ends with an optional affine read-out y = A h + c. ReLU(t) = max(0, t) is a rank-2 unit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class MaxoutLayer:
    """h_i = max_j (W[i, j] · x + b[i, j]); W: (m, p, d), b: (m, p)."""

    W: np.ndarray
    b: np.ndarray

    @property
    def width(self) -> int:
        return self.W.shape[0]

    @property
    def rank(self) -> int:
        return self.W.shape[1]

    @property
    def in_dim(self) -> int:
        return self.W.shape[2]

    def pre(self, h: np.ndarray) -> np.ndarray:
        """Pre-activations w_ij·h + b_ij: (N, m, p)."""
        return np.einsum("nd,mpd->nmp", h, self.W, optimize=True) + self.b

    def __call__(self, h: np.ndarray) -> np.ndarray:
        return self.pre(h).max(axis=2)


@dataclass(frozen=True)
class Bounds:
    """Interval bounds of one layer over a box: pre-activations (m, p), outputs (m,)."""

    pre_lo: np.ndarray
    pre_hi: np.ndarray
    lo: np.ndarray
    hi: np.ndarray


@dataclass(frozen=True)
class MaxoutNetwork:
    """x ↦ A·h^(L)(…h^(1)(x)) + c with maxout layers h^(l); read-out optional."""

    layers: tuple[MaxoutLayer, ...]
    readout: tuple[np.ndarray, np.ndarray] | None = None

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_weights(
        cls,
        layers: Sequence[tuple[np.ndarray, np.ndarray]],
        readout: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> MaxoutNetwork:
        """Validate and freeze ``[(W[m,p,d], b[m,p]), ...]`` and ``(A[out,m_L], c[out])``."""
        if layers is None or len(layers) == 0:
            raise ValueError("empty network: give at least one maxout layer")
        built: list[MaxoutLayer] = []
        prev = None
        for l, pair in enumerate(layers):
            if len(pair) != 2:
                raise ValueError(f"layer {l}: expected a pair (W, b), got {len(pair)} items")
            W = _as_float_array(pair[0], f"layer {l} W")
            b = _as_float_array(pair[1], f"layer {l} b")
            if W.ndim != 3:
                raise ValueError(f"layer {l}: W must have shape (m, p, d), got {W.shape}")
            m, p, d = W.shape
            if m == 0:
                raise ValueError(f"layer {l}: width m must be >= 1")
            if p == 0:
                raise ValueError(f"layer {l}: rank p must be >= 1 (rank 0 has no pieces)")
            if d == 0:
                raise ValueError(f"layer {l}: input dimension must be >= 1")
            if b.shape != (m, p):
                raise ValueError(f"layer {l}: b must have shape (m, p) = {(m, p)}, got {b.shape}")
            if prev is not None and d != prev:
                raise ValueError(f"layer {l}: input dimension {d} does not match width {prev} of layer {l - 1}")
            built.append(MaxoutLayer(W, b))
            prev = m
        ro = None
        if readout is not None:
            A = _as_float_array(readout[0], "readout A")
            c = _as_float_array(readout[1], "readout c")
            if A.ndim != 2 or A.shape[1] != prev:
                raise ValueError(f"readout A must have shape (out, {prev}), got {A.shape}")
            if A.shape[0] == 0:
                raise ValueError("readout A must have at least one output row")
            if c.shape != (A.shape[0],):
                raise ValueError(f"readout c must have shape ({A.shape[0]},), got {c.shape}")
            ro = (A, c)
        return cls(tuple(built), ro)

    @classmethod
    def random(
        cls,
        in_dim: int,
        widths: Sequence[int],
        ranks: int | Sequence[int],
        seed: int = 0,
        out_dim: int | None = 1,
    ) -> MaxoutNetwork:
        """Gaussian weights N(0, 1/fan_in), biases N(0, 1); read-out to ``out_dim`` (None: none)."""
        if in_dim < 1:
            raise ValueError(f"in_dim must be >= 1, got {in_dim}")
        if len(widths) == 0:
            raise ValueError("empty network: widths must list at least one layer")
        if isinstance(ranks, (int, np.integer)):
            ranks = [int(ranks)] * len(widths)
        if len(ranks) != len(widths):
            raise ValueError(f"ranks has {len(ranks)} entries but widths has {len(widths)}")
        rng = np.random.default_rng(seed)
        layers, d = [], in_dim
        for m, p in zip(widths, ranks):
            if m < 1 or p < 1:
                raise ValueError(f"widths and ranks must be >= 1, got width {m}, rank {p}")
            layers.append((rng.normal(0, 1 / np.sqrt(d), (m, p, d)), rng.normal(0, 1, (m, p))))
            d = m
        readout = None
        if out_dim is not None:
            readout = (rng.normal(0, 1 / np.sqrt(d), (out_dim, d)), rng.normal(0, 1, out_dim))
        return cls.from_weights(layers, readout)

    # ------------------------------------------------------------------ shape
    @property
    def in_dim(self) -> int:
        return self.layers[0].in_dim

    @property
    def out_dim(self) -> int:
        return self.readout[0].shape[0] if self.readout is not None else self.layers[-1].width

    @property
    def depth(self) -> int:
        return len(self.layers)

    @property
    def widths(self) -> tuple[int, ...]:
        return tuple(layer.width for layer in self.layers)

    @property
    def ranks(self) -> tuple[int, ...]:
        return tuple(layer.rank for layer in self.layers)

    def n_params(self) -> int:
        """Σ_l m_l·p_l·(d_l + 1) plus the read-out's out·(m_L + 1)."""
        total = sum(layer.W.size + layer.b.size for layer in self.layers)
        if self.readout is not None:
            total += self.readout[0].size + self.readout[1].size
        return int(total)

    def n_nonzero_params(self) -> int:
        arrays = [a for layer in self.layers for a in (layer.W, layer.b)]
        if self.readout is not None:
            arrays += list(self.readout)
        return int(sum(np.count_nonzero(a) for a in arrays))

    def flops(self) -> int:
        """Multiply-adds ×2 of one evaluation (pieces, maxes and read-out)."""
        total = sum(2 * l.width * l.rank * l.in_dim + l.width * l.rank for l in self.layers)
        if self.readout is not None:
            total += 2 * self.readout[0].size
        return int(total)

    # ------------------------------------------------------------------ evaluation
    def check_input(self, x: np.ndarray) -> np.ndarray:
        return as_points(x, self.in_dim)

    def hidden(self, x: np.ndarray) -> list[np.ndarray]:
        """Outputs h^(1), …, h^(L) of every layer, each (N, m_l)."""
        h = self.check_input(x)
        outs = []
        for layer in self.layers:
            h = layer(h)
            outs.append(h)
        return outs

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """f(x): (N, out_dim)."""
        h = self.hidden(x)[-1]
        if self.readout is not None:
            A, c = self.readout
            return h @ A.T + c
        return h

    # ------------------------------------------------------------------ bounds
    def interval_bounds(self, lo, hi) -> list[Bounds]:
        """Interval bounds of every pre-activation and output over the box [lo, hi]^d.

        Uses centre/radius arithmetic: for u = W h + b with h ∈ [l, u],
        u ∈ W·c ± |W|·r. Sound (never too tight), exact for the first layer.
        """
        lo, hi = box(lo, hi, self.in_dim)
        out = []
        for layer in self.layers:
            c, r = (lo + hi) / 2, (hi - lo) / 2
            centre = np.einsum("mpd,d->mp", layer.W, c) + layer.b
            radius = np.einsum("mpd,d->mp", np.abs(layer.W), r)
            pre_lo, pre_hi = centre - radius, centre + radius
            lo, hi = pre_lo.max(axis=1), pre_hi.max(axis=1)
            out.append(Bounds(pre_lo, pre_hi, lo, hi))
        return out


def as_points(x, dim: int) -> np.ndarray:
    """Validate a batch of input points: float64 (N, dim), finite ((N,) allowed when dim = 1)."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 1 and dim == 1:
        x = x[:, None]
    if x.ndim != 2 or x.shape[1] != dim:
        raise ValueError(f"input must have shape (N, {dim}), got {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("input contains NaN or inf")
    return x


def box(lo, hi, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """Validate a box domain: scalars or length-``dim`` arrays, finite, lo < hi."""
    lo = np.broadcast_to(np.asarray(lo, dtype=np.float64), (dim,)).copy() if np.ndim(lo) == 0 else np.asarray(lo, dtype=np.float64)
    hi = np.broadcast_to(np.asarray(hi, dtype=np.float64), (dim,)).copy() if np.ndim(hi) == 0 else np.asarray(hi, dtype=np.float64)
    if lo.shape != (dim,) or hi.shape != (dim,):
        raise ValueError(f"domain bounds must be scalars or length-{dim} vectors, got shapes {lo.shape}, {hi.shape}")
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        raise ValueError("domain must be bounded: lo and hi must be finite")
    if np.any(lo >= hi):
        raise ValueError("domain is empty: need lo < hi in every coordinate")
    return lo, hi


def _as_float_array(a, what: str) -> np.ndarray:
    try:
        arr = np.array(a, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{what}: not a numeric array") from None
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what} contains NaN or inf")
    arr.setflags(write=False)
    return arr
