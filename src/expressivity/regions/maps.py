"""The exact affine map of every piece, from its activation pattern, and the linear-merge rule.

On an activation region the program is one affine map; its gradient with respect to the
domain's parameters α (x = origin + α·basis) is a product of masked weight matrices, fixed
by the pattern alone (no bias enters it):

    J = basis · E · W_1 D_1 · W_2 D_2 ⋯     (D_l: the ReLU mask / the maxout argmax / the hardmax
                                              selection weights of the pattern; residuals add)

:func:`gradients` reads each piece's pattern at an interior point with the reference
interpreter (:func:`.ir.walk`) and propagates J through the steps, together with its
*magnitude* S: the same product with every factor replaced by its absolute value, the sum of
|terms| the gradient is summed from. Float64 rounding of J is below ≈ L·n·2⁻⁵³·S (L steps of
width ≤ n), so S is the scale of a gradient comparison.

**Merge rule.** Two adjacent pieces have the same affine map iff, for every output o and every
direction i,

    |J_P[o, i] − J_Q[o, i]| ≤ MAP_RTOL · max(S_P[o, i], S_Q[o, i])

(continuity then gives equal offsets), plus, where the output may jump (hardmax selections,
1-D only), a zero jump at the shared point (:func:`jumps`). Every quantity here is invariant
under f → f + c (no bias enters J or S, and the jump is propagated as a difference, in which
the output bias cancels exactly), scales with f → a·f, and is unchanged by a positive rescaling
of a hidden layer compensated in the next one, by permuting hidden units, and by an affine
change of input coordinates with the domain mapped along (the gradient is w.r.t. α).
"""

from __future__ import annotations

import numpy as np

from . import ir
from .ir import Program, affine
from .tolerances import JUMP_RTOL, MAP_RTOL

_CHUNK_FLOATS = 1 << 22  # J and S of ≈ 4M floats per chunk of points (32 MB each)


def decisions(prog: Program, x: np.ndarray) -> list[np.ndarray]:
    """The activation pattern at points x: one decision per activation step (:func:`.ir.walk`)."""
    out: list[np.ndarray] = []
    ir.walk(prog, x, lambda i, step, pre, choice: out.append(choice))
    return out


def _widest(prog: Program) -> int:
    T, w = prog.n_tokens, prog.ops[0].E.shape[2]
    widest = w
    for step in prog.steps():
        W = getattr(step, "W", None)
        if W is not None:
            widest = max(widest, W.shape[1])
    return T * widest


