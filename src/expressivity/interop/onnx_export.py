"""ONNX export of the project's transformer, checked with onnxruntime.

The graph is written op by op (``onnx.helper``, opset 18), in the model's own dtype (float64
for compiled and hand-built models: ONNX and onnxruntime's CPU kernels for every op used
here — MatMul, Softmax, LayerNormalization, ReduceMax, Equal, Where — take doubles). Per block,
as in :mod:`expressivity.transformer.model`:

    a = λ·(y W_Q + b_Q)(y W_K + b_K)ᵀ   (× log n with log-length scaling; −inf where masked)
    â = Softmax(a)  |  hardmax(a) = [a = max_j a] / #{j : a_j = max_j a}   (ties average)
    y ← y + Σ_h â (y W_V + b_V) W_O + b_O ;  y ← y + ReLU(y W_in + b_in) W_out + b_out

Hardmax is exact: ``Equal`` against ``ReduceMax`` is the one-hot of the maximum, divided by the
number of tied maxima — the tie rule of our model. The batch and token axes are dynamic
(T ≤ n_ctx); the input is ``inputs`` — token ids (B, T) int64 or vectors (B, T, d_input) — and
the output ``output`` is what ``Transformer.forward`` returns. There is no key-mask input
(every construction and compiled model runs without one), so n = T.

Every position encoding of :mod:`expressivity.transformer.positions` is written as tensor
ops on the positions t = 0..T−1 (with r = s − t the key's offset from the query):

- ``learned`` / ``sinusoidal``: the table W_pos[:T] added to y^(0);
- ``i_over_n``: (i/T)·W_frac added to y^(0), i = t + 1 (``Range``, ``Div``);
- ``rope``: q, k ↦ q·C_t + swap(q)·S_t with the tables of ``positions.rope_factors`` and
  ``swap`` a ``Gather`` that exchanges coordinates 2i and 2i+1;
- ``alibi``: b_h = −m_h·dist(r) added to the scores, dist = −r (causal) or |r| − ½·[r < 0];
- ``relative``: b_h = W_rel[bucket(r), h], the bucket read from a table of T5's buckets for
  |r| ≤ 128 (``positions.relative_buckets``; every longer offset is in the last bucket), so
  the buckets are ours exactly.

Refused, each with a one-line reason: layer norm with ε = 0 unless ``allow_zero_eps=True``
(LN is then undefined — NaN — on a constant residual vector and not Lipschitz; onnxruntime
does compute the same function as torch there, see docs/interop.md), and a model with a NaN or
inf weight.

:func:`check_onnx` passes (``OnnxCheck.ok``) when every output of both is finite and
max |ORT − ours| ≤ ``tolerance``: by default ``rtol·max(1, max |output|)`` with rtol = 1e-9
in float64 and 1e-4 in float32 (measured: ~1e-16 and ~1e-7 relative). NaN equals NaN nowhere:
a non-finite output on either side fails the check.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from ..fileio import check_output_path, check_path, write_bytes_atomic
from ..memory import check_memory
from ..rules import check_bool, check_float, check_int
from ..transformer import Transformer, check_finite_weights
from ..transformer import positions as P
from ._optional import need
from .hub import model_kind, transformer_of

OPSET = 18
RTOL = {"float64": 1e-9, "float32": 1e-4}  # default check tolerance, relative to max(1, max |output|)


@dataclass(frozen=True)
class OnnxCheck:
    """onnxruntime against our forward on ``n_inputs`` inputs of ``n_tokens`` tokens."""

    n_inputs: int
    n_tokens: int
    dtype: str  # float64 | float32
    max_abs_error: float  # max over all outputs |ORT − ours| (inf when an output is not finite)
    max_abs_output: float  # scale of the outputs, for reading the error
    seconds: float
    tolerance: float = math.inf  # the check passes when max_abs_error <= tolerance
    nonfinite: int = 0  # outputs that are NaN or inf, ours or onnxruntime's

    @property
    def ok(self) -> bool:
        """Every output finite on both sides and the error within the tolerance."""
        return self.nonfinite == 0 and math.isfinite(self.max_abs_error) and self.max_abs_error <= self.tolerance

    def line(self) -> str:
        head = (f"onnxruntime vs ours on {self.n_inputs} inputs ({self.n_tokens} tokens, {self.dtype}): "
                f"max |error| = {self.max_abs_error:.3g} (outputs up to {self.max_abs_output:.3g})")
        if self.nonfinite:
            return head + f": FAILED, {self.nonfinite} outputs are NaN or inf"
        if not self.ok:
            return head + f": FAILED, over the tolerance {self.tolerance:.3g}"
        return head + f", within the tolerance {self.tolerance:.3g}"


class _Graph:
    """A small builder: unique names, initializers from numpy, nodes in order."""

    def __init__(self, onnx, dtype: np.dtype) -> None:
        self.onnx, self.h = onnx, onnx.helper
        self.dtype = dtype
        self.elem = onnx.TensorProto.DOUBLE if dtype == np.float64 else onnx.TensorProto.FLOAT
        self.nodes: list = []
        self.inits: list = []
        self._n = 0
        self._shared: dict[str, str] = {}

    def name(self, hint: str) -> str:
        self._n += 1
        return f"{hint}_{self._n}"

    def const(self, value, hint: str, dtype=None) -> str:
        arr = np.asarray(value, dtype=dtype if dtype is not None else self.dtype)
        n = self.name(hint)
        self.inits.append(self.onnx.numpy_helper.from_array(np.ascontiguousarray(arr), n))
        return n

    def shared(self, hint: str, value, dtype=None) -> str:
        """One initializer per ``hint``, made on first use (no unused initializers)."""
        if hint not in self._shared:
            self._shared[hint] = self.const(value, hint, dtype)
        return self._shared[hint]

    def op(self, op_type: str, inputs: list[str], hint: str | None = None, **attrs) -> str:
        out = self.name(hint or op_type.lower())
        self.nodes.append(self.h.make_node(op_type, inputs, [out], **attrs))
        return out


def _np(t: torch.Tensor, dtype) -> np.ndarray:
    return t.detach().cpu().numpy().astype(dtype)


class _Positions:
    """The position encodings as graph pieces, on the dynamic token count ``T`` (a (1,) int64)."""

    def __init__(self, g: _Graph, tr: Transformer, T: str) -> None:
        self.g, self.tr, self.T = g, tr, T
        self._offsets: str | None = None
        self._buckets: str | None = None

    def rows(self, table: np.ndarray, hint: str) -> str:
        """table[:T] of a per-position table (n_ctx, …)."""
        zero = self.g.shared("zero", [0], np.int64)
        return self.g.op("Slice", [self.g.const(table, hint), zero, self.T, zero], hint + "_rows")

    def index(self, start: int) -> str:
        """start, start + 1, …, start + T − 1: (T,) int64."""
        g, i64 = self.g, np.int64
        stop = g.op("Squeeze", [g.op("Add", [self.T, g.const([start], f"plus{start}", i64)])])
        return g.op("Range", [g.const(start, f"from{start}", i64), stop, g.shared("step", 1, i64)], f"index{start}")

    def offsets(self) -> str:
        """r[t, s] = s − t, the key's offset from the query: (T, T) int64."""
        if self._offsets is None:
            g, i64, t = self.g, np.int64, self.index(0)
            self._offsets = g.op("Sub", [g.op("Unsqueeze", [t, g.shared("axis0", [0], i64)]),
                                         g.op("Unsqueeze", [t, g.shared("axis1", [1], i64)])], "offsets")
        return self._offsets

    def rope(self) -> tuple[str, str, str]:
        """RoPE: the (T, d_head) factors C, S of positions.rope_factors and the swap indices."""
        cfg = self.tr.cfg
        C, S = P.rope_factors(cfg.n_ctx, cfg.d_head, self.tr.dtype)
        swap = np.arange(cfg.d_head).reshape(-1, 2)[:, ::-1].reshape(-1)  # 1, 0, 3, 2, …
        return (self.rows(_np(C, self.g.dtype), "rope_C"), self.rows(_np(S, self.g.dtype), "rope_S"),
                self.g.const(swap, "rope_swap", np.int64))

    def rotate(self, x: str, rope: tuple[str, str, str], hint: str) -> str:
        """x·C + swap(x)·S on x (B, H, T, d_head) (positions.rope_factors: the rotation of rope_apply)."""
        C, S, swap = rope
        g = self.g
        return g.op("Add", [g.op("Mul", [x, C]), g.op("Mul", [g.op("Gather", [x, swap], axis=3), S])], hint)

    def alibi(self) -> str:
        """ALiBi's b_h(t, s) = −m_h·dist: (H, T, T), computed in float64, then the model's dtype."""
        g, cfg = self.g, self.tr.cfg
        r = g.op("Cast", [self.offsets()], to=g.onnx.TensorProto.DOUBLE)
        if cfg.causal:
            dist = g.op("Neg", [r])  # t − s
        else:  # |t − s| − ½·[s < t]
            behind = g.op("Cast", [g.op("Less", [r, g.const(0.0, "zero_f64", np.float64)])], to=g.onnx.TensorProto.DOUBLE)
            dist = g.op("Sub", [g.op("Abs", [r]), g.op("Mul", [behind, g.const(0.5, "half", np.float64)])])
        m = -np.asarray(P.alibi_slopes(cfg.n_heads), dtype=np.float64)[:, None, None]
        return g.op("Cast", [g.op("Mul", [g.const(m, "alibi_slopes", np.float64), dist])], "alibi", to=g.elem)

    def relative(self, W_rel: np.ndarray, k: int) -> str:
        """T5's b_h = W_rel[bucket(s − t), h]: (H, T, T). The buckets of offsets |r| ≤ R = 128 come
        from positions.relative_buckets; every longer offset shares the bucket of ±R."""
        g, i64, R = self.g, np.int64, P.REL_MAX_DISTANCE
        if self._buckets is None:  # (T, T) int64, shared by the layers
            b = P.relative_buckets(R + 1, self.tr.cfg.causal).numpy()  # b[t, s] of offset s − t
            table = np.concatenate([b[R, :R], b[0, :]])  # offsets −R..−1 (row R), then 0..R (row 0)
            idx = g.op("Add", [g.op("Clip", [self.offsets(), g.const(-R, "minus_R", i64), g.const(R, "R", i64)]),
                               g.const(R, "R_shift", i64)])
            self._buckets = g.op("Gather", [g.const(table, "bucket_table", i64), idx], "rel_bucket", axis=0)
        bias = g.op("Gather", [g.const(W_rel, f"b{k}_W_rel"), self._buckets], axis=0)  # (T, T, H)
        return g.op("Transpose", [bias], f"b{k}_rel_bias", perm=[2, 0, 1])


