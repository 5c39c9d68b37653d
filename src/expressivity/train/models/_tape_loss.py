"""The Tape-RNN's training loss written out: forward and back-propagation through time by
hand, no autograd graph (as :mod:`._stack_loss` for the stack models).

The equations are those of :mod:`.tape_rnn`: with U = (W_x W_Eᵀ + b)[s] (every step at
once), x_t = [r_{t−1}; h_{t−1}] (r = the cell under the head), w = [W_r W_h]ᵀ,

    h_t = tanh(U_t + x_t w),   o_t = h_t W_o + b_o (W_o = [W_a; W_1]ᵀ) = (logits_t, y_t¹),
    a_t = softmax(logits_t),   y_t^{l+1} = ReLU(y_t^l) W_{l+1}ᵀ + b_{l+1},   v_t = y_t^L,
    W_t = M_{t−1} with cell 0 := v_t,   M_t = Σ_A a_{t,A} move_A(W_t),

and the loss :func:`~._recurrent.readout_loss` of ReLU(h_t) at the scored positions. M_{T−1}
is never read, so the last step's heads and tape update are skipped (they add nothing to
the loss). Every move is a cyclic shift of the K cells (by 0, +1, −1, +n, −n), so its
adjoint is the opposite shift: ∂W_t = Σ_A a_{t,A} move_{Ā}(∂M_t) with Ā the opposite action
(stay, right, left, jump right, jump left) — the forward pass's row selection and mix again,
the weights permuted. Backward, from t = T−1 down: ∂a_{t,A} = ⟨∂M_t, move_A(W_t)⟩, the
softmax's ∂logits = a ⊙ (∂a − ⟨a, ∂a⟩), ∂v_t = ∂W_t[0] back through the MLP, ∂h_t = ∂L/∂h_t
+ ∂o_t W_oᵀ + (∂x_{t+1})_h, ∂z_t = ∂h_t ⊙ (1 − h_t²), ∂x_t = ∂z_t wᵀ; ∂M_{t−1} = ∂W_t
with cell 0 := (∂x_t)_r (cell 0 was overwritten, and read); the weights' gradients then one
product each over all steps. The values equal the modules' path (:meth:`.tape_rnn.TapeRNN.core`)
to float round-off (tests/test_scored_loss.py).
"""

from __future__ import annotations

import torch
from torch import Tensor

from ._memory import mix, take_flat, take_rows
from ._recurrent import states_loss, states_loss_grads
from ._runs import (
    active_runs,
    cut,
    input_rows,
    input_rows_grads,
    packed,
    rows_add_product_,
    rows_affine,
    rows_affine_into,
    rows_of,
    rows_product,
    steps_outer,
    steps_sum,
)

OPPOSITE = (0, 2, 1, 4, 3)  # stay, left, right, jump left, jump right → the move that undoes each


