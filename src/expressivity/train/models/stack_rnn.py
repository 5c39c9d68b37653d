"""Stack-RNN: an Elman RNN with a differentiable stack (Joulin & Mikolov 2015), as used by
Delétang et al. (2023, "Neural networks and the Chomsky hierarchy", §3 and their
``stack_rnn.py``).

State at step t: the hidden vector h_t ∈ ℝ^d and the stack S_t ∈ ℝ^{K×m} (K cells of width m,
S_t[0] the top; S_0 = 0, h_0 = 0). With x_t the embedded input:

    r_{t−1} = S_{t−1}[0]                                    (read the top cell)
    h_t     = tanh(W_x x_t + W_r r_{t−1} + W_h h_{t−1} + b)  (the Elman core)
    a_t     = softmax(W_a h_t + b_a) = (a_push, a_pop, a_noop) ∈ Δ²
    v_t     = W_v h_t + b_v ∈ ℝ^m                            (the value to push)
    S_t[0]  = a_push·v_t        + a_pop·S_{t−1}[1]   + a_noop·S_{t−1}[0]
    S_t[i]  = a_push·S_{t−1}[i−1] + a_pop·S_{t−1}[i+1] + a_noop·S_{t−1}[i],   1 ≤ i < K,

with S_{t−1}[K] = 0 (popping shifts a zero in at the bottom; pushing drops the bottom cell).
The output is o_t = h_t, read out as W_U ReLU(h_t) + b_U. Joulin & Mikolov squash the pushed
value with a sigmoid; Delétang et al. (whose equations these are) push the linear v_t and use
tanh. Sizes follow their code: K = 30 cells of width m = 8; d = ``d_model``; one core
(``layers`` is not used).

Example (one-hot actions): push a, push b, pop leaves S[0] = a, S[1] = 0 exactly.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from ._recurrent import RecurrentModel, elman_step

STACK_SIZE = 30  # K, cells (Delétang et al.'s stack_size)
STACK_CELL = 8  # m, width of a cell (their stack_cell_size)
PUSH, POP, NOOP = 0, 1, 2  # order of the action weights a_t


def stack_update(S: Tensor, a: Tensor, v: Tensor) -> Tensor:
    """S_t from S_{t−1} (B, K, m), action weights a_t (B, 3) = (push, pop, no-op) and the pushed
    value v_t (B, m); see the module docstring. Returns (B, K, m)."""
    K = S.shape[1]
    P = torch.cat([v[:, None, :], S, S.new_zeros(S.shape[0], 1, S.shape[2])], dim=1)  # [v; S; 0]: (B, K+2, m)
    a = a[:, :, None, None]  # (B, 3, 1, 1); after a pure push S = P[:K], a pop P[2:], a no-op P[1:K+1]
    return a[:, PUSH] * P[:, :K] + a[:, POP] * P[:, 2:] + a[:, NOOP] * P[:, 1:K + 1]


class StackModel(RecurrentModel):
    """The differentiable stack and the loop that drives it, shared by the Stack-RNN and the
    Stack-LSTM (:mod:`.stack_lstm`): a controller reads [x_t; r_{t−1}] (r the top cell) and
    its state, and its output h_t sets a_t = softmax(W_a h_t + b_a) and v_t = W_v h_t + b_v,
    which update the stack by :func:`stack_update`. Subclasses give ``init_state`` and
    ``controller``."""

    def __init__(self, d_vocab: int, d_model: int, d_out: int, stack_size: int, cell: int) -> None:
        super().__init__(d_vocab, d_model, d_out)
        self.K, self.m = stack_size, cell
        self.W_a = nn.Linear(d_model, 3)  # action logits
        self.W_v = nn.Linear(d_model, cell)  # pushed value

    def init_state(self, x: Tensor):
        """The controller's state before step 1 (zeros)."""
        raise NotImplementedError

    def controller(self, x: Tensor, r: Tensor, state) -> tuple[Tensor, object]:
        """(h_t (B, d), new state) from x_t (B, d), r_{t−1} (B, m) and the state."""
        raise NotImplementedError

    def run(self, x: Tensor, keep_stacks: bool = True) -> tuple[Tensor, Tensor | None]:
        """Outputs h_1..h_T (B, T, d) and the stacks S_1..S_T (B, T, K, m) from embedded x
        (None with ``keep_stacks=False``: the forward pass then holds one stack, not T — what
        evaluation under ``no_grad`` needs; training keeps them for autograd anyway)."""
        B, T, d = x.shape
        state = self.init_state(x)
        S = x.new_zeros(B, self.K, self.m)  # (B, K, m), S[:, 0] = top
        outs, stacks = [], []
        for t in range(T):  # the recurrence is sequential in t; everything else is batched
            h, state = self.controller(x[:, t], S[:, 0], state)  # (B, d)
            S = stack_update(S, torch.softmax(self.W_a(h), dim=-1), self.W_v(h))
            outs.append(h)
            if keep_stacks:
                stacks.append(S)
        return torch.stack(outs, dim=1), (torch.stack(stacks, dim=1) if keep_stacks else None)

    def core(self, x: Tensor, ids: Tensor) -> Tensor:
        return self.run(x, keep_stacks=False)[0]  # (B, T, d)

    def stacks(self, inputs: Tensor) -> Tensor:
        """The stack after each step for token ids (B, T): (B, T, K, m) (for tests and probes)."""
        return self.run(self.embed(inputs))[1]


class StackRNN(StackModel):
    """Embedding → Elman core reading the stack top → ReLU → linear; see the module docstring."""

    def __init__(self, d_vocab: int, d_model: int, d_out: int, stack_size: int = STACK_SIZE,
                 cell: int = STACK_CELL) -> None:
        super().__init__(d_vocab, d_model, d_out, stack_size, cell)
        self.W_core = nn.Linear(d_model + cell + d_model, d_model)  # [W_x W_r W_h], b

    def init_state(self, x: Tensor) -> Tensor:
        return x.new_zeros(x.shape[0], x.shape[2])  # h_0 = 0

    def controller(self, x: Tensor, r: Tensor, h: Tensor) -> tuple[Tensor, Tensor]:
        h = elman_step(self.W_core, x, r, h)
        return h, h
