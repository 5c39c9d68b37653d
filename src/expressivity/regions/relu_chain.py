"""A ReLU net on a domain as a chain of affine layers in the domain's parameters α, evaluated in
float64 with a rigorous error bound and in exact dyadic arithmetic (what :mod:`.certify` reads).

The chain: x = o + α B (the domain's map; none for a box, where α = x), then the program's layers
y ← y W + b, each followed by a ReLU or not. Every float64 is a dyadic rational m·2^−s, so a
layer is exact as Python integers (``ints``, ``shift``); products and sums of integers never round.

Float bound (Higham, Thm 3.5, any summation order, FMA or not): for a layer of fan-in m and
computed input ŷ with |ŷ − y| ≤ e, the computed pre-activation ẑ satisfies
    |ẑ − z| ≤ e |W| + γ_{m+2} (|ŷ| |W| + |b|),   γ_n = n u / (1 − n u),   u = 2^−53,
(γ_{m+2}, not γ_{m+1}: it also covers a basis that is itself one rounding from the exact one, the
segment's b − a); the bound is evaluated in float64 and then enlarged by the factor 1 + 2 γ_{m+3}
plus (m + 2)·2^−1022 (its own rounding and underflow). ReLU is 1-Lipschitz, so the bound carries
through it unchanged. :func:`float_signs` takes e and |ŷ| as their maxima over the points it is given
(one matmul per layer for the bound; still a bound at each point). Where |ẑ_i| exceeds the bound,
sign(z_i) = sign(ẑ_i) is proved.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from . import ir
from .domains import Box, Plane, Segment, Slice
from .tolerances import STRICT_FLOOR

U = 2.0 ** -53


def gamma(n: int) -> float:
    """γ_n = n u / (1 − n u) (rounded up a little: it is computed in float64)."""
    return n * U / (1.0 - n * U) * (1.0 + 4 * U)


def dyadic(a) -> tuple[np.ndarray, int]:
    """(ints, s): the float64 array a as Python integers times 2^−s, exactly (object array)."""
    a = np.asarray(a, dtype=np.float64)
    ratios = [float(v).as_integer_ratio() for v in a.ravel()]
    s = max((q.bit_length() - 1 for _, q in ratios), default=0)
    ints = np.array([p << (s - (q.bit_length() - 1)) for p, q in ratios] or [], dtype=object)
    return ints.reshape(a.shape), s


def rescale(ints: np.ndarray, s: int, to: int) -> np.ndarray:
    """ints·2^−s written with the shift ``to`` ≥ s."""
    return ints * (1 << (to - s))


@dataclass(frozen=True, eq=False)
class Layer:
    """y ← y W + b (then a ReLU if ``relu``); ``W_exact`` / ``b_exact`` are (ints, shift) pairs."""

    W: np.ndarray
    b: np.ndarray
    relu: bool
    W_exact: tuple
    b_exact: tuple


def _layer(W, b, relu: bool, W_exact=None) -> Layer:
    W = np.ascontiguousarray(W, dtype=np.float64)
    b = np.ascontiguousarray(b, dtype=np.float64).reshape(-1)
    return Layer(W, b, relu, W_exact or dyadic(W), dyadic(b))


def program_layers(prog: ir.Program, what: str = "certify_regions") -> list[Layer]:
    """The program's layers (one token; Embed, Affine and ReLU steps only), else ValueError."""
    if prog.n_tokens != 1:
        raise ValueError(f"{what}: ReLU nets of one token only, got a program with {prog.n_tokens} tokens")
    layers: list[Layer] = []
    for step in prog.steps():
        match step:
            case ir.EmbedStep(E, c):
                layers.append(_layer(E[:, 0, :], c[0], False))
            case ir.AffineStep(W, b):
                layers.append(_layer(W, b[0] if b.shape[0] == 1 else b, False))
            case ir.ReluStep(None, None):
                d = layers[-1].W.shape[1]
                layers.append(_layer(np.eye(d), np.zeros(d), True))
            case ir.ReluStep(W, b):
                layers.append(_layer(W, b[0], True))
            case ir.ReadStep():
                pass
            case _:
                kind = "maxout" if isinstance(step, ir.MaxStep) else "hardmax" if isinstance(step, ir.SelectStep) \
                    else type(step).__name__
                raise ValueError(f"{what}: ReLU nets (Linear/ReLU) only, the program has a {kind} step")
    return layers


