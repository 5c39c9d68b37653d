"""R runs of one architecture side by side (train_many's written-out losses): each run's
batch, its scored rows and its own weights, with a leading run axis R on every weight.

A run's batch (B, T) becomes its block of the runs' time-major (T, R, B) ids; its scored
positions S_r (rows t·B + b, :func:`scored_rows`) are padded to S = max_r |S_r| with zero
targets, which add nothing to its loss. Every product is one batched product (``bmm``) of
the R runs' rows by their own weights, per step where the step is the loop's.

Packed steps: the models read causally, so a step after run r's last scored position changes
none of its loss. With a_t = #{r : max_{r' ≥ r} last_{r'} ≥ t} (:func:`active_runs`) only the
first a_t runs are stepped at t (all of those still needed when the runs come longest first,
as train_many orders them); the rows of the others are left as they are, zero in every
gradient buffer, and the products over all steps skip them.
"""

from __future__ import annotations

import torch
from torch import Tensor


def readout_losses(top: Tensor, W_U: Tensor, b_U: Tensor, p: Tensor, counts: Tensor,
                   relu: bool = True) -> tuple[Tensor, Tensor, Tensor]:
    """:func:`readout_loss` of R runs at once, each with its own read-out: top (R, S, d)
    their scored rows (a run with fewer than S has zero targets p in the rest, which then add
    nothing), W_U (R, C, d), b_U (R, C), p (R, S, C), counts (R,) each run's |S_r| →
    (losses (R,), R, log q)."""
    R = top.clamp_min(0) if relu else top
    logq = torch.log_softmax(torch.baddbmm(b_U.unsqueeze(1), R, W_U.transpose(1, 2)), -1)
    return -(p * logq).sum((1, 2)) / counts, R, logq


def readout_losses_grads(g: Tensor, p: Tensor, logq: Tensor, R: Tensor, top: Tensor, W_U: Tensor,
                         counts: Tensor, relu: bool = True) -> tuple[Tensor, Tensor, Tensor]:
    """g (R,) · each run's (∂loss_r/∂top, ∂loss_r/∂W_U, ∂loss_r/∂b_U) of :func:`readout_losses`."""
    dz = (logq.exp() * p.sum(2, keepdim=True) - p).mul_((g / counts)[:, None, None])
    dtop = torch.bmm(dz, W_U)
    dtop = torch.ops.aten.threshold_backward(dtop, top, 0) if relu else dtop
    return dtop, torch.bmm(dz.transpose(1, 2), R), dz.sum(1)