def _chunks(prog: Program, n: int, k: int):
    step = max(1, _CHUNK_FLOATS // max(1, k * _widest(prog)))
    for lo in range(0, n, step):
        yield slice(lo, min(n, lo + step))


def _same(a):
    return a


def _tangent(prog: Program, dec: list, basis: np.ndarray, N: int, absolute: bool = False) -> np.ndarray:
    """J (N, out, k) for the patterns ``dec`` of N points; with ``absolute`` its magnitude S
    (every factor replaced by its absolute value)."""
    A = np.abs if absolute else _same
    k = basis.shape[0]
    stack: list = []
    it = iter(dec)
    J = None
    for step in prog.steps():
        match step:
            case ir.EmbedStep(E, _):
                J = np.broadcast_to(np.einsum("kn,ntd->ktd", A(basis), A(E)), (N, k) + E.shape[1:])
            case ir.AffineStep(W, _):
                J = _lin(J, A(W))
            case ir.ReluStep(W, _):
                J = _lin(J, None if W is None else A(W)) * next(it)[:, None]  # mask (N, 1, T, n)
            case ir.MaxStep(W, _, idx):
                arg = next(it)[:, None, :, :, None]  # (N, 1, T, m, 1)
                J = np.take_along_axis(_lin(J, None if W is None else A(W))[..., idx], arg, axis=-1)[..., 0]
            case ir.SelectStep(op):
                J = _select(J, next(it), A(op.W_V), A(op.W_O))
            case ir.SaveStep():
                stack.append(J)
            case ir.AddStep():
                J = stack.pop() + J
            case ir.ReadStep(tokens):
                J = J[:, :, list(tokens)].reshape(J.shape[0], k, -1).transpose(0, 2, 1)
    return np.ascontiguousarray(J)


def bound(prog: Program, basis: np.ndarray) -> np.ndarray:
    """An upper bound (out, k) on every piece's magnitude S: the absolute products with every
    ReLU on, every maxout unit summing its pieces and every hardmax query summing all keys."""
    k = basis.shape[0]
    stack: list = []
    U = None
    for step in prog.steps():
        match step:
            case ir.EmbedStep(E, _):
                U = np.einsum("kn,ntd->ktd", np.abs(basis), np.abs(E))[None]
            case ir.AffineStep(W, _) | ir.ReluStep(W, _):
                U = _lin(U, None if W is None else np.abs(W))
            case ir.MaxStep(W, _, idx):
                U = _lin(U, None if W is None else np.abs(W))[..., idx].sum(axis=-1)
            case ir.SelectStep(op):
                T = U.shape[2]
                U = _select(U, np.ones((1, op.W_V.shape[0], T, T)), np.abs(op.W_V), np.abs(op.W_O))
            case ir.SaveStep():
                stack.append(U)
            case ir.AddStep():
                U = stack.pop() + U
            case ir.ReadStep(tokens):
                U = U[:, :, list(tokens)].reshape(1, k, -1).transpose(0, 2, 1)
    return U[0]


def _lin(J, W):
    """Token-wise J W (no bias: a tangent); identity when W is None."""
    if W is None:
        return J
    out = np.ascontiguousarray(J).reshape(-1, J.shape[-1]) @ W
    return out.reshape(J.shape[:-1] + (W.shape[1],))


def _select(J, w, W_V, W_O):
    """Tangent of a hardmax sublayer with fixed selection weights w: Σ_h w (J W_V^h) W_O^h."""
    Jv = np.einsum("nktd,hde->nkhte", J, W_V)
    z = np.einsum("nhij,nkhje->nkhie", w, Jv)
    return np.einsum("nkhie,hed->nkid", z, W_O)


def _cotangent(prog: Program, dec: list, basis: np.ndarray, N: int, out: int, absolute: bool = False) -> np.ndarray:
    """J (N, out, k), or with ``absolute`` its magnitude S, by reverse mode: the same products
    multiplied from the output end (one pass per output instead of one per domain direction)."""
    A = np.abs if absolute else _same
    steps = prog.steps()
    dims = _state_dims(steps, prog.ops[0].E.shape[2])
    tokens, d_last = steps[-1].tokens, dims[-1]
    B = np.zeros((N, out, prog.n_tokens, d_last))
    B[:, np.arange(out), np.repeat(tokens, d_last), np.tile(np.arange(d_last), len(tokens))] = 1.0
    it = reversed(dec)
    stack: list = []
    for i in range(len(steps) - 2, 0, -1):
        step = steps[i]
        match step:
            case ir.AffineStep(W, _):
                B = _lin(B, A(W).T)
            case ir.ReluStep(W, _):
                B = B * next(it)[:, None]
                B = B if W is None else _lin(B, A(W).T)
            case ir.MaxStep(W, _, idx):
                win = idx[np.arange(idx.shape[0]), next(it)]  # (N, T, m): the winners' pre-activations
                B = _scatter(B, win, W.shape[1] if W is not None else dims[i - 1])
                B = B if W is None else _lin(B, A(W).T)
            case ir.SelectStep(op):
                B = _select_back(B, next(it), A(op.W_V), A(op.W_O))
            case ir.AddStep():
                stack.append(B)  # y = saved + body: the saved state gets the same cotangent
            case ir.SaveStep():
                B = B + stack.pop()
    E = steps[0].E
    return np.einsum("notd,ktd->nok", B, np.einsum("kn,ntd->ktd", A(basis), A(E)))


def _state_dims(steps, d: int) -> list[int]:
    """Width of the state (per token) after every step."""
    out = []
    for step in steps:
        W = getattr(step, "W", None)
        if isinstance(step, ir.MaxStep):
            d = step.idx.shape[0]
        elif W is not None:
            d = W.shape[1]
        out.append(d)
    return out


def _scatter(B, win, n_pre):
    """Cotangent of y'_u = z[win_u] (win (N, T, m)): B (N, o, T, m) into (N, o, T, n_pre),
    summed where units share a pre-activation."""
    N, o, T, m = B.shape
    out = np.zeros((N, o, T, n_pre))
    idx = np.broadcast_to(win[:, None], B.shape)
    n, q, t, _ = np.indices(B.shape, sparse=True)
    np.add.at(out, (n, q, t, idx), B)
    return out


def _select_back(B, w, W_V, W_O):
    """Cotangent through a hardmax sublayer with fixed weights: Σ_h wᵀ (B W_Oᵀ) W_Vᵀ."""
    Bz = np.einsum("notd,hed->nohte", B, W_O)
    By = np.einsum("nhij,nohie->nohje", w, Bz)
    return np.einsum("nohje,hde->nojd", By, W_V)


def gradients(prog: Program, x: np.ndarray, basis: np.ndarray, magnitudes: bool = True):
    """The exact gradient J (N, out, k) of the output w.r.t. the domain parameters α (rows of
    ``basis`` (k, n) are ∂x/∂α_i) on the activation region of every point x (N, n), and (if
    ``magnitudes``) its magnitude S (N, out, k) (module doc): (J, S) or J. Forward (one pass
    per direction) or reverse mode (one per output), whichever has fewer passes."""
    x = np.asarray(x, dtype=np.float64)
    basis = np.atleast_2d(np.asarray(basis, dtype=np.float64))
    out, k = _out_dim(prog), basis.shape[0]
    Js, Ss = [np.zeros((0, out, k))], [np.zeros((0, out, k))]
    for sl in _chunks(prog, len(x), min(k, out)):
        dec, n = decisions(prog, x[sl]), sl.stop - sl.start
        for absolute, acc in ((False, Js), (True, Ss))[: 1 + magnitudes]:
            acc.append(_cotangent(prog, dec, basis, n, out, absolute) if out < k
                       else _tangent(prog, dec, basis, n, absolute))
    J = np.concatenate(Js)
    return (J, np.concatenate(Ss)) if magnitudes else J


def same_maps(prog: Program, points: np.ndarray, basis: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """For pairs (n, 2) of pieces (one interior point each): True where their affine maps agree,
    |J_P − J_Q| ≤ MAP_RTOL·max(S_P, S_Q) entrywise (module doc). Decided without S where it is
    sure: S ≥ |J| (a sum is at most its sum of |terms|), so agreement within MAP_RTOL·max(|J_P|,
    |J_Q|) is agreement; S ≤ :func:`bound`, so a difference beyond MAP_RTOL·bound is one. S is
    computed only for the pieces of the pairs in between."""
    J = gradients(prog, points, basis, magnitudes=False)
    a, b = pairs[:, 0], pairs[:, 1]
    D = np.abs(J[a] - J[b])
    sure_same = np.all(D <= MAP_RTOL * np.maximum(np.abs(J[a]), np.abs(J[b])), axis=(1, 2))
    sure_diff = np.any(D > MAP_RTOL * bound(prog, np.atleast_2d(basis)), axis=(1, 2))
    out = sure_same.copy()
    unsure = np.nonzero(~sure_same & ~sure_diff)[0]
    if len(unsure):
        ids, inv = np.unique(pairs[unsure], return_inverse=True)
        _, S = gradients(prog, points[ids], basis)
        inv = inv.reshape(-1, 2)
        out[unsure] = np.all(D[unsure] <= MAP_RTOL * np.maximum(S[inv[:, 0]], S[inv[:, 1]]), axis=(1, 2))
    return out


def _out_dim(prog: Program) -> int:
    steps = prog.steps()
    return len(steps[-1].tokens) * _state_dims(steps, prog.ops[0].E.shape[2])[-1]


# ---------------------------------------------------------------- jumps (1-D, hardmax)


def jumps(prog: Program, x: np.ndarray, x_left: np.ndarray, x_right: np.ndarray) -> np.ndarray:
    """True where the output is continuous at x (N, n) between the activation regions of x_left
    and x_right: the affine maps of the two patterns agree at x. Evaluated as a difference Δ =
    f_R(x) − f_L(x) propagated through the steps (affine: Δ ← Δ W, the bias cancels exactly;
    a decision that differs adds the difference of the two choices at x), with its magnitude
    SΔ propagated alike; continuous iff |Δ| ≤ JUMP_RTOL·SΔ for every output."""
    ok = np.ones(len(x), bool)
    for sl in _chunks(prog, len(x), 4):
        D, SD = _delta(prog, x[sl], decisions(prog, x_left[sl]), decisions(prog, x_right[sl]))
        ok[sl] = np.all(np.abs(D) <= JUMP_RTOL * SD, axis=1)
    return ok


def _delta(prog: Program, x: np.ndarray, decL: list, decR: list) -> tuple[np.ndarray, np.ndarray]:
    """Δ = f_R(x) − f_L(x) and its magnitude, both (N, out) (see :func:`jumps`)."""
    stack: list = []
    iL, iR = iter(decL), iter(decR)
    y = Sy = D = SD = None
    for step in prog.steps():
        match step:
            case ir.EmbedStep(E, c):
                y = np.einsum("nk,ktd->ntd", x, E) + c
                Sy = np.einsum("nk,ktd->ntd", np.abs(x), np.abs(E)) + np.abs(c)
                D, SD = np.zeros_like(y), np.zeros_like(y)
            case ir.AffineStep(W, b):
                y, Sy, D, SD = _pre(y, Sy, D, SD, W, b)
            case ir.ReluStep(W, b):
                g, Sg, Dg, SDg = _pre(y, Sy, D, SD, W, b)
                mL, mR = next(iL), next(iR)
                flip = mR != mL
                y, Sy = g * mL, Sg * mL
                D = Dg * mR + (mR.astype(float) - mL) * g
                SD = SDg * mR + flip * Sg
            case ir.MaxStep(W, b, idx):
                g, Sg, Dg, SDg = (a[..., idx] for a in _pre(y, Sy, D, SD, W, b))
                aL, aR = next(iL)[..., None], next(iR)[..., None]

                def at(a, j):
                    return np.take_along_axis(a, j, axis=-1)[..., 0]

                flip = (aL != aR)[..., 0]
                y, Sy = at(g, aL), at(Sg, aL)
                D = at(Dg, aR) + (at(g, aR) - at(g, aL))
                SD = at(SDg, aR) + flip * (at(Sg, aR) + at(Sg, aL))
            case ir.SelectStep(op):
                wL, wR = next(iL), next(iR)
                v = np.einsum("ntd,hde->nhte", y, op.W_V) + op.b_V[None, :, None]
                Sv = np.einsum("ntd,hde->nhte", Sy, np.abs(op.W_V)) + np.abs(op.b_V)[None, :, None]
                Dv = np.einsum("ntd,hde->nhte", D, op.W_V)
                SDv = np.einsum("ntd,hde->nhte", SD, np.abs(op.W_V))
                dw = wR - wL
                z, Sz = wL @ v, wL @ Sv
                Dz = wR @ Dv + dw @ v
                SDz = wR @ SDv + np.abs(dw) @ Sv
                y = np.einsum("nhie,hed->nid", z, op.W_O) + op.b_O
                Sy = np.einsum("nhie,hed->nid", Sz, np.abs(op.W_O)) + np.abs(op.b_O)
                D = np.einsum("nhie,hed->nid", Dz, op.W_O)
                SD = np.einsum("nhie,hed->nid", SDz, np.abs(op.W_O))
            case ir.SaveStep():
                stack.append((y, Sy, D, SD))
            case ir.AddStep():
                y0, Sy0, D0, SD0 = stack.pop()
                y, Sy, D, SD = y0 + y, Sy0 + Sy, D0 + D, SD0 + SD
            case ir.ReadStep(tokens):
                D = D[:, list(tokens)].reshape(len(x), -1)
                SD = SD[:, list(tokens)].reshape(len(x), -1)
    return D, SD


def _pre(y, Sy, D, SD, W, b):
    """The pre-activation (value, magnitude) and its difference (Δ, magnitude): Δ takes no bias."""
    if W is None:
        return y, Sy, D, SD
    return affine(y, W, b), affine(Sy, np.abs(W), np.abs(b)), _lin(D, W), _lin(SD, np.abs(W))


__all__ = ["bound", "decisions", "gradients", "jumps", "same_maps"]
