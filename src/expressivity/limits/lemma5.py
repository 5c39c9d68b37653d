"""Hahn's Lemma 5, made explicit for the project's :class:`Transformer` — computed from weights only.

Hahn (2020, §5, Lemma 5): if every position-wise map is Lipschitz and every attention logit
obeys |a_ij| ≤ A, then each soft-attention weight is at most e^{2A}/(e^{2A} + n − 1) and
flipping one input x_i (embedding difference D = ‖v_i − v'_i‖) moves every *other* position
by O(1/n): ‖y_j^(k) − y'_j^(k)‖ ≤ H^{k−1}·C·2^{k−1}·D / n, while the flipped position moves by
at most C·2^k·D.

This module evaluates that argument as a recursion over the blocks of *this* architecture
(residual attention + residual ReLU FFN, optional pre/post layer norm, causal or not), using
only the weights — it never runs the model on data, so it is independent of the measurement
in :mod:`.sensitivity`. Per block k it tracks

- R: a bound on ‖y_j‖ over all inputs (R^(0) = max_{v,t} ‖W_E[v] + W_pos[t]‖);
- δ: a bound on ‖Δy_i‖ at the flipped position (δ^(0) = D);
- ε_j: a bound on ‖Δy_j‖ at every other position j (ε^(0) = 0), a vector over query
  positions because a causal query j only sees m_j = j + 1 keys.

For head h with R_Q = ‖W_Q‖R + ‖b_Q‖ (spectral norms), R_K, R_V likewise, the logit bound is
A_h = λ·R_Q·R_K (× log m_j with log-length scaling), every weight is at most
w_j = 1 / (1 + (m_j − 1)e^{−2A_h}), and at a non-flipped query j, with E_j = max over its keys
of ε,

    ‖Δz_j^h‖ ≤ min(2R_V, ‖W_V‖(E_j + w_j·δ) + R_V·min(2, 2·λ(‖W_Q‖R_K + R_Q‖W_K‖)E_j + 2w_j))

(the first term is Σ_l â'_jl‖Δv_l‖, the second ‖â' − â‖₁·max‖v‖: logits of unflipped keys move
by O(E), the flipped key can move the weights by at most 2w_j in ℓ1). The FFN has Lipschitz
constant ‖W_in‖‖W_out‖; layer norm (y − μ)/sqrt(var + ε)·w + b has Lipschitz constant
max|w|/sqrt(ε) and output norm ≤ max|w|·sqrt(d) + ‖b‖. With ε = 0 layer norm is not
Lipschitz and the lemma does not apply; with hardmax the attention weights are not bounded
by e^{2A}/(n − 1) and it does not apply either. Both are reported, never papered over.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field

import numpy as np
import torch

from ..rules import as_real_array, check_int
from ..transformer import Transformer
from ..transformer.positions import require_position_table
from .encoder import rows_per_pass, token_embedding_table  # noqa: F401  (token_embedding_table: public here)


@dataclass(frozen=True)
class Lemma5Bound:
    """Bounds for one length n. Arrays have one entry per layer k = 1..L.

    ``applicable`` is False (with ``reason``) when an assumption of Lemma 5 fails; then the
    bound arrays are None.
    """

    n: int  # sequence length (positions the model sees)
    applicable: bool
    reason: str  # "" when applicable; otherwise the failing assumption
    D: float  # max embedding difference of a flip, ‖W_E[v] − W_E[v']‖
    H: int  # heads per layer
    L: int  # layers
    other: np.ndarray | None = None  # (L,) bound on max_{j≠i} ‖Δy_j^(k)‖
    readout: np.ndarray | None = None  # (L,) bound on ‖Δy_r^(k)‖ at the readout position r ≠ i
    flipped: np.ndarray | None = None  # (L,) bound on ‖Δy_i^(k)‖
    output: float | None = None  # bound on ‖Δ output_r‖ (W_U after the final layer norm)
    A: np.ndarray | None = None  # (L, H) logit bounds A_h (before log-length scaling)
    residual_norm: np.ndarray | None = None  # (L + 1,) R^(k)
    lipschitz: dict = field(default_factory=dict)  # names -> constants (FFN, LN per layer)


def _norm2(w: torch.Tensor) -> float:
    """Spectral norm of a matrix (ℓ2 norm of a vector)."""
    w = w.detach().to(torch.float64)
    if w.dim() == 1:
        return float(torch.linalg.vector_norm(w))
    return float(torch.linalg.matrix_norm(w, ord=2))


def _assumption_failure(model: Transformer) -> str:
    cfg = model.cfg
    if cfg.attention == "hardmax":
        return ("soft-attention assumption fails: the model uses hardmax (hard attention), so "
                "attention weights are not bounded by e^{2A}/(n-1); Lemma 5 needs softmax "
                "attention — use the hard-attention analysis (Theorem 1, `restrict`) instead")
    if cfg.layer_norm != "none" and cfg.ln_eps == 0:
        return ("Lipschitz assumption fails: layer norm with eps = 0 is not Lipschitz "
                "(its Jacobian grows like 1/std of the input, unbounded as the std → 0), so "
                "Lemma 5's O(1/n) bound does not apply")
    return ""


class _LN:
    """Lipschitz constant and output-norm bound of one LayerNorm."""

    def __init__(self, ln, d: int) -> None:
        wmax = float(ln.w.detach().abs().max())
        self.lip = wmax / math.sqrt(ln.eps)
        self.R = wmax * math.sqrt(d) + _norm2(ln.b)


def lemma5_bound(model: Transformer, emb: torch.Tensor, flip_pairs: list[tuple[int, int]],
                 flip_positions=None, readout: int = -1) -> Lemma5Bound:
    """Lemma 5 bounds at length n = emb.shape[1].

    ``emb`` (V', n, d): the possible layer-0 vectors, row v at position t = y^(0)_t when the
    input there is "symbol" v (for token models :func:`token_embedding_table`; for a position-
    wise encoding, the embeddings of the constant strings). A flip turns row a into row b at
    one of ``flip_positions`` (default: all) for a pair (a, b) in ``flip_pairs``;
    D = max ‖emb[a, t] − emb[b, t]‖. ``readout``: the position whose output is read.
    """
    emb, flip_pairs, pos, readout = _checked_inputs(model, emb, flip_pairs, flip_positions, readout)
    cfg = model.cfg
    n, H, L, d = emb.shape[1], cfg.n_heads, cfg.n_layers, cfg.d_model
    a_idx = torch.tensor([a for a, _ in flip_pairs])
    b_idx = torch.tensor([b for _, b in flip_pairs])
    D = float(torch.linalg.vector_norm(emb[a_idx][:, pos] - emb[b_idx][:, pos], dim=-1).max())
    reason = _assumption_failure(model)
    if reason:
        return Lemma5Bound(n=n, applicable=False, reason=reason, D=D, H=H, L=L)
    R = float(torch.linalg.vector_norm(emb, dim=-1).max())  # R^(0)
    if not -n <= readout < n:
        raise ValueError(f"readout must be a position in [-{n}, {n}) (negative: from the end), got {readout}")
    r = readout % n
    m = np.arange(1, n + 1, dtype=np.float64) if cfg.causal else np.full(n, float(n))  # keys per query
    s = np.log(m) if cfg.log_length_scaling else np.ones(n)  # logit multiplier per query
    eps = np.zeros(n)  # ε_j: other positions
    delta = D  # δ: flipped position
    others, reads, flips, Rs, A_all = [], [], [], [R], []
    lips: dict = {}
    for k, block in enumerate(model.blocks):
        ln1 = _LN(block.ln1, d) if cfg.layer_norm != "none" else None
        ln2 = _LN(block.ln2, d) if cfg.layer_norm != "none" else None
        spread = _first_layer_spread(model, block, emb, n) if k == 0 else None
        eps, delta, R, A_k = _attention_half(block.attn, cfg, ln1, eps, delta, R, m, s, spread, lips, k)
        A_all.append(A_k)
        if block.mlp is not None:
            eps, delta, R = _ffn_half(block.mlp, cfg, ln1, ln2, eps, delta, R, lips, k)
        others.append(float(eps.max()))
        reads.append(float(eps[r]))
        flips.append(delta)
        Rs.append(R)
    return Lemma5Bound(
        n=n, applicable=True, reason="", D=D, H=H, L=L,
        other=np.array(others), readout=np.array(reads), flipped=np.array(flips),
        output=_output_bound(model, float(eps[r]), lips), A=np.array(A_all), residual_norm=np.array(Rs),
        lipschitz=lips,
    )


def _checked_inputs(model, emb, flip_pairs, flip_positions, readout):
    """lemma5_bound's arguments checked: (emb as a real (V', n, d) tensor, the pairs as ints
    indexing its rows, the flip positions as an integer tensor of its columns, readout an int)."""
    if not isinstance(model, Transformer):
        raise ValueError(f"model: lemma5_bound needs a Transformer (a construction's .transformer), "
                         f"got {type(model).__name__}")
    cfg = model.cfg
    require_position_table(cfg, "lemma5_bound")
    if not flip_pairs:
        raise ValueError("lemma5_bound: flip_pairs must name at least one (symbol, symbol') pair")
    emb = torch.as_tensor(as_real_array(emb, "emb", ndim=3, shape=(None, None, cfg.d_model)))
    V = emb.shape[0]
    try:
        pairs = [(int(a), int(b)) for a, b in flip_pairs]
    except (TypeError, ValueError):
        raise ValueError(f"flip_pairs must be (symbol, symbol') index pairs, got {flip_pairs!r:.60}") from None
    if any(not (0 <= a < V and 0 <= b < V) for a, b in pairs):
        raise ValueError(f"flip_pairs: symbol indices must lie in [0, {V}) (rows of emb), got {pairs!r:.60}")
    readout = check_int(readout, "readout")
    n = emb.shape[1]
    if n < 2 or (cfg.positional != "none" and n > cfg.n_ctx):
        raise ValueError(f"lemma5_bound: n must lie in [2, n_ctx={cfg.n_ctx}], got {n}")
    pos = torch.arange(n) if flip_positions is None else torch.as_tensor(flip_positions)
    if pos.dtype.is_floating_point or pos.dtype == torch.bool or pos.dim() != 1 or (pos.numel() and (
            int(pos.min()) < 0 or int(pos.max()) >= n)):
        raise ValueError(f"flip_positions must be integer positions in [0, {n}) (columns of emb)")
    return emb, pairs, pos, readout


def _attention_half(attn, cfg, ln1, eps, delta, R, m, s, spread, lips, k):
    """The attention sublayer of block k (with its LN): (ε, δ, R, A_k) after it."""
    if cfg.layer_norm == "pre":
        R_u, eps_u, delta_u = ln1.R, ln1.lip * eps, min(ln1.lip * delta, 2 * ln1.R)
    else:
        R_u, eps_u, delta_u = R, eps, delta
    d_other, d_flip, R_att, A_k = _attention_step(attn, cfg, R_u, eps_u, delta_u, m, s, spread)
    eps, R = eps + d_other, R + R_att
    delta = min(delta + d_flip, 2 * R)
    if cfg.layer_norm == "post":
        eps, delta, R = ln1.lip * eps, min(ln1.lip * delta, 2 * ln1.R), ln1.R
        lips[f"blocks.{k}.ln1"] = ln1.lip
    return eps, delta, R, A_k


def _ffn_half(mlp, cfg, ln1, ln2, eps, delta, R, lips, k):
    """The FFN sublayer of block k (with its LN): (ε, δ, R) after it; its Lipschitz constant
    ‖W_in‖·‖W_out‖ goes to ``lips``."""
    if cfg.layer_norm == "pre":
        R_u, eps_u, delta_u = ln2.R, ln2.lip * eps, min(ln2.lip * delta, 2 * ln2.R)
        lips[f"blocks.{k}.ln1"], lips[f"blocks.{k}.ln2"] = ln1.lip, ln2.lip
    else:
        R_u, eps_u, delta_u = R, eps, delta
    w_in, w_out = _norm2(mlp.W_in), _norm2(mlp.W_out)
    lip = w_in * w_out
    lips[f"blocks.{k}.mlp"] = lip
    R_mlp = w_out * (w_in * R_u + _norm2(mlp.b_in)) + _norm2(mlp.b_out)
    eps, R = eps + lip * eps_u, R + R_mlp
    delta = min(delta + lip * delta_u, 2 * R)
    if cfg.layer_norm == "post":
        eps, delta, R = ln2.lip * eps, min(ln2.lip * delta, 2 * ln2.R), ln2.R
        lips[f"blocks.{k}.ln2"] = ln2.lip
    return eps, delta, R


def _output_bound(model: Transformer, eps_read: float, lips: dict) -> float | None:
    """‖W_U‖·Lip(ln_final)·ε at the read position (None without an unembedding)."""
    cfg = model.cfg
    if cfg.d_out is None:
        return None
    lip_final = 1.0
    if cfg.layer_norm == "pre":
        fin = _LN(model.ln_final, cfg.d_model)
        lip_final = fin.lip
        lips["ln_final"] = fin.lip
    return _norm2(model.W_U) * lip_final * eps_read


def _first_layer_spread(model: Transformer, block, emb: torch.Tensor, n: int) -> np.ndarray:
    """Exact logit spread of block 1: for each head h and query position j, the max over
    query tokens v of (max − min) over the keys (v', l) of a_{(v,j),(v',l)}  → (H, n).

    y^(0) takes only V·n values (token × position), so the spread is computed exactly from
    W_E, W_pos, W_Q, W_K — a much tighter stand-in for 2A in the first layer.
    """
    cfg = model.cfg
    block64 = copy.deepcopy(block).to(torch.float64)
    with torch.no_grad():
        V = emb.shape[0]
        qkv = block64.attn.project(block64.attn_input(emb.to(torch.float64)))  # (V, n, 3, H, e)
        q, k = qkv[:, :, 0].permute(2, 0, 1, 3), qkv[:, :, 1].permute(2, 0, 1, 3)  # (H, V, n, e)
        k = k.reshape(cfg.n_heads, V * n, -1)  # keys (v', l) flattened
        out = np.zeros((cfg.n_heads, n))
        step = rows_per_pass(cfg.n_heads * V * V * n)  # queries per block of (H, V, ·, V·n) logits
        for j0 in range(0, n, step):  # blocks of queries bound the (H, V, b, V·n) memory
            a = block64.attn.pair_scores(q[:, :, j0:j0 + step], k[:, None])  # (H, V, b, V·n); s = 1
            b = a.shape[2]
            a = a.reshape(cfg.n_heads, V, b, V, n)  # (H, v, j, v', l)
            if cfg.causal:
                keep = (torch.arange(n)[None, :] <= torch.arange(j0, j0 + b)[:, None])[None, None, :, None, :]
                hi = a.masked_fill(~keep, float("-inf")).amax(dim=(3, 4))
                lo = a.masked_fill(~keep, float("inf")).amin(dim=(3, 4))
            else:
                hi, lo = a.amax(dim=(3, 4)), a.amin(dim=(3, 4))
            out[:, j0:j0 + b] = (hi - lo).amax(dim=1).numpy()
    return out


def _attention_step(attn, cfg, R: float, eps: np.ndarray, delta: float, m: np.ndarray,
                    s: np.ndarray, spread: np.ndarray | None = None) -> tuple[np.ndarray, float, float, np.ndarray]:
    """Bounds on the change of the attention output: (others (n,), flipped, ‖out‖ bound, A (H,)).

    ``spread`` (H, n), if given, bounds max − min of the logits a query sees (before
    log-length scaling), replacing 2A in the weight bound w_j = 1/(1 + (m_j − 1)e^{−spread}).
    """
    lam = float(cfg.score_scale)
    E = np.maximum.accumulate(eps) if cfg.causal else np.full_like(eps, eps.max())  # (n,)
    E_max = float(E.max())
    s_max = float(s.max())
    d_other = np.zeros_like(eps)
    d_flip = 0.0
    R_out = _norm2(attn.b_O)
    A = np.zeros(cfg.n_heads)
    for h in range(cfg.n_heads):  # heads, not positions
        wq, wk, wv, wo = (_norm2(W[h]) for W in (attn.W_Q, attn.W_K, attn.W_V, attn.W_O))
        RQ, RK, RV = (w * R + _norm2(b[h]) for w, b in ((wq, attn.b_Q), (wk, attn.b_K), (wv, attn.b_V)))
        A[h] = lam * RQ * RK
        width = 2.0 * A[h] * s if spread is None else np.minimum(2.0 * A[h], spread[h]) * s  # (n,)
        with np.errstate(over="ignore"):
            w = 1.0 / (1.0 + (m - 1.0) * np.exp(-width))  # max attention weight per query
        dlogit = lam * s * (wq * RK + RQ * wk) * E
        tv = np.minimum(2.0, 2.0 * dlogit + 2.0 * w)
        dz = np.minimum(2.0 * RV, wv * (E + w * delta) + RV * tv)
        d_other += wo * dz
        dl_i = lam * s_max * (wq * delta * RK + RQ * wk * max(delta, E_max))
        dz_i = min(2.0 * RV, wv * max(delta, E_max) + RV * min(2.0, 2.0 * dl_i))
        d_flip += wo * dz_i
        R_out += wo * RV
    return d_other, d_flip, R_out, A
