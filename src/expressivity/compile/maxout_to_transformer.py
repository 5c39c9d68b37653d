"""Maxout network → Transformer: token-wise shift + max by attention (paper 1, Thm 3.1/3.2).

Tokens t = 0..T−1 with T = max_l p_l; token t stands for piece π_l(t) = t mod p_l of every
unit of layer l. Residual channels: x[0..d−1] | onehot[0..T−1] | one | z[0..m−1] | h[0..m−1].

* Token-wise shift (FFN = token-wise affine map). With s = Σ_{t: π(t)=j} onehot[t] ∈ {0, 1}
  and L ≤ u ≤ L + M (interval bounds):   u·s = ReLU(u − L − M(1 − s)) + L·s,
  and L·s = L·ReLU(s) is linear in the one-hot channels (one shared unit per token).
  The shared FFN of block l−1 writes z_{i,t} = w_{i,π(t)}·h^(l−1) + b_{i,π(t)} on token t,
  subtracting the channel's old content inside u (so no clearing pass is needed):
  u_ij = w_ij·h + b_ij − z_i.  m_l·p_l + T hidden units.
* Max by attention. Head i: constant query (channel ``one``), key = z_i, value = z_i − h_i,
  output added to h_i. Hardmax gives h_i = max_t z_{i,t} on every token (ties average equal
  values); σ_λ gives a value within (T − 1)/(e·λ) below it.
* Blocks: block 0 = FFN only (layer 1's pieces); block l = attention (h^(l)) + FFN (layer
  l+1's pieces); the last FFN is zero. Depth D → D + 1 blocks. Read-out y = A h^(D) + c is
  the unembedding W_U.

Softmax error: ε_l = L_l·ε_{l−1} + (T − 1)/(e·λ) with L_l = max_ij ‖w_ij‖_1 (max is
1-Lipschitz in ‖·‖_∞), output error ‖A‖_∞·ε_D. Big-M constants are computed from interval
bounds widened by ε so the gadget stays exact under the softmax perturbation.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ..cpwl import MaxoutNetwork, box
from ..transformer import ChannelMap, Transformer, TransformerConfig
from .compiled import CompiledModel

_M_SAFETY_REL = 1e-6  # slack on every big-M bound: relative …
_M_SAFETY_ABS = 1e-9  # … and absolute


def channel_map(d: int, T: int, m: int) -> ChannelMap:
    """x[0..d−1], onehot[0..T−1], one, z[0..m−1], h[0..m−1]."""
    return ChannelMap.build(("x", d), ("onehot", T), ("one!", 1), ("z", m), ("h", m))


def compile_maxout(
    net: MaxoutNetwork,
    domain=(-1.0, 1.0),
    attention: str = "hardmax",
    lam: float | None = None,
) -> CompiledModel:
    """Compile ``net`` on the box ``domain = (lo, hi)`` into a float64 Transformer.

    hardmax: exact on the domain. softmax: within ``error_bound()`` of ``net``, O(1/λ).
    """
    if not isinstance(net, MaxoutNetwork):
        raise ValueError(f"compile_maxout expects a MaxoutNetwork, got {type(net).__name__}")
    if attention not in ("hardmax", "softmax"):
        raise ValueError(f"attention must be 'hardmax' or 'softmax', got {attention!r}")
    if attention == "softmax":
        if lam is None or not isinstance(lam, (int, float)) or not math.isfinite(lam) or lam <= 0:
            raise ValueError(f"softmax attention needs a finite scale λ > 0 (lam), got {lam!r}")
        lam = float(lam)
    elif lam is not None:
        raise ValueError("lam (λ) applies to softmax attention only; leave it None for hardmax")
    try:
        lo, hi = domain
    except (TypeError, ValueError):
        raise ValueError(f"domain must be a pair (lo, hi), got {domain!r}") from None
    lo, hi = box(lo, hi, net.in_dim)

    d, D = net.in_dim, net.depth
    T = max(net.ranks)
    m = max(net.widths)
    ch = channel_map(d, T, m)
    x_idx, oh_idx, one = ch.group("x"), ch.group("onehot"), ch.index("one")
    z_idx, h_idx = ch.group("z"), ch.group("h")
    d_mlp = max(layer.width * layer.rank for layer in net.layers) + T
    out_dim = net.out_dim
    cfg = TransformerConfig(
        d_model=len(ch), n_layers=D + 1, n_heads=m, d_head=1, d_mlp=d_mlp,
        d_input=d, d_out=out_dim, n_ctx=T, positional="learned",
        attention=attention, lam=lam if lam is not None else 1.0, dtype="float64",
    )
    delta = (T - 1) / (math.e * lam) if attention == "softmax" else 0.0  # per-layer σ_λ gap

    W = {name: np.zeros(tuple(p.shape)) for name, p in Transformer(cfg).named_parameters()}

    # embedding: x → x channels; positions → onehot[t] and the constant channel
    W["W_E"][np.arange(d), x_idx] = 1.0
    W["W_pos"][np.arange(T), oh_idx] = 1.0
    W["W_pos"][:, one] = 1.0

    in_lo, in_hi = lo, hi  # box of the current layer's input (widened by ε under softmax)
    in_channels = x_idx
    z_lo, z_hi = np.zeros(m), np.zeros(m)  # interval of every z channel's content, all tokens
    eps = 0.0
    layer_errors, big_m = [], []
    for l, layer in enumerate(net.layers):
        mlp = f"blocks.{l}.mlp."
        Wl, bl = layer.W, layer.b  # (m_l, p_l, d_l), (m_l, p_l)
        m_l, p_l, _ = Wl.shape
        # interval bound of u_ij = w_ij·h + b_ij − z_i (old content) over the (widened) input box
        c, r = (in_lo + in_hi) / 2, (in_hi - in_lo) / 2
        centre = np.einsum("mpd,d->mp", Wl, c) + bl
        radius = np.einsum("mpd,d->mp", np.abs(Wl), r)
        pre_lo, pre_hi = centre - radius, centre + radius
        L = pre_lo - z_hi[:m_l, None]  # u ≥ L
        U = pre_hi - z_lo[:m_l, None]  # u ≤ U
        slack = _M_SAFETY_ABS + _M_SAFETY_REL * np.maximum(np.abs(L), np.abs(U))
        L = L - slack
        M = (U + slack) - L  # 0 ≤ u − L ≤ M
        big_m.append(float(M.max()))
        # hidden unit a_ij = ReLU(u_ij − L_ij − M_ij(1 − s_j)) = (u_ij − L_ij)·s_j, column i·p_l + j
        i_idx, j_idx = np.meshgrid(np.arange(m_l), np.arange(p_l), indexing="ij")
        col = i_idx * p_l + j_idx  # (m_l, p_l)
        Win, b_in, Wout = W[mlp + "W_in"], W[mlp + "b_in"], W[mlp + "W_out"]
        for k_in, ch_in in enumerate(in_channels):  # loop over the input dimension only
            Win[ch_in, col] = Wl[:, :, k_in]
        zi = np.asarray(z_idx)[i_idx]  # (m_l, p_l): channel of unit i
        Win[zi, col] = -1.0
        for t in range(T):  # s_j = Σ_{t: t mod p_l = j} onehot[t]
            Win[oh_idx[t], col[:, t % p_l]] = M[:, t % p_l]
        b_in[col] = bl - L - M
        Wout[col, zi] = 1.0
        # token units c_t = ReLU(onehot[t]) = onehot[t] add the offsets L_{i,π(t)}: z_i += u·s
        tok = m_l * p_l + np.arange(T)
        Win[oh_idx, tok] = 1.0
        Wout[tok[:, None], np.asarray(z_idx)[None, :m_l]] = L[:, np.arange(T) % p_l].T
        # after this FFN, z_i holds layer l's pieces (within the widened bounds under softmax)
        w_l1 = np.abs(Wl).sum(axis=2)  # (m_l, p_l)
        z_lo[:m_l], z_hi[:m_l] = pre_lo.min(axis=1), pre_hi.max(axis=1)
        # block l+1 attention: head i computes h_i = max_t z_{i,t}
        attn = f"blocks.{l + 1}.attn."
        heads = np.arange(m_l)
        W[attn + "W_Q"][heads, one, 0] = 1.0
        W[attn + "W_K"][heads, np.asarray(z_idx)[heads], 0] = 1.0
        W[attn + "W_V"][heads, np.asarray(z_idx)[heads], 0] = 1.0
        W[attn + "W_V"][heads, np.asarray(h_idx)[heads], 0] = -1.0
        W[attn + "W_O"][heads, 0, np.asarray(h_idx)[heads]] = 1.0
        # error and box of h^(l): ε_l = L_l ε_{l−1} + δ; h ∈ [max pre_lo − ε_l, max pre_hi + ε_l]
        eps = float(w_l1.max()) * eps + delta
        layer_errors.append(eps)
        in_lo, in_hi = pre_lo.max(axis=1) - eps, pre_hi.max(axis=1) + eps
        in_channels = list(np.asarray(h_idx)[:m_l])

    # read-out: W_U reads h^(D)
    hD = np.asarray(h_idx)[: net.layers[-1].width]
    if net.readout is not None:
        A, cvec = net.readout
        W["W_U"][hD, :] = A.T
        W["b_U"][:] = cvec
        out_gain = float(np.abs(A).sum(axis=1).max())
    else:
        W["W_U"][hD, np.arange(len(hD))] = 1.0
        out_gain = 1.0

    model = Transformer(cfg, ch)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(torch.from_numpy(W[name]))
    model.eval()
    return CompiledModel(
        transformer=model, net=net, lo=lo, hi=hi, attention=attention, lam=lam,
        layer_errors=tuple(layer_errors), output_error=out_gain * eps, big_m=tuple(big_m),
    )


def compile_relu(mlp, domain=(-1.0, 1.0), attention: str = "hardmax", lam: float | None = None) -> CompiledModel:
    """Compile a torch ``nn.Sequential`` ReLU MLP through the maxout route (ReLU = rank 2)."""
    from ..cpwl import from_relu_mlp

    return compile_maxout(from_relu_mlp(mlp), domain=domain, attention=attention, lam=lam)