def preflight(model, allow_zero_eps: bool = False):
    """Refuse what the export cannot write (before any file is touched); returns ``onnx``."""
    model_kind(model)  # refuses what is not one of our models
    allow_zero_eps = check_bool(allow_zero_eps, "allow_zero_eps")
    check_finite_weights(transformer_of(model), "model")
    cfg = transformer_of(model).cfg
    if cfg.layer_norm != "none" and cfg.ln_eps == 0 and not allow_zero_eps:
        raise ValueError("layer norm with eps = 0 is not exported to ONNX: LN(x) = (x - mean)/sqrt(var) is undefined "
                         "(NaN) where var = 0 and not Lipschitz, while ONNX LayerNormalization's epsilon exists to avoid "
                         "that division by zero; pass allow_zero_eps=True (--allow-zero-eps) to export it anyway")
    need("onnxruntime")
    return need("onnx")


def export_onnx(model, path: str | Path, allow_zero_eps: bool = False) -> Path:
    """Write ``model`` (Transformer, CompiledModel, Construction, TrainedModel or a transformer
    TrainedRun) as ONNX.

    Example::

        export_onnx(compile_maxout(net, (-1, 1)), "net.onnx")
        check_onnx(cm, "net.onnx").max_abs_error   # ~1e-16 (float64, hardmax exact)
    """
    onnx = preflight(model, allow_zero_eps)
    out = check_output_path(path, "path")
    tr = transformer_of(model)
    onnx_model = _TransformerGraph(onnx, tr).model(f"expressivity {model_kind(model)} transformer: {tr.extra_repr()}")
    onnx.checker.check_model(onnx_model)
    write_bytes_atomic(out, onnx_model.SerializeToString())
    return out


