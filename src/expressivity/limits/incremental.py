"""Exact first block for all flipped copies at once, by rank-one softmax updates.

In the copy x^(i) (x with position i flipped) only y_i^(0) differs from the base string. So
in block 1, for a query j ≠ i, only one logit of its row changes, a_ji → a'_ji, and

    Z'_j = Z_j − e^{a_ji} + e^{a'_ji},   N'_j = N_j − e^{a_ji} v_i + e^{a'_ji} v'_i,
    z'_j = N'_j / Z'_j          (Z = Σ_l e^{a_jl}, N = Σ_l e^{a_jl} v_l of the base string),

computed with a common max-shift for stability. The whole first block for all n copies then
costs O(n·T·H·d_head + n·T·d·d_mlp) instead of O(n·T²·H·d_head). Rows where the subtraction
could cancel (base weight of key i above 1/2) and the flipped query's own row are recomputed
exactly. Softmax attention without padding only; callers fall back to full passes otherwise.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ..transformer import Transformer


class FirstBlock:
    """Precomputed base-string quantities of block 1; :meth:`flipped` gives y^(1) of copies."""

    def __init__(self, m: Transformer, y0: Tensor) -> None:
        # y0: (B, T, d) base embeddings
        cfg = m.cfg
        self.m, self.cfg, self.y0 = m, cfg, y0
        blk = m.blocks[0]
        self.blk = blk
        T = y0.shape[1]
        q, k, v = blk.attn.project(blk.attn_input(y0)).unbind(-3)  # (B, T, H, e)
        self.q, self.k, self.v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)  # (B, H, T, e)
        idx = torch.arange(T)
        self.allowed = (idx[None, :] <= idx[:, None]) if cfg.causal else torch.ones(T, T, dtype=torch.bool)
        self.n_keys = self.allowed.sum(-1).to(y0.dtype)  # (T,) keys each query sees
        a = blk.attn.pair_scores(self.q, self.k, self.n_keys)  # (B, H, T, T)
        self.a = a.masked_fill(~self.allowed, float("-inf"))  # (B, H, T, T)
        self.mx = self.a.amax(-1)  # (B, H, T)
        E = torch.exp(self.a - self.mx[..., None])
        self.Z = E.sum(-1)  # (B, H, T)
        self.N = torch.einsum("bhij,bhje->bhie", E, self.v)  # (B, H, T, e)

    def flipped(self, pos: Tensor, y0_new: Tensor) -> Tensor:
        """y^(1) of the copies: position pos[c] set to y0_new[:, c] → (B, c, T, d)."""
        blk, at = self.blk, self.blk.attn
        c = pos.numel()
        qkv_new = at.project(blk.attn_input(y0_new))  # (B, c, 3, H, e)
        qf, kf, vf = (t.transpose(1, 2) for t in qkv_new.unbind(-3))  # (B, H, c, e)
        # logits of every query j against the flipped key: (B, H, c, T)
        a_new = at.pair_scores(self.q, kf, self.n_keys).transpose(-1, -2)
        a_new = a_new.masked_fill(~self.allowed[:, pos].T[None, None], float("-inf"))
        a_old = self.a[:, :, :, pos].transpose(2, 3)  # (B, H, c, T): a_{j, pos_c}
        mx = self.mx[:, :, None, :]  # (B, H, 1, T)
        m2 = torch.maximum(mx, a_new)
        keep = torch.exp(mx - m2)  # rescale of the base sums
        e_old, e_new = torch.exp(a_old - m2), torch.exp(a_new - m2)
        Z = self.Z[:, :, None, :] * keep - e_old + e_new  # (B, H, c, T)
        v_old = self.v[:, :, pos, :][:, :, :, None, :]  # (B, H, c, 1, e)
        N = self.N[:, :, None] * keep[..., None] - e_old[..., None] * v_old + e_new[..., None] * vf[:, :, :, None, :]
        z = N / Z[..., None]  # (B, H, c, T, e)
        # exact recomputation where cancellation could bite, and for the flipped query itself
        w_old = torch.exp(a_old - mx) / self.Z[:, :, None, :]
        redo = w_old > 0.5
        redo[:, :, torch.arange(c), pos] = True
        b, h, cc, j = torch.nonzero(redo, as_tuple=True)
        if b.numel():
            q_row = self.q[b, h, j]  # (R, e)
            own = j == pos[cc]
            q_row = torch.where(own[:, None], qf[b, h, cc], q_row)
            keys = self.k[b, h].clone()  # (R, T, e)
            keys[torch.arange(len(b)), pos[cc]] = kf[b, h, cc]
            vals = self.v[b, h].clone()
            vals[torch.arange(len(b)), pos[cc]] = vf[b, h, cc]
            a_row = at.pair_scores(q_row[:, None], keys, self.n_keys[j][:, None])[:, 0]  # (R, T)
            a_row = a_row.masked_fill(~self.allowed[j], float("-inf"))
            z[b, h, cc, j] = torch.einsum("rt,rte->re", torch.softmax(a_row, -1), vals)
        out = at.heads_out(z.permute(0, 2, 3, 1, 4))  # (B, c, T, d)
        y = self.y0[:, None].repeat(1, c, 1, 1)
        y[:, torch.arange(c), pos] = y0_new
        return blk.after_attention(y + out)
