"""Dyck-(k, D) with hard attention and D + 1 layers: one layer per depth level (Yao et al. 2021).

Yao et al. (2021) recognise Dyck-(k, D) with D + 1 hard-attention layers: each layer matches
(and cancels) the brackets of one depth level, innermost first, and a last layer checks that
nothing is left. They use strict past/future masks to find the nearest uncancelled bracket.
Our ``Transformer`` has only the inclusive causal mask, and "latest earlier position
excluding myself" is not a low-rank bilinear score, so here the match is keyed on the
depth instead of on cancellation. The layer structure is kept: one level per layer,
innermost first, then a final check.

Tokens (causal hardmax attention, T = n + 2):  [BOS, w_1, …, w_n, CLS], read at CLS.
Positional features (table fixed for every length ≤ ``max_length``): ``one``, j, j² and
ι_j = 1/(j+1). d_i = #open − #close in w up to position i (BOS and CLS count 0). The level
of a pair is the depth after its open bracket, 1..D; a closing bracket of level m has
depth-after m − 1.

Block 0 — depth and level D (two heads):
    head "avg" (uniform causal attention): α_i = d_i/(i+1);
    head "prev" (score 2j(i−1) − j² = (i−1)² − (j − i + 1)², maximal only at j = i − 1):
        pt_i = type one-hot of w_{i−1} if it opens.
    FFN: exact gated steps  [c ∧ d_i ≥ m] = ReLU(y+1) − ReLU(y),
        y = K(α_i − (m − ½)ι_i) + L(Σ c − |c|),   K = 4·n_ctx ≥ 2/ι_i,  L = K(D + 2) + 2,
    since α_i − (m − ½)ι_i = (d_i − m + ½)/(i+1) has |·| ≥ ι_i/2. They give
        od_i[m] = [w_i opens ∧ d_i = m],  cd_i[m] = [w_i closes ∧ d_i = m]  (one-hot by level),
        dep0_i = [d_i = 0],  bad_i = [d_i < 0] + [d_i > D]                        (range check),
        bad_i += cd_i[D−1] − Σ_t [w_i closes type t ∧ pt_i[t] ∧ d_i = D − 1]   (level D).
    Level D is local: when every depth is ≤ D, an open bracket of depth D is followed at once
    by its closing bracket, so the match of a level-D closer is w_{i−1}.
Block b = 1 … D − 1 — level m = D − b (one head):
    score M·cd_i[m−1]·od_j[m] + j (M = 4·n_ctx > T): a closer of level m attends to the
    latest open bracket of depth m before it — its match when all depths are in [0, D] —
    and copies the type into mt. FFN: bad_i += cd_i[m−1] − Σ_t [mt[t] ∧ w_i closes type t ∧
    cd_i[m−1]], then clears mt for the next level.
Block D — check: hardmax with score bad_j gives anybad = max_j bad_j at CLS;
    FFN: acc = ReLU(dep0_CLS − anybad). Logit z = s·(2·acc − 1), s = ``scale``.

s ∈ Dyck-(k, D) ⇔ all prefix depths in [0, D], final depth 0, and every closing bracket's
match has its type. Every closer has a level in 1..D unless a depth leaves [0, D] (flagged),
so acc = 1 exactly for members and 0 otherwise. Layers: D + 1 (D = 1: block 0 plus the check).
Values are exact up to float64 rounding (|z ∓ s| ~ 1e-10·s).
"""

from __future__ import annotations

import numpy as np

from ..checks import check_memory
from ..languages import Vocab
from ..languages import get as get_language
from ..transformer import ChannelMap, Transformer, TransformerConfig
from .base import Construction, load_weights
from .dyck import bracket_encoder, check_dyck_params, embed_brackets

# one FFN unit: (reads {channel: coef}, bias, writes {channel: coef})
_Unit = tuple[dict[int, float], float, dict[int, float]]


def _channels(k: int, D: int) -> ChannelMap:
    return ChannelMap.build(
        ("open", k), ("close", k), ("bos!", 1), ("cls!", 1), ("one!", 1), ("pos!", 1), ("pos2!", 1),
        ("inv!", 1), ("alpha!", 1), ("pt", k), ("od", D - 1), ("cd", D - 1), ("mt", k),
        ("bad!", 1), ("dep0!", 1), ("anybad!", 1), ("acc!", 1),
    )


