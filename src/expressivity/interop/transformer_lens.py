"""TransformerLens 4.x export: our transformer as a ``TransformerBridge`` (extra ``[tl]``).

TransformerLens 4 removed ``HookedTransformer``; a model of our own shape is built with
``TransformerBridge.boot_native(TransformerBridgeConfig(...))`` (its TL-native pre-LN model)
and given our weights through ``bridge.load_state_dict`` with the native module names:

======================================  =================================================
ours                                    TransformerLens native (``nn.Linear`` is (out, in))
======================================  =================================================
``W_E`` (d_vocab, d)                    ``tok_embed.weight``
``W_pos`` (learned or sinusoidal)       ``pos.weight`` (zeros for ``positional="none"``)
``W_Q^h`` (H, d, e), ``b_Q``            ``layers.k.attn.q.weight`` (H·e, d), ``.bias``
``W_O^h`` (H, e, d), ``b_O``            ``layers.k.attn.o.weight`` (d, H·e), ``.bias``
``W_in``, ``W_out`` (ReLU FFN)          ``layers.k.mlp.fc_in`` / ``fc_out`` (``act_fn="relu"``)
``ln1``, ``ln2``, ``ln_final`` (pre)    ``layers.k.ln1`` / ``ln2``, ``ln_out`` (``eps`` = ε)
``W_U``, ``b_U``                        ``head.weight``, ``head.bias`` (identity when d_out
                                        is None: the logits are then the final residual)
======================================  =================================================

Scores: ours are λ·(q·k); TransformerLens divides by ``attn_scale``, so ``attn_scale = 1/λ``
(when that is 1 with d_head > 1, which TL refuses as "unscaled", W_Q is doubled and
``attn_scale = 2/λ`` — exact, a power of two). Continuous-input models (compiled models,
Chiang & Cholak constructions): TL's native model embeds token ids only, so
:meth:`TLExport.tl_input` passes ``inputs_embeds = x·W_E`` and TL adds the positions and runs
every block. Hooks map by :data:`HOOKS` (our ``hook_embed`` is TL's
``blocks.0.hook_resid_pre``: TL's own ``hook_embed`` excludes the positions).

Saved for TransformerLens (:func:`save_transformer_lens`, ``expressivity export MODEL
--transformer-lens DIR``): TransformerLens 4.3 has no load-from-directory path for a native
model, so the directory holds what its ``boot_native`` + ``load_state_dict`` take —
``tl_config.json`` (the ``TransformerBridgeConfig`` fields, ``dtype`` as a name) and
``model.safetensors`` (the native state dict) — beside ``expressivity.json`` (our record: n_ctx,
λ, error bound, hook names, input kind) and ``source.safetensors`` (the model the bridge
computes, for :func:`load_transformer_lens`; ``W_E`` there is the input map of a
continuous-input model). :data:`LOAD_WITH_TL` is the plain TransformerLens load.

Refused, with a one-line reason: post-LN (TL's native blocks are pre-LN), log-length
scaling (no such option), and hardmax without ``lam`` (TL has no hardmax). A hardmax
*compiled* model with ``lam`` is recompiled with σ_λ from its source network and exported
with that model's ``error_bound()``; other hardmax models have no bound and are refused.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import torch

from ..compile import CompiledModel, compile_maxout, load_compiled
from ..fileio import check_path, make_dir, read_json, write_json, write_safetensors
from ..memory import check_memory
from ..rules import check_choice, check_float, check_int
from ..transformer import (
    Transformer,
    check_finite_weights,
    load_transformer,
    read_metadata,
    read_tensors,
    save_transformer,
)
from ..transformer import positions as P
from ._optional import need
from .hub import model_kind, transformer_of

MAX_CTX = 4096  # default cap on the bridge's n_ctx (its masks are n_ctx² bytes per layer)


def hook_names(n_layers: int, has_mlp: bool = True) -> dict[str, str]:
    """Our hook name → TransformerLens's, for the residual stream and attention patterns
    (without an FFN, TL has no ``hook_resid_mid``: ours equals ``hook_resid_post`` then)."""
    out = {"hook_embed": "blocks.0.hook_resid_pre", "hook_final": "ln_final.hook_out"}
    for k in range(n_layers):
        out[f"blocks.{k}.hook_resid_pre"] = f"blocks.{k}.hook_resid_pre"
        out[f"blocks.{k}.hook_resid_mid"] = f"blocks.{k}.hook_resid_{'mid' if has_mlp else 'post'}"
        out[f"blocks.{k}.hook_resid_post"] = f"blocks.{k}.hook_resid_post"
        out[f"blocks.{k}.attn.hook_pattern"] = f"blocks.{k}.attn.hook_pattern"
    return out


@dataclass(frozen=True, eq=False)
class TLExport:
    """The bridge, the transformer it computes, and how far that is from the model given."""

    bridge: object  # transformer_lens.model_bridge.TransformerBridge
    transformer: Transformer  # the (softmax) transformer the bridge computes, weight for weight
    error_bound: float  # sup |bridge − model given|: 0 for softmax models; error_bound() after hardmax → σ_λ
    lam: float | None  # λ of σ_λ when a hardmax model was exported as softmax
    hooks: dict[str, str] = field(default_factory=dict)  # our hook name → TL's
    compiled: CompiledModel | None = None  # the compiled model whose transformer this is (with its source net)

    def save(self, directory: str | Path) -> Path:
        """:func:`save_transformer_lens` of this export."""
        return save_transformer_lens(self, directory)

    def tl_input(self, inputs: torch.Tensor) -> torch.Tensor:
        """What the bridge reads for our ``inputs``: token ids as they are, or x·W_E."""
        tr = self.transformer
        if tr.cfg.d_vocab is not None:
            return inputs
        if inputs.dim() != 3 or inputs.shape[-1] != tr.cfg.d_input:
            raise ValueError(f"inputs must have shape (B, T, {tr.cfg.d_input}), got {tuple(inputs.shape)}")
        return inputs.to(tr.dtype) @ tr.W_E.detach()  # as Transformer.embed, before the positions

    def logits(self, inputs: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return self.bridge(self.tl_input(inputs))


def to_transformer_lens(model, lam: float | None = None, n_ctx: int | None = None,
                        dtype: str | None = None) -> TLExport:
    """Export ``model`` (any of our kinds) to a TransformerLens 4.x ``TransformerBridge``.

    ``n_ctx``: the longest sequence the bridge accepts (default: the model's n_ctx, capped
    at :data:`MAX_CTX`; TransformerLens allocates an n_ctx × n_ctx mask in every layer, and
    the hand-built constructions have n_ctx = 65536). ``dtype`` ("float64" | "float32"):
    the bridge's dtype (default: the model's; a float32 trained model compared in float64
    is exported with ``dtype="float64"``, its weights cast exactly).

    Example::

        tl = to_transformer_lens(constructions.get("parity"))
        enc = c.encode(["0110"])
        logits, cache = tl.bridge.run_with_cache(tl.tl_input(enc.inputs))
        cache[tl.hooks["blocks.1.hook_resid_post"]]       # our blocks.1.hook_resid_post
    """
    kind = model_kind(model)
    tr = transformer_of(model)
    if lam is not None:
        lam = check_float(lam, "lam (λ of the softmax export)", min=0, min_open=True)
    check_finite_weights(tr, "model")
    _check_positions(tr.cfg)
    bound = 0.0
    if tr.cfg.attention == "hardmax":
        if lam is None:
            raise ValueError("TransformerLens has no hardmax attention: pass lam=… (shell: expressivity export MODEL "
                             "--transformer-lens DIR --lam LAM) to export a compiled model as softmax σ_λ with the "
                             "bound error_bound(), or export to ONNX, which keeps hardmax exact")
        if not isinstance(model, CompiledModel):
            raise ValueError(f"TransformerLens has no hardmax attention, and a hardmax {kind} has no softmax error "
                             "bound; only compiled models (error_bound()) can be exported as σ_λ")
        if model.net is None:
            raise ValueError("a hardmax compiled model is exported as softmax by recompiling its source network "
                             "with σ_λ, and this one has none (a file written before `expressivity compile` saved "
                             "the network with the model): compile it again from its spec, or load it with the "
                             "spec: load_compiled(path, net=load_source(SPEC)[0]) "
                             "(from expressivity.interop.torch_in import load_source)")
        soft = compile_maxout(model.net, domain=(model.lo, model.hi), attention="softmax", lam=lam)
        tr, bound = soft.transformer, soft.error_bound()
        model = soft
    elif lam is not None:
        raise ValueError(f"lam applies to hardmax models only; this model is softmax with λ = {tr.cfg.lam:g}")
    if dtype is not None and check_choice(dtype, "dtype", ("float64", "float32")) != tr.cfg.dtype:
        tr = _cast(tr, dtype)
    if n_ctx is None:
        n_ctx = min(tr.cfg.n_ctx, MAX_CTX)
    n_ctx = check_int(n_ctx, "n_ctx", min=1, max=tr.cfg.n_ctx)
    check_memory(tr.cfg.n_layers * n_ctx * n_ctx, "TransformerLens's causal masks (n_layers × n_ctx² bytes)",
                 hint="pass a smaller n_ctx")
    bridge = _boot(tr, n_ctx)
    compiled = model if isinstance(model, CompiledModel) and model.transformer is tr else None
    return TLExport(bridge, tr, float(bound), float(lam) if lam is not None else None,
                    hook_names(tr.cfg.n_layers, tr.cfg.d_mlp > 0), compiled)


def _cast(tr: Transformer, dtype: str) -> Transformer:
    """The same transformer in another dtype (float32 → float64 is exact)."""
    out = Transformer(dataclasses.replace(tr.cfg, dtype=dtype), tr.channels)
    with torch.no_grad():
        out.load_state_dict({k: v.to(out.dtype) for k, v in tr.state_dict().items()})
    return out.eval()


TL_POSITIONS = {"learned": "standard", "sinusoidal": "standard", "none": "standard", "rope": "rotary"}
WHY_NOT = {  # positional -> why TransformerLens's native model cannot compute it
    "alibi": "its native model has positions as a table (standard) or rotary only, no score bias b_h(t, s)",
    "relative": "its native model has positions as a table (standard) or rotary only, no learned bias "
                "table W_rel[bucket(s − t), h]",
    "i_over_n": "its native model has positions as a fixed table (standard) or rotary only, and i/n changes "
                "with the length n",
}


def _check_positions(cfg) -> None:
    """learned/sinusoidal/none → TL's ``standard`` table (zeros for none), rope → ``rotary``;
    the others are refused with the reason."""
    if cfg.positional not in TL_POSITIONS:
        raise ValueError(f"the TransformerLens export cannot express positional={cfg.positional!r}: "
                         f"{WHY_NOT[cfg.positional]}; export it to ONNX, which expresses every encoding")


def _check_expressible(tr: Transformer) -> None:
    cfg = tr.cfg
    if cfg.layer_norm == "post":
        raise ValueError("TransformerLens cannot express post-LN (layer norm after each residual sum): its native "
                         "blocks are pre-LN")
    if cfg.log_length_scaling:
        raise ValueError("TransformerLens cannot express log-length scaling of attention logits (λ·log n): its "
                         "attention divides by one fixed attn_scale")


def _fold(cfg) -> float:
    """2 when TL would see attn_scale = 1 with d_head > 1 (it refuses that as "unscaled"):
    W_Q, b_Q and attn_scale are then doubled, which is exact; else 1."""
    return 2.0 if cfg.d_head > 1 and math.isclose(1.0 / cfg.lam, 1.0, abs_tol=1e-9) else 1.0


def bridge_config(tr: Transformer, n_ctx: int) -> dict:
    """The ``TransformerBridgeConfig`` fields of the native model that computes ``tr`` (JSON
    values: ``dtype`` is its name, ``"float64"`` | ``"float32"``)."""
    cfg = tr.cfg
    d = cfg.d_model
    return dict(
        n_layers=cfg.n_layers, d_model=d, d_head=cfg.d_head, n_heads=cfg.n_heads, n_ctx=n_ctx,
        d_vocab=cfg.d_vocab if cfg.d_vocab is not None else 1,
        d_vocab_out=cfg.d_out if cfg.d_out is not None else d,
        d_mlp=cfg.d_mlp if cfg.d_mlp > 0 else None, attn_only=cfg.d_mlp == 0, act_fn="relu",
        normalization_type="LN" if cfg.layer_norm == "pre" else None, eps=cfg.ln_eps,
        attention_dir="causal" if cfg.causal else "bidirectional",
        use_attn_scale=True, attn_scale=_fold(cfg) / cfg.lam, positional_embedding_type=TL_POSITIONS[cfg.positional],
        rotary_dim=cfg.d_head if cfg.positional == "rope" else None, rotary_base=P.ROPE_BASE,
        init_weights=False, dtype=cfg.dtype,
    )


def _boot(tr: Transformer, n_ctx: int):
    _check_expressible(tr)
    need("transformer_lens")
    from transformer_lens import TransformerBridgeConfig
    from transformer_lens.model_bridge import TransformerBridge

    tl_cfg = TransformerBridgeConfig(**{**bridge_config(tr, n_ctx), "dtype": tr.dtype})
    bridge = TransformerBridge.boot_native(tl_cfg, dtype=tr.dtype)
    if tr.cfg.positional == "rope":
        _exact_rotary(bridge.original_model.rotary, n_ctx, tr.cfg.d_head, tr.dtype)
    state = _native_state(tr, _fold(tr.cfg), n_ctx)
    result = bridge.load_state_dict(state, strict=False)
    _check_loaded(bridge, state, result.unexpected_keys)
    bridge.eval()
    return bridge


def _exact_rotary(rotary, n_ctx: int, d_head: int, dtype: torch.dtype) -> None:
    """TL's rotary tables are computed in float32 (angles t·θ_i off by ~1e-7·t); ours are
    float64 (positions.rope_tables). Its layout is ours — adjacent pairs (2i, 2i+1), θ_i =
    10000^{−2i/d_head}, (x_{2i}, x_{2i+1}) ↦ (x_{2i} cos − x_{2i+1} sin, x_{2i+1} cos + x_{2i} sin) —
    so our tables, each repeated per pair, replace its buffers and the rotation is exact."""
    cos, sin = P.rope_tables(n_ctx, d_head, dtype)
    if rotary is None or tuple(rotary.cos_cached.shape) != (n_ctx, d_head):
        raise RuntimeError("TransformerLens's native rotary module is not where this export expects it")
    rotary.cos_cached = cos.repeat_interleave(2, dim=-1)
    rotary.sin_cached = sin.repeat_interleave(2, dim=-1)


def _check_loaded(bridge, state: dict[str, torch.Tensor], unexpected: list[str]) -> None:
    """Every tensor of the native model holds one of our weights (aliases such as
    ``mlp.in`` = ``mlp.fc_in`` share storage); none is left at its random init."""
    live = {k.replace("._original_component", ""): v for k, v in bridge.original_model.state_dict(keep_vars=True).items()}
    wrong = [k for k, v in state.items() if k not in live or not torch.equal(live[k].detach(), v)]
    written = {live[k].data_ptr() for k in state if k in live}
    left = sorted(k for k, v in live.items() if v.numel() and v.data_ptr() not in written)
    if unexpected or wrong or left:
        raise RuntimeError(f"TransformerLens bridge did not take our weights: unexpected {unexpected[:3]}, "
                           f"not loaded {wrong[:3]}, left at init {left[:3]}")


def _native_state(tr: Transformer, fold: float, n_ctx: int) -> dict[str, torch.Tensor]:
    cfg = tr.cfg
    H, e, d = cfg.n_heads, cfg.d_head, cfg.d_model
    dt = tr.dtype
    with torch.no_grad():
        s: dict[str, torch.Tensor] = {}
        s["tok_embed.weight"] = tr.W_E.detach().clone() if cfg.d_vocab is not None else torch.zeros(1, d, dtype=dt)
        if cfg.positional != "rope":  # rotary: TL's native model has no pos table
            s["pos.weight"] = tr.W_pos[:n_ctx].detach().clone() if tr.W_pos is not None else torch.zeros(n_ctx, d, dtype=dt)
        for k, block in enumerate(tr.blocks):
            a, p = block.attn, f"layers.{k}."

            def heads_in(W):  # (H, d, e) → (H·e, d)
                return W.detach().permute(0, 2, 1).reshape(H * e, d).clone()

            s[p + "attn.q.weight"] = heads_in(a.W_Q) * fold
            s[p + "attn.q.bias"] = a.b_Q.detach().reshape(H * e).clone() * fold
            s[p + "attn.k.weight"] = heads_in(a.W_K)
            s[p + "attn.k.bias"] = a.b_K.detach().reshape(H * e).clone()
            s[p + "attn.v.weight"] = heads_in(a.W_V)
            s[p + "attn.v.bias"] = a.b_V.detach().reshape(H * e).clone()
            s[p + "attn.o.weight"] = a.W_O.detach().reshape(H * e, d).T.clone()
            s[p + "attn.o.bias"] = a.b_O.detach().clone()
            if block.mlp is not None:
                s[p + "mlp.fc_in.weight"] = block.mlp.W_in.detach().T.clone()
                s[p + "mlp.fc_in.bias"] = block.mlp.b_in.detach().clone()
                s[p + "mlp.fc_out.weight"] = block.mlp.W_out.detach().T.clone()
                s[p + "mlp.fc_out.bias"] = block.mlp.b_out.detach().clone()
            if cfg.layer_norm == "pre":
                for ours, theirs in (("ln1", "ln1"), ("ln2", "ln2")):
                    ln = getattr(block, ours)
                    s[p + theirs + ".weight"] = ln.w.detach().clone()
                    s[p + theirs + ".bias"] = ln.b.detach().clone()
        if cfg.layer_norm == "pre":
            s["ln_out.weight"] = tr.ln_final.w.detach().clone()
            s["ln_out.bias"] = tr.ln_final.b.detach().clone()
        if cfg.d_out is not None:
            s["head.weight"] = tr.W_U.detach().T.clone()
            s["head.bias"] = tr.b_U.detach().clone()
        else:
            s["head.weight"] = torch.eye(d, dtype=dt)
            s["head.bias"] = torch.zeros(d, dtype=dt)
    return s


# --------------------------------------------------------------------------- saved for TransformerLens
TL_FORMAT = "expressivity.transformer_lens/1"
TL_CONFIG_NAME = "tl_config.json"  # TransformerBridgeConfig fields
TL_WEIGHTS_NAME = "model.safetensors"  # the native model's state dict
TL_RECORD_NAME = "expressivity.json"  # our record: n_ctx, λ, error bound, hooks, input kind
TL_SOURCE_NAME = "source.safetensors"  # the model the bridge computes (ours; a compiled one with its net)
TL_FILES = (TL_CONFIG_NAME, TL_WEIGHTS_NAME, TL_RECORD_NAME, TL_SOURCE_NAME)
_TL_RECORD_KEYS = {"format", "n_ctx", "lam", "error_bound", "input", "hooks"}

LOAD_WITH_TL = '''import json, torch
from safetensors.torch import load_file
from transformer_lens import TransformerBridgeConfig
from transformer_lens.model_bridge import TransformerBridge

spec = json.load(open("DIR/tl_config.json")); dtype = getattr(torch, spec["dtype"])
bridge = TransformerBridge.boot_native(TransformerBridgeConfig(**{**spec, "dtype": dtype}), dtype=dtype)
bridge.load_state_dict(load_file("DIR/model.safetensors"), strict=False)'''
"""The plain TransformerLens load of a :func:`save_transformer_lens` directory ``DIR`` (no
expressivity needed). Continuous-input models read ``inputs_embeds = x @ W_E`` with ``W_E =
load_file("DIR/source.safetensors")["W_E"]``; with RoPE, TL's own float32 rotary tables stay
(:func:`load_transformer_lens` replaces them with exact float64 ones)."""


def save_transformer_lens(export: TLExport, directory: str | Path) -> Path:
    """Write ``export`` (from :func:`to_transformer_lens`) to ``directory`` for TransformerLens.

    TransformerLens 4.3 has no load-from-directory for a native model; the directory holds
    what ``TransformerBridge.boot_native`` and ``bridge.load_state_dict`` take
    (``tl_config.json``, ``model.safetensors``: :data:`LOAD_WITH_TL`), our record
    (``expressivity.json``) and the model the bridge computes (``source.safetensors``; a
    compiled model with its source network), which :func:`load_transformer_lens` checks the
    TransformerLens files against. Deterministic bytes, atomic writes."""
    if not isinstance(export, TLExport):
        raise ValueError(f"export must be a TLExport (from to_transformer_lens), got {type(export).__name__}")
    out = check_path(directory, "directory")
    if out.exists() and not out.is_dir():
        raise ValueError(f"directory {out} is a file; give a directory for the TransformerLens export")
    tr = export.transformer
    n_ctx = int(export.bridge.cfg.n_ctx)
    record = {"format": TL_FORMAT, "n_ctx": n_ctx, "lam": export.lam, "error_bound": export.error_bound,
              "input": "token_ids" if tr.cfg.d_vocab is not None else "inputs_embeds", "hooks": export.hooks}
    state = {k: v.contiguous() for k, v in _native_state(tr, _fold(tr.cfg), n_ctx).items()}
    make_dir(out, "directory")
    write_safetensors(out / TL_WEIGHTS_NAME, state)
    if export.compiled is not None:
        export.compiled.save(out / TL_SOURCE_NAME)
    else:
        save_transformer(tr, out / TL_SOURCE_NAME)
    for name, value in ((TL_CONFIG_NAME, bridge_config(tr, n_ctx)), (TL_RECORD_NAME, record)):
        write_json(out / name, value)
    return out


def _read_json(path: Path):
    if not path.is_file():
        raise ValueError(f"directory {path.parent} has no {path.name}: not a TransformerLens export "
                         f"(expected {', '.join(TL_FILES)})")
    return read_json(path, "TransformerLens export file")


def load_transformer_lens(directory: str | Path) -> TLExport:
    """The :class:`TLExport` saved by :func:`save_transformer_lens`, every file checked: the
    record's fields, the source model (as ``load_compiled`` / ``load_transformer`` check it;
    a compiled one is measured against its source network), λ and the error bound re-derived
    from it, and ``tl_config.json`` / ``model.safetensors`` equal to what that model exports
    to (an edited TransformerLens file is refused, not loaded). RoPE tables are exact."""
    d = check_path(directory, "directory")
    if not d.is_dir():
        raise ValueError(f"directory {d} does not exist or is not a directory (expected a TransformerLens export)")
    rec = _read_json(d / TL_RECORD_NAME)
    where = d / TL_RECORD_NAME
    if not isinstance(rec, dict) or rec.get("format") != TL_FORMAT:
        got = rec.get("format") if isinstance(rec, dict) else None
        raise ValueError(f"{where} was not written by save_transformer_lens (format {got!r}, expected {TL_FORMAT!r})")
    if set(rec) != _TL_RECORD_KEYS:
        raise ValueError(f"{where}: expected exactly the keys {sorted(_TL_RECORD_KEYS)}, got {sorted(rec)}")
    source = d / TL_SOURCE_NAME
    if not source.is_file():
        raise ValueError(f"directory {d} has no {TL_SOURCE_NAME}")
    compiled = load_compiled(source) if "compiled" in read_metadata(source) else None
    tr = compiled.transformer if compiled is not None else load_transformer(source)
    n_ctx = check_int(rec["n_ctx"], f"{where}: n_ctx", min=1, max=tr.cfg.n_ctx)
    lam, bound = rec["lam"], check_float(rec["error_bound"], f"{where}: error_bound", min=0.0)
    if lam is not None:  # a hardmax compiled model exported as σ_λ: the bound is its compile's
        lam = check_float(lam, f"{where}: lam", min=0.0, min_open=True)
        if compiled is None or compiled.attention != "softmax" or compiled.lam != lam or compiled.net is None:
            raise ValueError(f"{where}: lam {lam:g} says a compiled model recompiled as σ_λ, but {TL_SOURCE_NAME} "
                             "is not that compiled model with its source network")
        want = compiled.error_bound()
    else:
        want = 0.0
    if not math.isclose(bound, want, rel_tol=1e-12, abs_tol=0.0):
        raise ValueError(f"{where}: error_bound {bound:.6g} is not the {want:.6g} its source model gives "
                         "(the record was edited)")
    hooks = hook_names(tr.cfg.n_layers, tr.cfg.d_mlp > 0)
    if rec["hooks"] != hooks or rec["input"] != ("token_ids" if tr.cfg.d_vocab is not None else "inputs_embeds"):
        raise ValueError(f"{where}: hooks or input do not match the source model {TL_SOURCE_NAME}")
    if _read_json(d / TL_CONFIG_NAME) != json.loads(json.dumps(bridge_config(tr, n_ctx))):
        raise ValueError(f"{d / TL_CONFIG_NAME}: is not the TransformerBridgeConfig of {TL_SOURCE_NAME} "
                         "(edited, or written by another version)")
    if not (d / TL_WEIGHTS_NAME).is_file():
        raise ValueError(f"directory {d} has no {TL_WEIGHTS_NAME}")
    saved, state = read_tensors(d / TL_WEIGHTS_NAME), _native_state(tr, _fold(tr.cfg), n_ctx)
    differ = sorted(set(saved) ^ set(state)) or [k for k in sorted(state) if saved[k].dtype != state[k].dtype
                                                 or not torch.equal(saved[k], state[k])]
    if differ:
        raise ValueError(f"{d / TL_WEIGHTS_NAME}: tensor(s) {differ[:3]} are not the weights of {TL_SOURCE_NAME} "
                         "(edited, or written by another version)")
    check_memory(tr.cfg.n_layers * n_ctx * n_ctx, "TransformerLens's causal masks (n_layers × n_ctx² bytes)")
    return TLExport(_boot(tr, n_ctx), tr, float(bound), lam, hooks, compiled)
