"""The one transformer of the project.

y^(0)_i = W_E·x_i + p_i (token embedding or linear map of a continuous input, plus a
positional embedding). Block k (k = 1..L), with residual connections:

    a_ij = λ·(W_Q y_i + b_Q)·(W_K y_j + b_K)        (× log n if log-length scaling)
    a_ij ← a_ij + b_h(i, j)                            (alibi / relative position biases)
    â_i· = hardmax_j(a_i·) | softmax_j(a_i·)            (hardmax: even split over tied maxima)
    y_i ← y_i + Σ_h W_O^h Σ_j â^h_ij (W_V^h y_j + b_V^h) + b_O
    y_i ← y_i + W_out ReLU(W_in y_i + b_in) + b_out

Optional layer norm (pre: before each sublayer plus a final one; post: after each residual
sum) with configurable ε. Output: W_U y^(L) + b_U per token, or the residual stream itself.
Position encodings (p_i, the RoPE rotation of q and k, the biases b_h) are in positions.py.
Compiled, hand-built and trained models all use this class, so analyses apply to all.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ..memory import check_memory
from ..pretrained import WEIGHTS_NAME, PretrainedMixin
from . import positions as P
from .channels import ChannelMap
from .config import TransformerConfig
from .positions import sinusoidal_positions  # noqa: F401  (re-exported; its home is positions.py)

_DTYPES = {"float32": torch.float32, "float64": torch.float64}


class LayerNorm(nn.Module):
    """LN(y) = (y − mean)/sqrt(var + ε)·w + b; ε = 0 is allowed (not Lipschitz then)."""

    def __init__(self, d_model: int, eps: float, dtype: torch.dtype) -> None:
        super().__init__()
        self.eps = eps
        self.w = nn.Parameter(torch.ones(d_model, dtype=dtype))
        self.b = nn.Parameter(torch.zeros(d_model, dtype=dtype))

    def forward(self, y: Tensor) -> Tensor:
        return F.layer_norm(y, y.shape[-1:], self.w, self.b, self.eps)


class Attention(nn.Module):
    """Multi-head self-attention with hardmax or σ_λ normalisation."""

    def __init__(self, cfg: TransformerConfig, dtype: torch.dtype) -> None:
        super().__init__()
        H, d, e = cfg.n_heads, cfg.d_model, cfg.d_head
        self.cfg = cfg
        self.W_Q = nn.Parameter(torch.empty(H, d, e, dtype=dtype))
        self.W_K = nn.Parameter(torch.empty(H, d, e, dtype=dtype))
        self.W_V = nn.Parameter(torch.empty(H, d, e, dtype=dtype))
        self.W_O = nn.Parameter(torch.empty(H, e, d, dtype=dtype))
        self.b_Q = nn.Parameter(torch.zeros(H, e, dtype=dtype))
        self.b_K = nn.Parameter(torch.zeros(H, e, dtype=dtype))
        self.b_V = nn.Parameter(torch.zeros(H, e, dtype=dtype))
        self.b_O = nn.Parameter(torch.zeros(d, dtype=dtype))
        if cfg.positional == "relative":  # T5-style bias table b_h = W_rel[bucket, h]
            self.W_rel = nn.Parameter(torch.empty(P.REL_BUCKETS, H, dtype=dtype))
        self._pos_cache: dict = {}  # (T, device, dtype) -> RoPE tables / ALiBi bias / buckets

    def _positions(self, T: int, device, dtype) -> tuple[Tensor | None, Tensor | None]:
        """(RoPE phases e^{i·t·θ} or None, score bias b_h(i, j) of shape (H, T, T) or None)."""
        cfg = self.cfg
        kind = cfg.positional
        if kind not in ("rope", "alibi", "relative"):
            return None, None
        key = (T, device, dtype)
        hit = self._pos_cache.get(key)
        if hit is None:
            if kind == "rope":  # (T, 1, 1, d_head/2) complex, to broadcast over (B, T, 2, H, d_head/2)
                hit = P.rope_phases(T, cfg.d_head, dtype, device)[:, None, None, :]
            elif kind == "alibi":
                hit = P.alibi_bias(cfg.n_heads, T, cfg.causal, dtype, device)
            else:
                hit = P.relative_buckets(T, cfg.causal, device=device)
            if len(self._pos_cache) >= 16:  # evaluation visits many lengths: keep it small
                self._pos_cache.clear()
            self._pos_cache[key] = hit
        if kind == "rope":
            return hit, None
        if kind == "alibi":
            return None, hit
        return None, self.W_rel[hit].permute(2, 0, 1)  # (T, T, H) -> (H, T, T)

    def project(self, u: Tensor) -> Tensor:
        """Position-free projections [W_Q u + b_Q, W_K u + b_K, W_V u + b_V] of the sublayer input
        u (..., d_model), from one fused matmul: (..., 3, H, d_head). No RoPE (see :meth:`qkv`)."""
        d = u.shape[-1]
        H, e = self.cfg.n_heads, self.cfg.d_head
        W = torch.cat([w.permute(1, 0, 2).reshape(d, H * e) for w in (self.W_Q, self.W_K, self.W_V)], dim=1)
        b = torch.cat([self.b_Q.reshape(-1), self.b_K.reshape(-1), self.b_V.reshape(-1)])
        return torch.addmm(b, u.reshape(-1, d), W).view(*u.shape[:-1], 3, H, e)

    def qkv(self, y: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Queries, keys, values, each (B, H, T, d_head), of the sublayer input y (B, T, d_model);
        with RoPE, q_t and k_t are rotated by t·θ_i (positions.rope_apply)."""
        T = y.shape[1]
        qkv = self.project(y)  # (B, T, 3, H, e)
        if self.cfg.positional == "rope":  # rotate each (2i, 2i+1) pair of q_t and k_t by t·θ_i
            R = self._positions(T, y.device, y.dtype)[0]
            qk = P.rope_apply(qkv[:, :, :2], R)  # q and k in one complex product: (B, T, 2, H, e)
            q, k = qk.permute(2, 0, 3, 1, 4).unbind(0)
            return q, k, qkv[:, :, 2].transpose(1, 2)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
        return q, k, v

    def length_factor(self, n_keys: Tensor) -> Tensor:
        """The length-scaling rule: the logit multiplier log n of a query that sees n_keys keys
        (log-length scaling), else 1. Shape of ``n_keys``; λ is not included."""
        if not self.cfg.log_length_scaling:
            return torch.ones_like(n_keys)
        return torch.log(n_keys)

    def _scale(self, T: int, allowed: Tensor | None, dtype: torch.dtype, device) -> float | Tensor:
        """λ, or λ·log n per query (n = number of keys it sees) with log-length scaling."""
        if not self.cfg.log_length_scaling:
            return self.cfg.score_scale
        if allowed is None:
            return self.cfg.score_scale * math.log(T)
        n_keys = allowed.sum(-1, keepdim=True).clamp(min=1).to(dtype)  # (B|1, 1, T, 1)
        return self.cfg.score_scale * self.length_factor(n_keys)

    def scores(self, y: Tensor, key_mask: Tensor | None = None) -> Tensor:
        """Logits a_ij = λ·s_i·q_i·k_j + b_h(i, j), shape (B, H, T, T), of the sublayer input y
        (B, T, d_model): RoPE, length scaling s_i and alibi/relative biases included; masked
        entries are −inf."""
        q, k, _ = self.qkv(y)
        allowed = _allowed(y.shape[1], self.cfg.causal, key_mask, y.device)
        bias = self._positions(y.shape[1], y.device, y.dtype)[1]
        return self._logits(q, k, allowed, self._scale(y.shape[1], allowed, y.dtype, y.device), bias)

    def pair_scores(self, q: Tensor, k: Tensor, n_keys: Tensor | None = None) -> Tensor:
        """Logits a_pr = λ·s_p·q_p·k_r of given query rows q (..., P, d_head) and key rows
        k (..., R, d_head) (rows of :meth:`project`): (..., P, R), the same product
        :meth:`scores` and the forward pass take. s_p = :meth:`length_factor` of ``n_keys``
        (..., P), the keys query p sees; s = 1 when ``n_keys`` is None. No RoPE rotation, no
        position bias and no mask: for models whose positions are a table W_pos
        (positions.require_position_table) and callers that mask themselves."""
        scale = self.cfg.score_scale
        if n_keys is not None and self.cfg.log_length_scaling:
            scale = self.cfg.score_scale * self.length_factor(n_keys)[..., None]
        return self._logits(q, k, None, scale)

    def heads_out(self, z: Tensor) -> Tensor:
        """The sublayer's output Σ_h W_O^h z^h + b_O of the heads' mixed values z (..., H, d_head):
        (..., d_model)."""
        d = self.W_O.shape[-1]
        out = torch.addmm(self.b_O, z.reshape(-1, z.shape[-2] * z.shape[-1]), self.W_O.reshape(-1, d))
        return out.view(*z.shape[:-2], d)

    @staticmethod
    def _logits(q: Tensor, k: Tensor, allowed: Tensor | None, scale, bias: Tensor | None = None) -> Tensor:
        if q.shape[-1] == 1:  # outer product: cheaper than a batch of 1-wide matmuls
            a = q * k.transpose(-1, -2)
        else:
            a = q @ k.transpose(-1, -2)
        a = a * scale
        if bias is not None:  # b_h(i, j): (H, T, T)
            a = a + bias
        if allowed is not None:
            a = a.masked_fill(~allowed, float("-inf"))
        return a

    def pattern(self, a: Tensor) -> Tensor:
        """â = hardmax(a) or softmax(a) along the key axis."""
        if self.cfg.attention == "softmax":
            return torch.softmax(a, dim=-1)
        hit = (a == a.amax(dim=-1, keepdim=True)).to(a.dtype)
        return hit / hit.sum(dim=-1, keepdim=True)

    def forward(self, y: Tensor, key_mask: Tensor | None, cache: dict | None, prefix: str) -> Tensor:
        B, T, d = y.shape  # y: (B, T, d_model)
        cfg = self.cfg
        allowed = _allowed(T, cfg.causal, key_mask, y.device)  # (B|1, 1, T, T) or None
        scale = self._scale(T, allowed, y.dtype, y.device)
        bias = self._positions(T, y.device, y.dtype)[1]  # (H, T, T) or None
        if cfg.d_head == 1:
            z = self._one_wide(y, allowed, scale, cache, prefix, bias)  # (B, T, H)
        else:
            q, k, v = self.qkv(y)  # (B, H, T, d_head)
            if cfg.attention == "softmax" and cache is None and not _vmapped(y):  # SDPA has no vmap rule
                if isinstance(scale, Tensor):
                    q, scale = q * scale, 1.0
                if bias is not None:  # SDPA adds a float mask to the scaled logits; a 4-D one (1, H, T, T)
                    # keeps its fused CPU kernel (a 3-D mask falls back to the math path; a mask that needs a
                    # gradient, the relative table's, takes the math path either way)
                    mask = bias[None] if allowed is None else bias.masked_fill(~allowed, float("-inf"))
                    z = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)
                elif cfg.causal and key_mask is None:  # let SDPA build the causal mask itself
                    z = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=scale)
                else:
                    z = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed, scale=scale)
            else:
                a = self._logits(q, k, allowed, scale, bias)  # (B, H, T, T)
                pattern = self.pattern(a)
                z = pattern @ v
                if cache is not None:
                    cache[prefix + "hook_scores"] = a
                    cache[prefix + "hook_pattern"] = pattern
            z = z.transpose(1, 2)  # (B, T, H, d_head)
        z = z.reshape(B, T, cfg.n_heads, cfg.d_head)
        if cache is not None:
            cache[prefix + "hook_z"] = z
        return self.heads_out(z)

    def _one_wide(self, y: Tensor, allowed, scale, cache: dict | None, prefix: str,
                  bias: Tensor | None = None) -> Tensor:
        """d_head = 1 (compiled models): scores are outer products; layout (B, T_q, T_k, H)."""
        B, T, d = y.shape
        H = self.cfg.n_heads
        W = torch.cat([w[:, :, 0].T for w in (self.W_Q, self.W_K, self.W_V)], dim=1)  # (d, 3H)
        b = torch.cat([self.b_Q[:, 0], self.b_K[:, 0], self.b_V[:, 0]])
        q, k, v = torch.addmm(b, y.reshape(B * T, d), W).view(B, T, 3, H).unbind(2)  # (B, T, H)
        a = q[:, :, None, :] * k[:, None, :, :]  # (B, T_q, T_k, H)
        if isinstance(scale, Tensor):
            a = a * scale.permute(0, 2, 3, 1)
        elif scale != 1.0:
            a = a * scale
        if bias is not None:
            a = a + bias.permute(1, 2, 0)[None]  # (1, T_q, T_k, H)
        if allowed is not None:
            a = a.masked_fill(~allowed.permute(0, 2, 3, 1), float("-inf"))
        if self.cfg.attention == "softmax":
            w = torch.softmax(a, dim=2)
            z = (w * v[:, None, :, :]).sum(2)
        else:
            hit = a == a.amax(dim=2, keepdim=True)  # (B, T_q, T_k, H)
            count = hit.sum(2).to(a.dtype)  # ties split evenly
            z = torch.where(hit, v[:, None, :, :], 0.0).sum(2) / count
            if cache is not None:
                w = hit.to(a.dtype) / count[:, :, None, :]
        if cache is not None:
            cache[prefix + "hook_scores"] = a.permute(0, 3, 1, 2)
            cache[prefix + "hook_pattern"] = w.permute(0, 3, 1, 2)
        return z  # (B, T, H)


