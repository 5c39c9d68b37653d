"""Tape-RNN: an Elman RNN with a differentiable circular tape and a moving head, the
benchmark's ``tape_rnn`` (Delétang et al. 2023, §3, "loosely based on Baby-NTM, Suzgun et al.
2019"; their ``TapeInputLengthJumpCore``).

The tape M_t ∈ ℝ^{K×m} is stored rotated so that the head is always over cell 0 (M_0 = 0,
h_0 = 0). With x_t the embedded input and n the length of the input string:

    r_{t−1} = M_{t−1}[0]                                    (read the cell under the head)
    h_t     = tanh(W_x x_t + W_r r_{t−1} + W_h h_{t−1} + b)  (the Elman core)
    w_t     = MLP(h_t) ∈ ℝ^m                                 (2 ReLU layers of 64, then linear)
    a_t     = softmax(W_a h_t + b_a) ∈ Δ⁴ = (stay, left, right, jump left, jump right)
    W       = M_{t−1} with cell 0 replaced by w_t            (write under the head)
    M_t[j]  = a_stay·W[j] + a_left·W[j+1] + a_right·W[j−1] + a_jl·W[j+n] + a_jr·W[j−n],

indices mod K: every action writes, then moves the head by 0, ±1 or ±n cells. The output is
o_t = h_t, read out as W_U ReLU(h_t) + b_U. Sizes follow their code: K = 40 cells of width
m = 8; d = ``d_model``; one core (``layers`` is not used).

n is read from the ids: the position of the first EOS (transduction inputs s_1…s_n EOS CLS^m),
else T − 1 (recognition / classification s_1…s_n CLS; a row right-padded with PAD: the first
PAD's position − 1). The jumps need the whole input's
length, which a next-symbol model must not know, so with ``jumps=False`` (our choice for
next-symbol tasks) only stay / left / right remain (a_t ∈ Δ²).

The step is written for few torch calls: W_x x_t + b for every t before the loop, a_t's logits
and the write MLP's first layer from one product per step, and the tape update as one row
selection (every action's moved tape, :func:`tape_index`) and one batched product
(:mod:`._memory`). Training's loss and its gradient are written out instead, without autograd
(:mod:`._tape_loss`, through :class:`~._recurrent.FusedLoss`, for one run and for R runs at
once); the modules here are the reference it is tested against, and what evaluation, vmap and
autocast run.

Example (one-hot actions): write a and move right, write b and move right, then move left
twice, each time writing back the value read (w_t = r_{t−1}) → the head is over a again.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ...languages.vocab import EOS_TOKEN, PAD
from ._memory import flat_rows, mix, take_flat, take_rows
from ._recurrent import FusedLoss, RecurrentModel, fused_targets
from ._tape_loss import param_grads, tape_loss, tape_loss_grads, tape_weights

TAPE_SIZE = 40  # K, cells (Delétang et al.'s example memory_size)
TAPE_CELL = 8  # m, width of a cell (their memory_cell_size)
MLP_SIZES = (64, 64)  # hidden layers of the write MLP (their mlp_layers_size)
STAY, LEFT, RIGHT, JUMP_LEFT, JUMP_RIGHT = range(5)  # order of the action weights a_t
SHIFT = {STAY: 0, LEFT: 1, RIGHT: -1}  # cell j after the move reads W[j + shift] (mod K)


def tape_update(M: Tensor, a: Tensor, w: Tensor, n: Tensor | int, index: Tensor | None = None) -> Tensor:
    """M_t from M_{t−1} (B, K, m), action weights a_t (B, 3 or 5), the written value w_t (B, m)
    and the jump length n (int or (B,) long); see the module docstring. ``index``: the
    :func:`tape_index` of these shapes and n, made once for a whole sequence. Returns (B, K, m)."""
    B, K, _ = M.shape
    W = torch.cat([w[:, None, :], M[:, 1:]], dim=1)  # write under the head
    jumps = a.shape[1] == 5
    if index is None:
        index = tape_index(B, K, n, jumps, M.device)
    return mix(a, (take_flat if jumps else take_rows)(W, index))


def tape_index(B: int, K: int, n: Tensor | int, jumps: bool, device=None) -> Tensor:
    """Which cell of W each cell j reads after each action, action by action in the order of
    a_t: W[j], W[j+1], W[j−1], and with ``jumps`` W[j+n], W[j−n] (mod K). Without jumps the
    same for every tape, (3K,) rows; with them per tape, (B·5K,) rows of the (B·K, m)
    matrix of B tapes (:func:`~._memory.flat_rows`)."""
    j = torch.arange(K, device=device)
    moves = torch.cat([(j + SHIFT[action]) % K for action in (STAY, LEFT, RIGHT)])  # (3K,)
    if not jumps:
        return moves
    n = torch.as_tensor(n, device=device).expand(B)[:, None]  # (B, 1)
    return flat_rows(torch.cat([moves.expand(B, 3 * K), (j + n) % K, (j - n) % K], dim=1), K)


def input_length(ids: Tensor) -> Tensor:
    """n per row of ids (B, T): the index of the first EOS, else the index of the first PAD
    − 1 (a row right-padded by the batched trainer, :mod:`..many`), else T − 1."""
    is_eos, is_pad = ids == EOS_TOKEN, ids == PAD
    first = is_eos.to(torch.int64).argmax(1)
    first_pad = is_pad.to(torch.int64).argmax(1) - 1
    unpadded = torch.where(is_pad.any(1), first_pad, torch.full_like(first, ids.shape[1] - 1))
    return torch.where(is_eos.any(1), first, unpadded)


class TapeRNN(FusedLoss, RecurrentModel):
    """Embedding → Elman core reading the cell under the head → ReLU → linear; see the module
    docstring."""

    def __init__(self, d_vocab: int, d_model: int, d_out: int, tape_size: int = TAPE_SIZE,
                 cell: int = TAPE_CELL, jumps: bool = True) -> None:
        super().__init__(d_vocab, d_model, d_out)
        self.K, self.m, self.jumps = tape_size, cell, jumps
        self.W_core = nn.Linear(d_model + cell + d_model, d_model)  # [W_x W_r W_h], b
        self.W_a = nn.Linear(d_model, 5 if jumps else 3)  # action logits
        sizes = (d_model, *MLP_SIZES)
        layers: list[nn.Module] = []
        for a, b in zip(sizes, sizes[1:]):
            layers += [nn.Linear(a, b), nn.ReLU()]
        self.write = nn.Sequential(*layers, nn.Linear(sizes[-1], cell))  # w_t = MLP(h_t)

    def core(self, ids: Tensor) -> Tensor:
        B, T = ids.shape
        d, K, m = self.embed.embedding_dim, self.K, self.m
        u = self.project(ids, self.W_core.weight[:, :d], self.W_core.bias)  # (T, B, d): W_x x_t + b
        w_rh = self.W_core.weight[:, d:].T  # [W_r W_h]ᵀ
        first, *rest = [layer for layer in self.write if isinstance(layer, nn.Linear)]
        W = torch.cat([self.W_a.weight, first.weight]).T  # a_t's logits and the MLP's first layer
        b = torch.cat([self.W_a.bias, first.bias])
        A = self.W_a.out_features
        index = tape_index(B, K, input_length(ids) if self.jumps else 0, self.jumps, ids.device)  # n is fixed: once
        h = u.new_zeros(B, d)
        M = u.new_zeros(B, K, m)  # (B, K, m), M[:, 0] = under the head
        outs = []
        for u_t in u.unbind(0):  # the recurrence is sequential in t; everything else is batched
            h = torch.tanh(torch.addmm(u_t, torch.cat([M[:, 0], h], dim=-1), w_rh))  # (B, d)
            logits, z = torch.addmm(b, h, W).split((A, first.out_features), dim=-1)
            for layer in rest:
                z = F.linear(torch.relu(z), layer.weight, layer.bias)
            M = tape_update(M, torch.softmax(logits, dim=-1), z, 0, index)
            outs.append(h)
        return torch.stack(outs)  # (T, B, d)

    # the training loss written out (:mod:`._tape_loss`): FusedLoss's scored_loss / loss_and_grads
    _modules_scored_loss = RecurrentModel.scored_loss

    def _loss_params(self) -> tuple[Tensor, ...]:
        linears = [layer for layer in self.write if isinstance(layer, nn.Linear)]
        return (self.embed.weight, self.unembed.weight, self.unembed.bias, self.W_core.weight, self.W_core.bias,
                self.W_a.weight, self.W_a.bias, *[t for layer in linears for t in (layer.weight, layer.bias)])

    def _index(self, ids: Tensor) -> Tensor:
        """:func:`tape_index` of the strings ids (B, T), their jump lengths read from the ids."""
        return tape_index(ids.shape[0], self.K, input_length(ids) if self.jumps else 0, self.jumps, ids.device)

    def _fused_arguments(self, inputs: Tensor, target: Tensor, mask: Tensor) -> tuple | None:
        if not self._written_out_applies(inputs):
            return None
        return (*fused_targets(inputs, target, mask), self._index(inputs), self.K, self.W_a.out_features), \
            self._loss_params()

    @staticmethod
    def _loss(data: tuple, params: tuple) -> tuple[Tensor, tuple]:
        return tape_loss(data, tape_weights(data[5], params))

    @staticmethod
    def _loss_grads(saved: tuple, g: Tensor) -> tuple:
        return param_grads(saved[4], tape_loss_grads(saved, g))

    def _runs_loss(self, data: tuple, params: tuple) -> tuple[Tensor, tuple]:
        ids, rows, p, counts = data  # ids (T, R, B): run r's string b is tape r·B + b
        T, R, B = ids.shape
        index = self._index(ids.permute(1, 2, 0).reshape(R * B, T))
        return self._loss((ids, rows, p, index, self.K, self.W_a.out_features, counts), params)

    def _runs_loss_grads(self, saved: tuple, g: Tensor) -> tuple:
        return self._loss_grads(saved, g)
