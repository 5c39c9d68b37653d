"""The Stack-RNN's and Stack-LSTM's training loss written out: forward and back-propagation
through time by hand, no autograd graph (one run's step at d_model 64 is some 15 torch calls
per time step forward and 30 back under autograd, each with its bookkeeping).

The equations are those of :mod:`.stack_rnn` and :mod:`.stack_lstm`: with the controller's
input part U = (W_x W_Eᵀ + b)[s] (every step at once), x_t = [r_{t−1}; h_{t−1}] (r = the top
cell), z_t = U_t + x_t w (w = the controller's weights on x_t, transposed),

    rnn:  h_t = tanh z_t;   lstm: (i, f, g, o) = (σ, σ, tanh, σ)(z_t), c_t = f c_{t−1} + i g, h_t = o tanh c_t,
    o_t = h_t W + b (W = [W_a; W_v]ᵀ) = (logits_t, v_t),   a_t = softmax(logits_t),
    P_t = [v_t; S_{t−1}; 0],   S_t = a_push P_t[0:K] + a_pop P_t[2:K+2] + a_noop P_t[1:K+1],

and the loss :func:`~._recurrent.readout_loss` of ReLU(h_t) at the scored positions. Backward,
from t = T−1 down: ∂P_t from ∂S_t (each shifted window gets a_A ∂S_t), ∂a_{t,A} = ⟨∂S_t,
window_A⟩, the softmax's ∂logits = a ⊙ (∂a − ⟨a, ∂a⟩), ∂h_t = ∂L/∂h_t + ∂o_t Wᵀ + (∂x_{t+1})_h,
∂z_t through the controller, ∂x_t = ∂z_t wᵀ, whose r part adds to ∂S_{t−1}[0]; the weights'
gradients then one product each over all steps. The values equal the modules' path
(:meth:`.stack_rnn.StackModel.run`) to float round-off (tests/test_scored_loss.py).
"""

from __future__ import annotations

import torch
from torch import Tensor

from ._lstm_cells import LSTMCells
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
    zero_tails,
)


def stack_loss(data: tuple, weights: tuple) -> tuple[Tensor, tuple]:
    """The loss and what its gradient needs (:func:`stack_loss_grads`). data = (ids (T, B),
    rows, p, kind "rnn" | "lstm", K); weights = (W_E, W_U, b_U, W_x (dc, d), b (dc,), w (m + d,
    dc), W (d, 3 + m), b_o (3 + m,)) with dc = d (rnn) or 4d (lstm, torch's gate order).

    R runs at once: data = (ids (T, R, B), rows (R, S), p (R, S, C), kind, K, counts (R,)) as
    :func:`~._runs.scored_rows` gives them, every weight with a leading run axis; the
    strings of all runs side by side (T, R·B, ·) for every step that has no weights (the
    stack, the gates), one batched product per run's weights where there are, packed steps
    (:func:`~._runs.active_runs`: step t's first a_t runs only) → each run's loss (R,)."""
    ids, rows, p, kind, K = data[:5]
    E, W_U, b_U, W_x, b, w, W, b_o = weights
    T, B = ids.shape[0], ids[0].numel()  # B: every run's strings (R·B for R runs)
    d, m = E.shape[-1], w.shape[-2] - E.shape[-1]
    active = active_runs(rows, data[5], ids.shape[2], T) if ids.dim() == 3 else None
    n = rows_of(active, ids.shape[-1])
    flat, U = input_rows(ids, E, W_x, b)  # becomes z_t in place
    X = U.new_empty(T, B, m + d)  # x_t = [r_{t−1}; h_{t−1}]
    H = U.new_empty(T, B, d)
    O = U.new_empty(T, B, 3 + m)  # (logits_t, v_t)
    acts = U.new_empty(T, B, 3)
    Ps = U.new_zeros(T + 1, B, K + 2, m)  # P_t = [v_t; S_{t−1}; 0]; S_t is written into P_{t+1}
    cells = LSTMCells(U, H, rows=n) if kind == "lstm" else None
    x, h, z, o, a = (packed(v.unbind(0), n) for v in (X, H, U, O, acts))
    P, P_next = packed(Ps.unbind(0)[:T], n), packed(Ps.unbind(0)[1:], n)  # P_t, and P_{t+1} at step t's rows
    for t in range(T):
        r = active[t] if active is not None else None  # the runs stepped (None: all)
        if r == 0:
            break  # nor any later step
        x[t][:, :m] = P[t][:, 1]  # r_{t−1} = S_{t−1}[0]
        if t:
            x[t][:, m:] = cut(h[t - 1], x[t].shape[0])
            rows_add_product_(z[t], x[t], cut(w, r))
        else:
            x[t][:, m:] = 0
        if cells is not None:
            cells.step(t)
        else:
            torch.tanh(z[t], out=h[t])
        rows_affine_into(o[t], cut(b_o, r), h[t], cut(W, r))
        torch.softmax(o[t][:, :3], -1, out=a[t])
        P[t][:, 0] = o[t][:, 3:]
        k = a[t][:, :, None, None]
        S = P_next[t][:, 1:K + 1]
        torch.mul(P[t][:, :K], k[:, 0], out=S).addcmul_(P[t][:, 2:], k[:, 1]).addcmul_(P[t][:, 1:K + 1], k[:, 2])
    loss, readout = states_loss(H, rows, W_U, b_U, p, None if ids.dim() == 2 else data[5])
    return loss, (flat, rows, K, weights, X, H, acts, Ps, cells, readout, active)


