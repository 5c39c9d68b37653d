"""What the recurrent models share: token embedding in, ReLU + linear read-out per step.

x_t = W_E[s_t] (an embedding: the same as a linear map of the one-hot token, which is what
Delétang et al. feed their cores), o_t = the core's output at step t, logits_t = W_U ReLU(o_t)
+ b_U (their ``make_rnn`` read-out: ReLU, then one linear layer). Every model maps ids (B, T)
to logits (B, T, C); ``key_mask`` is accepted for the common signature and ignored (our batches
hold one length each, so there is no padding).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn


class RecurrentModel(nn.Module):
    """Embedding → ``step`` over t = 1..T (subclasses) → ReLU → linear."""

    def __init__(self, d_vocab: int, d_model: int, d_out: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(d_vocab, d_model)
        self.unembed = nn.Linear(d_model, d_out)

    def core(self, x: Tensor, ids: Tensor) -> Tensor:
        """Outputs o_1..o_T: (B, T, d_model) from embedded inputs x (B, T, d_model)."""
        raise NotImplementedError

    def forward(self, inputs: Tensor, key_mask: Tensor | None = None) -> Tensor:
        if inputs.dim() != 2:
            raise ValueError(f"token ids must have shape (B, T), got {tuple(inputs.shape)}")
        o = self.core(self.embed(inputs), inputs)  # (B, T, d_model)
        return self.unembed(torch.relu(o))  # (B, T, d_out)


def elman_step(cell: nn.Linear, x: Tensor, h: Tensor) -> Tensor:
    """h_t = tanh(W [x_t; h_{t−1}] + b): one Elman step with ``cell`` the stacked W, b."""
    return torch.tanh(cell(torch.cat([x, h], dim=-1)))
