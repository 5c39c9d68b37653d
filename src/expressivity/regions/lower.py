"""Lowering to the IR: torch ReLU MLPs, MaxoutNetworks, hardmax Transformers, compiled models.

``lower(model)`` accepts a :class:`Program` (returned unchanged), a ``torch.nn.Sequential`` of
Linear/ReLU, an :class:`~expressivity.cpwl.MaxoutNetwork`, a hardmax
:class:`~expressivity.transformer.Transformer` with continuous input (x copied to every one of
``n_tokens`` tokens, output at every token unless ``tokens`` is given) or a compiled model
(kind ``compiled``, :func:`~expressivity.model_kinds.kind_of`; output read at token 0, like ``CompiledModel.evaluate``;
its compile box travels as ``Program.compile_domain``, a :class:`~.ir.CompileDomain`).
Anything not piecewise linear (GELU, softmax attention, layer norm, token-id input) raises
one ValueError naming the part.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from torch import nn

from ..cpwl import MaxoutNetwork
from ..cpwl.relu import sequential_steps
from ..model_kinds import kind_of
from .ir import Affine, CompileDomain, Embed, GroupMax, Hardmax, Program, Read, ReLU, Residual


def lower(model, n_tokens: int | None = None, tokens: tuple[int, ...] | None = None,
          input_shape: tuple[int, ...] | None = None) -> Program:
    """Any supported model → :class:`Program`. ``input_shape``: the shape of one input of a torch
    module (without the batch dimension; used by :func:`~.lower_torch.lower_module` only)."""
    kind = kind_of(model, default=None)
    if kind == "program":
        return model
    if kind == "network":
        return lower_maxout(model)
    if kind == "compiled":
        prog = lower_transformer(model.transformer, model.n_tokens if n_tokens is None else n_tokens,
                                 tokens if tokens is not None else (0,), name="compiled transformer")
        # the transformer equals its source net only on the compile domain: counters refuse
        # to count outside it (see count.check_compile_domain)
        return replace(prog, compile_domain=CompileDomain(model.lo, model.hi))
    if kind == "transformer":
        return lower_transformer(model, n_tokens, tokens)
    if kind == "module":
        if isinstance(model, nn.Sequential) and all(
                type(m) in (nn.Linear, nn.ReLU, nn.Identity, nn.Flatten) for m in model) and any(
                type(m) is nn.Linear for m in model):
            return lower_sequential(model)  # the plain MLP: read directly
        from .lower_torch import lower_module

        return lower_module(model, input_shape)
    raise ValueError(
        f"cannot lower {type(model).__name__}: expected a torch nn.Module (traced), MaxoutNetwork, "
        "a hardmax Transformer, a compiled model or a regions Program"
    )


def _identity_embed(n: int) -> Embed:
    return Embed(np.eye(n)[:, None, :], np.zeros((1, n)))


def lower_sequential(mlp) -> Program:
    """nn.Sequential(Linear, ReLU, …) → Embed(I) + Affine/ReLU ops."""
    ops: list = []
    in_dim = None
    for _, kind, W, b in sequential_steps(mlp):
        if kind == "linear":
            if in_dim is None:
                in_dim = W.shape[1]
            ops.append(Affine(W.T, b))
        else:
            ops.append(ReLU())
    if in_dim is None:
        raise ValueError("the Sequential has no Linear layer: input dimension unknown")
    ops = _merge_affine(ops)
    return Program(in_dim, (_identity_embed(in_dim), *ops, Read((0,))), name="relu mlp")


def _merge_affine(ops: list) -> list:
    out: list = []
    for op in ops:
        if isinstance(op, Affine) and out and isinstance(out[-1], Affine):
            prev = out.pop()
            op = Affine(prev.W @ op.W, prev.b @ op.W + op.b)
        out.append(op)
    return out


def lower_maxout(net: MaxoutNetwork) -> Program:
    """Layer (W (m,p,d), b (m,p)) → Affine(d → m·p) + GroupMax; a rank-2 unit whose second piece
    is identically 0 for every unit (a ReLU layer) becomes Affine + ReLU."""
    ops: list = []
    for layer in net.layers:
        m, p, d = layer.W.shape
        if p == 2 and not np.any(layer.W[:, 1]) and not np.any(layer.b[:, 1]):
            ops += [Affine(layer.W[:, 0].T, layer.b[:, 0]), ReLU()]
        elif p == 2 and not np.any(layer.W[:, 0]) and not np.any(layer.b[:, 0]):
            ops += [Affine(layer.W[:, 1].T, layer.b[:, 1]), ReLU()]
        elif p == 1:
            ops.append(Affine(layer.W[:, 0].T, layer.b[:, 0]))
        else:
            ops += [Affine(layer.W.reshape(m * p, d).T, layer.b.reshape(m * p)),
                    GroupMax(np.arange(m * p).reshape(m, p))]
    if net.readout is not None:
        A, c = net.readout
        ops.append(Affine(A.T, c))
    ops = _merge_affine(ops)
    return Program(net.in_dim, (_identity_embed(net.in_dim), *ops, Read((0,))), name="maxout")


def lower_transformer(model, n_tokens: int | None = None, tokens: tuple[int, ...] | None = None,
                      name: str = "transformer") -> Program:
    """Hardmax Transformer on continuous input x ∈ R^d_input copied to all ``n_tokens`` tokens."""
    cfg = model.cfg
    if cfg.attention != "hardmax":
        raise ValueError("softmax attention is not piecewise linear: only hardmax transformers lower "
                         "to the regions IR")
    if cfg.layer_norm != "none":
        raise ValueError(f"layer norm ({cfg.layer_norm}) is not piecewise linear: use layer_norm='none'")
    if cfg.d_vocab is not None:
        raise ValueError("token-id transformers have no continuous input space; use d_input")
    T = n_tokens if n_tokens is not None else cfg.n_ctx
    if not (isinstance(T, int) and 1 <= T <= cfg.n_ctx):
        raise ValueError(f"n_tokens must be an int in [1, n_ctx={cfg.n_ctx}], got {T!r}")

    def np_(t):
        return t.detach().cpu().double().numpy()

    W_E = np_(model.W_E)  # (d_in, d_model)
    pos = np_(model.W_pos)[:T] if model.W_pos is not None else np.zeros((T, cfg.d_model))
    ops: list = [Embed(np.repeat(W_E[:, None, :], T, axis=1), pos)]
    for blk in model.blocks:
        a = blk.attn
        ops.append(Residual((Hardmax(np_(a.W_Q), np_(a.b_Q), np_(a.W_K), np_(a.b_K), np_(a.W_V),
                                     np_(a.b_V), np_(a.W_O), np_(a.b_O), float(cfg.score_scale), bool(cfg.causal)),)))
        if blk.mlp is not None:
            ml = blk.mlp
            ops.append(Residual((Affine(np_(ml.W_in), np_(ml.b_in)), ReLU(),
                                 Affine(np_(ml.W_out), np_(ml.b_out)))))
    if cfg.d_out is not None:
        ops.append(Affine(np_(model.W_U), np_(model.b_U)))
    if tokens is None:
        tokens = tuple(range(T))
    if any(not (0 <= t < T) for t in tokens):
        raise ValueError(f"read-out tokens {tokens} outside 0..{T - 1}")
    return Program(cfg.d_input, (*ops, Read(tuple(tokens))), name=name,
                   meta={"n_tokens": T, "n_blocks": cfg.n_layers})
