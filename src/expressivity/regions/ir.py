"""A small framework-free IR for piecewise-linear programs (what the region counters read).

A program maps an input x ∈ R^n to a state y ∈ R^(T×d) (T tokens, d channels; T = 1 for
MLPs) and transforms it with a sequence of ops:

* ``Embed(E, c)``:      y_t = Σ_k x_k E[k, t] + c[t]            (E: (n, T, d), c: (T, d))
* ``Affine(W, b)``:     y_t ← y_t W + b_t                      (token-wise; W: (d, d'), b: (T, d'))
* ``ReLU()``:           y ← max(y, 0)
* ``GroupMax(idx)``:    y'_i = max_j y[idx[i, j]]               (maxout units; idx: (m, p))
* ``Hardmax(...)``:     one attention sublayer with hardmax: for query token i and head h,
                        a_ij = λ·q_i·k_j, q = y W_Q + b_Q, k = y W_K + b_K, v = y W_V + b_V;
                        z_i = mean of v_j over the tied maxima j of a_i·;
                        out_i = Σ_h z^h_i W_O^h + b_O            (the residual is added by Residual)
* ``Residual(body)``:   y ← y + body(y)
* ``Read(tokens)``:     the output: y[tokens] flattened         (last op)

Scores a_ij are affine in x on every activation region when the queries are constant there
(compiled models: the query reads the constant channel); otherwise they are quadratic.
``flatten`` (``Program.steps()``) turns a program into typed steps — ``EmbedStep``,
``AffineStep``, ``ReluStep(W, b)`` and ``MaxStep(W, b, idx)`` (Affine fused with the activation
after it), ``SelectStep(op)``, ``SaveStep`` / ``AddStep`` (a residual), ``ReadStep(tokens)`` —
the form every counter walks (``match`` on the step type). :func:`outputs_and_patterns` is the one
reference interpreter of that form.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..model_kinds import register
from .tolerances import QUERY_CONST_RTOL, SCALE_FLOOR, TIE_RTOL, VALUE_SPREAD_RTOL


def _arr(a, what: str, ndim: int) -> np.ndarray:
    try:
        out = np.asarray(a, dtype=np.float64).view()  # no copy for float64 input; read-only view
    except (TypeError, ValueError):
        raise ValueError(f"{what}: not a numeric array") from None
    if out.ndim != ndim:
        raise ValueError(f"{what} must have {ndim} dimensions, got shape {out.shape}")
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{what} contains NaN or inf")
    out.setflags(write=False)
    return out


@dataclass(frozen=True)
class Embed:
    """y_t = x E[:, t] + c[t]; E: (n, T, d), c: (T, d)."""

    E: np.ndarray
    c: np.ndarray

    def __post_init__(self):
        object.__setattr__(self, "E", _arr(self.E, "Embed.E", 3))
        object.__setattr__(self, "c", _arr(self.c, "Embed.c", 2))
        if self.c.shape != self.E.shape[1:]:
            raise ValueError(f"Embed.c must have shape {self.E.shape[1:]}, got {self.c.shape}")


@dataclass(frozen=True)
class Affine:
    """y_t ← y_t W + b_t; W: (d, d'), b: (T, d') or (d',) (broadcast over tokens)."""

    W: np.ndarray
    b: np.ndarray

    def __post_init__(self):
        object.__setattr__(self, "W", _arr(self.W, "Affine.W", 2))
        b = np.array(self.b, dtype=np.float64)
        object.__setattr__(self, "b", _arr(b[None] if b.ndim == 1 else b, "Affine.b", 2))
        if self.b.shape[1] != self.W.shape[1]:
            raise ValueError(f"Affine.b must have {self.W.shape[1]} columns, got {self.b.shape}")


@dataclass(frozen=True)
class ReLU:
    """y ← max(y, 0) channel-wise."""


@dataclass(frozen=True)
class GroupMax:
    """Maxout units: y'_i = max_j y[idx[i, j]]; idx: (m, p) channel indices."""

    idx: np.ndarray

    def __post_init__(self):
        idx = np.array(self.idx, dtype=np.int64)
        if idx.ndim != 2 or idx.size == 0:
            raise ValueError(f"GroupMax.idx must be a non-empty (m, p) index array, got {idx.shape}")
        idx.setflags(write=False)
        object.__setattr__(self, "idx", idx)


@dataclass(frozen=True)
class Hardmax:
    """Hardmax attention sublayer (output without the residual). Shapes as in the Transformer:
    W_Q, W_K, W_V: (H, d, e); b_Q, b_K, b_V: (H, e); W_O: (H, e, d); b_O: (d,)."""

    W_Q: np.ndarray
    b_Q: np.ndarray
    W_K: np.ndarray
    b_K: np.ndarray
    W_V: np.ndarray
    b_V: np.ndarray
    W_O: np.ndarray
    b_O: np.ndarray
    lam: float = 1.0
    causal: bool = False

    def __post_init__(self):
        for name, nd in (("W_Q", 3), ("b_Q", 2), ("W_K", 3), ("b_K", 2), ("W_V", 3), ("b_V", 2),
                         ("W_O", 3), ("b_O", 1)):
            object.__setattr__(self, name, _arr(getattr(self, name), f"Hardmax.{name}", nd))
        if not (np.isfinite(self.lam) and self.lam > 0):
            raise ValueError(f"Hardmax.lam must be > 0, got {self.lam}")


@dataclass(frozen=True)
class Residual:
    """y ← y + body(y)."""

    body: tuple


@dataclass(frozen=True)
class Read:
    """Output = y[tokens] flattened to (len(tokens)·d,)."""

    tokens: tuple[int, ...]


Op = Embed | Affine | ReLU | GroupMax | Hardmax | Residual | Read


# ---------------------------------------------------------------- flattened steps (what counters walk)


@dataclass(frozen=True, eq=False)
class EmbedStep:
    """y_t = x E[:, t] + c[t] (the first step)."""

    E: np.ndarray
    c: np.ndarray


@dataclass(frozen=True, eq=False)
class AffineStep:
    """y_t ← y_t W + b_t (an Affine not followed by an activation)."""

    W: np.ndarray
    b: np.ndarray


@dataclass(frozen=True, eq=False)
class ReluStep:
    """y ← max(y W + b, 0): Affine fused with the ReLU after it (W, b None: a bare ReLU)."""

    W: np.ndarray | None
    b: np.ndarray | None


@dataclass(frozen=True, eq=False)
class MaxStep:
    """y'_i = max_j (y W + b)[idx[i, j]]: Affine fused with GroupMax (W, b None: bare GroupMax)."""

    W: np.ndarray | None
    b: np.ndarray | None
    idx: np.ndarray


@dataclass(frozen=True, eq=False)
class SelectStep:
    """One hardmax attention sublayer (without its residual)."""

    op: Hardmax


@dataclass(frozen=True)
class SaveStep:
    """Push y (the start of a residual body)."""


@dataclass(frozen=True)
class AddStep:
    """y ← pop() + y (the end of a residual body)."""


@dataclass(frozen=True)
class ReadStep:
    """Output = y[tokens] flattened (the last step)."""

    tokens: tuple[int, ...]


Step = EmbedStep | AffineStep | ReluStep | MaxStep | SelectStep | SaveStep | AddStep | ReadStep
ACTIVATIONS = (ReluStep, MaxStep, SelectStep)  # the steps that cut the domain


@dataclass(frozen=True, eq=False)
class CompileDomain:
    """The box [lo, hi] ⊂ R^d a compiled model was compiled on: there (only) the transformer
    equals its source network, so the counters refuse to count outside it."""

    lo: np.ndarray  # (d,) float64
    hi: np.ndarray  # (d,) float64

    def __post_init__(self) -> None:
        lo = np.array(self.lo, dtype=np.float64).reshape(-1)
        hi = np.array(self.hi, dtype=np.float64).reshape(-1)
        if lo.shape != hi.shape or not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))) or np.any(lo >= hi):
            raise ValueError(f"CompileDomain: need finite lo < hi of one shape, got lo {lo.tolist()}, hi {hi.tolist()}")
        lo.setflags(write=False)
        hi.setflags(write=False)
        object.__setattr__(self, "lo", lo)
        object.__setattr__(self, "hi", hi)