def _vmapped(t: Tensor) -> bool:
    """Whether ``t`` is a per-run slice under ``torch.func.vmap`` (the batched trainer checks
    its ids once, outside: a value test inside vmap is not allowed)."""
    return torch._C._functorch.is_batchedtensor(t)


def _allowed(T: int, causal: bool, key_mask: Tensor | None, device) -> Tensor | None:
    allowed = None
    if causal:
        allowed = torch.ones(T, T, dtype=torch.bool, device=device).tril()[None, None]
    if key_mask is not None:
        km = key_mask[:, None, None, :].to(torch.bool)
        allowed = km if allowed is None else (allowed & km)
    return allowed


class MLP(nn.Module):
    """Token-wise FFN(y) = W_out ReLU(W_in y + b_in) + b_out."""

    def __init__(self, cfg: TransformerConfig, dtype: torch.dtype) -> None:
        super().__init__()
        self.W_in = nn.Parameter(torch.empty(cfg.d_model, cfg.d_mlp, dtype=dtype))
        self.b_in = nn.Parameter(torch.zeros(cfg.d_mlp, dtype=dtype))
        self.W_out = nn.Parameter(torch.empty(cfg.d_mlp, cfg.d_model, dtype=dtype))
        self.b_out = nn.Parameter(torch.zeros(cfg.d_model, dtype=dtype))

    def forward(self, y: Tensor) -> Tensor:
        shape = y.shape
        hidden = torch.relu_(torch.addmm(self.b_in, y.reshape(-1, shape[-1]), self.W_in))
        return torch.addmm(self.b_out, hidden, self.W_out).view(shape)


