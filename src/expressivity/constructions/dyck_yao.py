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
Channels (written by name through :class:`~expressivity.transformer.Weights`): open[t],
close[t], bos, cls, one, pos = j, pos2 = j², inv = ι_j; alpha = α_i, pt[t] (block 0's heads);
od[m − 1], cd[m − 1] (levels m = 1..D−1), mt[t] (matched type), bad, dep0, anybad, acc.

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

from ..languages import Vocab
from ..languages import get as get_language
from ..memory import check_memory
from ..transformer import ChannelMap, Weights, each
from .base import Construction
from .dyck import bracket_encoder, check_dyck_params, embed_brackets


def _channels(k: int, D: int) -> ChannelMap:
    return ChannelMap.build(
        ("open", k), ("close", k), ("bos!", 1), ("cls!", 1), ("one!", 1), ("pos!", 1), ("pos2!", 1),
        ("inv!", 1), ("alpha!", 1), ("pt", k), ("od", D - 1), ("cd", D - 1), ("mt", k),
        ("bad!", 1), ("dep0!", 1), ("anybad!", 1), ("acc!", 1),
    )


def _step(w: Weights, gate: list[list[str]], m: int, K: float, L: float, write: dict[str, float]) -> None:
    """coef·[every gate sum = 1 ∧ d ≥ m] added to each written channel of block 0, as the
    ramp clip(y + 1, 0, 1) of y = K(α − (m − ½)ι) + L(Σ gate sums − |gate|) (two units).

    Each gate is a list of channels whose sum is 0 or 1 (e.g. all open-bracket channels).
    """
    read = {"alpha": K, "inv": -K * (m - 0.5)}
    for group in gate:
        for name in group:
            read[name] = read.get(name, 0.0) + L
    w.ramp(0, read, -L * len(gate), write)


def build(k: int = 2, max_depth: int = 2, max_length: int = 2048, scale: float = 10.0) -> Construction:
    """Hardmax recogniser of Dyck-(k, D) with D + 1 layers, one per depth level (Yao et al. 2021)."""
    k, D, N, scale = check_dyck_params("dyck (yao)", k, max_depth, max_length, scale)
    check_memory(3 * 8.0 * (N + 2) * (5 * k + 2 * D + 12), f"dyck (yao) with max_length = {N}",
                 hint="use a smaller max_length (the positional table has max_length + 2 rows)")
    language = get_language("dyck", k=k, max_depth=D)
    vocab = Vocab(language.alphabet)
    ch = _channels(k, D)
    opens, closes, pt, od, cd, mt = (ch.names_of(base) for base in ("open", "close", "pt", "od", "cd", "mt"))
    n_ctx = N + 2
    M = 4.0 * n_ctx  # level bonus in the matching score, larger than any position
    K = 4.0 * n_ctx  # step sharpness: K·ι_i/2 ≥ 2
    L = K * (D + 2) + 2.0  # gate: pushes y ≤ −1 when a gate channel is 0
    w = Weights(ch, n_layers=D + 1, n_heads=2, d_head=max(2, k), d_vocab=len(vocab), n_ctx=n_ctx)

    # ---- block 0 FFN: range check, one-hot levels, level D
    w.unit(0, {"one": 1.0}, {"bad": 1.0})  # bad += 1 − [d ≥ 0]
    _step(w, [], 0, K, L, {"bad": -1.0, "dep0": 1.0})
    _step(w, [], 1, K, L, {"dep0": -1.0})
    _step(w, [], D + 1, K, L, {"bad": 1.0})  # bad += [d > D]
    for m in range(1, D + 1):  # od[m] = [open ∧ d ≥ m] − [open ∧ d ≥ m + 1], m = 1..D−1
        write = {}
        if m <= D - 1:
            write[od[m - 1]] = 1.0
        if 1 <= m - 1 <= D - 1:
            write[od[m - 2]] = -1.0
        _step(w, [opens], m, K, L, write)
    for m in range(D + 1):  # cd[m], m = 0..D−2; level D: bad += cd[D−1]
        write = {}
        if m <= D - 2:
            write[cd[m]] = 1.0
        if 0 <= m - 1 <= D - 2:
            write[cd[m - 1]] = -1.0
        if m == D - 1:
            write["bad"] = 1.0
        if m == D:
            write["bad"] = -1.0
        _step(w, [closes], m, K, L, write)
    for t in range(k):  # level D: bad −= [close_t ∧ pt_t ∧ d = D − 1]
        _step(w, [[closes[t]], [pt[t]]], D - 1, K, L, {"bad": -1.0})
        _step(w, [[closes[t]], [pt[t]]], D, K, L, {"bad": 1.0})
    # ---- blocks 1..D−1 FFN: level m = D − b
    for b in range(1, D):
        cdm = cd[D - b - 1]
        w.unit(b, {cdm: 1.0}, {"bad": 1.0})
        for t in range(k):
            w.unit(b, {mt[t]: 1.0, closes[t]: 1.0, cdm: 1.0}, {"bad": -1.0}, bias=-2.0)
            w.unit(b, {mt[t]: 1.0}, {mt[t]: -1.0})  # clear mt
    w.unit(D, {"dep0": 1.0, "anybad": -1.0}, {"acc": 1.0})

    # ---- embedding: tokens and positions
    embed_brackets(w, vocab, k)
    j = np.arange(n_ctx, dtype=np.float64)
    w.position("one", 1.0)
    w.position("pos", j)
    w.position("pos2", j**2)
    w.position("inv", 1.0 / (j + 1.0))

    # ---- block 0 attention: α = d/(i+1) (Q = K = 0: uniform), pt = type of w_{i−1} if open
    w.head(0, 0, value={**each(opens), **each(closes, -1.0)}, out={"alpha": 1.0})
    w.head(0, 1, query=[{"pos": 1.0, "one": -1.0}, {"one": 1.0}], key=[{"pos": 2.0}, {"pos2": -1.0}],
           value=[{o: 1.0} for o in opens], out=[{p: 1.0} for p in pt])

    # ---- blocks 1..D−1 attention: level m = D − b, closer of level m → latest open of depth m
    for b in range(1, D):
        m = D - b
        w.head(b, 0, query=[{cd[m - 1]: M}, {"one": 1.0}], key=[{od[m - 1]: 1.0}, {"pos": 1.0}],
               value=[{o: 1.0} for o in opens], out=[{t: 1.0} for t in mt])

    # ---- block D attention: anybad = max_j bad_j
    w.head(D, 0, query={"one": 1.0}, key={"bad": 1.0}, value={"bad": 1.0}, out={"anybad": 1.0})
    w.readout({"acc": 2.0 * scale}, bias=-scale)
    model = w.transformer(positional="learned", attention="hardmax", causal=True, dtype="float64")

    encode = bracket_encoder("dyck (yao)", language, vocab, N, n_bos=1)

    return Construction(
        name="dyck", transformer=model, attention="hardmax", language=language, encoder=encode,
        params={"k": k, "max_depth": D, "max_length": N, "scale": float(scale), "method": "yao"},
        n_tokens=lambda n: n + 2, max_length=N,
        description=f"Dyck-({k}, {D}) by hard attention, one layer per depth level (Yao et al. 2021): "
                    f"{D + 1} layers",
        info={"n_blocks": D + 1, "n_ctx": n_ctx, "closed_form_logit": f"±{scale} (hardmax, float64 rounding)"},
    )