@dataclass(frozen=True)
class Program:
    """x ∈ R^in_dim ↦ output, through ``ops`` (first op: Embed; last op: Read).

    ``compile_domain``: for a compiled model, the box it equals its source network on
    (:class:`CompileDomain`; None for every other model)."""

    in_dim: int
    ops: tuple
    name: str = "program"
    meta: dict = field(default_factory=dict, compare=False)
    compile_domain: CompileDomain | None = field(default=None, compare=False)

    def __post_init__(self):
        if not self.ops or not isinstance(self.ops[0], Embed):
            raise ValueError("Program.ops must start with an Embed")
        if not isinstance(self.ops[-1], Read):
            raise ValueError("Program.ops must end with a Read")
        if self.ops[0].E.shape[0] != self.in_dim:
            raise ValueError(f"Embed reads {self.ops[0].E.shape[0]} inputs but in_dim = {self.in_dim}")
        if self.compile_domain is not None:
            if not isinstance(self.compile_domain, CompileDomain):
                raise ValueError(f"Program.compile_domain must be a CompileDomain or None, got "
                                 f"{type(self.compile_domain).__name__}")
            if self.compile_domain.lo.shape != (self.in_dim,):
                raise ValueError(f"Program.compile_domain has {self.compile_domain.lo.size} coordinates but "
                                 f"in_dim = {self.in_dim}")

    @property
    def n_tokens(self) -> int:
        return self.ops[0].E.shape[1]

    def steps(self) -> list[Step]:
        """The typed steps the counters walk (:func:`flatten`)."""
        return flatten(self.ops)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """Reference evaluation at points x (N, n) → (N, out)."""
        return outputs_and_patterns(self, x)[0]