class Block(nn.Module):
    def __init__(self, cfg: TransformerConfig, dtype: torch.dtype) -> None:
        super().__init__()
        self.cfg = cfg
        self.attn = Attention(cfg, dtype)
        self.mlp = MLP(cfg, dtype) if cfg.d_mlp > 0 else None
        if cfg.layer_norm != "none":
            self.ln1 = LayerNorm(cfg.d_model, cfg.ln_eps, dtype)
            self.ln2 = LayerNorm(cfg.d_model, cfg.ln_eps, dtype)

    def attn_input(self, y: Tensor) -> Tensor:
        """What the attention sublayer reads from the residual y (..., d_model): LN1(y) with
        pre-layer-norm, else y itself."""
        return self.ln1(y) if self.cfg.layer_norm == "pre" else y

    def mlp_input(self, y: Tensor) -> Tensor:
        """What the FFN sublayer reads from the residual y (..., d_model): LN2(y) with
        pre-layer-norm, else y itself."""
        return self.ln2(y) if self.cfg.layer_norm == "pre" else y

    def forward(self, y: Tensor, key_mask: Tensor | None, cache: dict | None, prefix: str) -> Tensor:
        # y: (B, T, d_model) — the residual stream
        return self.after_attention(y + self.attn(self.attn_input(y), key_mask, cache, prefix + "attn."),
                                    cache, prefix)

    def after_attention(self, y: Tensor, cache: dict | None = None, prefix: str = "") -> Tensor:
        """The rest of the block from the attention residual sum y + Attn(·) (..., d_model):
        post-LN1, then the FFN residual (and post-LN2); returns the block's output."""
        placement = self.cfg.layer_norm
        if placement == "post":
            y = self.ln1(y)
        if cache is not None:
            cache[prefix + "hook_resid_mid"] = y
        if self.mlp is not None:
            y = y + self.mlp(self.mlp_input(y))
            if placement == "post":
                y = self.ln2(y)
        return y


