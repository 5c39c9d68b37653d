"""One run's optimiser step with few calls: Adam and gradient clipping, torch's formulas.

A small model's step (d_model 64, batch 64) is a few hundred microseconds of arithmetic, so
what ``torch.optim.Adam.step`` and ``clip_grad_norm_`` do in Python around their kernels (group
the tensors by device and dtype, check flags, profile hooks) is a large part of it. Here the
kernels are called directly, on the same tensors, in the same order, so the update is the same
to the bit:

- clipping, g ← g · min(1, c / (‖g‖ + 10⁻⁶)) with ‖g‖ the norm of all gradients as one vector:
  the per-tensor norms (``_foreach_norm``), the norm of their stack, one ``_foreach_mul_``;
- Adam (β = (0.9, 0.999), ε = 10⁻⁸): m ← β₁m + (1 − β₁)g, v ← β₂v + (1 − β₂)g², θ ← θ − lr ·
  m̂ / (√v̂ + ε), as torch's fused kernel (``_fused_adam_``) after its step counts are
  incremented — what ``Adam(fused=True)`` calls, without its grouping.

:class:`LeanAdam` is a ``torch.optim.Adam`` (its state, ``state_dict`` and checkpoints are
torch's); it takes the direct path only where that is torch's own fused update (one parameter
group, every parameter with a dense gradient and its state made, one device and dtype, no
amsgrad, maximize, weight decay or tensor learning rate) and calls ``torch.optim.Adam.step``
otherwise, e.g. for the first step, which makes the state. :func:`adam_step` takes either.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

CLIP_EPS = 1e-6  # torch.nn.utils.clip_grad_norm_'s
FOREACH_DEVICES = ("cpu", "cuda")  # where torch's _foreach_norm and fused Adam run


class LeanAdam(torch.optim.Adam):
    """``torch.optim.Adam(params, lr, fused=True)`` with :meth:`lean_step`, the fused kernel
    called directly (see the module docstring), and a ``zero_grad`` that sets the gradients to
    None; ``step`` is torch's."""

    def __init__(self, params, lr: float) -> None:
        super().__init__(params, lr=lr, fused=True)
        tensors = [p for g in self.param_groups for p in g["params"]]
        self._one_kind = len(self.param_groups) == 1 and len({(p.device, p.dtype) for p in tensors}) == 1

    def zero_grad(self, set_to_none: bool = True) -> None:
        if not set_to_none:
            return super().zero_grad(set_to_none=False)
        for group in self.param_groups:
            for p in group["params"]:
                p.grad = None

    def _direct(self) -> bool:
        group = self.param_groups[0]
        return (self._one_kind and group["fused"] and not group["amsgrad"] and not group["maximize"]
                and not group["differentiable"] and not group["capturable"] and group["weight_decay"] == 0
                and not group.get("decoupled_weight_decay", False) and isinstance(group["lr"], float)
                and len(self.state) == len(group["params"]))

    def lean_step(self) -> None:
        """One Adam step: the fused kernel called directly where that is torch's update, else
        ``step()``. (``step`` itself is wrapped by torch.optim for its hooks and profiler
        label, which cost more than this whole update at small sizes.)"""
        if not self._direct():
            self.step()
            return
        group = self.param_groups[0]
        params = group["params"]
        grads = [p.grad for p in params]
        if any(g is None or g.is_sparse for g in grads):
            self.step()
            return
        states = [self.state[p] for p in params]
        steps = [s["step"] for s in states]
        beta1, beta2 = group["betas"]
        was = torch.is_grad_enabled()
        torch._C._set_grad_enabled(False)  # what Adam.step's no_grad does, without the context object
        try:
            torch._foreach_add_(steps, 1)
            torch._fused_adam_(params, grads, [s["exp_avg"] for s in states], [s["exp_avg_sq"] for s in states],
                               [], steps, amsgrad=False, lr=group["lr"], beta1=beta1, beta2=beta2,
                               weight_decay=0.0, eps=group["eps"], maximize=False, grad_scale=None, found_inf=None)
        finally:
            torch._C._set_grad_enabled(was)


def adam_step(opt: torch.optim.Optimizer) -> None:
    """``opt``'s step: :meth:`LeanAdam.lean_step` for a LeanAdam, else ``opt.step()``."""
    if isinstance(opt, LeanAdam):
        opt.lean_step()
    else:
        opt.step()


def make_adam(params, lr: float, device: torch.device) -> torch.optim.Adam:
    """Adam over ``params``: :class:`LeanAdam` where torch has a fused kernel (CPU, CUDA), else
    torch's foreach Adam (the same update)."""
    if device.type in FOREACH_DEVICES:
        return LeanAdam(params, lr)
    return torch.optim.Adam(params, lr=lr, foreach=True)


def clip_grad_norm(params: Sequence[torch.Tensor], max_norm: float) -> None:
    """g ← g · min(1, max_norm / (‖g‖ + 10⁻⁶)) over every gradient of ``params`` as one vector:
    ``torch.nn.utils.clip_grad_norm_(params, max_norm, foreach=True)``'s kernels, called directly
    when the gradients share one dtype on a device where foreach runs, else that function. (The
    gradients do not require grad, so no autograd graph is recorded either way.)"""
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return
    first = grads[0]
    if (first.device.type not in FOREACH_DEVICES or any(g.dtype != first.dtype or g.is_sparse for g in grads)
            or any(g.requires_grad for g in grads)):
        torch.nn.utils.clip_grad_norm_(params, max_norm, foreach=True)
        return
    total = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads, 2.0)), 2.0)
    torch._foreach_mul_(grads, torch.clamp(float(max_norm) / (total + CLIP_EPS), max=1.0))