class _TransformerGraph:
    """Our forward as ONNX nodes, op by op: embedding and positions, then per block attention
    (scores λ·q·k [· log n] + bias, mask, softmax or the hardmax one-hot over ties) and the
    ReLU FFN, each in its residual (none / pre / post LN), then the final LN and W_U."""

    def __init__(self, onnx, tr: Transformer) -> None:
        self.onnx, self.tr, self.cfg = onnx, tr, tr.cfg
        self.dtype = np.float64 if self.cfg.dtype == "float64" else np.float32
        self.g = _Graph(onnx, self.dtype)
        shape = self.g.op("Shape", ["inputs"], "shape")
        self.T = self.g.op("Slice", [shape, self.g.const([1], "one", np.int64), self.g.const([2], "two", np.int64)],
                           "T")  # (1,) int64
        self.pos = _Positions(self.g, tr, self.T)

    def _w(self, t) -> np.ndarray:
        return _np(t, self.dtype)

    def model(self, doc: str):
        """The whole graph: inputs (B, T) ids or (B, T, d_input) vectors → output (B, T, d_out)."""
        g, cfg, h = self.g, self.cfg, self.onnx.helper
        y, in_info = self.embed()
        self.mask, self.scale = self.causal_mask(), self.score_scale()
        self.rope = self.pos.rope() if cfg.positional == "rope" else None
        self.alibi = self.pos.alibi() if cfg.positional == "alibi" else None
        for k, block in enumerate(self.tr.blocks):
            ln1, ln2 = (block.ln1, block.ln2) if cfg.layer_norm != "none" else (None, None)
            y = self.residual(y, lambda x, b=block, k=k: self.attention(x, b.attn, k), ln1, f"b{k}_resid_mid")
            if block.mlp is not None:
                y = self.residual(y, lambda x, b=block, k=k: self.mlp(x, b.mlp, k), ln2, f"b{k}_resid_post")
        if cfg.layer_norm == "pre":
            y = self.layer_norm(y, self.tr.ln_final, "ln_final")
        if cfg.d_out is not None:
            y = g.op("Add", [g.op("MatMul", [y, g.const(self._w(self.tr.W_U), "W_U")]), g.const(self._w(self.tr.b_U), "b_U")])
        g.nodes.append(h.make_node("Identity", [y], ["output"]))
        out_info = h.make_tensor_value_info("output", g.elem, ["batch", "tokens", cfg.d_out or cfg.d_model])
        graph = h.make_graph(g.nodes, "expressivity_transformer", [in_info], [out_info], g.inits)
        onnx_model = h.make_model(graph, opset_imports=[h.make_opsetid("", OPSET)], producer_name="expressivity")
        onnx_model.ir_version = 10  # readable by onnxruntime >= 1.20
        onnx_model.doc_string = doc
        return onnx_model

    def embed(self) -> tuple[str, object]:
        """x·W_E (or W_E[ids]) plus the position table / i/n features: the residual y^(0)."""
        g, tr, cfg, h, T = self.g, self.tr, self.cfg, self.onnx.helper, self.T
        if cfg.d_vocab is not None:
            y = g.op("Gather", [g.const(self._w(tr.W_E), "W_E"), "inputs"], "embed", axis=0)
            in_info = h.make_tensor_value_info("inputs", self.onnx.TensorProto.INT64, ["batch", "tokens"])
        else:
            y = g.op("MatMul", ["inputs", g.const(self._w(tr.W_E), "W_E")], "embed")
            in_info = h.make_tensor_value_info("inputs", g.elem, ["batch", "tokens", cfg.d_input])
        if tr.W_pos is not None:
            y = g.op("Add", [y, self.pos.rows(self._w(tr.W_pos), "W_pos")], "resid_pre")
        elif cfg.positional == "i_over_n":  # p_t = (i/n)·W_frac, i = t + 1, n = T
            frac = g.op("Div", [g.op("Cast", [self.pos.index(1)], to=g.elem), g.op("Cast", [T], to=g.elem)], "i_over_n")
            frac = g.op("Unsqueeze", [frac, g.shared("axis1", [1], np.int64)])  # (T, 1)
            y = g.op("Add", [y, g.op("Mul", [frac, g.const(self._w(tr.W_frac), "W_frac")])], "resid_pre")
        return y, in_info

    def causal_mask(self) -> str | None:
        """(T, T) bool: query i sees keys j ≤ i (None when bidirectional)."""
        if not self.cfg.causal:
            return None
        g, n, i64 = self.g, self.cfg.n_ctx, np.int64
        tril = np.tril(np.ones((n, n), dtype=bool))
        return g.op("Slice", [g.const(tril, "tril", bool), g.const([0, 0], "zeros", i64),
                              g.op("Concat", [self.T, self.T], axis=0), g.const([0, 1], "axes01", i64)], "causal")

    def score_scale(self) -> str:
        """λ, or λ·log n per query with log-length scaling (n = the keys it sees)."""
        g, cfg, T = self.g, self.cfg, self.T
        if not cfg.log_length_scaling:
            return g.const(cfg.score_scale, "lam")
        if cfg.causal:  # query i sees n = i + 1 keys: λ·log(i + 1), a (T, 1) column
            logn = np.log(np.arange(1, cfg.n_ctx + 1, dtype=np.float64))[:, None] * cfg.score_scale
            table = g.const(logn, "lam_log_n")
            zero = g.shared("zero", [0], np.int64)
            return g.op("Slice", [table, zero, T, zero], "scale")
        # every query sees T keys
        return g.op("Mul", [g.const(cfg.score_scale, "lam"), g.op("Log", [g.op("Cast", [T], to=g.elem)])], "scale")

    def layer_norm(self, x: str, ln, hint: str) -> str:
        return self.g.op("LayerNormalization", [x, self.g.const(self._w(ln.w), hint + "_w"),
                                                self.g.const(self._w(ln.b), hint + "_b")],
                         hint, axis=-1, epsilon=float(self.cfg.ln_eps))

    def _heads(self, x: str, W, b, hint: str) -> str:
        """(B, T, d) → (B, H, T, e): x·W^h + b^h for every head."""
        g, H, e, d = self.g, self.cfg.n_heads, self.cfg.d_head, self.cfg.d_model
        Wf = self._w(W).transpose(1, 0, 2).reshape(d, H * e)
        z = g.op("Add", [g.op("MatMul", [x, g.const(Wf, hint)]), g.const(self._w(b).reshape(-1), hint + "_b")])
        z = g.op("Reshape", [z, g.const([0, 0, H, e], "heads", np.int64)])
        return g.op("Transpose", [z], hint + "_t", perm=[0, 2, 1, 3])

    def pattern(self, a: str, k: int) -> str:
        """Attention weights of the logits a: softmax, or hardmax (one-hot of the maximum, split
        evenly over ties)."""
        g = self.g
        if self.cfg.attention == "softmax":
            return g.op("Softmax", [a], f"b{k}_pattern", axis=-1)
        last = g.shared("last", [-1], np.int64)
        hit = g.op("Cast", [g.op("Equal", [a, g.op("ReduceMax", [a, last], keepdims=1)])], to=g.elem)
        return g.op("Div", [hit, g.op("ReduceSum", [hit, last], keepdims=1)], f"b{k}_pattern")

    def attention(self, x: str, attn, k: int) -> str:
        g, cfg = self.g, self.cfg
        H, e, d = cfg.n_heads, cfg.d_head, cfg.d_model
        q, kk, v = (self._heads(x, attn.W_Q, attn.b_Q, f"b{k}_Q"), self._heads(x, attn.W_K, attn.b_K, f"b{k}_K"),
                    self._heads(x, attn.W_V, attn.b_V, f"b{k}_V"))
        if self.rope is not None:
            q, kk = self.pos.rotate(q, self.rope, f"b{k}_Q_rope"), self.pos.rotate(kk, self.rope, f"b{k}_K_rope")
        a = g.op("MatMul", [q, g.op("Transpose", [kk], perm=[0, 1, 3, 2])])  # (B, H, T, T)
        a = g.op("Mul", [a, self.scale], f"b{k}_scores")
        bias = self.pos.relative(self._w(attn.W_rel), k) if cfg.positional == "relative" else self.alibi
        if bias is not None:  # b_h(t, s): (H, T, T)
            a = g.op("Add", [a, bias], f"b{k}_biased")
        if self.mask is not None:
            a = g.op("Where", [self.mask, a, g.shared("neg_inf", -math.inf)], f"b{k}_masked")
        z = g.op("Transpose", [g.op("MatMul", [self.pattern(a, k), v])], perm=[0, 2, 1, 3])  # (B, T, H, e)
        z = g.op("Reshape", [z, g.const([0, 0, H * e], "flat", np.int64)], f"b{k}_z")
        Wo = g.const(self._w(attn.W_O).reshape(H * e, d), f"b{k}_O")
        return g.op("Add", [g.op("MatMul", [z, Wo]), g.const(self._w(attn.b_O), f"b{k}_O_b")], f"b{k}_attn_out")

    def mlp(self, x: str, m, k: int) -> str:
        g = self.g
        hid = g.op("Relu", [g.op("Add", [g.op("MatMul", [x, g.const(self._w(m.W_in), f"b{k}_in")]),
                                         g.const(self._w(m.b_in), f"b{k}_in_b")])])
        return g.op("Add", [g.op("MatMul", [hid, g.const(self._w(m.W_out), f"b{k}_out")]),
                            g.const(self._w(m.b_out), f"b{k}_out_b")], f"b{k}_mlp_out")

    def residual(self, y: str, sublayer, ln, hint: str) -> str:
        """y + sublayer(LN(y)) (pre-LN), LN(y + sublayer(y)) (post-LN) or y + sublayer(y)."""
        g = self.g
        if self.cfg.layer_norm == "pre":
            return g.op("Add", [y, sublayer(self.layer_norm(y, ln, hint + "_ln"))], hint)
        y = g.op("Add", [y, sublayer(y)], hint)
        return self.layer_norm(y, ln, hint + "_ln") if self.cfg.layer_norm == "post" else y


