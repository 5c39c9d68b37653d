"""Maxout networks: the exact representation of CPWL functions we compile.

A maxout layer of width m and rank p maps h ∈ R^d to R^m with
    h_i(x) = max_{j ≤ p} (w_ij · x + b_ij),      W: (m, p, d), b: (m, p),
so it has m·p·(d + 1) parameters. A network stacks layers (ranks may differ per layer) and
ends with an optional affine read-out y = A h + c. ReLU(t) = max(0, t) is a rank-2 unit.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..memory import check_memory
from ..pretrained import PretrainedMixin
from ..rules import as_real_array, check_int


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
class MaxoutNetwork(PretrainedMixin):
    """x ↦ A·h^(L)(…h^(1)(x)) + c with maxout layers h^(l); read-out optional."""

    layers: tuple[MaxoutLayer, ...]
    readout: tuple[np.ndarray, np.ndarray] | None = None

    hub_kind = "network"  # save_pretrained / from_pretrained (cpwl.hub: float64 tensors)
    hub_keys = frozenset({"network"})

    def _hub_records(self):
        from .hub import network_records

        return network_records(self)

    @classmethod
    def _from_hub(cls, config, directory):
        from .hub import network_from_config

        return network_from_config(config, directory)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_weights(
        cls,
        layers: Sequence[tuple[np.ndarray, np.ndarray]],
        readout: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> MaxoutNetwork:
        """Validate and freeze ``[(W[m,p,d], b[m,p]), ...]`` and ``(A[out,m_L], c[out])``.

        Weights must be real and finite (complex, NaN/inf, ragged or non-numeric arrays are
        refused, never cast); messages name the array, e.g. ``layers[1].W``."""
        if isinstance(layers, (str, bytes)) or not isinstance(layers, Sequence) and not hasattr(layers, "__iter__"):
            raise ValueError(f"layers must be a list of (W, b) pairs, got {type(layers).__name__}")
        layers = list(layers) if layers is not None else []
        if len(layers) == 0:
            raise ValueError("empty network: give at least one maxout layer")
        built: list[MaxoutLayer] = []
        prev = None
        for l, pair in enumerate(layers):
            if isinstance(pair, (str, bytes)) or not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise ValueError(f"layers[{l}]: expected a pair (W, b), got {_describe(pair)}")
            W = _as_float_array(pair[0], f"layers[{l}].W")
            b = _as_float_array(pair[1], f"layers[{l}].b")
            if W.ndim != 3:
                raise ValueError(f"layers[{l}].W must have shape (m, p, d), got {W.shape}")
            m, p, d = W.shape
            if m == 0:
                raise ValueError(f"layers[{l}]: width m must be >= 1")
            if p == 0:
                raise ValueError(f"layers[{l}]: rank p must be >= 1 (rank 0 has no pieces)")
            if d == 0:
                raise ValueError(f"layers[{l}]: input dimension must be >= 1")
            if b.shape != (m, p):
                raise ValueError(f"layers[{l}].b must have shape (m, p) = {(m, p)}, got {b.shape}")
            if prev is not None and d != prev:
                raise ValueError(f"layers[{l}]: input dimension {d} does not match width {prev} of layers[{l - 1}]")
            built.append(MaxoutLayer(W, b))
            prev = m
        ro = None
        if readout is not None:
            if isinstance(readout, (str, bytes)) or not isinstance(readout, (tuple, list)) or len(readout) != 2:
                raise ValueError(f"readout must be a pair (A, c) or None, got {_describe(readout)}")
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
        """Gaussian weights N(0, 1/fan_in), biases N(0, 1); read-out to ``out_dim`` (None: none).

        Sizes must be integers >= 1; the weights' size is checked against the memory budget
        before anything is drawn."""
        in_dim = check_int(in_dim, "in_dim", min=1)
        if isinstance(widths, (str, bytes)) or not hasattr(widths, "__len__"):
            raise ValueError(f"widths must be a list of layer widths, got {_describe(widths)}")
        if len(widths) == 0:
            raise ValueError("empty network: widths must list at least one layer")
        widths = [check_int(m, f"widths[{i}]", min=1) for i, m in enumerate(widths)]
        if isinstance(ranks, (str, bytes)) or not (hasattr(ranks, "__len__") or isinstance(ranks, numbers.Real)):
            raise ValueError(f"ranks must be an int or a list of ints, got {_describe(ranks)}")
        if not hasattr(ranks, "__len__"):
            ranks = [check_int(ranks, "ranks", min=1)] * len(widths)
        if len(ranks) != len(widths):
            raise ValueError(f"ranks has {len(ranks)} entries but widths has {len(widths)}")
        ranks = [check_int(p, f"ranks[{i}]", min=1) for i, p in enumerate(ranks)]
        if out_dim is not None:
            out_dim = check_int(out_dim, "out_dim", min=1)
        if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (numbers.Integral, type(None))) or (seed is not None and seed < 0):
            raise ValueError(f"seed must be a non-negative integer, got {_describe(seed)}")
        dims = [in_dim] + widths[:-1]
        n = sum(m * p * (d + 1) for m, p, d in zip(widths, ranks, dims)) + (out_dim or 0) * (widths[-1] + 1)
        check_memory(3 * 8 * n, f"MaxoutNetwork.random ({n:.3g} weights)", hint="use smaller widths or ranks")
        rng = np.random.default_rng(seed)
        layers, d = [], in_dim
        for m, p in zip(widths, ranks):
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
            pre_lo, pre_hi = affine_bounds(layer.W, layer.b, lo, hi)
            lo, hi = pre_lo.max(axis=1), pre_hi.max(axis=1)
            out.append(Bounds(pre_lo, pre_hi, lo, hi))
        return out


def as_points(x, dim: int, name: str = "x") -> np.ndarray:
    """Validate a batch of input points: float64 (N, dim), real, finite ((N,) allowed when dim = 1)."""
    if isinstance(x, (str, bytes)):
        raise ValueError(f"{name} must be an array of points of shape (N, {dim}), got a string")
    x = as_real_array(x, name)
    if x.ndim == 1 and dim == 1:
        x = x[:, None]
    if x.ndim != 2 or x.shape[1] != dim:
        raise ValueError(f"{name} must have shape (N, {dim}), got {x.shape}")
    return x


def box(lo, hi, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """Validate a box domain: scalars or length-``dim`` arrays, finite, lo < hi."""
    lo = as_real_array(lo, "domain lo", finite=False)
    hi = as_real_array(hi, "domain hi", finite=False)
    lo = np.full(dim, float(lo)) if lo.ndim == 0 else lo
    hi = np.full(dim, float(hi)) if hi.ndim == 0 else hi
    if np.any(np.isnan(lo)) or np.any(np.isnan(hi)):
        raise ValueError("domain lo/hi contain NaN")
    if lo.shape != (dim,) or hi.shape != (dim,):
        raise ValueError(f"domain bounds must be scalars or length-{dim} vectors, got shapes {lo.shape}, {hi.shape}")
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        raise ValueError("domain must be bounded: lo and hi must be finite")
    if np.any(lo >= hi):
        raise ValueError("domain is empty: need lo < hi in every coordinate")
    return lo, hi


def affine_bounds(W: np.ndarray, b: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Interval of u = W h + b over h ∈ [lo, hi] by centre/radius arithmetic, W (m, p, d), b (m, p):
    u ∈ W·c ± |W|·r with c = (lo + hi)/2, r = (hi − lo)/2. Exact per entry (each is attained)."""
    c, r = (lo + hi) / 2, (hi - lo) / 2
    centre = np.einsum("mpd,d->mp", W, c) + b
    radius = np.einsum("mpd,d->mp", np.abs(W), r)
    return centre - radius, centre + radius


def sample_box(lo, hi, points: int, seed: int = 0) -> np.ndarray:
    """``points`` uniform points of the box [lo, hi] plus its 2^d corners when d ≤ 10: (N, d)."""
    lo, hi = box(lo, hi, np.size(hi) if np.ndim(hi) else np.size(lo))
    rng = np.random.default_rng(seed)
    x = rng.uniform(lo, hi, (points, len(lo)))
    if len(lo) <= 10:
        bits = (np.arange(2 ** len(lo))[:, None] >> np.arange(len(lo))) & 1
        x = np.concatenate([x, np.where(bits == 1, hi, lo)])
    return x


def _as_float_array(a, what: str) -> np.ndarray:
    """A real, finite, read-only float64 copy of ``a`` (complex and NaN/inf refused)."""
    if isinstance(a, (str, bytes)):
        raise ValueError(f"{what} must be a numeric array, got a string")
    arr = np.array(as_real_array(a, what), dtype=np.float64)
    arr.setflags(write=False)
    return arr


def _describe(value) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"