def _step(units: list[_Unit], c_alpha: int, c_inv: int, gate: list[list[int]], m: int, K: float, L: float,
          writes: dict[int, float]) -> None:
    """Two units adding coef·[every gate sum = 1 ∧ d ≥ m] to each written channel.

    Each gate is a list of channels whose sum is 0 or 1 (e.g. all open-bracket channels).
    """
    if not writes:
        return
    reads = {c_alpha: K, c_inv: -K * (m - 0.5)}
    for group in gate:
        for ch in group:
            reads[ch] = reads.get(ch, 0.0) + L
    bias = -L * len(gate)
    units.append((reads, bias + 1.0, dict(writes)))
    units.append((reads, bias, {c: -v for c, v in writes.items()}))


def build(k: int = 2, max_depth: int = 2, max_length: int = 2048, scale: float = 10.0) -> Construction:
    """Hardmax recogniser of Dyck-(k, D) with D + 1 layers, one per depth level (Yao et al. 2021)."""
    k, D, N, scale = check_dyck_params("dyck (yao)", k, max_depth, max_length, scale)
    check_memory(3 * 8.0 * (N + 2) * (5 * k + 2 * D + 12), f"dyck (yao) with max_length = {N}",
                 hint="use a smaller max_length (the positional table has max_length + 2 rows)")
    language = get_language("dyck", k=k, max_depth=D)
    vocab = Vocab(language.alphabet)
    ch = _channels(k, D)
    c, g = ch.index, ch.group
    opens, closes, pt, od, cd, mt = g("open"), g("close"), g("pt"), g("od"), g("cd"), g("mt")
    n_ctx = N + 2
    M = 4.0 * n_ctx  # level bonus in the matching score, larger than any position
    K = 4.0 * n_ctx  # step sharpness: K·ι_i/2 ≥ 2
    L = K * (D + 2) + 2.0  # gate: pushes y ≤ −1 when a gate channel is 0

    # ---- FFN units per block
    units: list[list[_Unit]] = [[] for _ in range(D + 1)]
    u0 = units[0]
    one, bad = c("one"), c("bad")
    u0.append(({one: 1.0}, 0.0, {bad: 1.0}))  # bad += 1 − [d ≥ 0]
    _step(u0, c("alpha"), c("inv"), [], 0, K, L, {bad: -1.0, c("dep0"): 1.0})
    _step(u0, c("alpha"), c("inv"), [], 1, K, L, {c("dep0"): -1.0})
    _step(u0, c("alpha"), c("inv"), [], D + 1, K, L, {bad: 1.0})  # bad += [d > D]
    for m in range(1, D + 1):  # od[m] = [open ∧ d ≥ m] − [open ∧ d ≥ m + 1], m = 1..D−1
        w = {}
        if m <= D - 1:
            w[od[m - 1]] = 1.0
        if 1 <= m - 1 <= D - 1:
            w[od[m - 2]] = -1.0
        _step(u0, c("alpha"), c("inv"), [opens], m, K, L, w)
    for m in range(D + 1):  # cd[m], m = 0..D−2; level D: bad += cd[D−1]
        w = {}
        if m <= D - 2:
            w[cd[m]] = 1.0
        if 0 <= m - 1 <= D - 2:
            w[cd[m - 1]] = -1.0
        if m == D - 1:
            w[bad] = 1.0
        if m == D:
            w[bad] = -1.0
        _step(u0, c("alpha"), c("inv"), [closes], m, K, L, w)
    for t in range(k):  # level D: bad −= [close_t ∧ pt_t ∧ d = D − 1]
        _step(u0, c("alpha"), c("inv"), [[closes[t]], [pt[t]]], D - 1, K, L, {bad: -1.0})
        _step(u0, c("alpha"), c("inv"), [[closes[t]], [pt[t]]], D, K, L, {bad: 1.0})
    for b in range(1, D):  # level m = D − b
        m = D - b
        cdm = cd[m - 1]
        units[b].append(({cdm: 1.0}, 0.0, {bad: 1.0}))
        for t in range(k):
            units[b].append(({mt[t]: 1.0, closes[t]: 1.0, cdm: 1.0}, -2.0, {bad: -1.0}))
            units[b].append(({mt[t]: 1.0}, 0.0, {mt[t]: -1.0}))  # clear mt
    units[D].append(({c("dep0"): 1.0, c("anybad"): -1.0}, 0.0, {c("acc"): 1.0}))

    d_head = max(2, k)
    cfg = TransformerConfig(
        d_model=len(ch), n_layers=D + 1, n_heads=2, d_head=d_head, d_mlp=max(len(u) for u in units),
        d_vocab=len(vocab), d_out=1, n_ctx=n_ctx, positional="learned", attention="hardmax",
        causal=True, dtype="float64",
    )
    model = Transformer(cfg, ch)
    W = {name: np.zeros(tuple(p.shape)) for name, p in model.named_parameters()}

    # ---- embedding: tokens and positions
    embed_brackets(W["W_E"], vocab, opens, closes, c("bos"), c("cls"))
    P = W["W_pos"]
    j = np.arange(n_ctx, dtype=np.float64)
    P[:, one] = 1.0
    P[:, c("pos")] = j
    P[:, c("pos2")] = j**2
    P[:, c("inv")] = 1.0 / (j + 1.0)

    # ---- block 0 attention: α = d/(i+1) (Q = K = 0: uniform), pt = type of w_{i−1} if open
    a0 = "blocks.0.attn."
    W[a0 + "W_V"][0, opens, 0] = 1.0
    W[a0 + "W_V"][0, closes, 0] = -1.0
    W[a0 + "W_O"][0, 0, c("alpha")] = 1.0
    W[a0 + "W_Q"][1, c("pos"), 0] = 1.0
    W[a0 + "W_Q"][1, one, 0] = -1.0
    W[a0 + "W_Q"][1, one, 1] = 1.0
    W[a0 + "W_K"][1, c("pos"), 0] = 2.0
    W[a0 + "W_K"][1, c("pos2"), 1] = -1.0
    for t in range(k):
        W[a0 + "W_V"][1, opens[t], t] = 1.0
        W[a0 + "W_O"][1, t, pt[t]] = 1.0

    # ---- blocks 1..D−1 attention: level m = D − b, closer of level m → latest open of depth m
    for b in range(1, D):
        m = D - b
        a = f"blocks.{b}.attn."
        W[a + "W_Q"][0, cd[m - 1], 0] = M
        W[a + "W_K"][0, od[m - 1], 0] = 1.0
        W[a + "W_Q"][0, one, 1] = 1.0
        W[a + "W_K"][0, c("pos"), 1] = 1.0
        for t in range(k):
            W[a + "W_V"][0, opens[t], t] = 1.0
            W[a + "W_O"][0, t, mt[t]] = 1.0

    # ---- block D attention: anybad = max_j bad_j
    a = f"blocks.{D}.attn."
    W[a + "W_Q"][0, one, 0] = 1.0
    W[a + "W_K"][0, bad, 0] = 1.0
    W[a + "W_V"][0, bad, 0] = 1.0
    W[a + "W_O"][0, 0, c("anybad")] = 1.0

    # ---- FFNs
    for b, block_units in enumerate(units):
        f = f"blocks.{b}.mlp."
        for u, (reads, bias, writes) in enumerate(block_units):
            for src, v in reads.items():
                W[f + "W_in"][src, u] += v
            W[f + "b_in"][u] = bias
            for dst, v in writes.items():
                W[f + "W_out"][u, dst] += v
    W["W_U"][c("acc"), 0] = 2.0 * scale
    W["b_U"][0] = -scale
    load_weights(model, W)

    encode = bracket_encoder("dyck (yao)", language, vocab, N, n_bos=1)

    return Construction(
        name="dyck", transformer=model, attention="hardmax", language=language, encoder=encode,
        params={"k": k, "max_depth": D, "max_length": N, "scale": float(scale), "method": "yao"},
        n_tokens=lambda n: n + 2, max_length=N,
        description=f"Dyck-({k}, {D}) by hard attention, one layer per depth level (Yao et al. 2021): "
                    f"{D + 1} layers",
        info={"n_blocks": D + 1, "n_ctx": n_ctx, "closed_form_logit": f"±{scale} (hardmax, float64 rounding)"},
    )