def scored_rows(inputs: Tensor, target: Tensor, mask: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """:func:`fused_targets` of R runs' batches at once, inputs (R, B, T), target (R, B, T, C),
    mask (R, B, T) → (ids (T, R, B), rows (R, S) each run's scored positions t·B + b in order,
    then padding (its first scored position again), p (R, S, C) their targets, zero on the
    padding, counts (R,) = |S_r|), with S the most any run scores."""
    R, B, T = inputs.shape
    scored = mask.transpose(1, 2).reshape(R, T * B)
    counts = scored.sum(1)
    S = int(counts.max())
    rows = torch.argsort((~scored).to(torch.uint8), dim=1, stable=True)[:, :S]  # the scored positions first, in order
    real = torch.arange(S, device=rows.device) < counts[:, None]
    rows = torch.where(real, rows, rows[:, :1])  # the padding reads the first scored row: one a packed step computes
    p = target.transpose(1, 2).reshape(R, T * B, -1).gather(1, rows.unsqueeze(2).expand(-1, -1, target.shape[-1]))
    return inputs.permute(2, 0, 1).contiguous(), rows, p * real.unsqueeze(2), counts.to(target.dtype).clamp_min(1)


def run_rows(rows: Tensor, R: int, B: int) -> Tensor:
    """Run r's scored position t·B + b (of its own (T, B)) → its row t·R·B + r·B + b of the
    runs' (T, R, B) side by side; rows (R, S)."""
    t, b = rows.div(B, rounding_mode="floor"), rows.remainder(B)
    return t * (R * B) + B * torch.arange(R, device=rows.device)[:, None] + b


def active_runs(rows: Tensor, counts: Tensor, B: int, T: int) -> list[int] | None:
    """Packed steps (module docstring): a_t for t < T, the leading runs that step t must
    compute, from each run's last scored step (rows (R, S) its positions t·B + b in order,
    counts (R,) how many, as :func:`scored_rows` gives them, B strings a run); None when every
    step needs all R runs."""
    R = rows.shape[0]
    last = rows.gather(1, counts.long().sub(1).clamp_min(0)[:, None]).div(B, rounding_mode="floor").view(-1).tolist()
    if last[-1] >= T - 1:
        return None
    reach, far = [0] * R, -1  # reach[r] = max_{r' ≥ r} last_{r'}, not increasing in r
    for r in range(R - 1, -1, -1):
        far = max(far, last[r])
        reach[r] = far
    out, a = [], R
    for t in range(T):
        while a and reach[a - 1] < t:
            a -= 1
        out.append(a)
    return out


def packed(views, n: list[int] | None):
    """One sequence's per-step views (``unbind``) cut to their first n_t rows (None: as they are)."""
    if n is None:
        return views
    return [cut(v, k) for v, k in zip(views, n)]


def cut(x: Tensor, k: int | None) -> Tensor:
    """x's first k rows (all when k is None or all of them): a run axis or a row axis cut to a
    packed step's."""
    return x if k is None or k == x.shape[0] else x[:k]


def zero_tails(X: Tensor, n: list[int]) -> None:
    """X (T, N, ·): the rows past each step's first n_t set to 0 (a gradient buffer's rows that
    packed steps leave out)."""
    for x, k in zip(X.unbind(0), n):
        if k < x.shape[0]:
            x[k:].zero_()


def rows_of(n: list[int] | None, B: int) -> list[int] | None:
    """:func:`active_runs`' a_t as rows of the runs side by side (T, R·B, ·): a_t · B."""
    return None if n is None else [a * B for a in n]


def runs_outer(D: Tensor, X: Tensor, active: list[int] | None = None) -> Tensor:
    """Each run's Σ_{t, b} d_{t,b}ᵀ x_{t,b}: D (T, R, B, m), X (T, R, B, k) → (R, m, k), one
    batched product per step (einsum's permuted copies cost twice as much at these sizes);
    ``active``: step t's first a_t runs only (:func:`active_runs`)."""
    T, R = D.shape[:2]
    out = D.new_zeros(R, D.shape[-1], X.shape[-1])
    for d_t, x_t, a in zip(D.unbind(0), X.unbind(0), active or [R] * T):
        if a:
            cut(out, a).baddbmm_(cut(d_t, a).transpose(1, 2), cut(x_t, a))
    return out


def runs_matmul(X: Tensor, W: Tensor, bias: Tensor | None = None, active: list[int] | None = None) -> Tensor:
    """Each run's X_r W_r (+ b_r) at every step: X (T, R, B, k), W (R, k, m), bias (R, 1, m) →
    (T, R, B, m), one batched product per step; ``active``: step t's first a_t runs only, the
    rest zero."""
    T, R = X.shape[:2]
    out = (X.new_empty if active is None else X.new_zeros)(X.shape[:-1] + (W.shape[-1],))
    for x_t, o_t, a in zip(X.unbind(0), out.unbind(0), active or [R] * T):
        if not a:
            continue
        if bias is None:
            torch.bmm(cut(x_t, a), cut(W, a), out=cut(o_t, a))
        else:
            torch.baddbmm(cut(bias, a), cut(x_t, a), cut(W, a), out=cut(o_t, a))
    return out


def rows_add_product_(out: Tensor, x: Tensor, w: Tensor) -> None:
    """out += x w: one run's (k, n) weights, or R runs' (R, k, n), each on its B of the R·B rows."""
    if w.dim() == 2:
        out.addmm_(x, w)
    else:
        out.view(w.shape[0], -1, out.shape[-1]).baddbmm_(x.view(w.shape[0], -1, x.shape[-1]), w)


def rows_affine_into(out: Tensor, bias: Tensor, x: Tensor, w: Tensor) -> None:
    """out = bias + x w (one run, or R runs' own bias (R, n) and weights as :func:`rows_add_product_`)."""
    if w.dim() == 2:
        torch.addmm(bias, x, w, out=out)
    else:
        R = w.shape[0]
        torch.baddbmm(bias.unsqueeze(1), x.view(R, -1, x.shape[-1]), w, out=out.view(R, -1, out.shape[-1]))


def rows_affine(base: Tensor, x: Tensor, w: Tensor) -> Tensor:
    """base + x w, a new tensor (R runs as :func:`rows_add_product_`)."""
    if w.dim() == 2:
        return torch.addmm(base, x, w)
    R = w.shape[0]
    return torch.baddbmm(base.view(R, -1, base.shape[-1]), x.view(R, -1, x.shape[-1]), w).view(base.shape)


def rows_product(x: Tensor, w: Tensor) -> Tensor:
    """x w, a new tensor (R runs as :func:`rows_add_product_`)."""
    if w.dim() == 2:
        return x @ w
    return torch.bmm(x.view(w.shape[0], -1, x.shape[-1]), w).view(x.shape[0], -1)


def input_rows(ids: Tensor, E: Tensor, W_x: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """(flat, U): U = (W_E W_xᵀ + b)[s_t] for every token, time-major (T, B, dc) — the part
    of a core's pre-activation that reads x_t, one (V × dc) table looked up — from one run's
    ids (T, B), or R runs' (T, R, B) with their own W_E (R, V, d), W_x (R, dc, d), b (R, dc)
    (run r's table at rows r·V…, U (T, R·B, dc)); ``flat``: the table rows read, for
    :func:`input_rows_grads`."""
    T, B = ids.shape[0], ids[0].numel()
    if ids.dim() == 2:
        flat, table = ids.reshape(-1), torch.addmm(b, E, W_x.T)
    else:
        flat = (ids + E.shape[1] * torch.arange(ids.shape[1], device=ids.device)[:, None]).reshape(-1)
        table = torch.baddbmm(b.unsqueeze(1), E, W_x.transpose(1, 2)).view(-1, W_x.shape[-2])
    return flat, table.index_select(0, flat).view(T, B, -1)


def input_rows_grads(flat: Tensor, dU: Tensor, E: Tensor, W_x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """(∂W_E, ∂W_x, ∂b) of :func:`input_rows` from ∂U: ∂U's rows summed by the table row
    they read (one index_add), then one product each (per run for R runs)."""
    dc = dU.shape[-1]
    dtable = dU.new_zeros(E.shape[:-1].numel(), dc).index_add_(0, flat, dU.reshape(-1, dc))
    if E.dim() == 3:
        dtable = dtable.view(E.shape[0], -1, dc)
    return dtable @ W_x, dtable.transpose(-1, -2) @ E, dtable.sum(-2)


def steps_outer(X: Tensor, D: Tensor, runs: int | None = None, active: list[int] | None = None) -> Tensor:
    """Σ over every step and string of x_{t,b}ᵀ d_{t,b}: X (T, B, k), D (T, B, n) → (k, n), one
    product; ``runs`` R: the R runs' strings side by side (T, R·B, ·), each run's own sum
    (R, k, n) (:func:`runs_outer`, ``active`` as there)."""
    T, k, n = X.shape[0], X.shape[-1], D.shape[-1]
    if runs is None:
        return X.reshape(-1, k).T @ D.reshape(-1, n)
    B = X.shape[1] // runs
    return runs_outer(X.reshape(T, runs, B, k), D.reshape(T, runs, B, n), active)


def steps_sum(D: Tensor, runs: int | None = None) -> Tensor:
    """Σ over every step and string of d_{t,b}: D (T, B, n) → (n,); ``runs`` R: each run's own
    sum (R, n) of its strings (T, R·B, n) side by side (a bias's gradient)."""
    if runs is None:
        return D.sum((0, 1))
    return D.view(D.shape[0], runs, D.shape[1] // runs, D.shape[-1]).sum((0, 2))


def steps_matmul(X: Tensor, W: Tensor, bias: Tensor | None = None, runs: int | None = None,
                 active: list[int] | None = None) -> Tensor:
    """X W (+ b) at every step and string: X (T, B, k), W (k, n), bias (n,) → (T, B, n), one
    product; ``runs`` R: the R runs' strings side by side (T, R·B, k), each run its own W (R,
    k, n) and bias (R, n) (:func:`runs_matmul`, ``active`` as there)."""
    T, k, n = X.shape[0], X.shape[-1], W.shape[-1]
    if runs is None:
        flat = X.reshape(-1, k)
        return (flat @ W if bias is None else torch.addmm(bias, flat, W)).view(T, -1, n)
    B = X.shape[1] // runs
    return runs_matmul(X.reshape(T, runs, B, k), W, None if bias is None else bias.unsqueeze(1),
                       active).view(T, -1, n)
