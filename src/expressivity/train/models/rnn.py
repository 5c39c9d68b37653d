"""Elman RNN (Elman 1990), the benchmark's ``rnn``: h_t = tanh(W_x x_t + W_h h_{t−1} + b), h_0 = 0.

``layers`` cores are stacked (layer ℓ reads layer ℓ−1's h_t); the read-out is
logits_t = W_U ReLU(h_t) + b_U as in Delétang et al. (2023). torch.nn.RNN with tanh computes
exactly this recurrence (it splits b into b_ih + b_hh); its parameters are the model's, but the
loop is ours (:func:`~._recurrent.rnn_layers`: layer 0's input part looked up through the
embedding, the recurrence one :class:`~._recurrent.ElmanScan` node per layer).

The training loss (:meth:`RNNModel.scored_loss`) is one autograd node for the whole network,
:class:`ElmanScoredLoss`: one run's step at the benchmark's size is a few hundred microseconds
of arithmetic, and each autograd node costs a few microseconds forward and back.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from ._recurrent import (
    RecurrentModel,
    both_biases,
    elman_backward,
    elman_forward,
    rnn_layers,
    vmapped,
)


class RNNModel(RecurrentModel):
    """Embedding → ``layers`` stacked Elman (tanh) layers, hidden = d_model → ReLU → linear."""

    def __init__(self, d_vocab: int, d_model: int, layers: int, d_out: int) -> None:
        super().__init__(d_vocab, d_model, d_out)
        self.rnn = nn.RNN(d_model, d_model, num_layers=layers, nonlinearity="tanh", batch_first=True)

    def core(self, ids: Tensor) -> Tensor:
        rnn = self.rnn
        u = self.project(ids, rnn.weight_ih_l0, both_biases(rnn.bias_ih_l0, rnn.bias_hh_l0))  # (T, B, d_model)
        return rnn_layers(rnn, u)  # (T, B, d_model)

    def scored_loss(self, inputs: Tensor, target: Tensor, mask: Tensor) -> Tensor:
        """:meth:`.RecurrentModel.scored_loss` as one :class:`ElmanScoredLoss` node (outside vmap
        and autocast; the modules' path there)."""
        if (inputs.dim() != 2 or vmapped(self.embed.weight) or torch.is_autocast_enabled(inputs.device.type)
                or not self.rnn.bias):
            return super().scored_loss(inputs, target, mask)
        ids = inputs.T.contiguous()  # (T, B), time-major: position t·B + b
        rows = mask.T.reshape(-1).nonzero().squeeze(1)
        p = target.transpose(0, 1).reshape(ids.numel(), -1).index_select(0, rows)
        rnn = self.rnn
        layers = [w for ell in range(rnn.num_layers) for w in (getattr(rnn, f"weight_ih_l{ell}"),
                  getattr(rnn, f"weight_hh_l{ell}"), getattr(rnn, f"bias_ih_l{ell}"), getattr(rnn, f"bias_hh_l{ell}"))]
        return ElmanScoredLoss.apply(ids, rows, p, self.embed.weight, self.unembed.weight, self.unembed.bias, *layers)


class ElmanScoredLoss(torch.autograd.Function):
    """The rnn's training loss from token ids to the mean cross-entropy, forward and backward
    written out (one autograd node):

        U¹ = (W_E W_ih¹ᵀ + b_ih¹ + b_hh¹)[s]     (the input part through the embedding),
        Uˡ = Hˡ⁻¹ W_ihˡᵀ + b_ihˡ + b_hhˡ,   Hˡ = ElmanScan(Uˡ, W_hhˡ),
        z_i = W_U ReLU(H_i) + b_U at the scored positions i ∈ S,
        loss = −(1/|S|) Σ_i Σ_a p_i(a) log softmax(z_i)_a;

    backward: ∂loss/∂z_i = (softmax(z_i) Σ_a p_i(a) − p_i) / |S|, through the read-out to
    ∂L/∂H (zero off S), :func:`~._recurrent.elman_backward` per layer from the top, the input
    parts' gradients into their weights (layer 1: the table's rows summed by token, then
    W_E and W_ih¹). Arguments: ids (T, B) time-major, rows (|S|,) positions t·B + b, p (|S|, C),
    W_E, W_U, b_U, then (W_ih, W_hh, b_ih, b_hh) per layer.
    """

    @staticmethod
    def forward(ctx, ids: Tensor, rows: Tensor, p: Tensor, E: Tensor, W_U: Tensor, b_U: Tensor,
                *layers: Tensor) -> Tensor:
        T, B = ids.shape
        flat = ids.reshape(-1)
        Hs = []
        for ell in range(len(layers) // 4):
            W_ih, W_hh, b_ih, b_hh = layers[4 * ell:4 * ell + 4]
            if ell == 0:
                U = torch.addmm(b_ih + b_hh, E, W_ih.T).index_select(0, flat)
            else:
                U = torch.addmm(b_ih + b_hh, Hs[-1].view(T * B, -1), W_ih.T)
            Hs.append(elman_forward(U.view(T, B, -1), W_hh))
        top = Hs[-1].view(T * B, -1).index_select(0, rows)
        R = top.clamp_min(0)
        logq = torch.log_softmax(torch.addmm(b_U, R, W_U.T), -1)
        ctx.save_for_backward(flat, rows, p, E, W_U, top, R, logq, *layers, *Hs)
        ctx.shape = (T, B)
        return -(p * logq).sum() / rows.numel()

    @staticmethod
    def backward(ctx, g: Tensor):
        flat, rows, p, E, W_U, top, R, logq, *rest = ctx.saved_tensors
        T, B = ctx.shape
        n_layers = len(rest) // 5
        layers, Hs = rest[:4 * n_layers], rest[4 * n_layers:]
        dz = (logq.exp() * p.sum(1, keepdim=True) - p).mul_(g / rows.numel())
        dW_U, db_U = dz.T @ R, dz.sum(0)
        dR = (dz @ W_U).mul_(top > 0)
        dH = dR.new_zeros(T * B, dR.shape[1]).index_copy_(0, rows, dR)
        grads: list[Tensor | None] = [None] * len(layers)
        dE = None
        for ell in range(n_layers - 1, -1, -1):
            W_ih, W_hh = layers[4 * ell], layers[4 * ell + 1]
            delta, grads[4 * ell + 1] = elman_backward(Hs[ell], W_hh, dH.view(T, B, -1))
            delta = delta.view(T * B, -1)
            if ell == 0:
                dtable = delta.new_zeros(E.shape[0], delta.shape[1]).index_add_(0, flat, delta)
                grads[0], dE, db = dtable.T @ E, dtable @ W_ih, dtable.sum(0)
            else:
                x = Hs[ell - 1].view(T * B, -1)
                grads[4 * ell], db = delta.T @ x, delta.sum(0)
                dH = delta @ W_ih
            grads[4 * ell + 2] = grads[4 * ell + 3] = db
        return None, None, None, dE, dW_U, db_U, *grads
