"""Fast 1-D path for continuous programs (ReLU / GroupMax / residuals, no hardmax): the state
is stored once per vertex t_0 < t_1 < … < t_P (shared by the two pieces it bounds) instead of
at both ends of every piece, and every inserted breakpoint is a strict sign change (ReLU) or a
change of the argmax on the upper envelope (GroupMax), so every piece is one activation region.
Same tolerance policy as :mod:`.segment`. The loops over vertices run in :mod:`.kernels`.

Vertices a ReLU layer inserts are not pushed through the next dense layer. Along an old edge
[a, b] the pre-activation is affine, z(s) = (1 − s) z(a) + s z(b), so the ReLU output differs
from linear interpolation only in the channels j that change sign on the edge (zero at s_j):

    relu(z_j(s)) − [(1 − s) relu(z_j(a)) + s relu(z_j(b))] = −(1 − s)|z_j(a)|   (s ≥ s_j)
                                                            = −s |z_j(b)|       (s ≤ s_j)

Hence the next layer's pre-activation g = y W + b at a vertex inserted at s_k is exact from the
old vertices and the rows W_j of the sign-changing channels:

    g(s_k) = (1 − s_k)[g(a) − Σ_{s_j ≤ s_k} |z_j(a)| W_j] + s_k [g(b) − Σ_{s_j > s_k} |z_j(b)| W_j].

The dense product (vertices × n × n′) is paid for the old vertices only; the inserted ones cost
O((changes + inserted) · n′) running sums.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from ..memory import check_memory
from . import invariants, ir, kernels
from .domains import Segment
from .ir import Program, affine
from .segment import maxout_crossings
from .tolerances import MERGE_S, ZERO_RTOL

LAZY_MIN_WIDTH = 64  # narrower layers: a dense product at the new vertices is as cheap
WORKSPACE_MAX = 1 << 25  # float64 elements (256 MB) kept per scratch buffer between calls


class _Workspace(threading.local):
    """Per-thread scratch buffers for the intermediate layers, kept between calls: fresh
    multi-MB arrays cost a page fault per 4 KB on first touch, more than the work on them."""

    def __init__(self):
        self.bufs: dict[str, np.ndarray] = {}

    def get(self, name: str, shape: tuple[int, int]) -> np.ndarray:
        size = shape[0] * shape[1]
        if size > WORKSPACE_MAX:
            return np.empty(shape)
        buf = self.bufs.get(name)
        if buf is None or buf.size < size:
            buf = self.bufs[name] = np.empty(max(size, 2 * (0 if buf is None else buf.size)))
        return buf[:size].reshape(shape)


_scratch = _Workspace()


def _dedup(vi, s, presorted=False):
    """Sort breakpoints by (edge, s) and drop those within MERGE_S of the previous one on the
    same edge. Returns (indices kept into the input, their edges, their s)."""
    order = np.arange(len(vi)) if presorted else np.lexsort((s, vi))
    vi, s = vi[order], s[order]
    keep = np.ones(len(vi), bool)
    keep[1:] = ~((vi[1:] == vi[:-1]) & (s[1:] - s[:-1] <= MERGE_S))
    return order[keep], vi[keep], s[keep]


def _offsets(vi, n_edges):
    """start[e] = number of items on edges < e (items sorted by edge), length n_edges + 1."""
    return np.concatenate([[0], np.cumsum(np.bincount(vi, minlength=n_edges))])


def _spliced(F, kstart, s, relu=False):
    """F (P + 1, ...) with rows interpolated at s on the edges given by kstart (fresh array)."""
    F2 = np.ascontiguousarray(F.reshape(len(F), -1))
    rows = len(F2) + len(s)
    check_memory(8.0 * rows * F2.shape[1], f"domain: the segment's vertex store ({rows:,} vertices so far)",
                 hint="count a shorter segment or a smaller network")
    out = np.empty((rows, F2.shape[1]))
    kernels.insert_rows(F2, kstart, s, relu, out)
    return out.reshape((-1,) + F.shape[1:])


def _insert(t, fields, vi, s, relu_first=False):
    """Insert points at local parameter s ∈ (0, 1) of edges vi (vertex vi to vi + 1) into t and
    into every field (P + 1, ...) by interpolation (the first one clamped at 0 if asked);
    returns the new t and fields."""
    _, vi, s = _dedup(vi, s)
    kstart = _offsets(vi, len(t) - 1)
    out = [_spliced(F, kstart, s, relu_first and i == 0) for i, F in enumerate(fields)]
    return _spliced(t[:, None], kstart, s)[:, 0], out


@dataclass
class _Pending:
    """A ReLU layer's output at the old vertices (Y_old) and its sign changes; the next layer's
    pre-activations at every vertex follow from them (module doc)."""

    Y_old: np.ndarray  # (P_old, n)
    estart: np.ndarray  # sign changes on edge e: estart[e] ≤ j < estart[e + 1], sorted by s
    ech: np.ndarray
    eza: np.ndarray  # |z(a)|
    ezb: np.ndarray  # |z(b)|
    kstart: np.ndarray  # inserted vertices on edge e: kstart[e] ≤ k < kstart[e + 1]
    ks: np.ndarray
    krank: np.ndarray  # the sign change (index j) that made vertex k

    def pre(self, W: np.ndarray, b: np.ndarray, scratch: bool = False) -> np.ndarray:
        """y W + b at every vertex, (P, 1, n′); in a scratch buffer if ``scratch`` (the caller
        consumes it before the next layer), else in a fresh array."""
        n_out = W.shape[1]
        G_old = _scratch.get("G_old", (len(self.Y_old), n_out))
        np.matmul(self.Y_old, W, out=G_old)
        G_old += b
        WT = np.ascontiguousarray(W.T)  # free for a transposed torch weight
        shape = (len(self.Y_old) + len(self.ks), n_out)
        G = _scratch.get("pre", shape) if scratch else np.empty(shape)
        kernels.next_preactivations(G_old, WT, self.estart, self.ech, self.eza, self.ezb,
                                    self.kstart, self.ks, self.krank, G)
        return G[:, None, :]


def _lazy_next(steps, k, stack, width_tokens) -> bool:
    """Can the ReLU at step k hand a _Pending to step k + 1?"""
    n_tokens, width = width_tokens
    if k + 1 >= len(steps) or stack or n_tokens != 1 or width < LAZY_MIN_WIDTH:
        return False
    nxt = steps[k + 1]
    return isinstance(nxt, (ir.ReluStep, ir.MaxStep, ir.AffineStep)) and nxt.W is not None and nxt.W.shape[0] > 1


def _relu(step: ir.ReluStep, t, Y, stack, pend, lazy):
    """One fused Affine+ReLU step; returns t, Y (or a _Pending when ``lazy``), stack."""
    W, b = step.W, step.b
    if pend is not None:
        g = pend.pre(W, b, scratch=True)  # consumed here: spliced into a fresh array or handed on
    else:
        g = affine(Y, W, b) if W is not None else Y.copy()
    P1 = len(g)
    g2 = np.ascontiguousarray(g.reshape(P1, -1))
    # with ``lazy`` g2 becomes the ReLU output in place (clamped once its edges are read)
    changes = kernels.sign_changes(g2, ZERO_RTOL, lazy)
    estart, ech, eza, ezb, kstart, ks, krank = kernels.plan_inserts(P1, *changes, MERGE_S)
    if lazy:
        return _spliced(t[:, None], kstart, ks)[:, 0], _Pending(g2, estart, ech, eza, ezb, kstart, ks, krank), stack
    g = g2.reshape(g.shape)
    if not len(ks):
        return t, np.maximum(g, 0, out=None if pend is not None else g), stack
    out = [_spliced(F, kstart, ks, i == 0) for i, F in enumerate([g, *stack])]
    return _spliced(t[:, None], kstart, ks)[:, 0], out[0], out[1:]


def partition_segment_vertex(prog: Program, seg: Segment) -> dict:
    steps = prog.steps()
    E, c = steps[0].E, steps[0].c
    t = np.array([0.0, 1.0])
    x = seg.points(t)
    Y = np.einsum("nk,ktd->ntd", x, E) + c  # (P+1, T, d)
    stack: list[np.ndarray] = []
    pend = None
    check = invariants.enabled()
    for k in range(1, len(steps)):
        step = steps[k]
        t_before = t
        if isinstance(step, ir.ReluStep):
            width = step.W.shape[1] if step.W is not None else Y.shape[-1]
            lazy = _lazy_next(steps, k, stack, (Y.shape[1] if pend is None else 1, width))
            t, Y, stack = _relu(step, t, Y, stack, pend, lazy)
            pend, Y = (Y, None) if lazy else (None, Y)
        elif isinstance(step, ir.AffineStep):
            Y = pend.pre(step.W, step.b) if pend is not None else affine(Y, step.W, step.b)
            pend = None
        elif isinstance(step, ir.SaveStep):
            stack.append(Y)
        elif isinstance(step, ir.AddStep):
            Y = stack.pop() + Y
        elif isinstance(step, ir.ReadStep):
            tok = list(step.tokens)
            Y = Y.reshape(len(Y), -1) if tok == list(range(Y.shape[1])) else Y[:, tok].reshape(len(Y), -1)
        elif isinstance(step, ir.MaxStep):
            idx = step.idx
            g = pend.pre(step.W, step.b, scratch=True) if pend is not None else affine(Y, step.W, step.b)
            pend = None  # g is only read below (splices and the max are fresh arrays)
            p = idx.shape[1]
            if p > 1:
                z = g[..., idx].reshape(len(g), -1, p)  # (P+1, U, p)
                eps = ZERO_RTOL * np.abs(z).max(axis=(0, 2))  # (U,)
                vi, s = maxout_crossings(z[:-1], z[1:], eps)
                if len(vi):
                    t, (g, *stack) = _insert(t, [g, *stack], vi, s)
            Y = g[..., idx].max(axis=-1)
        else:
            raise ValueError(f"step {type(step).__name__} needs the general segment counter")
        if check and isinstance(step, ir.ACTIVATIONS):
            invariants.check_segment(prog, seg, k, t[:-1], t[1:], np.setdiff1d(t, t_before), (0.0, 1.0))
    return {"t0": t[:-1], "t1": t[1:], "L": Y[:-1], "R": Y[1:]}


def argmax_pattern_free(prog: Program) -> bool:
    """True if the fast path applies (no hardmax selection steps)."""
    return not any(isinstance(s, ir.SelectStep) for s in prog.steps())


__all__ = ["argmax_pattern_free", "partition_segment_vertex"]