def tape_loss(data: tuple, weights: tuple) -> tuple[Tensor, tuple]:
    """The loss and what its gradient needs (:func:`tape_loss_grads`). data = (ids (T, B),
    rows, p, index (:func:`~.tape_rnn.tape_index` of the B tapes), K, A (3 or 5 actions));
    weights = (W_E, W_U, b_U, W_x (d, d), b (d,), w (m + d, d), W_o (d, A + h₁), b_o, then
    per further MLP layer W_lᵀ (h_{l−1}, h_l), b_l; the last layer's width is m).

    R runs at once: data = (ids (T, R, B), rows (R, S), p (R, S, C), index (of the R·B
    tapes), K, A, counts (R,)) as :func:`~._runs.scored_rows` gives them, every weight with a
    leading run axis; the strings of all runs side by side (T, R·B, ·) for the tape and the
    softmax, one batched product per run's weights, packed steps
    (:func:`~._runs.active_runs`: step t's first a_t runs only) → each run's loss (R,)."""
    ids, rows, p, index, K, A = data[:6]
    E, W_U, b_U, W_x, b, w, W_o, b_o, *mlp = weights
    T, B = ids.shape[0], ids[0].numel()  # B: every run's strings (R·B for R runs)
    d, m = E.shape[-1], w.shape[-2] - E.shape[-1]
    active = active_runs(rows, data[6], ids.shape[2], T) if ids.dim() == 3 else None
    n = rows_of(active, ids.shape[-1])
    take = _taking(A, index)
    flat, H = input_rows(ids, E, W_x, b)  # U_t, becomes z_t, then h_t, in place
    X = H.new_zeros(T, B, m + d)  # x_t = [r_{t−1}; h_{t−1}]
    S = max(T - 1, 0)  # the steps whose heads and tape update the loss reads
    O = H.new_empty(S, B, W_o.shape[-1])  # (logits_t, y_t¹)
    acts = H.new_empty(S, B, A)
    Qs = [H.new_empty(S, B, Wl.shape[-2]) for Wl in mlp[0::2]]  # ReLU(y_t^l), each further layer's input
    Ws = H.new_zeros(T, B, K, m)  # W_t; cells 1.. of W_t hold M_{t−1}'s until v_t is written in
    x, h, o, a, M = (packed(v.unbind(0), n) for v in (X, H, O, acts, Ws))
    M_next, qs = packed(Ws.unbind(0)[1:], n), [packed(q.unbind(0), n) for q in Qs]  # M_{t+1} at step t's rows
    for t in range(T):
        r = active[t] if active is not None else None  # the runs stepped (None: all)
        if r == 0:
            break  # nor any later step
        N_t = h[t].shape[0]
        if t:
            x[t][:, :m] = M[t][:, 0]  # r_{t−1}, before v_t replaces it
            x[t][:, m:] = cut(h[t - 1], N_t)
            rows_add_product_(h[t], x[t], cut(w, r))
        h[t].tanh_()
        if t == T - 1:
            break
        rows_affine_into(o[t], cut(b_o, r), h[t], cut(W_o, r))
        torch.softmax(o[t][:, :A], -1, out=a[t])
        y = o[t][:, A:]
        for q, Wl, bl in zip(qs, mlp[0::2], mlp[1::2]):
            torch.clamp_min(y, 0, out=q[t])
            y = H.new_empty(N_t, Wl.shape[-1])
            rows_affine_into(y, cut(bl, r), q[t], cut(Wl, r))
        M[t][:, 0] = y  # v_t under the head
        torch.bmm(a[t].view(N_t, 1, A), take(M[t]).view(N_t, A, K * m), out=M_next[t].view(N_t, 1, K * m))
    loss, readout = states_loss(H, rows, W_U, b_U, p, None if ids.dim() == 2 else data[6])
    return loss, (flat, rows, index, K, A, weights, X, H, acts, Qs, Ws, readout, active)


def _taking(A: int, index: Tensor):
    """X (N, K, m) → every action's moved tapes (N, A·K, m), for the first N of the tapes
    ``index`` was made for (:func:`~._memory.take_rows` without jumps, the same rows for every
    tape; :func:`~._memory.take_flat` with them, each tape's own A·K rows, a prefix of
    ``index`` for the first N)."""
    if A != 5:
        return lambda X: take_rows(X, index)
    return lambda X: take_flat(X, cut(index, X.shape[0] * A * X.shape[1]))


