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
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from ._recurrent import lstm_cell, vmapped
from .stack_rnn import STACK_CELL, STACK_SIZE, StackModel


class StackLSTM(StackModel):
    """Embedding → LSTM cell reading the stack top → ReLU → linear; see the module docstring."""

    def __init__(self, d_vocab: int, d_model: int, d_out: int, stack_size: int = STACK_SIZE,
                 cell: int = STACK_CELL) -> None:
        super().__init__(d_vocab, d_model, d_out, stack_size, cell)
        self.lstm = nn.LSTMCell(d_model + cell, d_model)

    def init_state(self, x: Tensor) -> tuple[Tensor, Tensor]:
        zero = x.new_zeros(x.shape[0], x.shape[2])
        return zero, zero  # h_0, c_0

    def controller(self, x: Tensor, r: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        xr = torch.cat([x, r], dim=-1)  # u_t = [x_t; r_{t−1}]
        if vmapped(xr):  # many runs at once: the fused cell has no vmap rule
            cell = self.lstm
            h, c = lstm_cell(xr, state, cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)
        else:
            h, c = self.lstm(xr, state)
        return h, (h, c)
