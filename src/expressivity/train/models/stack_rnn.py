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

The step is written for few torch calls (one run's step is call overhead more than arithmetic):
W_x x_t + b for every t before the loop (:meth:`~._recurrent.RecurrentModel.project`),
a_t's logits and v_t from one product [W_a; W_v] h_t + [b_a; b_v] (:meth:`StackModel.read_heads`),
and the stack update as one row selection and one batched product (:func:`stack_update`:
the rows of P = [v_t; S_{t−1}; 0] that each action moves into cells 0..K−1, mixed by a_t;
:mod:`._memory`). Training's loss and its gradient are written out instead, without autograd
(:mod:`._stack_loss`, through :class:`~._recurrent.FusedLoss`); the modules here are the
reference it is tested against, and what evaluation, vmap and autocast run.

Example (one-hot actions): push a, push b, pop leaves S[0] = a, S[1] = 0 exactly.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from ._memory import mix, take_rows
from ._recurrent import FusedLoss, RecurrentModel, fused_targets
from ._stack_loss import param_grads, stack_loss, stack_loss_grads, stack_weights

STACK_SIZE = 30  # K, cells (Delétang et al.'s stack_size)
STACK_CELL = 8  # m, width of a cell (their stack_cell_size)
PUSH, POP, NOOP = 0, 1, 2  # order of the action weights a_t
ROW_OFFSET = {PUSH: 0, POP: 2, NOOP: 1}  # cell i after the action is row i + offset of P = [v; S; 0]


def stack_index(K: int, device=None) -> Tensor:
    """(3K,): the rows of P = [v; S; 0] (K + 2 rows) that become cells 0..K−1 after a push
    (i), a pop (i + 2) and a no-op (i + 1), in the order of a_t."""
    i = torch.arange(K, device=device)
    return torch.cat([i + ROW_OFFSET[action] for action in (PUSH, POP, NOOP)])


def stack_update(S: Tensor, a: Tensor, v: Tensor, index: Tensor | None = None, zero: Tensor | None = None) -> Tensor:
    """S_t from S_{t−1} (B, K, m), action weights a_t (B, 3) = (push, pop, no-op) and the pushed
    value v_t (B, m); see the module docstring. ``index`` (:func:`stack_index`) and ``zero``
    (B, 1, m) may be made once for a whole sequence. Returns (B, K, m)."""
    B, K, m = S.shape
    zero = S.new_zeros(B, 1, m) if zero is None else zero
    P = torch.cat([v[:, None, :], S, zero], dim=1)  # [v; S; 0]: (B, K+2, m)
    return mix(a, take_rows(P, stack_index(K, S.device) if index is None else index))


class StackModel(FusedLoss, RecurrentModel):
    """The differentiable stack and the loop that drives it, shared by the Stack-RNN and the
    Stack-LSTM (:mod:`.stack_lstm`): a controller reads u_t (its input part W x_t + b, from
    ``input_part``), r_{t−1} (the top cell) and its state, and its output h_t sets
    a_t = softmax(W_a h_t + b_a) and v_t = W_v h_t + b_v, which update the stack by
    :func:`stack_update`. Subclasses give ``input_part``, ``step_weights``, ``init_state`` and
    ``controller``."""

    def __init__(self, d_vocab: int, d_model: int, d_out: int, stack_size: int, cell: int) -> None:
        super().__init__(d_vocab, d_model, d_out)
        self.K, self.m = stack_size, cell
        self.W_a = nn.Linear(d_model, 3)  # action logits
        self.W_v = nn.Linear(d_model, cell)  # pushed value

    def input_part(self, ids: Tensor) -> Tensor:
        """The controller's input part for every step, time-major: (T, B, ·) from ids (B, T)."""
        raise NotImplementedError

    def step_weights(self) -> Tensor:
        """The controller's weights on [r_{t−1}; its state], transposed: made once per sequence."""
        raise NotImplementedError

    def init_state(self, u: Tensor):
        """The controller's state before step 1 (zeros)."""
        raise NotImplementedError

    def controller(self, u: Tensor, r: Tensor, state, w: Tensor) -> tuple[Tensor, object]:
        """(h_t (B, d), new state) from u_t (B, ·), r_{t−1} (B, m), the state and ``step_weights``."""
        raise NotImplementedError

    def heads(self) -> tuple[Tensor, Tensor]:
        """[W_a; W_v]ᵀ (d, 3 + m) and [b_a; b_v]: both heads as one product per step."""
        return torch.cat([self.W_a.weight, self.W_v.weight]).T, torch.cat([self.W_a.bias, self.W_v.bias])

    def read_heads(self, h: Tensor, W: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
        """(a_t's logits (B, 3), v_t (B, m)) from h_t (B, d) and :meth:`heads`."""
        return torch.addmm(b, h, W).split((3, self.m), dim=-1)

    def run(self, ids: Tensor, keep_stacks: bool = True) -> tuple[Tensor, Tensor | None]:
        """Outputs h_1..h_T (B, T, d) and the stacks S_1..S_T (B, T, K, m) from token ids (B, T)
        (None with ``keep_stacks=False``: the forward pass then holds one stack, not T — what
        evaluation under ``no_grad`` needs; training keeps them for autograd anyway)."""
        u = self.input_part(ids)  # (T, B, ·): W x_t + b for every step
        B = u.shape[1]
        state = self.init_state(u)
        S = u.new_zeros(B, self.K, self.m)  # (B, K, m), S[:, 0] = top
        zero, index = u.new_zeros(B, 1, self.m), stack_index(self.K, u.device)
        w, (W, b) = self.step_weights(), self.heads()
        outs, stacks = [], []
        for u_t in u.unbind(0):  # the recurrence is sequential in t; everything else is batched
            h, state = self.controller(u_t, S[:, 0], state, w)  # (B, d)
            logits, v = self.read_heads(h, W, b)
            S = stack_update(S, torch.softmax(logits, dim=-1), v, index, zero)
            outs.append(h)
            if keep_stacks:
                stacks.append(S)
        return torch.stack(outs).transpose(0, 1), (torch.stack(stacks, dim=1) if keep_stacks else None)

    def core(self, ids: Tensor) -> Tensor:
        return self.run(ids, keep_stacks=False)[0].transpose(0, 1)  # (T, B, d), as stacked

    # the training loss written out (:mod:`._stack_loss`): FusedLoss's scored_loss / loss_and_grads
    _modules_scored_loss = RecurrentModel.scored_loss
    controller_kind = "rnn"  # the subclass's controller, as _stack_loss names it

    def controller_params(self) -> tuple[Tensor, ...]:
        """The controller's parameters in :func:`~._stack_loss.stack_weights`' order."""
        raise NotImplementedError

    def _loss_params(self) -> tuple[Tensor, ...]:
        return (self.embed.weight, self.unembed.weight, self.unembed.bias, *self.controller_params(),
                self.W_a.weight, self.W_a.bias, self.W_v.weight, self.W_v.bias)

    def _fused_arguments(self, inputs: Tensor, target: Tensor, mask: Tensor) -> tuple | None:
        if not self._written_out_applies(inputs):
            return None
        return (*fused_targets(inputs, target, mask), self.controller_kind, self.K), self._loss_params()

    @staticmethod
    def _loss(data: tuple, params: tuple) -> tuple[Tensor, tuple]:
        loss, saved = stack_loss(data, stack_weights(data[3], params))
        return loss, (data[3], saved)

    @staticmethod
    def _loss_grads(saved: tuple, g: Tensor) -> tuple:
        return param_grads(saved[0], stack_loss_grads(saved[1], g))

    def _runs_loss(self, data: tuple, params: tuple) -> tuple[Tensor, tuple]:
        ids, rows, p, counts = data
        return self._loss((ids, rows, p, self.controller_kind, self.K, counts), params)

    def _runs_loss_grads(self, saved: tuple, g: Tensor) -> tuple:
        return self._loss_grads(saved, g)

    def stacks(self, inputs: Tensor) -> Tensor:
        """The stack after each step for token ids (B, T): (B, T, K, m) (for tests and probes)."""
        return self.run(inputs)[1]


class StackRNN(StackModel):
    """Embedding → Elman core reading the stack top → ReLU → linear; see the module docstring."""

    def __init__(self, d_vocab: int, d_model: int, d_out: int, stack_size: int = STACK_SIZE,
                 cell: int = STACK_CELL) -> None:
        super().__init__(d_vocab, d_model, d_out, stack_size, cell)
        self.W_core = nn.Linear(d_model + cell + d_model, d_model)  # [W_x W_r W_h], b

    def input_part(self, ids: Tensor) -> Tensor:
        d = self.embed.embedding_dim
        return self.project(ids, self.W_core.weight[:, :d], self.W_core.bias)  # W_x x_t + b

    def step_weights(self) -> Tensor:
        return self.W_core.weight[:, self.embed.embedding_dim:].T  # [W_r W_h]ᵀ

    def controller_params(self) -> tuple[Tensor, ...]:
        return self.W_core.weight, self.W_core.bias

    def init_state(self, u: Tensor) -> Tensor:
        return u.new_zeros(u.shape[1], u.shape[2])  # h_0 = 0

    def controller(self, u: Tensor, r: Tensor, h: Tensor, w: Tensor) -> tuple[Tensor, Tensor]:
        h = torch.tanh(torch.addmm(u, torch.cat([r, h], dim=-1), w))  # tanh(W_x x_t + b + W_r r + W_h h)
        return h, h