@dataclass(frozen=True, eq=False)
class Chain:
    """The domain's map (a first layer, or none for a box) and the program's layers; α ranges over
    {α : D α < f} (``D_exact`` / ``f_exact``: Fractions), the open parameter domain."""

    layers: list
    k: int
    D: np.ndarray
    f: np.ndarray
    D_exact: list
    f_exact: list

    @property
    def n_neurons(self) -> int:
        return sum(L.W.shape[1] for L in self.layers if L.relu)


def _box_rows(lo, hi) -> tuple[np.ndarray, np.ndarray]:
    k = len(lo)
    return np.vstack([np.eye(k), -np.eye(k)]), np.r_[hi, -np.asarray(lo)]


def chain(prog: ir.Program, domain, what: str = "certify_regions") -> Chain:
    """The chain of ``prog`` on a Box, Segment, Plane or Slice (α: the counters' parameters)."""
    layers = program_layers(prog, what)
    exact_rows = None
    if isinstance(domain, Box):
        box = domain.with_dim(prog.in_dim)
        D, f = _box_rows(box.lo, box.hi)
        first = []
    elif isinstance(domain, Segment):
        (a, sa), (bb, sb) = dyadic(domain.a), dyadic(domain.b)
        s = max(sa, sb)
        exact = (rescale(bb, sb, s) - rescale(a, sa, s))[None], s  # b − a exactly
        D, f = _box_rows([0.0], [1.0])
        first = [_layer((domain.b - domain.a)[None], domain.a, False, exact)]
    elif isinstance(domain, Plane):
        P = domain.polygon  # counter-clockwise: inside is left of every edge
        edges = np.roll(P, -1, axis=0) - P
        D = np.stack([edges[:, 1], -edges[:, 0]], axis=1)
        f = (D * P).sum(1)
        exact_rows = _polygon_rows(P)
        first = [_layer(np.stack([domain.u, domain.v]), domain.origin, False)]
    elif isinstance(domain, Slice):
        D, f = _box_rows(domain.lo, domain.hi)
        first = [_layer(domain.basis, domain.origin, False)]
    else:
        raise ValueError(f"{what}: domain must be a Box, Segment, Plane or Slice, got {type(domain).__name__}")
    if first and first[0].W.shape[1] != prog.in_dim:
        raise ValueError(f"{what}: the domain has dimension {first[0].W.shape[1]} but the model's input dimension is "
                         f"{prog.in_dim}")
    D_ex, f_ex = exact_rows or ([[Fraction(v) for v in row] for row in D], [Fraction(v) for v in f])
    return Chain(first + layers, D.shape[1], D, f, D_ex, f_ex)


def _polygon_rows(P: np.ndarray) -> tuple[list, list]:
    """Exact rows (n_i, c_i), n_i·α < c_i, of the open convex polygon with ccw vertices P."""
    V = [(Fraction(x), Fraction(y)) for x, y in P]
    D, f = [], []
    for (x0, y0), (x1, y1) in zip(V, V[1:] + V[:1]):
        n = (y1 - y0, x0 - x1)
        D.append(list(n))
        f.append(n[0] * x0 + n[1] * y0)
    return D, f


