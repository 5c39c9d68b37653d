"""LSTM baseline: embedding → torch.nn.LSTM (``layers`` stacked, hidden = d_model) → linear.

Hochreiter & Schmidhuber (1997) with torch's gate equations (i, f, g, o gates; c_t = f ⊙ c_{t−1}
+ i ⊙ g, h_t = o ⊙ tanh c_t). The read-out is linear on h_t (no ReLU: kept as it was, so saved
LSTM runs load and reproduce). One run uses torch's LSTM kernel on the one-hot tokens, with
layer 0's input weights folded with the embedding (:meth:`LSTMModel._kernel`): the kernel was
faster on the CPU than a loop of ours, and than a hand-written back-propagation through time
(issue 21: 2.1–2.4 ms against 1.4 ms forward and backward, input product included, B = 64,
T = 8, d = 64). Under vmap (many runs at once), where the kernel has no batching rule, the
loop is ours (:func:`~._recurrent.lstm_layers`: layer 0's input part looked up through the
embedding for every step at once, then one product and the gates per step).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ._recurrent import both_biases, lstm_layers, scored_cross_entropy, vmapped


class LSTMModel(nn.Module):
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