class Transformer(nn.Module, PretrainedMixin):
    """The project's transformer; see the module docstring for the math.

    ``channels`` optionally names every residual dimension (compiled and hand-built models).
    """

    hub_kind = "transformer"  # save_pretrained / from_pretrained (expressivity.pretrained)

    def __init__(self, cfg: TransformerConfig, channels: ChannelMap | None = None) -> None:
        super().__init__()
        if not isinstance(cfg, TransformerConfig):
            raise ValueError(f"cfg must be a TransformerConfig, got {type(cfg).__name__}")
        if channels is not None and not isinstance(channels, ChannelMap):
            raise ValueError(f"channels must be a ChannelMap or None, got {type(channels).__name__}")
        n = cfg.n_params() + (cfg.n_ctx * cfg.d_model if cfg.positional == "sinusoidal" else 0)
        itemsize = 8 if cfg.dtype == "float64" else 4
        # parameters, plus the float64 draw of the largest tensor in reset_parameters
        check_memory(n * itemsize + 8 * max(cfg.n_ctx, cfg.d_model, cfg.d_mlp, 1) * cfg.d_model,
                     f"a Transformer with {n:.3g} parameters ({cfg.dtype})",
                     hint="use smaller d_model, d_mlp, n_heads, n_layers or n_ctx")
        if channels is not None and len(channels) != cfg.d_model:
            raise ValueError(f"channel map has {len(channels)} names but d_model = {cfg.d_model}")
        self.cfg = cfg
        self.channels = channels
        dtype = _DTYPES[cfg.dtype]
        d_in = cfg.d_vocab if cfg.d_vocab is not None else cfg.d_input
        self.W_E = nn.Parameter(torch.empty(d_in, cfg.d_model, dtype=dtype))
        if cfg.positional == "learned":
            self.W_pos = nn.Parameter(torch.empty(cfg.n_ctx, cfg.d_model, dtype=dtype))
        elif cfg.positional == "sinusoidal":
            self.register_buffer("W_pos", sinusoidal_positions(cfg.n_ctx, cfg.d_model, dtype), persistent=False)
        else:
            self.W_pos = None
        if cfg.positional == "i_over_n":  # p_t = (i/n)·W_frac, the feature channel i/n
            self.W_frac = nn.Parameter(torch.empty(1, cfg.d_model, dtype=dtype))
        self.blocks = nn.ModuleList(Block(cfg, dtype) for _ in range(cfg.n_layers))
        if cfg.layer_norm == "pre":
            self.ln_final = LayerNorm(cfg.d_model, cfg.ln_eps, dtype)
        if cfg.d_out is not None:
            self.W_U = nn.Parameter(torch.empty(cfg.d_model, cfg.d_out, dtype=dtype))
            self.b_U = nn.Parameter(torch.zeros(cfg.d_out, dtype=dtype))
        self.reset_parameters()

    @property
    def dtype(self) -> torch.dtype:
        return _DTYPES[self.cfg.dtype]

    def reset_parameters(self, seed: int | None = None) -> None:
        """Matrices ~ N(0, 1/fan_in), biases 0, layer-norm gains 1 (in place)."""
        gen = torch.Generator().manual_seed(seed) if seed is not None else None
        with torch.no_grad():
            for name, p in self.named_parameters():
                short = name.split(".")[-1]
                if short == "W_pos" or (short == "W_E" and self.cfg.d_vocab is not None):
                    p.copy_(torch.randn(p.shape, generator=gen, dtype=torch.float64))
                elif short.startswith("W_"):
                    fan_in = p.shape[-2]
                    p.copy_(torch.randn(p.shape, generator=gen, dtype=torch.float64) / math.sqrt(fan_in))
                elif name.endswith(".w"):
                    p.fill_(1.0)
                else:
                    p.zero_()

    # ----------------------------------------------------------------------------- forward
    def embed(self, inputs: Tensor, key_mask: Tensor | None = None) -> Tensor:
        """y^(0): (B, T, d_model) from token ids (B, T) or vectors (B, T, d_input).

        ``key_mask`` (B, T) only matters for ``i_over_n``: n = real tokens of each row."""
        cfg = self.cfg
        if not isinstance(inputs, Tensor):
            raise ValueError(f"inputs must be a torch.Tensor, got {type(inputs).__name__}")
        if inputs.is_complex():
            raise ValueError("inputs must be real, got a complex tensor")
        if cfg.d_vocab is not None:
            if inputs.dtype not in (torch.int64, torch.int32, torch.int16, torch.uint8):
                raise ValueError(f"token-id model expects integer ids of shape (B, T), got dtype {inputs.dtype}")
            if inputs.dim() != 2:
                raise ValueError(f"token ids must have shape (B, T), got {tuple(inputs.shape)}")
            if inputs.numel() and not _vmapped(inputs) and (int(inputs.min()) < 0 or int(inputs.max()) >= cfg.d_vocab):
                raise ValueError(f"token ids must lie in [0, {cfg.d_vocab}), got range "
                                 f"[{int(inputs.min())}, {int(inputs.max())}]")
            y = self.W_E[inputs]
        else:
            if inputs.dim() != 3 or inputs.shape[-1] != cfg.d_input:
                raise ValueError(f"continuous input must have shape (B, T, {cfg.d_input}), "
                                 f"got {tuple(inputs.shape)}")
            y = inputs.to(self.dtype) @ self.W_E
        T = y.shape[1]
        if cfg.positional == "learned":
            if T > self.W_pos.shape[0]:
                raise ValueError(f"sequence length {T} exceeds n_ctx = {self.W_pos.shape[0]} (positional='learned' "
                                 "has one trained row per position; sinusoidal, i_over_n, rope, alibi, relative "
                                 "and none run at any length)")
            y = y + self.W_pos[:T]
        elif cfg.positional == "sinusoidal":
            table = self.W_pos if T <= self.W_pos.shape[0] else P.sinusoidal_positions(T, cfg.d_model, y.dtype)
            y = y + table[:T].to(y.device)
        elif cfg.positional == "i_over_n":
            y = y + P.i_over_n(T, key_mask, y.dtype).to(y.device) * self.W_frac  # (B|1, T, 1)·(1, d)
        return y

    def forward(
        self,
        inputs: Tensor,
        key_mask: Tensor | None = None,
        cache: dict | None = None,
    ) -> Tensor:
        """Output per token: (B, T, d_out), or the final residual (B, T, d_model).

        ``key_mask`` (B, T) bool marks real (non-padding) positions. Pass a dict as ``cache``
        to receive ``hook_embed``, ``blocks.{k}.hook_resid_pre|mid|post``,
        ``blocks.{k}.attn.hook_scores|hook_pattern|hook_z`` and ``hook_final``.
        """
        if key_mask is not None:
            if not isinstance(key_mask, Tensor):
                raise ValueError(f"key_mask must be a torch.Tensor of shape (B, T), got {type(key_mask).__name__}")
            if isinstance(inputs, Tensor) and tuple(key_mask.shape) != tuple(inputs.shape[:2]):
                raise ValueError(f"key_mask must have shape (B, T) = {tuple(inputs.shape[:2])}, got {tuple(key_mask.shape)}")
        if cache is not None and not isinstance(cache, dict):
            raise ValueError(f"cache must be a dict or None, got {type(cache).__name__}")
        y = self.embed(inputs, key_mask)  # (B, T, d_model)
        if cache is not None:
            cache["hook_embed"] = y
        return self.unembed(self.run_blocks(y, 0, key_mask, cache), cache)

    def run_blocks(self, y: Tensor, start: int = 0, key_mask: Tensor | None = None,
                   cache: dict | None = None, stream: list | None = None, stop: int | None = None) -> Tensor:
        """Blocks start+1..L (0-based ``start``..L−1) on the residual y^(start) (B, T, d_model):
        returns y^(L), or y^(stop) when ``stop`` is given (blocks start+1..stop only).
        ``stream`` (a list) receives y^(start+1), …; ``cache`` the hooks."""
        for k in range(start, len(self.blocks) if stop is None else stop):
            prefix = f"blocks.{k}."
            if cache is not None:
                cache[prefix + "hook_resid_pre"] = y
            y = self.blocks[k](y, key_mask, cache, prefix)
            if cache is not None:
                cache[prefix + "hook_resid_post"] = y
            if stream is not None:
                stream.append(y)
        return y

    def unembed(self, y: Tensor, cache: dict | None = None) -> Tensor:
        """Output of the final residual y^(L) (..., d_model): W_U·LN_f(y) + b_U (LN_f only with
        pre-layer-norm), or LN_f(y) itself when the model has no W_U (d_out = None)."""
        if self.cfg.layer_norm == "pre":
            y = self.ln_final(y)
        if cache is not None:
            cache["hook_final"] = y
        if self.cfg.d_out is not None:
            return y @ self.W_U + self.b_U
        return y

    def residuals(self, inputs: Tensor, key_mask: Tensor | None = None) -> Tensor:
        """y^(0), …, y^(L) stacked: (L + 1, B, T, d_model)."""
        cache: dict = {}
        self.forward(inputs, key_mask, cache)
        stream = [cache["hook_embed"]] + [cache[f"blocks.{k}.hook_resid_post"] for k in range(self.cfg.n_layers)]
        return torch.stack(stream)

    # --------------------------------------------------------------------------- counting
    def n_params(self, nonzero: bool = False) -> int:
        """Number of trainable parameters (dense), or of non-zero entries."""
        if nonzero:
            return int(sum(int((p != 0).sum()) for p in self.parameters()))
        return int(sum(p.numel() for p in self.parameters()))

    def flops(self, n_tokens: int) -> int:
        """Multiply-adds ×2 of one forward pass on one sequence of n_tokens (dense weights)."""
        c, T = self.cfg, n_tokens
        d_in = c.d_vocab if c.d_vocab is not None else c.d_input
        embed = 0 if c.d_vocab is not None else 2 * T * d_in * c.d_model
        qkv = 3 * 2 * T * c.d_model * c.n_heads * c.d_head
        mix = 2 * 2 * c.n_heads * T * T * c.d_head
        out = 2 * T * c.n_heads * c.d_head * c.d_model
        mlp = 2 * 2 * T * c.d_model * c.d_mlp
        unembed = 0 if c.d_out is None else 2 * T * c.d_model * c.d_out
        return embed + c.n_layers * (qkv + mix + out + mlp) + unembed

    def extra_repr(self) -> str:
        c = self.cfg
        return (f"d_model={c.d_model}, n_layers={c.n_layers}, n_heads={c.n_heads}, d_head={c.d_head}, "
                f"d_mlp={c.d_mlp}, attention={c.attention}" + (f", λ={c.lam}" if c.lam is not None else "")
                + f", layer_norm={c.layer_norm}")

    # ------------------------------------------------------------------ hub layout
    def _hub_records(self):
        from .hub import state, transformer_records

        return transformer_records(self), {WEIGHTS_NAME: state(self)}

    @classmethod
    def _from_hub(cls, config, directory):
        from .hub import transformer_from_config

        return transformer_from_config(config, directory)
