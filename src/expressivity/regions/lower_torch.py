"""Torch modules → the regions IR by tracing (``torch.fx.symbolic_trace``).

Every traced tensor is carried as an *affine function of the current state* y ∈ R^d: a float64
tensor V of shape (d + 2, *shape) whose rows are [c, 0, M_1, …, M_d] — the value is
c + Σ_k y_k M_k. An affine op f (Linear, Conv, BatchNorm in eval mode, average pooling,
reshapes, residual adds, concatenation, …) is run by torch itself on those rows, batch-wise:
f(c) is row 0, f(0) row 1 and f(M_k) − f(0) the linear part (no cancellation against c), so
BatchNorm folds into the affine map and a conv is applied exactly, in any stride, padding,
dilation or groups.

A piecewise-linear node ends a stage: its pre-activation p = y W + b is read off its rows, and
the node becomes IR ops whose outputs r are the next state's channels, with the node's value
affine in r:

* ReLU: r = relu(p);  LeakyReLU / PReLU with slopes a (fixed): r = max(s p, s a p) (a
  GroupMax of two pieces, s = 1 when a ≤ 1, else −1), value s r;
* Hardtanh / ReLU6 / clamp to [lo, hi]: r = relu([p − lo, p − hi]), value lo + r₁ − r₂;
* MaxPool (any kernel, stride, padding, dilation, ceil mode; adaptive too): a GroupMax over
  each window (windows read off the pool applied to one-hot inputs; a short window repeats
  its first member).

When tensors computed before the node are still needed after it (a skip connection), the state
keeps the columns they depend on and the node is a ``Residual`` whose body writes r into fresh
zero channels: y' = [y_U, 0] + body(y). The lowered program equals the module in float64.

Refused, with a ValueError naming the node: anything not piecewise linear (LayerNorm, softmax,
GELU, sigmoid, …), BatchNorm in train mode or without running statistics (depends on the batch),
Dropout in train mode (random), products of two input-dependent tensors, ops that mix the batch,
and a subclass of a supported module with its own ``forward`` (it is not the base class).
"""

from __future__ import annotations

import copy
import math
import operator

import numpy as np

from ..memory import check_memory
from .ir import Affine, Embed, GroupMax, Program, Read, ReLU, Residual

_MAX_WINDOW_CELLS = 50_000_000  # one-hot probe of a max pool: in × out booleans


class _Aff:
    """An input-dependent tensor: rows [c, 0, M_1..M_d] of shape (d + 2, *shape)."""

    __slots__ = ("t",)

    def __init__(self, t):
        self.t = t


def _types():
    """Module types, by role (built lazily: torch is imported at this boundary only)."""
    from torch import nn

    affine = (nn.Linear, nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.ConvTranspose1d, nn.ConvTranspose2d,
              nn.ConvTranspose3d, nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d, nn.AvgPool1d, nn.AvgPool2d,
              nn.AvgPool3d, nn.AdaptiveAvgPool1d, nn.AdaptiveAvgPool2d, nn.AdaptiveAvgPool3d, nn.Flatten,
              nn.Unflatten, nn.Identity, nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout,
              nn.ZeroPad1d, nn.ZeroPad2d, nn.ZeroPad3d, nn.ConstantPad1d, nn.ConstantPad2d, nn.ConstantPad3d)
    pwl = (nn.ReLU, nn.LeakyReLU, nn.PReLU, nn.ReLU6, nn.Hardtanh, nn.MaxPool1d, nn.MaxPool2d, nn.MaxPool3d,
           nn.AdaptiveMaxPool1d, nn.AdaptiveMaxPool2d, nn.AdaptiveMaxPool3d)
    not_pwl = (nn.LayerNorm, nn.GroupNorm, nn.InstanceNorm1d, nn.InstanceNorm2d, nn.InstanceNorm3d,
               nn.LocalResponseNorm, nn.RMSNorm, nn.Softmax, nn.Softmax2d, nn.LogSoftmax, nn.Softmin, nn.GELU,
               nn.SiLU, nn.Mish, nn.Sigmoid, nn.Tanh, nn.ELU, nn.CELU, nn.SELU, nn.Softplus, nn.Softsign,
               nn.Hardsigmoid, nn.Hardswish, nn.Tanhshrink, nn.LogSigmoid, nn.MultiheadAttention, nn.Bilinear)
    return affine, pwl, not_pwl