def tape_loss_grads(saved: tuple, g: Tensor) -> tuple:
    """g · the gradient of :func:`tape_loss` for each of its weights, in their order; R runs:
    g (R,), each run's gradient of its own loss (stacked). For one run where only h_1 is
    scored, None for the heads (W_o, b_o and the MLP's), which the loss then never reads (as
    autograd leaves them)."""
    flat, rows, index, K, A, weights, X, H, acts, Qs, Ws, readout, active = saved
    E, W_U, b_U, W_x, b, w, W_o, b_o, *mlp = weights
    T, B, d = H.shape
    m, runs = w.shape[-2] - d, (W_x.shape[0] if W_x.dim() == 3 else None)
    n = rows_of(active, B // (runs or 1))
    take = _taking(A, index)
    dH, dW_U, db_U = states_loss_grads(readout, g)
    S = max(T - 1, 0)
    new = H.new_empty if n is None else H.new_zeros  # packed: the rows a step leaves out stay zero
    dO = new(S, B, W_o.shape[-1])
    dYs = [new(S, B, Wl.shape[-1]) for Wl in mlp[0::2]]
    opposite = list(OPPOSITE[:A])
    wt, W_ot, mlp_t = w.transpose(-1, -2), W_o.transpose(-1, -2), [Wl.transpose(-1, -2) for Wl in mlp[0::2]]
    dHp, Hp, Wp, ap, dOp = (packed(v.unbind(0), n) for v in (dH, H, Ws, acts, dO))
    dYp, Qp = [packed(v.unbind(0), n) for v in dYs], [packed(v.unbind(0), n) for v in Qs]
    dM = dx = None  # ∂L/∂M_t (None: M_{T−1}, never read), ∂L/∂x_{t+1}
    for t in range(T - 1, -1, -1):
        r = active[t] if active is not None else None  # the runs stepped (None: all)
        if r == 0:
            continue  # a step no run reads: ∂M_{t−1} and ∂h_{t−1} stay zero
        dh = dHp[t]
        N_t = dh.shape[0]
        if dM is not None:
            if dM.shape[0] < N_t:  # rows this step adds: their ∂M_t is zero
                dM = torch.cat([dM, dM.new_zeros(N_t - dM.shape[0], K, m)])
            a = ap[t]
            da = torch.bmm(take(Wp[t]).view(N_t, A, K * m), dM.reshape(N_t, K * m, 1)).view(N_t, A)
            torch.mul(a, da - (a * da).sum(1, keepdim=True), out=dOp[t][:, :A])
            dW = mix(a[:, opposite], take(dM))  # ∂W_t: every move's opposite, mixed by a_t
            dy = dW[:, 0]  # ∂v_t
            for ell in range(len(dYs) - 1, -1, -1):
                dYp[ell][t].copy_(dy)
                dy = torch.ops.aten.threshold_backward(rows_product(dy, cut(mlp_t[ell], r)), Qp[ell][t], 0)
            dOp[t][:, A:] = dy
            dh = rows_affine(dh, dOp[t], cut(W_ot, r))
        if dx is not None:
            if dx.shape[0] == N_t:
                dh = dh + dx[:, m:]
            else:
                dh = dh.clone()
                dh[:dx.shape[0]] += dx[:, m:]
        dz = torch.ops.aten.tanh_backward.grad_input(dh, Hp[t], grad_input=dHp[t])  # ∂z_t, over ∂L/∂h_t (read)
        if t:
            dx = rows_product(dz, cut(wt, r))  # ∂x_t = (∂r_{t−1}, ∂h_{t−1})
            dM = dz.new_zeros(N_t, K, m) if dM is None else dW
            dM[:, 0] = dx[:, :m]  # cell 0 of M_{t−1}: overwritten by v_t, and read as r_{t−1}
    dE, dW_x, db = input_rows_grads(flat, dH, E, W_x)  # dH now holds ∂z
    dw = steps_outer(X, dH, runs, active)  # x_1 = [0; 0] adds nothing
    if S == 0 or (runs is None and not bool((rows >= B).any())):  # only h_1 scored: no head is read
        return (dE, dW_U, db_U, dW_x, db, dw) + (None,) * (2 + len(mlp))
    heads_active = None if active is None else active[:S]
    heads = [steps_outer(H[:S], dO, runs, heads_active), steps_sum(dO, runs)]
    for q, dy in zip(Qs, dYs):
        heads += [steps_outer(q, dy, runs, heads_active), steps_sum(dy, runs)]
    return (dE, dW_U, db_U, dW_x, db, dw, *heads)


def tape_weights(A: int, params: tuple) -> tuple:
    """:func:`tape_loss`'s weights from a Tape-RNN's parameters (W_E, W_U, b_U, W_core, b_core,
    W_a, b_a, then the write MLP's weight and bias per layer); each with a leading run axis
    for R runs."""
    E, W_U, b_U, W_core, b, W_a, b_a, W_1, b_1, *rest = params
    d = E.shape[-1]
    mlp = [t.transpose(-1, -2) if k % 2 == 0 else t for k, t in enumerate(rest)]
    return (E, W_U, b_U, W_core[..., :d], b, W_core[..., d:].transpose(-1, -2),
            torch.cat([W_a, W_1], -2).transpose(-1, -2), torch.cat([b_a, b_1], -1), *mlp)


def param_grads(A: int, grads: tuple) -> tuple:
    """The gradients of :func:`tape_loss_grads` for the parameters of :func:`tape_weights`."""
    dE, dW_U, db_U, dW_x, db, dw, dW_o, db_o, *rest = grads
    core = (torch.cat([dW_x, dw.transpose(-1, -2)], -1), db)
    if dW_o is None:
        return (dE, dW_U, db_U, *core, None, None, None, None, *rest)
    heads = dW_o.transpose(-1, -2)
    mlp = [t.transpose(-1, -2).contiguous() if k % 2 == 0 else t for k, t in enumerate(rest)]
    return (dE, dW_U, db_U, *core, heads[..., :A, :].contiguous(), db_o[..., :A].contiguous(),
            heads[..., A:, :].contiguous(), db_o[..., A:].contiguous(), *mlp)
