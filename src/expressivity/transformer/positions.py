"""Position encodings of the Transformer: ``TransformerConfig.positional``.

Three families, by where the position enters (t = 0..T−1 the token index, n = T the number
of tokens, or the number of real tokens of a row under a key mask):

- **added to the input** y^(0)_t = W_E[s_t] + p_t:
  - ``learned``: p_t = W_pos[t], one trained row per position (so at most n_ctx positions);
  - ``sinusoidal`` (Vaswani et al. 2017): p_{t,2i} = sin(t / 10000^{2i/d}),
    p_{t,2i+1} = cos(t / 10000^{2i/d}); computed for any T;
  - ``i_over_n`` (Chiang & Cholak 2022; Yao et al. 2021): the feature i/n with i = t + 1, the
    1-based position over the length, p_t = (i/n)·w for a trained vector w = W_frac ∈ ℝ^d
    (the feature channel i/n mapped into the residual stream);
- **rotating queries and keys** — ``rope`` (Su et al. 2021, RoFormer): each pair
  (x_{2i}, x_{2i+1}) of q_t and k_t is rotated by the angle t·θ_i, θ_i = 10000^{−2i/d_head},
  so q_t·k_s depends on t − s only through the angles (t − s)·θ_i;
- **biasing the scores** a_ts ← a_ts + b_h(t, s):
  - ``alibi`` (Press et al. 2022): b_h = −m_h·(t − s) for causal attention; for bidirectional
    attention Delétang et al.'s (2023) version b_h = −m_h·(|t − s| − ½·[s < t]) (the ½ tells
    left from right). Slopes m_h = 2^{−8h/H}, h = 1..H, for H a power of 2; otherwise those
    of the largest power of two 2^k < H followed by every other slope of 2^{k+1} heads
    (Press et al.'s reference code);
  - ``relative``: learned relative-position biases with **T5-style buckets** (Raffel et al.
    2020, §2.1): b_h = W_rel[bucket(s − t), h], one table (32 buckets × H) per layer;
    short distances get one bucket each (below 8 with 16 buckets per direction when
    bidirectional; below 16 with 32 buckets over the past when causal), longer ones share
    log-spaced buckets up to distance 128 and the last bucket beyond. (Delétang et al. use Transformer-XL's sinusoidal relative keys instead; this is
    the simpler, widely used bias form.)
- ``none``: no position information (attention is then permutation-equivariant, apart from
  a causal mask).

Only ``learned`` has an n_ctx limit; all others run at any length.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from ..choices import POSITIONALS, Positional  # noqa: F401

ADDED = ("learned", "sinusoidal", "i_over_n")  # p_t added to y^(0)
SCORE_BIASES = ("relative", "alibi")  # b_h(t, s) added to the attention logits
REL_BUCKETS = 32  # T5's relative_attention_num_buckets
REL_MAX_DISTANCE = 128  # T5's relative_attention_max_distance
ROPE_BASE = 10000.0
TABLE = ("learned", "sinusoidal", "none")  # positions are a fixed table W_pos added to y^(0)


def require_position_table(cfg, what: str) -> None:
    """Refuse a model whose positions are not the fixed table W_pos (``TABLE``).

    Code that reads W_E + W_pos, or re-derives q·k from the weights (Lemma 5's bound, the
    incremental flip measurement, the depth reduction),
    would silently drop rope's rotations, alibi/relative score biases or the length-dependent
    i/n feature; it must say so instead of answering for a different model."""
    if cfg.positional not in TABLE:
        raise ValueError(f"{what} handles positions given as a table W_pos (positional = {', '.join(TABLE)}); "
                         f"this model has positional={cfg.positional!r}, which it would silently ignore")


def sinusoidal_positions(n_ctx: int, d_model: int, dtype: torch.dtype = torch.float32) -> Tensor:
    """Vaswani et al.'s p_{t,2i} = sin(t/10000^{2i/d}), p_{t,2i+1} = cos(...): (n_ctx, d_model)."""
    pos = torch.arange(n_ctx, dtype=torch.float64)[:, None]
    i = torch.arange(0, d_model, 2, dtype=torch.float64)
    angle = pos / torch.pow(10000.0, i / d_model)
    table = torch.zeros(n_ctx, d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return table.to(dtype)


def i_over_n(T: int, key_mask: Tensor | None = None, dtype: torch.dtype = torch.float32) -> Tensor:
    """The feature i/n per token, i = t + 1: (1, T, 1), or (B, T, 1) with n = real tokens per row."""
    i = torch.arange(1, T + 1, dtype=dtype)[None, :, None]
    if key_mask is None:
        return i / T
    n = key_mask.to(dtype).sum(1).clamp(min=1)[:, None, None]  # (B, 1, 1)
    return i / n


# ----------------------------------------------------------------------------- RoPE
def rope_tables(T: int, d_head: int, dtype: torch.dtype, device=None) -> tuple[Tensor, Tensor]:
    """cos(t·θ_i), sin(t·θ_i) for t < T, i < d_head/2, θ_i = 10000^{−2i/d_head}: each (T, d_head/2)."""
    theta = ROPE_BASE ** (-torch.arange(0, d_head, 2, dtype=torch.float64) / d_head)
    angle = torch.arange(T, dtype=torch.float64)[:, None] * theta[None, :]
    return angle.cos().to(dtype=dtype, device=device), angle.sin().to(dtype=dtype, device=device)


def rope_rotate(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    """Rotate each pair (x_{2i}, x_{2i+1}) of x (…, T, d_head) by the angle t·θ_i:
    (x_{2i}, x_{2i+1}) ↦ (x_{2i} cos − x_{2i+1} sin, x_{2i} sin + x_{2i+1} cos)."""
    x1, x2 = x[..., 0::2], x[..., 1::2]  # (…, T, d_head/2)
    return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1).flatten(-2)


def rope_factors(T: int, d_head: int, dtype: torch.dtype, device=None) -> tuple[Tensor, Tensor]:
    """The same rotation in real arithmetic (the ONNX export's form): rope_rotate(x) =
    x·C + swap(x)·S with C = (cos θ_0 t, cos θ_0 t, cos θ_1 t, …) and S = (−sin θ_0 t,
    sin θ_0 t, −sin θ_1 t, …), swap(x) exchanging x_{2i} and x_{2i+1}: each (T, d_head)."""
    cos, sin = rope_tables(T, d_head, dtype, device)
    return cos.repeat_interleave(2, dim=-1), torch.stack([-sin, sin], dim=-1).flatten(-2)


def rope_phases(T: int, d_head: int, dtype: torch.dtype, device=None) -> Tensor:
    """e^{i·t·θ_j} = cos(t·θ_j) + i·sin(t·θ_j) for t < T, j < d_head/2: (T, d_head/2), complex
    of ``dtype``'s precision."""
    cos, sin = rope_tables(T, d_head, dtype, device)
    return torch.complex(cos, sin)


def rope_apply(x: Tensor, R: Tensor) -> Tensor:
    """The rotation of :func:`rope_rotate` as one complex product: the pair (x_{2i}, x_{2i+1})
    is z_i = x_{2i} + i·x_{2i+1}, and z_i·e^{i·t·θ_i} is the rotated pair. x (…, T, d_head),
    R = :func:`rope_phases` broadcastable to (…, T, d_head/2)."""
    if x.stride(-1) != 1 or x.storage_offset() % 2 or any(st % 2 for st in x.stride()[:-1]):
        x = x.contiguous()  # a complex view needs (re, im) adjacent and every other stride even
    z = torch.view_as_complex(x.unflatten(-1, (-1, 2)))
    return torch.view_as_real(z * R).flatten(-2)


# ---------------------------------------------------------------------------- ALiBi
def alibi_slopes(H: int) -> list[float]:
    """Press et al.'s head slopes m_1..m_H (see the module docstring)."""
    def power_of_2(n: int) -> list[float]:
        return [2.0 ** (-8.0 * h / n) for h in range(1, n + 1)]

    if math.log2(H).is_integer():
        return power_of_2(H)
    k = 2 ** math.floor(math.log2(H))
    return power_of_2(k) + alibi_slopes(2 * k)[0::2][: H - k]


def alibi_bias(H: int, T: int, causal: bool, dtype: torch.dtype = torch.float32, device=None) -> Tensor:
    """b_h(t, s) of ALiBi: (H, T, T); rows t are queries, columns s keys."""
    t = torch.arange(T, device=device)
    diff = (t[:, None] - t[None, :]).to(torch.float64)  # t − s
    dist = diff if causal else diff.abs() - 0.5 * (diff > 0)
    m = torch.tensor(alibi_slopes(H), dtype=torch.float64, device=device)
    return (-m[:, None, None] * dist[None]).to(dtype)


# ------------------------------------------------------------- relative (T5 buckets)
def relative_buckets(T: int, causal: bool, n_buckets: int = REL_BUCKETS,
                     max_distance: int = REL_MAX_DISTANCE, device=None) -> Tensor:
    """T5's bucket of the relative position s − t for every (query t, key s): (T, T) long."""
    t = torch.arange(T, device=device)
    rel = t[None, :] - t[:, None]  # s − t
    bucket = torch.zeros_like(rel)
    if causal:
        n = (-rel).clamp(min=0)
    else:
        n_buckets //= 2
        bucket = bucket + (rel > 0).long() * n_buckets
        n = rel.abs()
    exact = n_buckets // 2
    log_ratio = torch.log(n.clamp(min=1).double() / exact) / math.log(max_distance / exact)
    large = exact + (log_ratio * (n_buckets - exact)).long()
    large = large.clamp(max=n_buckets - 1)
    return bucket + torch.where(n < exact, n, large)
