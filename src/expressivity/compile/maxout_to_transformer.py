"""Maxout network → Transformer: token-wise shift + max by attention (paper 1, Thm 3.1/3.2).

Tokens t = 0..T−1 with T = max_l p_l; token t stands for piece π_l(t) = t mod p_l of every
unit of layer l. Residual channels: x[0..d−1] | onehot[0..T−1] | one | z1[0..m_1−1] … zD |
h1[0..m_1−1] … hD: every layer writes its pieces z^(l) and outputs h^(l) into channels of its
own, which are exactly 0 until then. So no layer computes its values as a difference against
an earlier layer's content (z_new = z_old + (u − z_old) rounds to 2^−53·|z_old|, which does not
scale with the layer: a layer rescaled by 10^−8 against its neighbours lost 8 digits), and every
value's float64 error is relative to the magnitudes it is computed from.

* Token-wise shift (FFN = token-wise affine map). With s = Σ_{t: π(t)=j} onehot[t] ∈ {0, 1},
  1 − s = Σ_{t: π(t)≠j} onehot[t], and interval bounds L ≤ u ≤ U:
      one-sided:  u·s = ReLU(u − L − (U − L)(1 − s)) + L·s     (1 hidden unit; L·s = L·ReLU(s)
                  is linear in the one-hot channels: one shared unit per token)
      two-sided:  u·s = ReLU(u − M(1 − s)) − ReLU(−u − M(1 − s)),  M = max(|L|, |U|)  (2 units)
  The shared FFN of block l−1 writes z^(l)_{i,t} = w_{i,π(t)}·h^(l−1) + b_{i,π(t)} on token t
  into the (zero) channel z^(l)_i: u_ij = w_ij·h + b_ij. The one-sided form is cheaper (m_l·p_l
  + T hidden units) but on the active token it adds and removes L, costing ≈ 2^−52·|L| of
  precision (L is u's own lower bound, so this is relative to the piece's range); pieces whose
  bound exceeds 10^4 (deep or wide nets, where interval bounds are loose) use the two-sided form,
  whose active-token arithmetic never touches the bounds. Writing 1 − s as a sum of one-hot
  channels (rather than M·s − M) keeps M out of the active token's sum as well.
* Max by attention. Head i: constant query (channel ``one``), key = value = z^(l)_i, output
  added to the (zero) channel h^(l)_i. Hardmax gives h_i = max_t z_{i,t} on every token (ties
  average equal values); σ_λ gives a value within (T − 1)/(e·λ) below it.
* Blocks: block 0 = FFN only (layer 1's pieces); block l = attention (h^(l)) + FFN (layer
  l+1's pieces); the last FFN is zero. Depth D → D + 1 blocks. Read-out y = A h^(D) + c is
  the unembedding W_U.

Softmax error: ε_l = L_l·ε_{l−1} + (T − 1)/(e·λ) with L_l = max_ij ‖w_ij‖_1 (max is
1-Lipschitz in ‖·‖_∞), output error ‖A‖_∞·ε_D. Big-M constants are computed from interval
bounds widened by ε so the gadget stays exact under the softmax perturbation.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from ..cpwl import MaxoutNetwork, box, from_relu_mlp
from ..cpwl.maxout import affine_bounds
from ..memory import check_memory
from ..transformer import ChannelMap, Weights
from ..transformer.config import ATTENTIONS
from .bounds import M_SAFETY_LAYER, M_SAFETY_REL
from .compiled import CompiledModel

_ONE_SIDED_MAX = 1e4  # pieces with max(|L|, |U|) above this use the precise two-sided gadget


def channel_map(d: int, T: int, widths) -> ChannelMap:
    """x[0..d−1], onehot[0..T−1], one, z1[0..m_1−1] … zD[0..m_D−1], h1[0..m_1−1] … hD."""
    widths = tuple(widths)
    return ChannelMap.build(("x", d), ("onehot", T), ("one!", 1), *((f"z{l + 1}", m) for l, m in enumerate(widths)),
                            *((f"h{l + 1}", m) for l, m in enumerate(widths)))


@dataclass(frozen=True)
class _LayerPlan:
    """Bounds and hidden-unit layout of one layer's FFN gadget."""

    L: np.ndarray  # (m_l, p_l) lower bound of u_ij (with slack)
    U: np.ndarray  # (m_l, p_l) upper bound of u_ij (with slack)
    two: np.ndarray  # (m_l, p_l) bool: two-sided gadget
    col_a: np.ndarray  # (m_l, p_l) first hidden column of piece (i, j)
    col_b: np.ndarray  # (m_l, p_l) second column (two-sided only; −1 otherwise)
    n_cols: int
    w_l1: float  # L_l = max_ij ‖w_ij‖_1
    pre_lo: np.ndarray  # (m_l, p_l) bounds of the pre-activations
    pre_hi: np.ndarray