def _base_of(mod, handled):
    """The most derived class in ``handled`` that ``mod`` is an instance of (None: none)."""
    return next((c for c in type(mod).__mro__ if c in handled), None)


def trace(model):
    """``torch.fx`` graph of ``model`` with every supported / known nn module kept as one node
    (subclasses too, so that one with its own ``forward`` is seen and refused)."""
    from torch import fx, nn

    affine, pwl, not_pwl = _types()
    known = affine + pwl + not_pwl

    class _Tracer(fx.Tracer):
        def is_leaf_module(self, m, qualname):
            return isinstance(m, known) or (super().is_leaf_module(m, qualname) and not isinstance(m, nn.Sequential))

    try:
        graph = _Tracer().trace(model)
    except Exception as exc:  # fx raises TraceError, TypeError, NotImplementedError, … on dynamic code
        msg = " ".join(str(exc).split())[:200]
        raise ValueError(f"cannot trace {type(model).__name__} with torch.fx ({type(exc).__name__}: {msg}); "
                         "only modules without input-dependent control flow lower to the regions IR") from None
    return fx.GraphModule(model, graph)


def lower_module(model, input_shape=None) -> Program:
    """A torch ``nn.Module`` (see the module docstring for what it may contain) → :class:`Program`
    on the flattened input (C-order) of one sample of shape ``input_shape`` (without the batch
    dimension; default: the module's own ``input_shape`` attribute if it has one (a conv net
    read from a layers JSON), else inferred when the input goes straight into a Linear)."""
    import torch
    from torch import nn

    if not isinstance(model, nn.Module):
        raise ValueError(f"expected a torch nn.Module, got {type(model).__name__}")
    model64 = copy.deepcopy(model).to(torch.float64)  # the caller's module is never changed
    gm = trace(model64)
    nodes = list(gm.graph.nodes)
    placeholders = [n for n in nodes if n.op == "placeholder"]
    if len(placeholders) != 1:
        raise ValueError(f"{type(model).__name__}.forward takes {len(placeholders)} inputs; the regions IR lowers "
                         "a module of one input tensor")
    if input_shape is None:
        input_shape = getattr(model, "input_shape", None)  # e.g. set from a layers JSON (interop.torch_in)
    if input_shape is None:
        input_shape = _infer_shape(gm, placeholders[0])
    shape = _check_shape(input_shape)
    with torch.no_grad():
        return _Lowering(gm, nodes, shape, type(model).__name__).run()


def _check_shape(input_shape) -> tuple[int, ...]:
    if isinstance(input_shape, int) and not isinstance(input_shape, bool):
        input_shape = (input_shape,)
    try:
        shape = tuple(int(s) for s in input_shape)
    except (TypeError, ValueError):
        raise ValueError(f"input_shape must be a tuple of positive ints, got {input_shape!r}") from None
    if not shape or any(s < 1 for s in shape) or shape != tuple(input_shape):
        raise ValueError(f"input_shape must be a non-empty tuple of positive ints, got {input_shape!r}")
    return shape


def _infer_shape(gm, ph) -> tuple[int, ...]:
    import torch.nn.functional as F
    from torch import nn

    for user in ph.users:
        if user.op == "call_module" and isinstance(gm.get_submodule(user.target), nn.Linear):
            return (gm.get_submodule(user.target).in_features,)
        if user.op == "call_function" and user.target is F.linear and isinstance(user.args[1], type(ph)):
            w = _fetch_attr(gm, user.args[1].target) if user.args[1].op == "get_attr" else None
            if w is not None:
                return (w.shape[1],)
    raise ValueError("the input shape of the module is unknown (its input does not go straight into a Linear): "
                     "give input_shape=(C, H, W) (lower(model, input_shape=...), count_regions(..., "
                     "input_shape=...)) or count on Plane.through(x1, x2, x3)")


