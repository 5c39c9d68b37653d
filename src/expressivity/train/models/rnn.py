"""Elman RNN (Elman 1990), the benchmark's ``rnn``: h_t = tanh(W_x x_t + W_h h_{t−1} + b), h_0 = 0.

``layers`` cores are stacked (layer ℓ reads layer ℓ−1's h_t); the read-out is
logits_t = W_U ReLU(h_t) + b_U as in Delétang et al. (2023). torch.nn.RNN with tanh computes
exactly this recurrence (it splits b into b_ih + b_hh); its parameters are the model's, but the
loop is ours (:func:`~._recurrent.rnn_layers`: layer 0's input part looked up through the
embedding, the recurrence one :class:`~._recurrent.ElmanScan` node per layer).
"""

from __future__ import annotations

from torch import Tensor, nn

from ._recurrent import RecurrentModel, both_biases, rnn_layers


class RNNModel(RecurrentModel):
    """Embedding → ``layers`` stacked Elman (tanh) layers, hidden = d_model → ReLU → linear."""

    def __init__(self, d_vocab: int, d_model: int, layers: int, d_out: int) -> None:
        super().__init__(d_vocab, d_model, d_out)
        self.rnn = nn.RNN(d_model, d_model, num_layers=layers, nonlinearity="tanh", batch_first=True)

    def core(self, ids: Tensor) -> Tensor:
        rnn = self.rnn
        u = self.project(ids, rnn.weight_ih_l0, both_biases(rnn.bias_ih_l0, rnn.bias_hh_l0))  # (T, B, d_model)
        return rnn_layers(rnn, u)  # (T, B, d_model)