_U = 2.0**-53  # unit round-off of float64


def _gamma(k: int) -> float:
    """Higham's γ_k = k·u/(1 − k·u): the relative error bound of a k-term float64 sum/dot product."""
    return k * _U / (1 - k * _U)


def _plan(net: MaxoutNetwork, lo: np.ndarray, hi: np.ndarray, delta: float,
          softmax: bool = False) -> tuple[list[_LayerPlan], list[float], float, float]:
    """Interval bounds (widened by the σ_λ errors ε_l) and gadget choice for every layer, the
    σ_λ errors ε_l, the float64 round-off bound r_D of the last layer and a bound on |h^(D)| (see
    :func:`compile_maxout`)."""
    T = max(net.ranks)
    in_lo, in_hi, eps = lo, hi, 0.0
    plans, errors = [], []
    rnd = 0.0  # round-off bound on the current layer's outputs h^(l)
    for layer in net.layers:
        Wl, bl = layer.W, layer.b  # (m_l, p_l, d_l), (m_l, p_l)
        m_l, p_l, _ = Wl.shape
        pre_lo, pre_hi = affine_bounds(Wl, bl, in_lo, in_hi)  # L ≤ u = w·h + b ≤ U
        size = np.maximum(np.abs(pre_lo), np.abs(pre_hi))
        slack = M_SAFETY_REL * size + M_SAFETY_LAYER * float(size.max(initial=0.0))
        L, U = pre_lo - slack, pre_hi + slack
        two = np.maximum(np.abs(L), np.abs(U)) > _ONE_SIDED_MAX
        width = np.where(two, 2, 1).ravel()
        start = np.concatenate([[0], np.cumsum(width)[:-1]]).reshape(m_l, p_l)
        col_b = np.where(two, start + 1, -1)
        w_l1 = float(np.abs(Wl).sum(axis=2).max())
        plans.append(_LayerPlan(L, U, two, start, col_b, int(width.sum()), w_l1, pre_lo, pre_hi))
        # round-off of this layer on the active token (the only one whose sums are not clipped
        # to an exact 0): Σ|terms| of the FFN's dot products, then the attention's values
        in_abs = np.maximum(np.abs(in_lo), np.abs(in_hi))
        terms = np.abs(Wl) @ in_abs + np.abs(bl) + 2 * np.abs(L) * ~two
        Z = max(float(np.abs(pre_lo).max()), float(np.abs(pre_hi).max()), float(in_abs.max())) + eps
        rho = _gamma(Wl.shape[2] + 8) * float(terms.max()) + _gamma(T + 8) * 2 * Z
        if softmax:
            rho += 8 * (T - 1) * _U * Z  # σ_λ weights of near-tied tokens under rounded logits
        rnd = w_l1 * rnd + rho  # r_l = L_l r_{l−1} + ρ_l
        eps = w_l1 * eps + delta  # ε_l = L_l ε_{l−1} + (T − 1)/(eλ)
        errors.append(eps)
        in_lo, in_hi = pre_lo.max(axis=1) - eps, pre_hi.max(axis=1) + eps
    h_abs = float(np.maximum(np.abs(in_lo), np.abs(in_hi)).max())
    return plans, errors, rnd, h_abs


def softmax_bounds(net: MaxoutNetwork, lo, hi, lam: float) -> tuple[tuple[float, ...], float]:
    """The σ_λ error bounds :func:`compile_maxout` states for ``net`` on [lo, hi] with λ:
    ``(layer_errors, output_error)``, from the interval plan alone (no transformer is built)."""
    lo, hi = box(lo, hi, net.in_dim)
    delta = (max(net.ranks) - 1) / (math.e * lam)
    _, errors, _, _ = _plan(net, lo, hi, delta, softmax=True)
    gain = float(np.abs(net.readout[0]).sum(axis=1).max()) if net.readout is not None else 1.0
    return tuple(errors), gain * errors[-1]