def _fetch_attr(gm, target: str):
    obj = gm
    for part in target.split("."):
        obj = getattr(obj, part)
    return obj


def _arg(node_args, kwargs, pos: int, name: str, default):
    if name in kwargs:
        return kwargs[name]
    return node_args[pos] if len(node_args) > pos else default


class _Lowering:
    """One pass over the traced nodes, building the IR ops."""

    def __init__(self, gm, nodes, shape, model_name):
        self.gm, self.nodes, self.shape, self.model_name = gm, nodes, shape, model_name
        self.n = math.prod(shape)
        self.d = self.n  # the state width
        self.ops: list = [Embed(np.eye(self.n)[:, None, :], np.zeros((1, self.n)))]
        self.env: dict = {}
        index = {node: i for i, node in enumerate(nodes)}
        self.last_use = {node: max((index[u] for u in node.users), default=-1) for node in nodes}
        self.index = index

    # ------------------------------------------------------------------ the walk
    def run(self) -> Program:
        import torch
        from torch import fx

        for node in self.nodes:
            self.node = node
            if node.op == "placeholder":
                t = torch.zeros((self.d + 2, *self.shape), dtype=torch.float64)
                t[2:] = torch.eye(self.n, dtype=torch.float64).reshape(self.n, *self.shape)
                self.env[node] = _Aff(t)
            elif node.op == "get_attr":
                self.env[node] = _fetch_attr(self.gm, node.target)
            elif node.op == "output":
                return self._finish(fx.node.map_arg(node.args[0], lambda a: self.env[a]))
            else:
                args = fx.node.map_arg(node.args, lambda a: self.env[a])
                kwargs = fx.node.map_arg(node.kwargs, lambda a: self.env[a])
                try:
                    self.env[node] = self._call(node, args, kwargs)
                except (RuntimeError, TypeError, IndexError, AttributeError) as exc:  # torch's own complaint
                    msg = " ".join(str(exc).split())[:240]
                    self._refuse(f"torch raised {type(exc).__name__} ({msg}); is input_shape={self.shape} right?")
            for a in node.all_input_nodes:  # free what is no longer needed
                if self.last_use[a] <= self.index[node]:
                    self.env.pop(a, None)
        raise ValueError("the traced graph has no output")  # pragma: no cover

    def _where(self) -> str:
        node = self.node
        if node.op == "call_module":
            mod = self.gm.get_submodule(node.target)
            return f"module {node.target} ({type(mod).__name__})"
        name = getattr(node.target, "__name__", str(node.target))
        return f"{'method' if node.op == 'call_method' else 'function'} {name} (node {node.name})"

    def _refuse(self, reason: str):
        raise ValueError(f"cannot lower {self._where()} of {self.model_name}: {reason}")

    # ------------------------------------------------------------------ dispatch
    def _call(self, node, args, kwargs):
        if node.op == "call_module":
            return self._module(self.gm.get_submodule(node.target), args, kwargs)
        deps = _has_aff(args) or _has_aff(kwargs)
        if not deps:  # constants and shape arithmetic: evaluated as they are
            if node.op == "call_method":
                return getattr(args[0], node.target)(*args[1:], **kwargs)
            return node.target(*args, **kwargs)
        if node.op == "call_method":
            return self._method(node.target, args, kwargs)
        return self._function(node.target, args, kwargs)

    def _module(self, mod, args, kwargs):
        from torch import nn

        affine, pwl, not_pwl = _types()
        base = _base_of(mod, affine + pwl + not_pwl)
        if base is not None and type(mod) is not base and type(mod).forward is not base.forward:
            self._refuse(f"a subclass of nn.{base.__name__} with its own forward; it is not lowered as "
                         f"nn.{base.__name__} (use nn.{base.__name__} itself, or write the forward from supported ops)")
        if base in not_pwl:
            self._refuse(_not_pwl_reason(base.__name__))
        if base is None:
            self._refuse("not a piecewise-linear module in the supported set (Linear, Conv, BatchNorm (eval), "
                         "ReLU, LeakyReLU, PReLU, ReLU6, Hardtanh, MaxPool, AvgPool, AdaptiveAvgPool, Flatten, "
                         "Dropout (eval))")
        if not _has_aff(args) and not _has_aff(kwargs):
            return mod(*args, **kwargs)
        if isinstance(mod, nn.modules.batchnorm._BatchNorm):
            if mod.training and mod.track_running_stats:
                self._refuse("BatchNorm in train mode depends on the batch (normalises by batch statistics): "
                             "call model.eval() first")
            if mod.running_mean is None:
                self._refuse("BatchNorm without running statistics depends on the batch even in eval mode "
                             "(track_running_stats=False)")
        if isinstance(mod, (nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout)):
            if mod.training and mod.p > 0:
                self._refuse("Dropout in train mode is random: call model.eval() first")
            return args[0]
        if base in affine:
            return self._affine(mod, args, kwargs)
        x = self._one_input(args)
        if isinstance(mod, nn.ReLU):
            return self._relu(x)
        if isinstance(mod, nn.Hardtanh):  # ReLU6 included
            return self._clamp(x, float(mod.min_val), float(mod.max_val))
        if isinstance(mod, (nn.LeakyReLU, nn.PReLU)):
            return self._leaky(x, lambda t: mod(t))
        return self._maxpool(x, lambda t: mod(t))  # MaxPool / AdaptiveMaxPool

    def _function(self, fn, args, kwargs):
        import torch
        import torch.nn.functional as F

        name = getattr(fn, "__name__", str(fn))
        affine_fns = {operator.add, operator.sub, operator.neg, operator.pos, operator.iadd, operator.isub,
                      torch.add, torch.sub, torch.subtract, torch.neg, torch.cat, torch.concat, torch.concatenate,
                      torch.stack, torch.flatten, torch.reshape, torch.squeeze, torch.unsqueeze, F.linear,
                      F.conv1d, F.conv2d, F.conv3d, F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d,
                      F.avg_pool1d, F.avg_pool2d, F.avg_pool3d, F.adaptive_avg_pool1d, F.adaptive_avg_pool2d,
                      F.adaptive_avg_pool3d, F.pad, F.batch_norm, F.dropout, F.dropout1d, F.dropout2d, F.dropout3d,
                      torch.nn.functional.alpha_dropout, operator.getitem}
        if fn in (operator.mul, operator.imul, torch.mul, torch.multiply, operator.truediv, operator.itruediv,
                  torch.div, torch.true_divide):
            return self._scale(fn, args, kwargs)
        if fn in (F.relu, torch.relu, torch.relu_, F.relu_):
            return self._relu(self._one_input(args))
        if fn in (F.relu6,):
            return self._clamp(self._one_input(args), 0.0, 6.0)
        if fn in (F.hardtanh, F.hardtanh_):
            return self._clamp(self._one_input(args), float(_arg(args, kwargs, 1, "min_val", -1.0)),
                               float(_arg(args, kwargs, 2, "max_val", 1.0)))
        if fn in (torch.clamp, torch.clip, torch.clamp_min, torch.clamp_max):
            return self._clamp_fn(fn, args, kwargs)
        if fn in (F.leaky_relu, F.leaky_relu_, F.prelu):
            return self._leaky(self._one_input(args), lambda t: fn(t, *args[1:], **kwargs))
        if fn in (F.max_pool1d, F.max_pool2d, F.max_pool3d, torch.max_pool1d, torch.max_pool2d, torch.max_pool3d,
                  F.adaptive_max_pool1d, F.adaptive_max_pool2d, F.adaptive_max_pool3d):
            if _arg(args, kwargs, 6, "return_indices", False) and fn in (F.max_pool1d, F.max_pool2d, F.max_pool3d):
                self._refuse("return_indices=True: the indices are not a piecewise-linear function of the input")
            return self._maxpool(self._one_input(args), lambda t: fn(t, *args[1:], **kwargs))
        if fn in (F.layer_norm, F.group_norm, F.instance_norm, F.softmax, F.log_softmax, torch.softmax,
                  torch.log_softmax, F.gelu, F.silu, torch.sigmoid, torch.tanh, F.sigmoid, F.tanh, F.elu, F.softplus,
                  torch.layer_norm, torch.exp, torch.log, F.rms_norm, F.normalize):
            self._refuse(_not_pwl_reason(name))
        if fn is torch.abs:
            return self._leaky(self._one_input(args), torch.abs)  # |p| = max(p, −p): slope −1
        if fn in (torch.mean, torch.sum):
            return self._reduce(fn, args, kwargs)
        if fn is F.batch_norm:
            training = _arg(args, kwargs, 5, "training", False)
            if training or _arg(args, kwargs, 1, "running_mean", None) is None:
                self._refuse("BatchNorm in train mode (or without running statistics) depends on the batch")
        if fn in (F.dropout, F.dropout1d, F.dropout2d, F.dropout3d, torch.nn.functional.alpha_dropout):
            if _arg(args, kwargs, 2, "training", True) and _arg(args, kwargs, 1, "p", 0.5) > 0:
                self._refuse("dropout in train mode is random: call model.eval() first (or pass training=False)")
            return args[0]
        if fn is operator.getitem:
            return self._getitem(args)
        if fn in (torch.cat, torch.concat, torch.concatenate, torch.stack):
            dim = _arg(args, kwargs, 1, "dim", 0)
            if dim == 0 or (isinstance(dim, int) and dim < 0 and fn is not torch.stack
                            and any(isinstance(a, _Aff) and a.t.dim() + dim == 0 for a in args[0])):
                self._refuse("concatenating along the batch dimension (dim=0) mixes samples")
        if fn in affine_fns:
            return self._affine(fn, args, kwargs)
        self._refuse("not a piecewise-linear function in the supported set (+, -, torch.cat, F.relu, F.leaky_relu, "
                     "F.hardtanh, F.relu6, torch.clamp, F.max_pool*, F.avg_pool*, F.conv*, F.linear, reshapes, "
                     "multiplication by constants)")

    def _method(self, name, args, kwargs):
        import torch

        if name in ("size", "dim", "numel") or (name == "__len__"):
            return getattr(args[0].t, name)(*args[1:], **kwargs) if isinstance(args[0], _Aff) else None
        if name in ("relu", "relu_"):
            return self._relu(self._one_input(args))
        if name in ("clamp", "clamp_", "clip", "clamp_min", "clamp_max"):
            fn = {"clamp_": torch.clamp, "clip": torch.clamp, "clamp": torch.clamp, "clamp_min": torch.clamp_min,
                  "clamp_max": torch.clamp_max}[name]
            return self._clamp_fn(fn, args, kwargs)
        if name in ("mul", "mul_", "div", "div_", "__mul__", "__truediv__"):
            fn = torch.mul if name.startswith(("mul", "__mul")) else torch.div
            return self._scale(fn, args, kwargs)
        if name == "abs":
            return self._leaky(self._one_input(args), torch.abs)  # |p| = max(p, −p): slope −1
        if name in ("mean", "sum"):
            return self._reduce(getattr(torch, name), args, kwargs)
        if name in ("softmax", "log_softmax", "sigmoid", "tanh", "exp", "log"):
            self._refuse(_not_pwl_reason(name))
        if name in ("view", "reshape", "flatten", "contiguous", "add", "add_", "sub", "sub_", "neg", "unsqueeze",
                    "squeeze", "view_as", "reshape_as", "clone", "double", "float", "to"):
            if name in ("flatten",) and _arg(args[1:], kwargs, 0, "start_dim", 0) == 0:
                self._refuse("flatten(start_dim=0) flattens the batch dimension")
            return self._affine(lambda *a, **k: getattr(a[0], name)(*a[1:], **k), args, kwargs)
        self._refuse(f"tensor method .{name}() is not in the supported set")

    # ------------------------------------------------------------------ affine ops
    def _affine(self, fn, args, kwargs):
        import torch

        B = self.d + 2
        out = fn(*_unwrap(args), **_unwrap(kwargs))
        if not isinstance(out, torch.Tensor):
            self._refuse(f"returns {type(out).__name__}, not one tensor")
        if out.dim() == 0 or out.shape[0] != B:
            self._refuse(f"mixes the samples of a batch (output shape {tuple(out.shape)} for a batch of {B})")
        # every tensor is a dense (d + 2) × numel matrix: refuse nets whose matrices cannot be held
        check_memory(3.0 * out.numel() * 8, f"lowering {self._where()} of {self.model_name} to dense matrices "
                     f"({self.d} state channels × {out[0].numel()} outputs)",
                     hint="count a smaller net, or on a smaller input")
        out = out.to(torch.float64).clone()
        out[2:] -= out[1:2]
        out[1] = 0
        return _Aff(out)

    def _scale(self, fn, args, kwargs):
        deps = [isinstance(a, _Aff) for a in list(args) + list(kwargs.values())]
        divide = fn in (operator.truediv, operator.itruediv) or getattr(fn, "__name__", "") in ("div", "true_divide")
        if sum(deps) > 1:
            self._refuse("a product of two input-dependent tensors is not piecewise linear")
        if divide and not isinstance(args[0], _Aff):
            self._refuse("dividing by an input-dependent tensor is not piecewise linear")
        if divide and len(args) < 2:
            self._refuse("division without a divisor")
        return self._affine(fn, args, kwargs)

    def _reduce(self, fn, args, kwargs):
        """mean / sum over dimensions that leave the batch alone (e.g. global average pooling)."""
        x = self._one_input(args)
        dim = _arg(args, kwargs, 1, "dim", None)
        if dim is None:
            self._refuse("a mean or sum over every dimension mixes the samples of a batch: give dim (not 0)")
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        if any(not isinstance(k, int) or k % x.t.dim() == 0 for k in dims):
            self._refuse(f"a mean or sum over dim={dim} mixes the samples of a batch (dim 0)")
        return self._affine(fn, args, kwargs)

    def _getitem(self, args):
        x, idx = args
        if not isinstance(x, _Aff):  # indexing a constant by an input-dependent tensor
            self._refuse("indexing by an input-dependent tensor is not piecewise linear")
        first = idx[0] if isinstance(idx, tuple) and idx else idx
        if first is not Ellipsis and first != slice(None):
            self._refuse("indexing the batch dimension (the first index must be ':')")
        if _has_aff(idx):
            self._refuse("indexing by an input-dependent tensor is not piecewise linear")
        return self._affine(operator.getitem, args, {})

    def _one_input(self, args) -> _Aff:
        x = args[0]
        if not isinstance(x, _Aff):
            self._refuse("its first argument is not the input-dependent tensor")
        for a in args[1:]:
            if _has_aff(a):
                self._refuse("an input-dependent tensor as a parameter (slope, bound or size) is not piecewise linear")
        return x

    # ------------------------------------------------------------------ piecewise-linear nodes
    def _pre(self, x: _Aff):
        """The pre-activation p = y W + b of a node on x: W (d, k), b (k,)."""
        P = x.t.reshape(self.d + 2, -1).numpy()
        return P[2:], P[0]

    def _relu(self, x: _Aff):
        W, b = self._pre(x)
        k = W.shape[1]
        return self._stage(x, [Affine(W, b), ReLU()], k, np.eye(k), np.zeros(k), x.t.shape[1:])

    def _clamp(self, x: _Aff, lo: float, hi: float):
        W, b = self._pre(x)
        k = W.shape[1]
        if math.isnan(lo) or math.isnan(hi):
            self._refuse("a NaN clamp bound")
        if lo > hi:
            self._refuse(f"clamp bounds min={lo} > max={hi}")
        fin_lo, fin_hi = math.isfinite(lo), math.isfinite(hi)
        if fin_lo and fin_hi:  # lo + relu(p − lo) − relu(p − hi)
            body = [Affine(np.hstack([W, W]), np.concatenate([b - lo, b - hi])), ReLU()]
            return self._stage(x, body, 2 * k, np.vstack([np.eye(k), -np.eye(k)]), np.full(k, lo), x.t.shape[1:])
        if fin_lo:  # lo + relu(p − lo)
            return self._stage(x, [Affine(W, b - lo), ReLU()], k, np.eye(k), np.full(k, lo), x.t.shape[1:])
        if fin_hi:  # hi − relu(hi − p)
            return self._stage(x, [Affine(-W, hi - b), ReLU()], k, -np.eye(k), np.full(k, hi), x.t.shape[1:])
        return x

    def _clamp_fn(self, fn, args, kwargs):
        import torch

        x = self._one_input(args)
        if fn is torch.clamp_min:
            lo, hi = _arg(args, kwargs, 1, "min", None), None
        elif fn is torch.clamp_max:
            lo, hi = None, _arg(args, kwargs, 1, "max", None)
        else:
            lo, hi = _arg(args, kwargs, 1, "min", None), _arg(args, kwargs, 2, "max", None)
        for v in (lo, hi):
            if isinstance(v, torch.Tensor) and v.numel() != 1:
                self._refuse("clamp with tensor bounds (only number bounds are supported)")
        lo = -math.inf if lo is None else float(lo)
        hi = math.inf if hi is None else float(hi)
        return self._clamp(x, lo, hi)

    def _leaky(self, x: _Aff, act):
        """f(p) = p for p ≥ 0, a p below (a read off f(−1) = −a per element)."""
        import torch

        shape = x.t.shape[1:]
        a = (-act(-torch.ones((1, *shape), dtype=torch.float64))).reshape(-1).numpy()
        if not np.all(np.isfinite(a)):
            self._refuse("a slope that is NaN or inf")
        if np.all(a == 1.0):
            return x
        if np.all(a == 0.0):
            return self._relu(x)
        W, b = self._pre(x)
        k = W.shape[1]
        s = np.where(a <= 1.0, 1.0, -1.0)  # a ≤ 1: max(p, a p); a > 1: min(p, a p) = −max(−p, −a p)
        body = [Affine(np.hstack([W * s, W * (s * a)]), np.concatenate([b * s, b * s * a])),
                GroupMax(np.stack([np.arange(k), k + np.arange(k)], axis=1))]
        return self._stage(x, body, k, np.diag(s), np.zeros(k), shape)

    def _maxpool(self, x: _Aff, pool):
        import torch

        shape = x.t.shape[1:]
        k = math.prod(shape)
        out0 = pool(torch.zeros((1, *shape), dtype=torch.float64))
        if not isinstance(out0, torch.Tensor):
            self._refuse("return_indices=True: the indices are not a piecewise-linear function of the input")
        n_out = out0[0].numel()
        if k * n_out > _MAX_WINDOW_CELLS:
            self._refuse(f"max pool too large to read its windows ({k} inputs × {n_out} outputs)")
        member = pool(torch.eye(k, dtype=torch.float64).reshape(k, *shape)).reshape(k, n_out).numpy() > 0.5
        sizes = member.sum(0)
        if np.any(sizes == 0):
            self._refuse("a pooling window without inputs")
        idx = _windows(member, int(sizes.max()))
        W, b = self._pre(x)
        return self._stage(x, [Affine(W, b), GroupMax(idx)], n_out, np.eye(n_out), np.zeros(n_out), out0.shape[1:])

    # ------------------------------------------------------------------ the state
    def _support(self, t) -> np.ndarray:
        """State columns an input-dependent tensor depends on."""
        M = t[2:].reshape(self.d, -1)
        return M.abs().amax(dim=1).numpy() > 0 if M.shape[1] else np.zeros(self.d, bool)

    def _stage(self, x: _Aff, body: list, m: int, zM: np.ndarray, zc: np.ndarray, zshape):
        """Emit ``body`` (Affine on the state, then the activation: m new channels r) and
        return the node's value zc + r zM (zM: (m, k)) in the new state."""
        import torch

        here = self.index[self.node]
        live = list({id(v): v for node, v in self.env.items()  # one entry per object (identity ops share)
                     if isinstance(v, _Aff) and self.last_use[node] > here}.values())
        used = np.zeros(self.d, bool)
        for v in live:
            used |= self._support(v.t)
        if not used.any():  # nothing else needed later: the state is r
            self.ops += body
            keep = np.zeros(0, np.int64)
        else:  # keep the columns the later tensors use: y' = [y_U, 0] + body(y)
            keep = np.nonzero(used | self._support(x.t))[0]
            u = len(keep)
            S = np.zeros((self.d, u + m))
            S[keep, np.arange(u)] = 1.0
            first = body[0]
            W1 = np.zeros((u + m, first.W.shape[1]))
            W1[:u] = first.W[keep]
            place = np.zeros((m, u + m))
            place[:, u:] = np.eye(m)
            self.ops += [Affine(S, np.zeros(u + m)), Residual((Affine(W1, first.b[0]), *body[1:],
                                                                 Affine(place, np.zeros(u + m))))]
        u = len(keep)
        keep_t = torch.as_tensor(keep)
        for v in live:  # re-express the live tensors in the new state
            t = v.t
            rest = t[2:][keep_t] if u else t[2:2]
            v.t = torch.cat([t[:2], rest, torch.zeros((m, *t.shape[1:]), dtype=t.dtype)])
        self.d = u + m
        z = torch.zeros((self.d + 2, zM.shape[1]), dtype=torch.float64)
        z[0] = torch.as_tensor(zc)
        z[2 + u:] = torch.as_tensor(zM)
        return _Aff(z.reshape(self.d + 2, *zshape))

    def _finish(self, out) -> Program:
        if not isinstance(out, _Aff):
            raise ValueError(f"{self.model_name}: the output must be one tensor that depends on the input, "
                             f"got {type(out).__name__}")
        W, b = self._pre(out)
        ops = [*self.ops, Affine(W, b)]
        from .lower import _merge_affine

        return Program(self.n, (*_merge_affine(ops), Read((0,))), name="torch module",
                       meta={"input_shape": self.shape})