def float_signs(ch: Chain, alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """At points α (N, k): the computed pattern (N, neurons) (z > 0) and where every sign is proved
    (|ẑ| above the error bound of the module docstring, and α strictly inside the domain)."""
    y = np.asarray(alpha, dtype=np.float64)
    e = np.zeros(y.shape[1])  # one bound per coordinate for all points (the maxima over them)
    inside = np.all(y @ ch.D.T < ch.f - gamma(ch.k + 2) * (np.abs(y) @ np.abs(ch.D).T + np.abs(ch.f)) - STRICT_FLOOR, axis=1)
    signs, proved = [], inside
    for L in ch.layers:
        m = L.W.shape[0]
        aW = np.abs(L.W)
        z = y @ L.W + L.b
        g = gamma(m + 2)
        e = ((e + g * np.abs(y).max(axis=0)) @ aW + g * np.abs(L.b)) * (1 + 2 * gamma(m + 3)) + (m + 2) * 2.0 ** -1022
        if L.relu:
            signs.append(z > 0)
            proved = proved & np.all(np.abs(z) > e, axis=1)
            z = np.maximum(z, 0.0)
        y = z
    return np.concatenate(signs, axis=1), proved


def exact_pre(ch: Chain, alpha) -> tuple[list, int]:
    """The exact pre-activations of every ReLU layer at one dyadic point α: (list of int arrays, shifts)."""
    y, s = dyadic(np.asarray(alpha, dtype=np.float64)[None])
    out = []
    for L in ch.layers:
        (Wi, sW), (bi, sb) = L.W_exact, L.b_exact
        t = max(s + sW, sb)
        z = rescale(np.dot(y, Wi), s + sW, t) + rescale(bi, sb, t)
        if L.relu:
            out.append((z[0], t))
            z = np.where(z > 0, z, 0)
        y, s = z, t
    return out


def exact_signs(ch: Chain, alpha) -> np.ndarray | None:
    """The pattern (neurons,) at the point α, exactly, or None where α is not strictly inside the
    domain or some pre-activation is exactly 0 (α lies on a cell's boundary)."""
    a = [Fraction(float(v)) for v in np.asarray(alpha, dtype=np.float64)]
    if any(sum((r * x for r, x in zip(row, a)), Fraction(0)) >= c for row, c in zip(ch.D_exact, ch.f_exact)):
        return None
    z = np.concatenate([zi for zi, _ in exact_pre(ch, alpha)])
    if np.any(z == 0):
        return None
    return (z > 0).astype(bool)


def cell_rows(ch: Chain, pattern: np.ndarray, exact: bool = False):
    """The cell of ``pattern`` as {α : M α < q} (the neurons' strict signs, then the domain):
    float64 (M, q), or with ``exact`` lists of Fractions. On the cell z(α) = α G + h layer by layer,
    G and h masked by the pattern after each ReLU."""
    pattern = np.asarray(pattern, dtype=bool)
    if pattern.shape != (ch.n_neurons,):
        raise ValueError(f"pattern must have {ch.n_neurons} entries (one per ReLU neuron), got shape {pattern.shape}")
    rows, rhs, at = [], [], 0
    if exact:
        G, sG = np.array([[1 if i == j else 0 for j in range(ch.k)] for i in range(ch.k)], dtype=object), 0
        h = np.zeros(ch.k, dtype=object)
    else:
        G, h = np.eye(ch.k), np.zeros(ch.k)
    for L in ch.layers:
        n = L.W.shape[1]
        if exact:
            (Wi, sW), (bi, sb) = L.W_exact, L.b_exact
            t = max(sG + sW, sb)
            G, h, sG = rescale(np.dot(G, Wi), sG + sW, t), rescale(np.dot(h, Wi), sG + sW, t) + rescale(bi, sb, t), t
        else:
            G, h = G @ L.W, h @ L.W + L.b
        if L.relu:
            on = pattern[at:at + n]
            sgn = np.where(on, -1, 1)  # on: −z < 0; off: z < 0
            if exact:
                den = 1 << sG
                rows += [[Fraction(int(v), den) for v in col] for col in (G * sgn).T]
                rhs += [Fraction(int(v), den) for v in -(h * sgn)]
            else:
                rows.append((G * sgn).T)
                rhs.append(-(h * sgn))
            G, h, at = np.where(on, G, 0), np.where(on, h, 0), at + n
    if exact:
        return rows + ch.D_exact, rhs + ch.f_exact
    return np.vstack(rows + [ch.D]), np.concatenate(rhs + [ch.f])