register("program", Program)


def flatten(ops) -> list[Step]:
    """Program ops → typed steps, Affine+ReLU and Affine+GroupMax fused, residuals as
    SaveStep … AddStep."""
    out: list[Step] = []
    ops = list(ops)
    i = 0
    while i < len(ops):
        op = ops[i]
        nxt = ops[i + 1] if i + 1 < len(ops) else None
        if isinstance(op, Embed):
            out.append(EmbedStep(op.E, op.c))
        elif isinstance(op, Affine) and isinstance(nxt, ReLU):
            out.append(ReluStep(op.W, op.b))
            i += 1
        elif isinstance(op, Affine) and isinstance(nxt, GroupMax):
            out.append(MaxStep(op.W, op.b, nxt.idx))
            i += 1
        elif isinstance(op, Affine):
            out.append(AffineStep(op.W, op.b))
        elif isinstance(op, ReLU):
            out.append(ReluStep(None, None))
        elif isinstance(op, GroupMax):
            out.append(MaxStep(None, None, op.idx))
        elif isinstance(op, Hardmax):
            out.append(SelectStep(op))
        elif isinstance(op, Residual):
            out.append(SaveStep())
            out.extend(flatten(op.body))
            out.append(AddStep())
        elif isinstance(op, Read):
            out.append(ReadStep(tuple(op.tokens)))
        else:
            raise ValueError(f"unknown IR op {type(op).__name__}")
        i += 1
    return out


def affine(y: np.ndarray, W, b) -> np.ndarray:
    """Token-wise y W + b for y (..., T, d); identity when W is None."""
    if W is None:
        return y
    if W.shape[0] == 1:  # rank-1 (1-D input): an outer product, no BLAS call
        out = y * W[0]
        out += b
        return out
    out = y.reshape(-1, y.shape[-1]) @ W  # 2-D BLAS call (batched 3-D matmul is slow)
    out = out.reshape(y.shape[:-1] + (W.shape[1],))
    out += b
    return out