def sample_inputs(model, n_inputs: int, seed: int = 0) -> torch.Tensor:
    """Inputs our model is meant to read: points of a compiled model's domain, encoded random
    strings for constructions and trained models, a batch of its task for a training run,
    random ids or Gaussian vectors otherwise."""
    rng = np.random.default_rng(seed)
    kind = model_kind(model)
    tr = transformer_of(model)
    cfg = tr.cfg
    if kind == "compiled":
        return model.inputs(rng.uniform(model.lo, model.hi, (n_inputs, len(model.lo))))
    if kind == "run":
        return model.sample_inputs(n_inputs, seed)
    if kind in ("construction", "trained"):
        alphabet = model.language.alphabet
        n = min(8, cfg.n_ctx - 1)
        strings = ["".join(rng.choice(list(alphabet), n)) for _ in range(n_inputs)]
        return model.encode(strings).inputs
    T = min(8, cfg.n_ctx)
    if cfg.d_vocab is not None:
        return torch.as_tensor(rng.integers(0, cfg.d_vocab, (n_inputs, T)), dtype=torch.long)
    return torch.as_tensor(rng.standard_normal((n_inputs, T, cfg.d_input)), dtype=tr.dtype)


def check_inputs_memory(model, n_inputs: int, name: str = "n_inputs") -> int:
    """``n_inputs`` as an int ≥ 1 whose sample (and its outputs) fits in the memory budget."""
    n_inputs = check_int(n_inputs, name, min=1)
    cfg = transformer_of(model).cfg
    T = cfg.n_ctx if model_kind(model) == "compiled" else min(8, cfg.n_ctx)
    per_input = 8 * T * max(cfg.d_input or 1, 1) + 256  # the inputs (float64 or int64), plus strings for encoders
    check_memory(n_inputs * per_input, f"the ONNX check on {name} = {n_inputs} inputs", hint=f"use a smaller {name}")
    return n_inputs


