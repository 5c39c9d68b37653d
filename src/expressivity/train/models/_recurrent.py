"""What the recurrent models share: token embedding in, ReLU + linear read-out per step.

x_t = W_E[s_t] (an embedding: the same as a linear map of the one-hot token, which is what
Delétang et al. feed their cores), o_t = the core's output at step t, logits_t = W_U ReLU(o_t)
+ b_U (their ``make_rnn`` read-out: ReLU, then one linear layer). Every model maps ids (B, T)
to logits (B, T, C); ``key_mask`` is accepted for the common signature and ignored: the models
read causally, so padding after a row's end (the batched trainer's) changes none of its outputs.

Under ``torch.func.vmap`` (many runs as one batched model, :mod:`..many`) torch's fused RNN /
LSTM kernels have no batching rule; :func:`rnn_layers`, :func:`lstm_layers` and
:func:`lstm_cell` compute the same recurrences (torch's equations, its parameters) from
plain ops, and the models use them when their input is a vmapped tensor (:func:`vmapped`).
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


def elman_step(cell: nn.Linear, *parts: Tensor) -> Tensor:
    """h_t = tanh(W [p_1; …; p_k] + b): one Elman step with ``cell`` the stacked W, b, reading
    the parts (x_t, what the memory gives, h_{t−1}) joined by one concatenation."""
    return torch.tanh(cell(torch.cat(parts, dim=-1)))


def vmapped(t: Tensor) -> bool:
    """Whether ``t`` is one run's slice under ``torch.func.vmap``."""
    return torch._C._functorch.is_batchedtensor(t)


def _layer_weights(module: nn.Module, layer: int) -> tuple[Tensor, Tensor, Tensor | None, Tensor | None]:
    w_ih, w_hh = getattr(module, f"weight_ih_l{layer}"), getattr(module, f"weight_hh_l{layer}")
    bias = getattr(module, "bias", True)
    b_ih = getattr(module, f"bias_ih_l{layer}") if bias else None
    b_hh = getattr(module, f"bias_hh_l{layer}") if bias else None
    return w_ih, w_hh, b_ih, b_hh


def _affine(x: Tensor, w: Tensor, b: Tensor | None) -> Tensor:
    y = x @ w.T
    return y if b is None else y + b


def rnn_layers(rnn: nn.RNN, x: Tensor) -> Tensor:
    """torch.nn.RNN (tanh, batch_first, h_0 = 0) from plain ops: h_t = tanh(W_ih x_t + b_ih +
    W_hh h_{t−1} + b_hh) per layer. (B, T, d_in) → (B, T, d)."""
    for layer in range(rnn.num_layers):
        w_ih, w_hh, b_ih, b_hh = _layer_weights(rnn, layer)
        u = _affine(x, w_ih, b_ih)  # (B, T, d): the input part of every step at once
        h = x.new_zeros(x.shape[0], rnn.hidden_size)
        outs = []
        for t in range(x.shape[1]):
            h = torch.tanh(u[:, t] + _affine(h, w_hh, b_hh))
            outs.append(h)
        x = torch.stack(outs, dim=1)
    return x


def lstm_cell(x: Tensor, state: tuple[Tensor, Tensor], w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None,
              b_hh: Tensor | None, u: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """One LSTM step, torch's gates: (i, f, g, o) = (σ, σ, tanh, σ)(W_ih x + b_ih + W_hh h + b_hh),
    c' = f ⊙ c + i ⊙ g, h' = o ⊙ tanh c'. ``u``: W_ih x + b_ih already computed."""
    h, c = state
    gates = (_affine(x, w_ih, b_ih) if u is None else u) + _affine(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, dim=-1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c), c


def lstm_layers(lstm: nn.LSTM, x: Tensor) -> Tensor:
    """torch.nn.LSTM (batch_first, zero initial state) from plain ops. (B, T, d_in) → (B, T, d)."""
    for layer in range(lstm.num_layers):
        w_ih, w_hh, b_ih, b_hh = _layer_weights(lstm, layer)
        u = _affine(x, w_ih, b_ih)
        zero = x.new_zeros(x.shape[0], lstm.hidden_size)
        state = (zero, zero)
        outs = []
        for t in range(x.shape[1]):
            state = lstm_cell(x[:, t], state, w_ih, w_hh, b_ih, b_hh, u=u[:, t])
            outs.append(state[0])
        x = torch.stack(outs, dim=1)
    return x