def compile_maxout(
    net: MaxoutNetwork,
    domain=(-1.0, 1.0),
    attention: str = "hardmax",
    lam: float | None = None,
) -> CompiledModel:
    """Compile ``net`` on the box ``domain = (lo, hi)`` into a float64 Transformer.

    hardmax: exact on the domain. softmax: within ``error_bound()`` of ``net``, O(1/λ).

    ``error_bound()`` = the σ_λ term (0 for hardmax) + a float64 round-off term. Round-off
    (standard model, every operation exact up to a factor 1 + δ, |δ| ≤ u = 2^−53; Higham's
    γ_k = k·u/(1 − k·u) for a k-term dot product): on the active token a layer's FFN sums
    d_l + O(1) non-zero products (the one-hot and big-M terms of the other pieces multiply
    exact zeros, so they add nothing), the attention adds two roundings per value and T-term
    weighted sums, and with σ_λ the rounded logits change the weight of near-tied tokens
    (gap ≲ u·Z) by at most 8u·Z each. With Σ_l the largest sum of |terms|, Z_l the largest
    |z|, |h| of layer l:
    ρ_l = γ_{d_l+8}·Σ_l + γ_{T+8}·2Z_l (+ 8(T−1)·u·Z_l for σ_λ),  r_l = L_l·r_{l−1} + ρ_l,
    roundoff = ‖A‖_∞·r_D + γ_{m_D+2}·(‖A‖_∞·max|h^(D)| + max|c|).
    First-order (terms of order u² are dropped); ≈ 1e-14 × the scale of the values for small
    nets, so it does not hide the σ_λ rate.
    """
    if not isinstance(net, MaxoutNetwork):
        raise ValueError(f"net: compile_maxout expects a MaxoutNetwork, got {type(net).__name__}")
    if attention not in ATTENTIONS:
        raise ValueError(f"attention must be 'hardmax' or 'softmax', got {attention!r}")
    if attention == "softmax":
        if (lam is None or isinstance(lam, (bool, np.bool_)) or not isinstance(lam, numbers.Real)
                or not math.isfinite(lam) or lam <= 0):
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
    delta = (T - 1) / (math.e * lam) if attention == "softmax" else 0.0  # per-layer σ_λ gap
    plans, layer_errors, r_D, h_abs = _plan(net, lo, hi, delta, softmax=attention == "softmax")
    one_sided = any(not p.two.all() for p in plans)
    n_tok_units = T if one_sided else 0
    ch = channel_map(d, T, net.widths)
    d_mlp = max(p.n_cols for p in plans) + n_tok_units
    _check_size(d, T, m, sum(net.widths), D, d_mlp, net.out_dim)
    w = Weights(ch, n_layers=D + 1, n_heads=m, d_input=d, n_ctx=T, d_out=net.out_dim)

    # embedding: x → x channels; positions → onehot[t] and the constant channel
    for i in range(d):
        w.embed(i, {f"x[{i}]": 1.0})
    for t in range(T):
        w.position(f"onehot[{t}]", 1.0, rows=t)
    w.position("one", 1.0)

    in_channels = w.rows("x")
    for l, (layer, plan) in enumerate(zip(net.layers, plans)):
        _write_ffn(w, l, d_mlp, layer.W, layer.b, plan, in_channels, w.rows(f"z{l + 1}"), T, n_tok_units)
        # block l+1 attention: head i writes h^(l)_i = max_t z^(l)_{i,t} into its zero channel
        for i in range(layer.width):
            z, h = f"z{l + 1}[{i}]", f"h{l + 1}[{i}]"
            w.head(l + 1, i, query={"one": 1.0}, key={z: 1.0}, value={z: 1.0}, out={h: 1.0})
        in_channels = w.rows(f"h{l + 1}")

    # read-out: W_U reads h^(D)
    hD = ch.names_of(f"h{D}")
    if net.readout is not None:
        A, cvec = net.readout
        for o in range(net.out_dim):
            w.readout(dict(zip(hD, A[o])), bias=cvec[o], out=o)
        out_gain = float(np.abs(A).sum(axis=1).max())
        roundoff = out_gain * r_D + _gamma(len(hD) + 2) * (out_gain * h_abs + float(np.abs(cvec).max()))
    else:
        for o, name in enumerate(hD):
            w.readout({name: 1.0}, out=o)
        out_gain = 1.0
        roundoff = r_D + _gamma(2) * h_abs

    model = w.transformer(d_mlp=d_mlp, positional="learned", attention=attention,
                          lam=lam, dtype="float64")
    big_m = tuple(float(np.maximum(p.U - p.L, np.maximum(np.abs(p.L), np.abs(p.U))).max()) for p in plans)
    return CompiledModel(
        transformer=model, net=net, lo=lo, hi=hi, attention=attention, lam=lam,
        layer_errors=tuple(layer_errors), output_error=out_gain * layer_errors[-1], big_m=big_m,
        roundoff_error=float(roundoff),
    )


