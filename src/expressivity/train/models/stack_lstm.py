"""Stack-LSTM: an LSTM controller with the Stack-RNN's differentiable stack, the benchmark's
``stack_lstm`` (Delétang et al. 2023, §3: their stack core wraps any RNN core; Joulin &
Mikolov 2015 for the stack).

State at step t: the LSTM's (h_t, c_t) ∈ ℝ^d × ℝ^d and the stack S_t ∈ ℝ^{K×m} (h_0 = c_0 =
0, S_0 = 0). With x_t the embedded input and r_{t−1} = S_{t−1}[0] the top cell, the LSTM
(torch's gate equations, i, f, g, o) reads u_t = [x_t; r_{t−1}]:

    (i, f, g, o) = (σ, σ, tanh, σ)(W u_t + U h_{t−1} + b)
    c_t = f ⊙ c_{t−1} + i ⊙ g,   h_t = o ⊙ tanh c_t

then a_t = softmax(W_a h_t + b_a) = (a_push, a_pop, a_noop), v_t = W_v h_t + b_v and S_t =
:func:`~.stack_rnn.stack_update` (S_{t−1}, a_t, v_t) — the same stack step as the Stack-RNN
(:class:`~.stack_rnn.StackModel`). Output o_t = h_t, read out as W_U ReLU(h_t) + b_U. Sizes:
K = 30 cells of width m = 8 (their defaults), d = ``d_model``; one core (``layers`` unused).
The parameters are torch.nn.LSTMCell's (W = weight_ih over [x_t; r], U = weight_hh); the
step is ours: W_x x_t + b for every t before the loop, then one product of [W_r U] with
[r_{t−1}; h_{t−1}] and the gates (:func:`~._recurrent.lstm_gates`) per step.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from ._recurrent import both_biases, lstm_gates
from .stack_rnn import STACK_CELL, STACK_SIZE, StackModel


class StackLSTM(StackModel):
    """Embedding → LSTM cell reading the stack top → ReLU → linear; see the module docstring."""

    def __init__(self, d_vocab: int, d_model: int, d_out: int, stack_size: int = STACK_SIZE,
                 cell: int = STACK_CELL) -> None:
        super().__init__(d_vocab, d_model, d_out, stack_size, cell)
        self.lstm = nn.LSTMCell(d_model + cell, d_model)

    def input_part(self, ids: Tensor) -> Tensor:
        cell, d = self.lstm, self.embed.embedding_dim
        return self.project(ids, cell.weight_ih[:, :d], both_biases(cell.bias_ih, cell.bias_hh))  # (T, B, 4d)

    def step_weights(self) -> Tensor:
        cell = self.lstm
        return torch.cat([cell.weight_ih[:, self.embed.embedding_dim:], cell.weight_hh], dim=1).T  # [W_r U]ᵀ

    controller_kind = "lstm"

    def controller_params(self) -> tuple[Tensor, ...]:
        cell = self.lstm
        return cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh

    def init_state(self, u: Tensor) -> tuple[Tensor, Tensor]:
        zero = u.new_zeros(u.shape[1], self.embed.embedding_dim)
        return zero, zero  # h_0, c_0

    def controller(self, u: Tensor, r: Tensor, state: tuple[Tensor, Tensor], w: Tensor) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        h, c = state
        h, c = lstm_gates(torch.addmm(u, torch.cat([r, h], dim=-1), w), c)  # the LSTM reads [x_t; r_{t−1}]
        return h, (h, c)
