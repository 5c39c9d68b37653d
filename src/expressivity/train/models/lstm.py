"""LSTM baseline: embedding → torch.nn.LSTM (``layers`` stacked, hidden = d_model) → linear.

Hochreiter & Schmidhuber (1997) with torch's gate equations (i, f, g, o gates; c_t = f ⊙ c_{t−1}
+ i ⊙ g, h_t = o ⊙ tanh c_t). The read-out is linear on h_t (no ReLU: kept as it was, so saved
LSTM runs load and reproduce). One run uses torch's LSTM kernel on the one-hot tokens, with
layer 0's input weights folded with the embedding (:meth:`LSTMModel._kernel`): the kernel was
faster on the CPU than a loop of ours, and than a hand-written back-propagation through time
(issue 21: 2.1–2.4 ms against 1.4 ms forward and backward, input product included, B = 64,
T = 8, d = 64). Under vmap (many runs at once), where the kernel has no batching rule, the
loop is ours (:func:`~._recurrent.lstm_layers`: layer 0's input part looked up through the
embedding for every step at once, then one product and the gates per step). train_many's runs
(float32) take neither: :func:`lstm_losses` is the training loss of R runs at once written
out, forward and back-propagation through time, each step one batched product of the runs'
states by their own W_hh (:class:`~._recurrent.RunsLoss`).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ._recurrent import (
    RunsLoss,
    both_biases,
    lstm_cell_backward_into,
    lstm_cell_into,
    lstm_layers,
    scored_cross_entropy,
    vmapped,
)
from ._runs import (
    input_rows,
    input_rows_grads,
    readout_losses,
    readout_losses_grads,
    run_rows,
    runs_matmul,
    steps_outer,
    steps_sum,
)


class LSTMModel(RunsLoss, nn.Module):
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

    def scored_loss(self, inputs: Tensor, target: Tensor, mask: Tensor) -> Tensor:
        """The soft cross-entropy averaged over the scored positions (``mask``), the read-out at
        those only (:meth:`.RecurrentModel.scored_loss`'s value for this model)."""
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


def lstm_losses(ids: Tensor, rows: Tensor, p: Tensor, counts: Tensor, E: Tensor, W_U: Tensor, b_U: Tensor,
                *layers: Tensor) -> tuple[Tensor, tuple]:
    """The LSTM's training loss of R runs at once, each with its own weights (a leading run
    axis on every weight; ids (T, R, B), rows, p, counts as :func:`~._runs.scored_rows`
    gives them): per layer z_t = (W_ih x_t + b)ᵣ + W_hh,ᵣ h_{t−1} (layer 1's input part looked
    up through E W_ihᵀ), the gates and cells as torch's LSTM, then the linear read-out at the
    scored positions → (losses (R,), what :func:`lstm_losses_grads` needs)."""
    T, R, B = ids.shape
    d = E.shape[2]
    Hs, states = [], []
    for ell in range(len(layers) // 4):
        W_ih, W_hh, b_ih, b_hh = layers[4 * ell:4 * ell + 4]
        if ell == 0:
            flat, Z = input_rows(ids, E, W_ih, b_ih + b_hh)
        else:
            Z = runs_matmul(Hs[-1].view(T, R, B, d), W_ih.transpose(1, 2), (b_ih + b_hh).unsqueeze(1))
        Z = Z.view(T, R * B, 4 * d)  # the gates' pre-activations, then h_{t−1}'s part added in place
        A, C = torch.empty_like(Z), Z.new_empty(T, R * B, d)
        TC, H = torch.empty_like(C), torch.empty_like(C)
        Wt = W_hh.transpose(1, 2)
        for t in range(T):
            if t:
                Z[t].view(R, B, -1).baddbmm_(H[t - 1].view(R, B, d), Wt)
            lstm_cell_into(Z[t], A[t], C[t - 1] if t else None, C[t], TC[t], H[t])
        Hs.append(H)
        states.append((A, C, TC))
    at = run_rows(rows, R, B)
    top = Hs[-1].view(T * R * B, d).index_select(0, at.view(-1)).view(R, rows.shape[1], d)
    losses, _, logq = readout_losses(top, W_U, b_U, p, counts, relu=False)
    return losses, (flat, at, p, counts, E, W_U, top, logq, layers, Hs, states)


def lstm_losses_grads(saved: tuple, g: Tensor) -> list[Tensor]:
    """g (R,) · each run's gradient of its own loss in :func:`lstm_losses`, for E, W_U, b_U and
    the layers' weights in their order (stacked over the runs): back-propagation through time
    per layer from the top, dh_t = ∂L/∂h_t + W_hhᵀ ∂z_{t+1}, the cells' dc_t = dh_t ⊙ o_t (1 −
    tanh² c_t) + dc_{t+1} ⊙ f_{t+1}, ∂z_t by :func:`~._recurrent.lstm_cell_backward_into`; every
    weight's gradient then one batched product over all steps."""
    flat, at, p, counts, E, W_U, top, logq, layers, Hs, states = saved
    T, RB, d = Hs[-1].shape
    R = E.shape[0]
    B = RB // R
    dtop, dW_U, db_U = readout_losses_grads(g, p, logq, top, top, W_U, counts, relu=False)
    dH = dtop.new_zeros(T * RB, d).index_add_(0, at.view(-1), dtop.reshape(-1, d)).view(T, RB, d)
    grads: list[Tensor] = [dtop] * len(layers)  # every entry is set below
    dE = dtop
    for ell in range(len(layers) // 4 - 1, -1, -1):
        W_ih, W_hh = layers[4 * ell], layers[4 * ell + 1]
        A, C, TC = states[ell]
        dZ = torch.empty_like(A)
        dh_next = dcell = None
        for t in range(T - 1, -1, -1):
            dh = dH[t] if dh_next is None else dH[t] + dh_next
            dcell = lstm_cell_backward_into(dZ[t], A[t], C[t - 1] if t else None, TC[t], dh, dcell)
            if t:
                dh_next = torch.bmm(dZ[t].view(R, B, -1), W_hh).view(RB, d)
        grads[4 * ell + 1] = steps_outer(dZ[1:], Hs[ell][:-1], R)  # h_0 = 0 adds nothing
        if ell == 0:
            dE, grads[0], db = input_rows_grads(flat, dZ, E, W_ih)
        else:
            grads[4 * ell], db = steps_outer(dZ, Hs[ell - 1], R), steps_sum(dZ, R)
            dH = runs_matmul(dZ.view(T, R, B, -1), W_ih).view(T, RB, d)
        grads[4 * ell + 2], grads[4 * ell + 3] = db, db.clone()
    return [dE, dW_U, db_U, *grads]