def _check_size(d: int, T: int, m: int, n_units: int, D: int, d_mlp: int, out: int) -> None:
    """Refuse a compiled transformer that does not fit in memory, before building it: the
    dense float64 weights are held about three times (weight plan, model, its random init)."""
    d_model = d + T + 1 + 2 * n_units  # n_units = Σ_l m_l: channels z^(l), h^(l) per layer
    n = d * d_model + T * d_model + (D + 1) * (4 * m * d_model + 3 * m + d_model + 2 * d_model * d_mlp + d_mlp + d_model)
    n += d_model * out + out
    check_memory(3 * 8 * n, f"the compiled transformer ({D + 1} blocks, d_model {d_model}, d_mlp {d_mlp}, "
                 f"{n:.3g} dense parameters)", hint="compile a narrower network (fewer units per layer or a lower rank)")


def _write_ffn(w: Weights, layer: int, d_mlp: int, Wl, bl, plan: _LayerPlan, in_channels, z_idx, T: int,
               n_tok_units: int) -> None:
    """FFN of block ``layer`` writing z_{i,t} = w_{i,π(t)}·h + b_{i,π(t)} (gadgets of the module
    docstring) into the channels ``z_idx``, vectorised on a slab of ``d_mlp`` units over the
    channels x|h (read), z (written), onehot."""
    m_l, p_l, _ = Wl.shape
    Win, b_in, Wout = w.mlp_columns(layer, d_mlp)
    oh_idx = w.rows("onehot")
    i_idx = np.broadcast_to(np.arange(m_l)[:, None], (m_l, p_l))
    zi = z_idx[i_idx]  # (m_l, p_l): the z channel of unit i
    two, a = plan.two, plan.col_a
    M = np.where(two, np.maximum(np.abs(plan.L), np.abs(plan.U)), plan.U - plan.L)
    # column a: +u (one-sided: shifted by −L)
    Win[in_channels[:, None, None], a[None]] = np.moveaxis(Wl, 2, 0)
    b_in[a] = np.where(two, bl, bl - plan.L)
    Wout[a, zi] = 1.0
    # column b (two-sided only): −u
    b, ib, jb = plan.col_b[two], i_idx[two], np.nonzero(two)[1]
    Win[in_channels[:, None], b[None]] = -np.moveaxis(Wl[ib, jb], 1, 0)
    b_in[b] = -bl[two]
    Wout[b, zi[two]] = -1.0
    # −M(1 − s_j) = −M Σ_{t: π(t) ≠ j} onehot[t]: exactly 0 on the active token
    for t in range(T):  # loop over tokens only
        off = np.arange(p_l) != t % p_l  # pieces j that token t is not
        Win[oh_idx[t], a[:, off]] = -M[:, off]
        Win[oh_idx[t], plan.col_b[:, off][two[:, off]]] = -M[:, off][two[:, off]]
    # token units c_t = ReLU(onehot[t]) add L_{i,π(t)}·s for one-sided pieces
    if n_tok_units:
        tok = d_mlp - n_tok_units + np.arange(T)
        Win[oh_idx, tok] = 1.0
        offsets = np.where(two, 0.0, plan.L)[:, np.arange(T) % p_l]  # (m_l, T)
        Wout[tok[:, None], z_idx[None, :m_l]] = offsets.T


def compile_relu(mlp, domain=(-1.0, 1.0), attention: str = "hardmax", lam: float | None = None) -> CompiledModel:
    """Compile a torch ``nn.Sequential`` ReLU MLP through the maxout route (ReLU = rank 2)."""
    return compile_maxout(from_relu_mlp(mlp), domain=domain, attention=attention, lam=lam)