def stack_loss_grads(saved: tuple, g: Tensor) -> tuple:
    """g · the gradient of :func:`stack_loss` for each of its weights, in their order; R runs:
    g (R,), each run's gradient of its own loss (stacked)."""
    flat, rows, K, weights, X, H, acts, Ps, cells, readout, active = saved
    E, W_U, b_U, W_x, b, w, W, b_o = weights
    T, B, d = H.shape
    dc, m, runs = W_x.shape[-2], w.shape[-2] - d, W_x.dim() == 3
    R_ = W_x.shape[0] if runs else None
    n = rows_of(active, B // (R_ or 1))
    dH, dW_U, db_U = states_loss_grads(readout, g)
    dZ = H.new_empty(T, B, dc) if cells is None else cells.start_back()
    dO = H.new_empty(T, B, 3 + m)
    if n is not None:  # the rows a step leaves out add nothing to the sums below
        zero_tails(dO, n)
        if cells is None:
            zero_tails(dZ, n)
    dPs = H.new_zeros(T, B, K + 2, m)
    wt, Wt = w.transpose(-1, -2), W.transpose(-1, -2)
    dS = dH.new_zeros(B, K, m)  # ∂L/∂S_{T−1}: the last stack is not read
    dh_next = dcell = None
    Pp, dPp, ap, dOp, dHp, Hp, dZp = (packed(v.unbind(0), n) for v in (Ps[:T], dPs, acts, dO, dH, H, dZ))
    for t in range(T - 1, -1, -1):
        r = active[t] if active is not None else None  # the runs stepped (None: all)
        if r == 0:
            continue  # a step no run reads: ∂S_{t−1} and ∂h_{t−1} stay zero
        P, dP, a = Pp[t], dPp[t], ap[t]
        N_t, k = P.shape[0], a[:, :, None, None]
        dS = cut(dS, N_t)
        torch.mul(dS, k[:, 0], out=dP[:, :K])
        dP[:, 2:].addcmul_(dS, k[:, 1])
        dP[:, 1:K + 1].addcmul_(dS, k[:, 2])
        moved = torch.stack([P[:, :K], P[:, 2:], P[:, 1:K + 1]], 1).view(N_t, 3, K * m)  # each action's S_t
        da = torch.bmm(moved, dS.reshape(N_t, K * m, 1)).view(N_t, 3)  # ⟨∂S_t, moved_A⟩: (push, pop, noop)
        torch.mul(a, da - (a * da).sum(1, keepdim=True), out=dOp[t][:, :3])
        dOp[t][:, 3:] = dP[:, 0]
        dh = rows_affine(dHp[t], dOp[t], cut(Wt, r))
        if dh_next is not None:
            cut(dh, dh_next.shape[0]).add_(dh_next)
        if cells is None:
            torch.ops.aten.tanh_backward.grad_input(dh, Hp[t], grad_input=dZp[t])
        else:
            dcell = cells.step_back(t, dh, dcell)
        if t:
            dx = rows_product(dZp[t], cut(wt, r))  # (N_t, m + d)
            dh_next = dx[:, m:]
            dS = dPs[t][:, 1:K + 1] if n is None else dPs[t][:n[t - 1], 1:K + 1]  # zero past this step's rows
            cut(dS, N_t)[:, 0] += dx[:, :m]
    dW_step = steps_outer(X, dZ, R_, active)  # x_1 = [0; 0] adds nothing
    dW, db_o = steps_outer(H, dO, R_, active), steps_sum(dO, R_)
    dE, dW_x, db = input_rows_grads(flat, dZ, E, W_x)
    if not runs and not bool((rows >= B).any()):  # only h_1 scored: the heads' stack is never read (None, as autograd's)
        dW = db_o = None
    return dE, dW_U, db_U, dW_x, db, dW_step, dW, db_o


def stack_weights(kind: str, params: tuple) -> tuple:
    """:func:`stack_loss`'s weights from a model's parameters: (W_E, W_U, b_U, then the
    controller's — W_core, b_core (rnn) or weight_ih, weight_hh, bias_ih, bias_hh (lstm) — then
    W_a, b_a, W_v, b_v); each with a leading run axis for R runs."""
    E, W_U, b_U, *controller, W_a, b_a, W_v, b_v = params
    d = E.shape[-1]
    if kind == "rnn":
        W_core, b = controller
        W_x, w = W_core[..., :d], W_core[..., d:].transpose(-1, -2)
    else:
        W_ih, W_hh, b_ih, b_hh = controller
        W_x, b, w = W_ih[..., :d], b_ih + b_hh, torch.cat([W_ih[..., d:], W_hh], -1).transpose(-1, -2)
    return E, W_U, b_U, W_x, b, w, torch.cat([W_a, W_v], -2).transpose(-1, -2), torch.cat([b_a, b_v], -1)


def param_grads(kind: str, grads: tuple) -> tuple:
    """The gradients of :func:`stack_loss_grads` for the parameters of :func:`stack_weights`."""
    dE, dW_U, db_U, dW_x, db, dW_step, dW, db_o = grads
    m = dW_step.shape[-2] - dW_x.shape[-1]
    step = dW_step.transpose(-1, -2)  # (dc, m + d): the r columns, then the h columns
    if kind == "rnn":
        controller = (torch.cat([dW_x, step], -1), db)
    else:
        controller = (torch.cat([dW_x, step[..., :m]], -1), step[..., m:].contiguous(), db, db.clone())
    if dW is None:
        return (dE, dW_U, db_U, *controller, None, None, None, None)
    heads = dW.transpose(-1, -2)
    return (dE, dW_U, db_U, *controller, heads[..., :3, :].contiguous(), db_o[..., :3].contiguous(),
            heads[..., 3:, :].contiguous(), db_o[..., 3:].contiguous())