def scores(op: Hardmax, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Scores a (N, H, T, T) with masked entries −inf, and values v (N, H, T, e)."""
    q = np.einsum("ntd,hde->nhte", y, op.W_Q) + op.b_Q[None, :, None, :]
    k = np.einsum("ntd,hde->nhte", y, op.W_K) + op.b_K[None, :, None, :]
    v = np.einsum("ntd,hde->nhte", y, op.W_V) + op.b_V[None, :, None, :]
    a = op.lam * np.einsum("nhie,nhje->nhij", q, k)
    if op.causal:
        T = y.shape[1]
        a = np.where(np.tril(np.ones((T, T), dtype=bool)), a, -np.inf)
    return a, v




def tied(a: np.ndarray) -> np.ndarray:
    """Boolean mask of the (near-)maxima along the last axis (tie policy of the package): values
    within TIE_RTOL of the largest finite |value| along that axis (relative: a positive scaling of
    the values never changes the mask)."""
    top = a.max(axis=-1, keepdims=True)
    scale = np.where(np.isfinite(a), np.abs(a), 0.0).max(axis=-1, keepdims=True)
    return a >= top - TIE_RTOL * scale


def select_output(op: Hardmax, y: np.ndarray, sel: np.ndarray | None = None) -> np.ndarray:
    """Hardmax attention output (N, T, d); ``sel`` (N, H, T, T) overrides the tied mask."""
    a, v = scores(op, y)
    if sel is None:
        sel = tied(a)
    w = sel / sel.sum(-1, keepdims=True)
    z = np.einsum("nhij,nhje->nhie", w, v)
    return np.einsum("nhie,hed->nid", z, op.W_O) + op.b_O


# ---------------------------------------------------------------- hardmax with constant queries (2-D, d-D)


def constant_queries(op: Hardmax, Y3: np.ndarray, where: str) -> tuple[np.ndarray, float]:
    """Queries (H, T, e) of ``op`` on states Y3 (V, T, d) at the domain's vertices, which must be
    constant over them (then every score a_ij = λ q_i·k_j is affine on the domain), and the
    scale they are summed from, max(|y|·|W_Q| + |b_Q|) (1 if 0); else ValueError (the boundaries are conics). ``where`` ends the message."""
    q = np.einsum("vtd,hde->vhte", Y3, op.W_Q) + op.b_Q[None, :, None]
    # the scale q is summed from (|y|·|W_Q| + |b_Q|): spread beyond its rounding is x-dependence
    qabs = np.einsum("vtd,hde->vhte", np.abs(Y3), np.abs(op.W_Q)) + np.abs(op.b_Q)[None, :, None]
    qscale = float(qabs.max(initial=0.0)) or 1.0
    if np.ptp(q, axis=0).max(initial=0.0) > QUERY_CONST_RTOL * qscale:
        raise ValueError(
            "hardmax attention whose queries depend on the input has quadratic region boundaries: "
            "exact counting is available on a Segment only " + where)
    return q[0], qscale


def key_rounds(op: Hardmax, q0: np.ndarray, qscale: float):
    """The cuts of a hardmax sublayer with constant queries q0 (H, T, e), in rounds against the
    running maximum: yields (h, i, keys) for every head h, every distinct query i (equal
    queries with equal masks cut alike) and round j ≥ 1, keys = the first j + 1 allowed keys;
    the cut is a_{i, keys[j]} = max of a_{i, keys[:j]}."""
    T = q0.shape[1]
    allowed = np.tril(np.ones((T, T), bool)) if op.causal else np.ones((T, T), bool)
    for h in range(q0.shape[0]):
        seen = []
        for i in range(T):
            keyq = (tuple(np.round(q0[h, i] / qscale, 12)), tuple(allowed[i]))
            if keyq in seen:
                continue
            seen.append(keyq)
            keys = np.nonzero(allowed[i])[0]
            for jj in range(1, len(keys)):
                yield h, i, keys[: jj + 1]


def round_scores(op: Hardmax, Y3: np.ndarray, q: np.ndarray, h: int, keys: np.ndarray) -> np.ndarray:
    """Scores λ q·k_j (V, len(keys)) of head h for the constant query q against ``keys``."""
    k = np.einsum("vtd,de->vte", Y3[:, keys], op.W_K[h]) + op.b_K[h]
    return op.lam * k @ q


def continuous_select(op: Hardmax, Y3: np.ndarray, where: str) -> np.ndarray:
    """The hardmax output (V, T, d) at the vertices, after checking that the tied keys carry
    equal values (within VALUE_SPREAD_RTOL: the selected value is continuous across every
    switch); else ValueError (the output jumps; ``where`` names the structure that cannot)."""
    a, v = scores(op, Y3)
    sel = tied(a)  # (V, H, T, T)
    vmax = np.abs(v).max() + SCALE_FLOOR
    vv = np.where(sel[..., None], v[:, :, None, :, :], np.nan)  # (V, H, Tq, Tk, e)
    spread = np.nanmax(vv, axis=3) - np.nanmin(vv, axis=3)
    if np.nanmax(spread, initial=0.0) > VALUE_SPREAD_RTOL * vmax:
        raise ValueError(
            "hardmax attention selects tokens with different values on the two sides of a switch: the "
            f"output jumps there, which {where} does not represent; count on a Segment (exact, jumps included)")
    return select_output(op, Y3)


def walk(prog: Program, x: np.ndarray, visit=None, stop: int | None = None) -> np.ndarray | None:
    """The one reference interpreter of the steps: outputs (N, out) at points x (N, n).

    ``visit(i, step, pre, choice)`` (optional) is called at every activation step i with the
    values it decides on and its decision: ReLU — pre-activations (N, T, n), on-mask (> 0);
    GroupMax — pieces (N, T, m, p), argmax (N, T, m) (lowest tied index); hardmax — scores
    (N, H, T, T), selection weights (N, H, T, T) (even over the tied maxima). With ``stop`` the
    walk ends after step ``stop`` (and returns None)."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != prog.in_dim:
        raise ValueError(f"points must have shape (N, {prog.in_dim}), got {x.shape}")
    stack: list[np.ndarray] = []
    y = None
    for i, step in enumerate(prog.steps()):
        match step:
            case EmbedStep(E, c):
                y = np.einsum("nk,ktd->ntd", x, E) + c
            case AffineStep(W, b):
                y = affine(y, W, b)
            case ReluStep(W, b):
                y = affine(y, W, b)
                if visit is not None:
                    visit(i, step, y, y > 0)
                y = np.maximum(y, 0)
            case MaxStep(W, b, idx):
                y = affine(y, W, b)
                g = y[..., idx]  # (N, T, m, p)
                if visit is not None:
                    visit(i, step, g, np.argmax(tied(g), axis=-1))
                y = g.max(axis=-1)
            case SelectStep(op):
                a, _ = scores(op, y)
                sel = tied(a)
                if visit is not None:
                    visit(i, step, a, sel / sel.sum(-1, keepdims=True))
                y = select_output(op, y, sel)
            case SaveStep():
                stack.append(y)
            case AddStep():
                y = stack.pop() + y
            case ReadStep(tokens):
                y = y[:, list(tokens), :].reshape(len(x), -1)
        if i == stop:
            return None
    return y


def outputs_and_patterns(prog: Program, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Output (N, out) and a 64-bit activation-pattern hash (N,) per point (:func:`walk`).

    The pattern records each ReLU sign (> 0), each GroupMax argmax (lowest tied index) and
    each hardmax selection (lowest tied index per head and query).
    """
    rng = np.random.default_rng(12345)
    h = np.zeros(len(x), dtype=np.uint64)

    def visit(i, step, pre, choice):
        nonlocal h
        if isinstance(step, SelectStep):
            choice = np.argmax(choice > 0, axis=-1)
        h = _mix(h, choice.reshape(len(pre), -1).astype(np.uint64), rng)

    y = walk(prog, x, visit)
    return y, h


def _mix(h: np.ndarray, codes: np.ndarray, rng) -> np.ndarray:
    keys = rng.integers(1, 2**63, size=codes.shape[1], dtype=np.uint64) | np.uint64(1)
    with np.errstate(over="ignore"):
        contrib = (codes * keys[None, :]).sum(axis=1, dtype=np.uint64)
        return h * np.uint64(0x9E3779B97F4A7C15) + contrib
