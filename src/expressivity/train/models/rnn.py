"""Elman RNN (Elman 1990), the benchmark's ``rnn``: h_t = tanh(W_x x_t + W_h h_{t−1} + b), h_0 = 0.

``layers`` cores are stacked (layer ℓ reads layer ℓ−1's h_t); the read-out is
logits_t = W_U ReLU(h_t) + b_U as in Delétang et al. (2023). torch.nn.RNN with tanh computes
exactly this recurrence (it splits b into b_ih + b_hh); its parameters are the model's, but the
loop is ours (:func:`~._recurrent.rnn_layers`: layer 0's input part looked up through the
embedding, the recurrence one :class:`~._recurrent.ElmanScan` node per layer).

The training loss (:meth:`RNNModel.scored_loss`) is one autograd node for the whole network
(:func:`elman_loss` and its gradient :func:`elman_loss_grads` as a
:class:`~._recurrent.WrittenOutLoss`), and ``loss_and_grads`` the same forward and backward without autograd
(:class:`~._recurrent.FusedLoss`): one run's step at the benchmark's size is a few hundred
microseconds of arithmetic, and each autograd node costs a few microseconds forward and back.
R runs at once (train_many) take the same loss with every weight stacked over the runs
(:meth:`~._recurrent.FusedLoss.runs_loss_and_grads`, :func:`elman_losses`): each step one batched product
of the R runs' (B, d) states by their own W_hh.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from ._recurrent import (
    FusedLoss,
    RecurrentModel,
    both_biases,
    elman_backward,
    elman_forward,
    fused_targets,
    readout_loss,
    readout_loss_grads,
    rnn_layers,
)
from ._runs import (
    active_runs,
    readout_losses,
    readout_losses_grads,
    run_rows,
    runs_matmul,
    runs_outer,
)


class RNNModel(FusedLoss, RecurrentModel):
    """Embedding → ``layers`` stacked Elman (tanh) layers, hidden = d_model → ReLU → linear."""

    def __init__(self, d_vocab: int, d_model: int, layers: int, d_out: int) -> None:
        super().__init__(d_vocab, d_model, d_out)
        self.rnn = nn.RNN(d_model, d_model, num_layers=layers, nonlinearity="tanh", batch_first=True)

    def core(self, ids: Tensor) -> Tensor:
        rnn = self.rnn
        u = self.project(ids, rnn.weight_ih_l0, both_biases(rnn.bias_ih_l0, rnn.bias_hh_l0))  # (T, B, d_model)
        return rnn_layers(rnn, u)  # (T, B, d_model)

    _modules_scored_loss = RecurrentModel.scored_loss

    def _loss_params(self) -> tuple[Tensor, ...] | None:
        rnn = self.rnn
        if not rnn.bias:
            return None
        layers = [getattr(rnn, f"{kind}_l{ell}") for ell in range(rnn.num_layers)
                  for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
        return (self.embed.weight, self.unembed.weight, self.unembed.bias, *layers)

    def _fused_arguments(self, inputs: Tensor, target: Tensor, mask: Tensor) -> tuple | None:
        params = self._loss_params()
        if params is None or not self._written_out_applies(inputs):
            return None
        return fused_targets(inputs, target, mask), params

    @staticmethod
    def _loss(data: tuple, params: tuple) -> tuple[Tensor, tuple]:
        return elman_loss(*data, *params[:3], params[3:])

    @staticmethod
    def _loss_grads(saved: tuple, g: Tensor) -> tuple:
        return elman_loss_grads(saved, g)[3:]

    def _runs_loss(self, data: tuple, params: tuple) -> tuple[Tensor, tuple]:
        return elman_losses(*data, *params)

    def _runs_loss_grads(self, saved: tuple, g: Tensor) -> tuple:
        return elman_losses_grads(saved, g)


def elman_loss(ids: Tensor, rows: Tensor, p: Tensor, E: Tensor, W_U: Tensor, b_U: Tensor,
               layers) -> tuple[Tensor, tuple]:
    """The rnn's loss at the scored positions, written out (no autograd), and what its gradient
    needs (:func:`elman_loss_grads`):

        U¹ = (W_E W_ih¹ᵀ + b_ih¹ + b_hh¹)[s]     (the input part through the embedding),
        Uˡ = Hˡ⁻¹ W_ihˡᵀ + b_ihˡ + b_hhˡ,   Hˡ = ElmanScan(Uˡ, W_hhˡ),

    then :func:`~._recurrent.readout_loss` of ReLU(H^L) at the scored positions."""
    T, B = ids.shape
    flat = ids.reshape(-1)
    Hs = []
    for ell in range(len(layers) // 4):
        W_ih, W_hh, b_ih, b_hh = layers[4 * ell:4 * ell + 4]
        if ell == 0:
            U = torch.addmm(b_ih + b_hh, E, W_ih.T).index_select(0, flat)
        else:
            U = torch.addmm(b_ih + b_hh, Hs[-1].view(T * B, -1), W_ih.T)
        Hs.append(elman_forward(U.view(T, B, -1), W_hh, in_place=True))  # U: this loop's own
    top = Hs[-1].view(T * B, -1).index_select(0, rows)
    loss, R, logq = readout_loss(top, W_U, b_U, p, relu=True)
    return loss, (flat, rows, p, E, W_U, top, R, logq, *layers, *Hs, (T, B))


def elman_loss_grads(saved: tuple, g: Tensor) -> tuple:
    """g · the gradient of :func:`elman_loss` for each of its arguments (None for ids, rows, p): the read-out's (:func:`~._recurrent.readout_loss_grads`) to ∂L/∂H
    (zero off the scored positions), :func:`~._recurrent.elman_backward` per layer from the top,
    the input parts' gradients into their weights (layer 1: the table's rows summed by token,
    then W_E and W_ih¹)."""
    flat, rows, p, E, W_U, top, R, logq, *rest = saved
    (T, B), rest = rest[-1], rest[:-1]
    n_layers = len(rest) // 5
    layers, Hs = rest[:4 * n_layers], rest[4 * n_layers:]
    dtop, dW_U, db_U = readout_loss_grads(g, p, logq, R, top, W_U, relu=True)
    dH = dtop.new_zeros(T * B, dtop.shape[1]).index_copy_(0, rows, dtop)
    grads: list[Tensor | None] = [None] * len(layers)
    dE = None
    for ell in range(n_layers - 1, -1, -1):
        W_ih, W_hh = layers[4 * ell], layers[4 * ell + 1]
        delta, grads[4 * ell + 1] = elman_backward(Hs[ell], W_hh, dH.view(T, B, -1), in_place=True)
        delta = delta.view(T * B, -1)
        if ell == 0:
            dtable = delta.new_zeros(E.shape[0], delta.shape[1]).index_add_(0, flat, delta)
            grads[0], dE, db = dtable.T @ E, dtable @ W_ih, dtable.sum(0)
        else:
            x = Hs[ell - 1].view(T * B, -1)
            grads[4 * ell], db = delta.T @ x, delta.sum(0)
            dH = delta @ W_ih
        grads[4 * ell + 2], grads[4 * ell + 3] = db, db.clone()  # b_ih, b_hh: one gradient, two tensors
    return None, None, None, dE, dW_U, db_U, *grads


def elman_losses(ids: Tensor, rows: Tensor, p: Tensor, counts: Tensor, E: Tensor, W_U: Tensor, b_U: Tensor,
                 *layers: Tensor) -> tuple[Tensor, tuple]:
    """:func:`elman_loss` of R runs at once, each with its own weights (every weight with a
    leading run axis: E (R, V, d), W_hh (R, d, d), …), on ids (T, R, B) time-major with the
    runs side by side; rows, p, counts as :func:`~._runs.scored_rows` gives them →
    (losses (R,), what :func:`elman_losses_grads` needs)."""
    T, R, B = ids.shape
    V = E.shape[1]
    flat = (ids + V * torch.arange(R, device=ids.device)[:, None]).reshape(-1)  # run r's table at rows r·V…
    active = active_runs(rows, counts, B, T)  # packed steps: each step's leading runs
    Hs = []
    for ell in range(len(layers) // 4):
        W_ih, W_hh, b_ih, b_hh = layers[4 * ell:4 * ell + 4]
        b = (b_ih + b_hh).unsqueeze(1)
        if ell == 0:
            U = torch.baddbmm(b, E, W_ih.transpose(1, 2)).view(R * V, -1).index_select(0, flat).view(T, R, B, -1)
        else:
            U = runs_matmul(Hs[-1], W_ih.transpose(1, 2), b, active)  # (T, R, B, d): each run its W_ih
        Hs.append(elman_forward(U, W_hh, in_place=True, active=active))
    at = run_rows(rows, R, B)
    top = Hs[-1].view(T * R * B, -1).index_select(0, at.view(-1)).view(R, rows.shape[1], -1)
    losses, Rl, logq = readout_losses(top, W_U, b_U, p, counts)
    return losses, (flat, at, p, counts, E, W_U, top, Rl, logq, layers, Hs, active)


def elman_losses_grads(saved: tuple, g: Tensor) -> list[Tensor]:
    """g (R,) · each run's gradient of its own loss in :func:`elman_losses`, for E, W_U, b_U
    and the layers' weights in their order (stacked over the runs), as
    :func:`elman_loss_grads` for one run."""
    flat, at, p, counts, E, W_U, top, Rl, logq, layers, Hs, active = saved
    T, R, B, d = Hs[-1].shape
    dtop, dW_U, db_U = readout_losses_grads(g, p, logq, Rl, top, W_U, counts)
    dH = dtop.new_zeros(T * R * B, d).index_add_(0, at.view(-1), dtop.reshape(-1, d)).view(T, R, B, d)
    grads: list[Tensor] = [dtop] * len(layers)  # every entry is set below
    dE = dtop
    for ell in range(len(layers) // 4 - 1, -1, -1):
        W_ih, W_hh = layers[4 * ell], layers[4 * ell + 1]
        delta, grads[4 * ell + 1] = elman_backward(Hs[ell], W_hh, dH, in_place=True, active=active)
        if ell == 0:
            V = E.shape[1]
            dtable = delta.new_zeros(R * V, d).index_add_(0, flat, delta.view(-1, d)).view(R, V, d)
            grads[0], dE, db = torch.bmm(dtable.transpose(1, 2), E), torch.bmm(dtable, W_ih), dtable.sum(1)
        else:
            grads[4 * ell], db = runs_outer(delta, Hs[ell - 1], active), delta.sum((0, 2))
            dH = runs_matmul(delta, W_ih, active=active)
        grads[4 * ell + 2], grads[4 * ell + 3] = db, db.clone()
    return [dE, dW_U, db_U, *grads]
