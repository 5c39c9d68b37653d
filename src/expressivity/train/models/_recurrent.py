"""What the recurrent models share: token embedding in, ReLU + linear read-out per step, and
the time loops themselves, written for few torch calls per step.

x_t = W_E[s_t] (an embedding: the same as a linear map of the one-hot token, which is what
Delétang et al. feed their cores), o_t = the core's output at step t, logits_t = W_U ReLU(o_t)
+ b_U (their ``make_rnn`` read-out: ReLU, then one linear layer). Every model maps ids (B, T)
to logits (B, T, C); ``key_mask`` is accepted for the common signature and ignored: the models
read causally, so padding after a row's end (the batched trainer's) changes none of its outputs.

Speed (one run's step is a few torch calls per time step, each with its own overhead):

- the part of a core that reads x_t is computed for every step before the loop, and through
  the embedding: W x_t + b = (W_E Wᵀ + b)[s_t], one (V × d) table looked up per token
  (:meth:`RecurrentModel.project`) instead of a (B·T × d) by (d × d) product, time-major
  (T, B, ·) so that each step reads, and its gradient writes, one contiguous block;
- the Elman recurrence (:class:`ElmanScan`) is one autograd node with its own backward pass
  (back-propagation through time written out, two calls per step each way);
- the other cores concatenate their per-step linears into one product per step.

Under ``torch.func.vmap`` (many runs as one batched model, :mod:`..many`) torch's fused RNN /
LSTM kernels and :class:`ElmanScan` have no batching rule; :func:`rnn_layers`,
:func:`lstm_layers` and :func:`lstm_gates` compute the same recurrences (torch's equations, its
parameters) from plain ops, and the models use them when their input is a vmapped tensor
(:func:`vmapped`).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ._runs import packed, readout_losses, readout_losses_grads, run_rows, runs_outer, scored_rows


class RecurrentModel(nn.Module):
    """Embedding → ``core`` over t = 1..T (subclasses) → ReLU → linear."""

    def __init__(self, d_vocab: int, d_model: int, d_out: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(d_vocab, d_model)
        self.unembed = nn.Linear(d_model, d_out)

    def core(self, ids: Tensor) -> Tensor:
        """Outputs o_1..o_T time-major, (T, B, d_model), from token ids (B, T)."""
        raise NotImplementedError

    def project(self, ids: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        """W x_t + b for every token, x_t = W_E[s_t], time-major: (T, B, rows of W) from ids
        (B, T), looked up in the table W_E Wᵀ + b (V rows) — the same values as the product of
        the embedded inputs, to float round-off. (Time-major: the loops read u_t as one
        contiguous block, and its gradient is written back the same way.)"""
        table = self.embed.weight @ weight.T
        return F.embedding(ids.T, table if bias is None else table + bias)

    def forward(self, inputs: Tensor, key_mask: Tensor | None = None) -> Tensor:
        if inputs.dim() != 2:
            raise ValueError(f"token ids must have shape (B, T), got {tuple(inputs.shape)}")
        o = self.core(inputs)  # (T, B, d_model)
        return self.unembed(torch.relu(o)).transpose(0, 1)  # (B, T, d_out)

    def scored_loss(self, inputs: Tensor, target: Tensor, mask: Tensor) -> Tensor:
        """The training loss, −(1/|S|) Σ_{(b,t) ∈ S} Σ_a p*_{b,t}(a) log softmax(logits_{b,t})_a over
        the scored positions S (``mask``, (B, T)); target (B, T, d_out). The same value as the
        soft cross-entropy of :meth:`forward`'s logits averaged over S, to float round-off, with
        the read-out applied at S only (a recognizer scores one position of T)."""
        if inputs.dim() != 2:
            raise ValueError(f"token ids must have shape (B, T), got {tuple(inputs.shape)}")
        o = self.core(inputs)  # (T, B, d_model), time-major: position t·B + b
        return scored_cross_entropy(lambda x: self.unembed(torch.relu(x)), o.flatten(0, 1), mask.T.flatten(),
                                    target.transpose(0, 1).flatten(0, 1))


def scored_cross_entropy(readout, o: Tensor, scored: Tensor, target: Tensor) -> Tensor:
    """−(1/|S|) Σ_{i ∈ S} Σ_a target_i(a) log softmax(readout(o_i))_a over the positions i with
    ``scored`` (N,) true: o (N, d) a core's outputs, target (N, C); the read-out applied to the
    scored rows only, its logits in float32 at least (bfloat16 under autocast is raised)."""
    rows = scored.nonzero().squeeze(1)
    logits = readout(o.index_select(0, rows))
    return F.cross_entropy(logits.to(torch.promote_types(logits.dtype, torch.float32)), target.index_select(0, rows))


class WrittenOutLoss(torch.autograd.Function):
    """A training loss written out as a forward function and its gradient, as one autograd node:
    ``apply(fns, data, *params)`` with fns = (loss(data, params) → (loss, saved),
    grads(saved, g) → one gradient per parameter, None for one the loss does not read); ``data`` is what takes no gradient (ids,
    scored rows, targets, sizes). The parameters are saved for backward (torch's check that
    they were not changed in place in between); the intermediates live on ``ctx``."""

    @staticmethod
    def forward(ctx, fns, data, *params: Tensor) -> Tensor:
        loss, saved = fns[0](data, params)
        ctx.save_for_backward(*params)
        ctx.fns, ctx.saved = fns, saved
        return loss

    @staticmethod
    def backward(ctx, g: Tensor):
        ctx.saved_tensors  # noqa: B018 — raises if a parameter was modified in place since forward
        return None, None, *ctx.fns[1](ctx.saved, g)


class RunsLoss:
    """``runs_loss_and_grads``: a model's training loss of R runs at once (train_many),
    written out. ``_runs_loss`` / ``_runs_loss_grads`` take R runs' stacked weights, in
    ``_loss_params``' order, and data (ids (T, R, B), rows (R, S), p (R, S, C), counts (R,))
    from :func:`scored_rows`, and return each run's loss (R,) and each run's own gradients."""

    def _loss_params(self) -> tuple[Tensor, ...] | None:
        """The parameters the written-out loss reads, in the order of its gradients (None where
        it does not apply to this model's configuration)."""
        raise NotImplementedError

    def _runs_loss(self, data: tuple, params: tuple) -> tuple[Tensor, tuple]:
        raise NotImplementedError

    def _runs_loss_grads(self, saved: tuple, g: Tensor) -> tuple:
        raise NotImplementedError

    def runs_loss_and_grads(self, params: dict[str, Tensor], inputs: Tensor, target: Tensor,
                            mask: Tensor) -> tuple[Tensor, dict[str, Tensor]] | None:
        """R runs of this architecture at once, no autograd: ``params`` each parameter stacked
        over the runs (``stack_module_state``'s names), inputs (R, B, T), target (R, B, T, C),
        mask (R, B, T) → (each run's :meth:`scored_loss` (R,), each parameter's gradient of its
        own run's loss, stacked, zero where the loss does not read it); None where the written-out
        loss does not apply (autocast, a configuration it does not cover)."""
        own = self._loss_params()
        if own is None or torch.is_autocast_enabled(inputs.device.type):
            return None
        name_of = {id(v): k for k, v in self.named_parameters()}
        names = [name_of[id(v)] for v in own]
        if sorted(names) != sorted(params):
            return None
        with torch.no_grad():
            losses, saved = self._runs_loss(scored_rows(inputs, target, mask), tuple(params[k] for k in names))
            grads = self._runs_loss_grads(saved, torch.ones_like(losses))
        return losses, {k: torch.zeros_like(params[k]) if g is None else g for k, g in zip(names, grads)}


class FusedLoss(RunsLoss):
    """``scored_loss`` and ``loss_and_grads`` of a model whose training loss is written out
    (``_loss``, ``_loss_grads``: see :class:`WrittenOutLoss`). ``_fused_arguments`` gives
    (data, params) — data starting with (ids (T, B) time-major, rows (|S|,) the scored positions
    t·B + b, p (|S|, C) their targets), params the parameters the loss reads, in the order of
    its gradients — or None where the modules' path applies (vmap, autocast);
    ``_modules_scored_loss`` is that path (:meth:`_written_out_applies` says which); R runs at
    once: :class:`RunsLoss`."""

    def _written_out_applies(self, inputs: Tensor) -> bool:
        """Whether the written-out loss serves ``inputs``: a plain (B, T) batch of ids, neither
        vmapped (train_many) nor under autocast."""
        return (inputs.dim() == 2 and not vmapped(self.embed.weight)
                and not torch.is_autocast_enabled(inputs.device.type))

    def _fused_arguments(self, inputs: Tensor, target: Tensor, mask: Tensor) -> tuple | None:
        raise NotImplementedError

    def _modules_scored_loss(self, inputs: Tensor, target: Tensor, mask: Tensor) -> Tensor:
        raise NotImplementedError

    @staticmethod
    def _loss(data: tuple, params: tuple) -> tuple[Tensor, tuple]:
        raise NotImplementedError

    @staticmethod
    def _loss_grads(saved: tuple, g: Tensor) -> tuple:
        raise NotImplementedError

    def scored_loss(self, inputs: Tensor, target: Tensor, mask: Tensor) -> Tensor:
        """:meth:`RecurrentModel.scored_loss`'s value as one autograd node (:class:`WrittenOutLoss`)."""
        args = self._fused_arguments(inputs, target, mask)
        if args is None:
            return self._modules_scored_loss(inputs, target, mask)
        data, params = args
        return WrittenOutLoss.apply((self._loss, self._loss_grads), data, *params)

    def loss_and_grads(self, inputs: Tensor, target: Tensor, mask: Tensor) -> Tensor:
        """:meth:`scored_loss`'s value (detached), its gradient added to every parameter's
        ``.grad`` (set where it is None), as ``scored_loss(...).backward()`` leaves them — the
        same code without autograd's graph and engine, whose bookkeeping costs about as much as
        a small network's backward pass. Under vmap, autocast or no_grad: scored_loss and
        backward."""
        args = self._fused_arguments(inputs, target, mask)
        if args is None or not torch.is_grad_enabled():
            loss = self.scored_loss(inputs, target, mask)
            loss.backward()
            return loss.detach()
        data, params = args
        with torch.no_grad():
            loss, saved = self._loss(data, params)
            grads = self._loss_grads(saved, torch.ones((), dtype=loss.dtype, device=loss.device))
            for param, grad in zip(params, grads):
                if grad is None:  # the loss does not read it (autograd leaves its .grad alone too)
                    continue
                if param.grad is None:
                    param.grad = grad
                else:
                    param.grad += grad
        return loss


def fused_targets(inputs: Tensor, target: Tensor, mask: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """(ids (T, B) time-major, rows (|S|,) the scored positions t·B + b, p (|S|, C) their
    targets) from a batch's ids (B, T), target (B, T, C) and mask (B, T)."""
    ids = inputs.T.contiguous()
    rows = mask.T.reshape(-1).nonzero().squeeze(1)
    return ids, rows, target.transpose(0, 1).reshape(ids.numel(), -1).index_select(0, rows)


def states_loss(H: Tensor, rows: Tensor, W_U: Tensor, b_U: Tensor, p: Tensor,
                counts: Tensor | None = None, relu: bool = True) -> tuple[Tensor, tuple]:
    """:func:`readout_loss` (ReLU read-out; linear with ``relu`` False) at the scored rows of
    a core's states H (T, B, d), time-major, rows the positions t·B + b (:func:`fused_targets`)
    → (loss, what :func:`states_loss_grads` needs). R runs (``counts`` (R,) given): H (T, R·B,
    d) the runs side by side, rows (R, S) each run's own positions
    (:func:`~._runs.scored_rows`), each run's loss (R,)."""
    T, B, d = H.shape
    if counts is None:
        top = H.view(T * B, d).index_select(0, rows)
        loss, R, logq = readout_loss(top, W_U, b_U, p, relu=relu)
    else:
        rows = run_rows(rows, counts.shape[0], B // counts.shape[0])  # into the runs' (T, R, B) side by side
        top = H.view(T * B, d).index_select(0, rows.view(-1)).view(*rows.shape, d)
        loss, R, logq = readout_losses(top, W_U, b_U, p, counts, relu=relu)
    return loss, (rows, p, top, R, logq, W_U, counts, (T, B), relu)


def states_loss_grads(saved: tuple, g: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """g · (∂loss/∂H (T, B, d), zero off the scored rows, ∂loss/∂W_U, ∂loss/∂b_U) of
    :func:`states_loss` (R runs: g (R,), each run's own)."""
    rows, p, top, R, logq, W_U, counts, (T, B), relu = saved
    d = top.shape[-1]
    if counts is None:
        dtop, dW_U, db_U = readout_loss_grads(g, p, logq, R, top, W_U, relu=relu)
        dH = dtop.new_zeros(T * B, d).index_copy_(0, rows, dtop)
    else:
        dtop, dW_U, db_U = readout_losses_grads(g, p, logq, R, top, W_U, counts, relu=relu)
        dH = dtop.new_zeros(T * B, d).index_add_(0, rows.view(-1), dtop.view(-1, d))
    return dH.view(T, B, d), dW_U, db_U


def readout_loss(top: Tensor, W_U: Tensor, b_U: Tensor, p: Tensor, relu: bool) -> tuple[Tensor, Tensor, Tensor]:
    """(loss, R, log q) at the scored rows: z_i = W_U R_i + b_U with R = ReLU(top) (or top),
    loss = −(1/|S|) Σ_i Σ_a p_i(a) log softmax(z_i)_a."""
    R = top.clamp_min(0) if relu else top
    logq = torch.log_softmax(torch.addmm(b_U, R, W_U.T), -1)
    return -(p * logq).sum() / p.shape[0], R, logq


def readout_loss_grads(g: Tensor, p: Tensor, logq: Tensor, R: Tensor, top: Tensor, W_U: Tensor,
                       relu: bool) -> tuple[Tensor, Tensor, Tensor]:
    """g · (∂loss/∂top, ∂loss/∂W_U, ∂loss/∂b_U) of :func:`readout_loss`: ∂loss/∂z_i =
    (softmax(z_i) Σ_a p_i(a) − p_i) / |S|, through the read-out (ReLU' = [top > 0])."""
    dz = (logq.exp() * p.sum(1, keepdim=True) - p).mul_(g / p.shape[0])
    dtop = dz @ W_U
    return (torch.ops.aten.threshold_backward(dtop, top, 0) if relu else dtop), dz.T @ R, dz.sum(0)


class ElmanScan(torch.autograd.Function):
    """h_t = tanh(u_t + W h_{t−1}), h_0 = 0, for t = 1..T: U (T, B, d) time-major (u_t: the
    input part and both biases), W (d, d) → H (T, B, d). Backward (through time), with
    z_t = u_t + W h_{t−1} and g_t = ∂L/∂h_t (the output's gradient plus Wᵀ-carried
    δ_{t+1}):

        δ_t = g_t ⊙ (1 − h_t²),   g_t = ∂L/∂H_t + δ_{t+1} W,   ∂L/∂U = δ,
        ∂L/∂W = Σ_{t ≥ 2} δ_tᵀ h_{t−1}   (one product over all steps).
    """

    @staticmethod
    def forward(ctx, U: Tensor, W: Tensor) -> Tensor:
        H = elman_forward(U, W)
        ctx.save_for_backward(H, W)
        return H

    @staticmethod
    def backward(ctx, dH: Tensor) -> tuple[Tensor, Tensor]:
        H, W = ctx.saved_tensors
        return elman_backward(H, W, dH)


def elman_forward(U: Tensor, W: Tensor, in_place: bool = False, active: list[int] | None = None) -> Tensor:
    """:class:`ElmanScan`'s forward loop (no autograd): H (T, B, d) from U (T, B, d), W (d, d);
    R runs at once: U (T, R, B, d), W (R, d, d), each run its own W, and ``active``: step t's
    first a_t runs only (:func:`~._runs.active_runs`; the others keep U). ``in_place``: H is
    written over U (a caller's own intermediate)."""
    H = U if in_place else U.clone(memory_format=torch.contiguous_format)
    Wt, add_product = W.transpose(-1, -2), _add_product(W)
    h = H.unbind(0)  # every step's view made at once (indexing makes one per call)
    if active is None:
        h[0].tanh_()
        for t in range(1, len(h)):
            add_product(h[t], h[t - 1], Wt).tanh_()
        return H
    h = packed(h, active)
    h[0].tanh_()
    for t in range(1, len(h)):
        a = active[t]
        if a:
            add_product(h[t], h[t - 1][:a], Wt[:a]).tanh_()
    return H


def _add_product(W: Tensor):
    """out += a @ b in place: ``addmm_`` for one run's (d, d) weights, ``baddbmm_`` for R runs'."""
    return Tensor.addmm_ if W.dim() == 2 else Tensor.baddbmm_


def tanh_backward_(g: Tensor, h: Tensor) -> Tensor:
    """g ⊙ (1 − h²) in place, h = tanh(z): ∂L/∂z from g = ∂L/∂h, one fused pass (the slope
    1 − h² as a tensor of its own costs two more passes over every step's states)."""
    return torch.ops.aten.tanh_backward.grad_input(g, h, grad_input=g)


def elman_backward(H: Tensor, W: Tensor, dH: Tensor, in_place: bool = False,
                   active: list[int] | None = None) -> tuple[Tensor, Tensor]:
    """:class:`ElmanScan`'s back-propagation through time (no autograd): (δ = ∂L/∂U, ∂L/∂W)
    from the outputs H and their gradient dH (T, B, d), or R runs' (T, R, B, d) with W (R, d,
    d) and ``active`` as :func:`elman_forward` (dH zero on the runs a step leaves out, and δ
    then too); ``in_place``: δ is written over dH."""
    T, d = H.shape[0], H.shape[-1]
    delta = dH if in_place else dH.clone(memory_format=torch.contiguous_format)
    dl, h, add_product = packed(delta.unbind(0), active), packed(H.unbind(0), active), _add_product(W)
    tanh_backward_(dl[T - 1], h[T - 1])
    for t in range(T - 2, -1, -1):
        if active is None:
            tanh_backward_(add_product(dl[t], dl[t + 1], W), h[t])
            continue
        a = active[t + 1]
        if a:
            add_product(dl[t][:a], dl[t + 1], W[:a])
        tanh_backward_(dl[t], h[t])
    if W.dim() == 2:
        return delta, delta[1:].reshape(-1, d).T @ H[:-1].reshape(-1, d)
    return delta, runs_outer(delta[1:], H[:-1], None if active is None else active[1:])


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


def both_biases(b_ih: Tensor | None, b_hh: Tensor | None) -> Tensor | None:
    """b_ih + b_hh (torch splits an RNN's or LSTM's bias in two); None without biases."""
    return None if b_ih is None else b_ih + b_hh


def rnn_layers(rnn: nn.RNN, u: Tensor) -> Tensor:
    """torch.nn.RNN's recurrence (tanh, h_0 = 0), time-major: h_t = tanh(W_ih x_t + b_ih +
    W_hh h_{t−1} + b_hh) per layer, from layer 0's input part u = W_ih x + b_ih + b_hh
    (T, B, d) → (T, B, d). Outside vmap each layer is one :class:`ElmanScan`; under vmap
    plain ops."""
    x = u
    for layer in range(rnn.num_layers):
        w_ih, w_hh, b_ih, b_hh = _layer_weights(rnn, layer)
        if layer > 0:
            u = _affine(x, w_ih, both_biases(b_ih, b_hh))  # (T, B, d): the input part of every step at once
        if not vmapped(u):
            x = ElmanScan.apply(u.contiguous(), w_hh)
            continue
        h = u.new_zeros(u.shape[1], rnn.hidden_size)
        outs = []
        for u_t in u.unbind(0):
            h = torch.tanh(u_t + h @ w_hh.T)
            outs.append(h)
        x = torch.stack(outs)
    return x


def lstm_gates(gates: Tensor, c: Tensor) -> tuple[Tensor, Tensor]:
    """(h', c') from the pre-activations (B, 4d) = (i, f, g, o) and c (B, d): torch's gates,
    c' = σ(f) ⊙ c + σ(i) ⊙ tanh(g), h' = σ(o) ⊙ tanh(c'). (σ is taken of all four blocks at
    once and the g block's is not used: one call instead of three.)"""
    d = c.shape[-1]
    i, f, _, o = torch.sigmoid(gates).chunk(4, dim=-1)
    c = torch.addcmul(f * c, i, torch.tanh(gates[..., 2 * d:3 * d]))
    return o * torch.tanh(c), c


def lstm_layers(lstm: nn.LSTM, x: Tensor, u: Tensor | None = None) -> Tensor:
    """torch.nn.LSTM (batch_first, zero initial state) from plain ops. (B, T, d_in) → (B, T, d).
    ``u``: layer 0's W_ih x + b_ih + b_hh already computed (x is then not read)."""
    for layer in range(lstm.num_layers):
        w_ih, w_hh, b_ih, b_hh = _layer_weights(lstm, layer)
        if u is None or layer > 0:
            u = _affine(x, w_ih, both_biases(b_ih, b_hh))  # the input part of every step at once
        h = c = u.new_zeros(u.shape[0], lstm.hidden_size)
        outs = []
        for u_t in u.unbind(1):
            h, c = lstm_gates(torch.addmm(u_t, h, w_hh.T) if not vmapped(u_t) else u_t + h @ w_hh.T, c)
            outs.append(h)
        x = torch.stack(outs, dim=1)
    return x