def _windows(member: np.ndarray, p: int) -> np.ndarray:
    """(n_out, p) member indices of each window (member: (k, n_out) booleans); a window with
    fewer than p members repeats its first one (a tie with itself never cuts)."""
    win, mem = np.nonzero(member.T)  # sorted by window
    n_out = member.shape[1]
    sizes = np.bincount(win, minlength=n_out)
    start = np.r_[0, np.cumsum(sizes)[:-1]]
    idx = np.repeat(mem[start][:, None], p, axis=1)
    idx[win, np.arange(len(win)) - np.repeat(start, sizes)] = mem
    return idx


def _not_pwl_reason(name: str) -> str:
    n = name.lower()
    if "norm" in n:
        return f"{name} is not piecewise linear (it divides by an input-dependent standard deviation)"
    return f"{name} is not piecewise linear"


def _has_aff(obj) -> bool:
    if isinstance(obj, _Aff):
        return True
    if isinstance(obj, (list, tuple)):
        return any(_has_aff(o) for o in obj)
    if isinstance(obj, dict):
        return any(_has_aff(o) for o in obj.values())
    if isinstance(obj, slice):
        return _has_aff(obj.start) or _has_aff(obj.stop) or _has_aff(obj.step)
    return False


def _unwrap(obj):
    if isinstance(obj, _Aff):
        return obj.t
    if isinstance(obj, tuple):
        return tuple(_unwrap(o) for o in obj)
    if isinstance(obj, list):
        return [_unwrap(o) for o in obj]
    if isinstance(obj, dict):
        return {k: _unwrap(v) for k, v in obj.items()}
    return obj
