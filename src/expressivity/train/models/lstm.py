"""LSTM baseline: embedding → torch.nn.LSTM (``layers`` stacked, hidden = d_model) → linear.

Hochreiter & Schmidhuber (1997) with torch's gate equations (i, f, g, o gates; c_t = f ⊙ c_{t−1}
+ i ⊙ g, h_t = o ⊙ tanh c_t). The read-out is linear on h_t (no ReLU: kept as it was, so saved
LSTM runs load and reproduce).

The training loss (float32 or float64, no autocast) is written out, forward and
back-propagation through time (:func:`lstm_losses`, :class:`~._lstm_cells.LSTMCells`), as one
autograd node (``scored_loss``) or with no autograd at all (``loss_and_grads``,
:class:`~._recurrent.FusedLoss`), and for R runs at once with every weight stacked over the
runs (train_many, :class:`~._recurrent.RunsLoss`): each step one (batched) product of the
states by W_hh. It replaced torch's LSTM kernel, whose backward is autograd's, node by node
(issue 21, B = 64, T ≈ 7, d = 64: 1.6 against 1.9 ms forward and backward). The kernel
(:meth:`LSTMModel._kernel`, on the one-hot tokens with layer 0's input weights folded with the
embedding) still serves ``forward`` and the loss under autocast. Under vmap, where it has no
batching rule, the loop is ours (:func:`~._recurrent.lstm_layers`: layer 0's input part looked
up through the embedding for every step at once, then one product and the gates per step).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ._lstm_cells import LSTMCells
from ._recurrent import (
    FusedLoss,
    both_biases,
    fused_targets,
    lstm_layers,
    scored_cross_entropy,
    states_loss,
    states_loss_grads,
    vmapped,
)
from ._runs import (
    active_runs,
    input_rows,
    input_rows_grads,
    packed,
    rows_add_product_,
    rows_affine,
    rows_of,
    steps_matmul,
    steps_outer,
    steps_sum,
)


class LSTMModel(FusedLoss, nn.Module):
    """Embedding → torch.nn.LSTM (``layers`` stacked, hidden = d_model) → linear read-out."""

    def __init__(self, d_vocab: int, d_model: int, layers: int, d_out: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(d_vocab, d_model)
        self.lstm = nn.LSTM(d_model, d_model, num_layers=layers, batch_first=True)
        self.unembed = nn.Linear(d_model, d_out)

    def forward(self, inputs: Tensor, key_mask: Tensor | None = None) -> Tensor:
        lstm, E = self.lstm, self.embed.weight
        if not vmapped(E):
            return self.unembed(self._kernel(inputs))
        table = E @ lstm.weight_ih_l0.T + both_biases(lstm.bias_ih_l0, lstm.bias_hh_l0)
        u = F.embedding(inputs, table)  # (B, T, 4 d_model): W_ih x_t + b for every step
        h = lstm_layers(lstm, u, u=u)  # (B, T, d_model)
        return self.unembed(h)  # (B, T, d_out)

    def _modules_scored_loss(self, inputs: Tensor, target: Tensor, mask: Tensor) -> Tensor:
        """The soft cross-entropy averaged over the scored positions (``mask``), the read-out at
        those only (:meth:`.RecurrentModel.scored_loss`'s value for this model), through
        torch's kernel (:meth:`_kernel`)."""
        if inputs.dim() != 2:
            raise ValueError(f"token ids must have shape (B, T), got {tuple(inputs.shape)}")
        return scored_cross_entropy(self.unembed, self._kernel(inputs).flatten(0, 1), mask.flatten(),
                                    target.flatten(0, 1))

    def _loss_params(self) -> tuple[Tensor, ...] | None:
        lstm = self.lstm
        if not lstm.bias or lstm.proj_size or lstm.bidirectional:
            return None
        layers = [getattr(lstm, f"{kind}_l{ell}") for ell in range(lstm.num_layers)
                  for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
        return (self.embed.weight, self.unembed.weight, self.unembed.bias, *layers)

    def _fused_arguments(self, inputs: Tensor, target: Tensor, mask: Tensor) -> tuple | None:
        params = self._loss_params()
        if params is None or not self._written_out_applies(inputs):
            return None
        return (*fused_targets(inputs, target, mask), None), params

    @staticmethod
    def _loss(data: tuple, params: tuple) -> tuple[Tensor, tuple]:
        return lstm_losses(*data, *params)

    @staticmethod
    def _loss_grads(saved: tuple, g: Tensor) -> tuple:
        return lstm_losses_grads(saved, g)

    def _runs_loss(self, data: tuple, params: tuple) -> tuple[Tensor, tuple]:
        return lstm_losses(*data, *params)

    def _runs_loss_grads(self, saved: tuple, g: Tensor) -> tuple:
        return lstm_losses_grads(saved, g)

    def _kernel(self, ids: Tensor) -> Tensor:
        """torch's LSTM kernel (what ``self.lstm(embed(ids))`` calls) on the one-hot ids, layer
        0's input weights W_ih W_Eᵀ (4d × V): the same W_ih x_t, to float round-off, for a
        (B·T × V) input product instead of (B·T × d). (B, T) → (B, T, d)."""
        lstm, E = self.lstm, self.embed.weight
        onehot = F.one_hot(ids, E.shape[0]).to(E.dtype)  # (B, T, V)
        weights = [lstm.weight_ih_l0 @ E.T, *lstm._flat_weights[1:]]
        h0 = onehot.new_zeros(lstm.num_layers, ids.shape[0], lstm.hidden_size)
        return torch._VF.lstm(onehot, (h0, h0), weights, lstm.bias, lstm.num_layers, lstm.dropout, self.training,
                              lstm.bidirectional, lstm.batch_first)[0]


def lstm_losses(ids: Tensor, rows: Tensor, p: Tensor, counts: Tensor | None, E: Tensor, W_U: Tensor, b_U: Tensor,
                *layers: Tensor) -> tuple[Tensor, tuple]:
    """The LSTM's training loss written out: per layer z_t = W_ih x_t + b + W_hh h_{t−1}
    (layer 1's input part looked up through E W_ihᵀ), the cells as torch's LSTM
    (:class:`~._lstm_cells.LSTMCells`), then the linear read-out at the scored positions →
    (loss, what :func:`lstm_losses_grads` needs). One run: ids (T, B), rows, p as
    :func:`~._recurrent.fused_targets` gives them, counts None. R runs at once, each with its
    own weights (a leading run axis on every weight): ids (T, R, B), rows, p, counts as
    :func:`~._runs.scored_rows` gives them, each step one batched product of the runs'
    states by their own W_hh → each run's loss (R,), with packed steps
    (:func:`~._runs.active_runs`: step t's first a_t runs only)."""
    runs = None if counts is None else ids.shape[1]
    T = ids.shape[0]
    active = None if runs is None else active_runs(rows, counts, ids.shape[2], T)
    n_rows = rows_of(active, ids.shape[-1])  # B strings a run
    Hs, cells = [], []
    for ell in range(len(layers) // 4):
        W_ih, W_hh, b_ih, b_hh = layers[4 * ell:4 * ell + 4]
        if ell == 0:
            flat, Z = input_rows(ids, E, W_ih, b_ih + b_hh)
        else:
            Z = steps_matmul(Hs[-1], W_ih.transpose(-1, -2), b_ih + b_hh, runs, active)
        Z = Z.view(T, -1, Z.shape[-1])  # the gates' pre-activations, then h_{t−1}'s part added in place
        layer = LSTMCells(Z, rows=n_rows)
        Wt, z = W_hh.transpose(-1, -2).contiguous(), packed(Z.unbind(0), n_rows)  # a contiguous W_hhᵀ: each step's product ~20 % faster
        h = layer.step(0)
        for t in range(1, T):
            if active is not None:
                a = active[t]
                if not a:
                    break
                rows_add_product_(z[t], h[:z[t].shape[0]], Wt[:a])
            else:
                rows_add_product_(z[t], h, Wt)
            h = layer.step(t)
        Hs.append(layer.H)
        cells.append(layer)
    loss, readout = states_loss(Hs[-1], rows, W_U, b_U, p, counts, relu=False)
    return loss, (flat, runs, E, layers, Hs, cells, readout, active)


def lstm_losses_grads(saved: tuple, g: Tensor) -> list[Tensor]:
    """g · the gradient of :func:`lstm_losses` for E, W_U, b_U and the layers' weights in
    their order (R runs: g (R,), each run's gradient of its own loss, stacked): back-propagation
    through time per layer from the top, dh_t = ∂L/∂h_t + ∂z_{t+1} W_hh, ∂z_t by
    :meth:`~._lstm_cells.LSTMCells.step_back`; every weight's gradient then one product over
    all steps."""
    flat, runs, E, layers, Hs, cells, readout, active = saved
    dH, dW_U, db_U = states_loss_grads(readout, g)
    T = dH.shape[0]
    grads: list[Tensor] = [dW_U] * len(layers)  # every entry is set below
    dE = dW_U
    for ell in range(len(layers) // 4 - 1, -1, -1):
        W_ih, W_hh = layers[4 * ell], layers[4 * ell + 1]
        layer = cells[ell]
        dZ = layer.start_back()
        dz, dh_rows = packed(dZ.unbind(0), layer.rows), packed(dH.unbind(0), layer.rows)
        dc = layer.step_back(T - 1, dh_rows[T - 1], None)
        for t in range(T - 2, -1, -1):
            if active is None:
                dc = layer.step_back(t, rows_affine(dh_rows[t], dz[t + 1], W_hh), dc)
                continue
            dh, a = dh_rows[t], active[t + 1]  # dh: ∂L/∂h_t's rows in dH, ∂z_{t+1} W_hh added in place
            if a:
                rows_add_product_(dh[:dz[t + 1].shape[0]], dz[t + 1], W_hh[:a])
            dc = layer.step_back(t, dh, dc)
        later = None if active is None else active[1:]
        grads[4 * ell + 1] = steps_outer(dZ[1:], Hs[ell][:-1], runs, later)  # h_0 = 0 adds nothing
        if ell == 0:
            dE, grads[0], db = input_rows_grads(flat, dZ, E, W_ih)
        else:
            grads[4 * ell], db = steps_outer(dZ, Hs[ell - 1], runs, active), steps_sum(dZ, runs)
            dH = steps_matmul(dZ, W_ih, runs=runs, active=active)
        grads[4 * ell + 2], grads[4 * ell + 3] = db, db.clone()  # b_ih, b_hh: one gradient, two tensors
    return [dE, dW_U, db_U, *grads]