def check_onnx(model, path: str | Path, n_inputs: int = 10_000, seed: int = 0, batch: int = 1000,
               tolerance: float | None = None) -> OnnxCheck:
    """Run the ONNX file with onnxruntime and our forward on the same inputs; max |difference|,
    judged against ``tolerance`` (default: see the module docstring; ``OnnxCheck.ok``).

    A file onnxruntime cannot load or run (missing, not ONNX, another model's inputs) is a
    ``ValueError`` naming it, not onnxruntime's own exception."""
    ort = need("onnxruntime")
    model_kind(model)
    path = check_path(path, "path")
    if not path.is_file():
        raise ValueError(f"path {path} does not exist or is not a file (expected an ONNX file)")
    n_inputs = check_inputs_memory(model, n_inputs)
    seed = check_int(seed, "seed", min=0)
    batch = check_int(batch, "batch", min=1)
    if tolerance is not None:
        tolerance = check_float(tolerance, "tolerance", min=0)
    tr: Transformer = transformer_of(model)
    x = sample_inputs(model, n_inputs, seed)
    t0 = time.perf_counter()
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.log_severity_level = 3  # errors only
    try:
        sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own types (NoSuchFile, InvalidProtobuf, Fail, …)
        raise ValueError(f"path {path}: onnxruntime cannot load it ({_ort_reason(exc)})") from None
    err, scale, bad = 0.0, 0.0, 0
    with torch.no_grad():
        for start in range(0, len(x), batch):
            xb = x[start:start + batch]
            ours = tr(xb).cpu().numpy()
            try:
                theirs = sess.run(["output"], {"inputs": xb.cpu().numpy()})[0]
            except Exception as exc:
                raise ValueError(f"path {path}: onnxruntime cannot run it on this model's inputs ({_ort_reason(exc)}): "
                                 "is it the export of this model?") from None
            if theirs.shape != ours.shape:
                raise ValueError(f"path {path}: its output has shape {theirs.shape}, ours {ours.shape}: is it the "
                                 "export of this model?")
            finite = np.isfinite(ours) & np.isfinite(theirs)
            bad += int((~finite).sum())
            if finite.any():
                err = max(err, float(np.abs(ours[finite].astype(np.float64) - theirs[finite]).max()))
                scale = max(scale, float(np.abs(ours[finite]).max()))
    if bad:
        err = math.inf
    if tolerance is None:
        tolerance = RTOL[tr.cfg.dtype] * max(1.0, scale)
    return OnnxCheck(len(x), int(x.shape[1]), tr.cfg.dtype, err, scale, time.perf_counter() - t0, tolerance, bad)


def _ort_reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return (text[:200] + "…") if len(text) > 200 else text or type(exc).__name__
