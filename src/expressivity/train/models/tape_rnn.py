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

Example (one-hot actions): write a and move right, write b and move right, then move left
twice, each time writing back the value read (w_t = r_{t−1}) → the head is over a again.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from ...languages.vocab import EOS_TOKEN, PAD
from ._recurrent import RecurrentModel, elman_step

TAPE_SIZE = 40  # K, cells (Delétang et al.'s example memory_size)
TAPE_CELL = 8  # m, width of a cell (their memory_cell_size)
MLP_SIZES = (64, 64)  # hidden layers of the write MLP (their mlp_layers_size)
STAY, LEFT, RIGHT, JUMP_LEFT, JUMP_RIGHT = range(5)  # order of the action weights a_t


def tape_update(M: Tensor, a: Tensor, w: Tensor, n: Tensor | int, index: list[Tensor] | None = None) -> Tensor:
    """M_t from M_{t−1} (B, K, m), action weights a_t (B, 3 or 5), the written value w_t (B, m)
    and the jump length n (int or (B,) long); see the module docstring. ``index``: the
    :func:`jump_index` of these shapes and n, computed once for a whole sequence. Returns (B, K, m)."""
    B, K, m = M.shape
    W = torch.cat([w[:, None, :], M[:, 1:]], dim=1)  # write under the head
    shifted = [W, W.roll(-1, dims=1), W.roll(1, dims=1)]  # stay: W[j], left: W[j+1], right: W[j−1]
    if a.shape[1] == 5:  # jump left: W[j+n], jump right: W[j−n]
        shifted += [W.gather(1, i) for i in (jump_index(B, K, m, n, M.device) if index is None else index)]
    moves = torch.stack(shifted, dim=1)  # (B, A, K, m)
    return (a[:, :, None, None] * moves).sum(1)


def jump_index(B: int, K: int, m: int, n: Tensor | int, device) -> list[Tensor]:
    """The gather indices (B, K, m) of the two jumps: cell j reads W[j+n], then W[j−n] (mod K)."""
    n = torch.as_tensor(n, device=device).expand(B)[:, None]  # (B, 1)
    j = torch.arange(K, device=device)[None, :]  # (1, K)
    return [((j + sign * n) % K)[:, :, None].expand(B, K, m) for sign in (1, -1)]


def input_length(ids: Tensor) -> Tensor:
    """n per row of ids (B, T): the index of the first EOS, else the index of the first PAD
    − 1 (a row right-padded by the batched trainer, :mod:`..many`), else T − 1."""
    is_eos, is_pad = ids == EOS_TOKEN, ids == PAD
    first = is_eos.to(torch.int64).argmax(1)
    first_pad = is_pad.to(torch.int64).argmax(1) - 1
    unpadded = torch.where(is_pad.any(1), first_pad, torch.full_like(first, ids.shape[1] - 1))
    return torch.where(is_eos.any(1), first, unpadded)


class TapeRNN(RecurrentModel):
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

    def core(self, x: Tensor, ids: Tensor) -> Tensor:
        B, T, d = x.shape
        n = input_length(ids) if self.jumps else 0
        h = x.new_zeros(B, d)
        M = x.new_zeros(B, self.K, self.m)  # (B, K, m), M[:, 0] = under the head
        index = jump_index(B, self.K, self.m, n, x.device) if self.jumps else None  # n is fixed: once
        outs = []
        for t in range(T):  # the recurrence is sequential in t; everything else is batched
            h = elman_step(self.W_core, x[:, t], M[:, 0], h)  # (B, d)
            M = tape_update(M, torch.softmax(self.W_a(h), dim=-1), self.write(h), n, index)
            outs.append(h)
        return torch.stack(outs, dim=1)  # (B, T, d)
