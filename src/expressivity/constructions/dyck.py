"""Dyck-(k, D) recognition with hard attention (in the spirit of Yao et al. 2021).

Tokens (causal hardmax attention, T = n + D + 3):
    [BOS × (D+2), w_1, …, w_n, CLS]      absolute positions j = 0..T−1, read at CLS.
Positional features (learned table, fixed for every length ≤ ``max_length``): j, j², ``one``
and a depth label lab(j): "neg" for j = 0, depth j − 1 for j = 1..D+1, "over" for j ≥ D+2.
d_i = #open − #close in w up to position i (BOS and CLS count 0).

Block 0 — prefix averages (uniform causal attention, two heads):
    a_i = d_i/(i+1),  b_i = 1/(i+1).
Block 1 — depth as a one-hot by *looking it up* (hardmax): the score
    λ·q_i·k_j = (a_i + b_i)·2j − b_i·j² = ((d_i + 1)² − (d_i + 1 − j)²)/(i+1)
is maximal exactly at j = d_i + 1 (or j = 0 if d_i < −1; always visible since the string
starts after D + 2 BOS tokens), so the head copies lab(d_i + 1) ∈ {neg, 0..D, over} into
dep_i. FFN: od_i[m] = [w_i opens ∧ dep_i = m];  bad_i = [neg or over] (symbols and CLS).
Block 2 — matching (hardmax): a closing bracket with depth-after m matches the latest open
bracket j < i whose depth-after is m + 1. Score M·[od_j[m+1] = 1 = dep_i[m]] + j with
M > T; the head copies the open bracket's type. FFN: bad_i += [w_i closes] − [types agree]
(no match reads type 0 from the fallback position and also counts as an error).
Block 3 — any error: hardmax with score bad_j (all 0 → uniform average of zeros) gives
anybad ∈ {0, ≥1} at CLS; FFN: acc = ReLU(dep_CLS[0] − anybad) (final depth 0, no error).
Logit z = s·(2·acc − 1) with s = ``scale``.

s ∈ Dyck-(k, D) ⇔ depths stay in [0, D], end at 0, and every closing bracket's match has
its type — exactly what acc checks. Layers: 4 for every D (the one-hot depth lookup replaces
Yao et al.'s one layer per depth level); width grows as O(k + D).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from ..checks import check_float, check_int, check_memory
from ..languages import BOS, CLS, Language, Vocab
from ..languages import get as get_language
from ..transformer import ChannelMap, Transformer, TransformerConfig
from .base import Construction, Encoded, load_weights


def _channels(k: int, D: int) -> ChannelMap:
    return ChannelMap.build(
        ("open", k), ("close", k), ("bos!", 1), ("cls!", 1), ("one!", 1), ("pos!", 1), ("pos2!", 1),
        ("lab_neg!", 1), ("lab", D + 1), ("lab_over!", 1),
        ("a!", 1), ("b!", 1), ("dep_neg!", 1), ("dep", D + 1), ("dep_over!", 1), ("od", D + 1),
        ("mt", k), ("bad!", 1), ("anybad!", 1), ("acc!", 1),
    )


def check_dyck_params(label: str, k, max_depth, max_length, scale) -> tuple[int, int, int, float]:
    """(k, D, N, scale) validated: ints k ∈ [1, 30], D ≥ 1, N ≥ 1 (2.0 passes, 2.5 and bools
    do not) and a finite scale > 0."""
    from ..languages import PAIRS

    def named(name):
        return f"{label}: {name}"

    return (check_int(k, named("k"), min=1, max=len(PAIRS)), check_int(max_depth, named("max_depth"), min=1),
            check_int(max_length, named("max_length"), min=1),
            check_float(scale, named("scale"), min=0.0, min_open=True))


def embed_brackets(E: np.ndarray, vocab: Vocab, opens: list[int], closes: list[int], bos: int, cls: int) -> None:
    """Write the token embedding W_E (d_vocab, d_model) in place: pair type t's open symbol
    → channel opens[t], its close symbol → closes[t]; BOS → bos, CLS → cls."""
    for t in range(len(opens)):
        E[vocab.ids_of(2 * t), opens[t]] = 1.0
        E[vocab.ids_of(2 * t + 1), closes[t]] = 1.0
    E[BOS, bos] = 1.0
    E[CLS, cls] = 1.0


def bracket_encoder(label: str, language: Language, vocab: Vocab, max_length: int,
                    n_bos: int) -> Callable[[list[str]], Encoded]:
    """Encoder of strings of one length n ≤ max_length as [BOS × n_bos, w_1, …, w_n, CLS]:
    ids (B, T), T = n + n_bos + 1, no key mask, read at CLS (T − 1)."""

    def encode(strings: list[str]) -> Encoded:
        B = len(strings)
        n = len(strings[0]) if B else 0
        if n > max_length:
            raise ValueError(f"{label}: strings have length {n} > max_length = {max_length}")
        T = n + n_bos + 1
        ids = torch.full((B, T), BOS, dtype=torch.long)
        if n:
            ids[:, n_bos:n_bos + n] = torch.from_numpy(vocab.ids_of(language.to_ids(strings)))
        ids[:, -1] = CLS
        return Encoded(ids, None, torch.full((B,), T - 1, dtype=torch.long))

    return encode


def build(k: int = 2, max_depth: int = 2, max_length: int = 2048, scale: float = 10.0) -> Construction:
    """Hardmax recogniser of Dyck-(k, D), D = ``max_depth``, for strings of length ≤ ``max_length``."""
    k, D, N, scale = check_dyck_params("dyck", k, max_depth, max_length, scale)
    n_ctx = N + D + 3
    check_memory(3 * 8.0 * n_ctx * (4 * k + 3 * D + 17), f"dyck with max_length = {N}",
                 hint="use a smaller max_length (the positional table has max_length + D + 3 rows)")
    language = get_language("dyck", k=k, max_depth=D)
    vocab = Vocab(language.alphabet)
    ch = _channels(k, D)
    M = 4.0 * n_ctx  # matching bonus, larger than any position
    d_head = max(2, D + 3, k)
    cfg = TransformerConfig(
        d_model=len(ch), n_layers=4, n_heads=2, d_head=d_head, d_mlp=2 * (D + 1) + 2 * k + 4,
        d_vocab=len(vocab), d_out=1, n_ctx=n_ctx, positional="learned", attention="hardmax",
        causal=True, dtype="float64",
    )
    model = Transformer(cfg, ch)
    W = {name: np.zeros(tuple(p.shape)) for name, p in model.named_parameters()}
    c = ch.index
    g = ch.group
    opens, closes = g("open"), g("close")

    # ---- embedding: tokens and positions
    embed_brackets(W["W_E"], vocab, opens, closes, c("bos"), c("cls"))
    P = W["W_pos"]
    j = np.arange(n_ctx, dtype=np.float64)
    P[:, c("one")] = 1.0
    P[:, c("pos")] = j
    P[:, c("pos2")] = j**2
    P[0, c("lab_neg")] = 1.0
    P[np.arange(1, D + 2), np.asarray(g("lab"))] = 1.0  # j = m + 1 ↦ depth m
    P[D + 2:, c("lab_over")] = 1.0

    # ---- block 0: a = d/(i+1), b = 1/(i+1) (Q = K = 0: uniform over the causal prefix)
    a0 = "blocks.0.attn."
    W[a0 + "W_V"][0, opens, 0] = 1.0
    W[a0 + "W_V"][0, closes, 0] = -1.0
    W[a0 + "W_O"][0, 0, c("a")] = 1.0
    W[a0 + "W_V"][1, c("lab_neg"), 0] = 1.0  # 1 at j = 0 only
    W[a0 + "W_O"][1, 0, c("b")] = 1.0

    # ---- block 1: look up lab(d + 1)
    a1 = "blocks.1.attn."
    W[a1 + "W_Q"][0, c("a"), 0] = 1.0
    W[a1 + "W_Q"][0, c("b"), 0] = 1.0
    W[a1 + "W_Q"][0, c("b"), 1] = 1.0
    W[a1 + "W_K"][0, c("pos"), 0] = 2.0
    W[a1 + "W_K"][0, c("pos2"), 1] = -1.0
    labs = [c("lab_neg")] + g("lab") + [c("lab_over")]
    deps = [c("dep_neg")] + g("dep") + [c("dep_over")]
    for e, (src, dst) in enumerate(zip(labs, deps)):
        W[a1 + "W_V"][0, src, e] = 1.0
        W[a1 + "W_O"][0, e, dst] = 1.0
    f1 = "blocks.1.mlp."
    u = 0
    for dm, odm in zip(g("dep"), g("od")):  # od[m] = ReLU(open + dep[m] − one)
        W[f1 + "W_in"][opens, u] = 1.0
        W[f1 + "W_in"][dm, u] = 1.0
        W[f1 + "W_in"][c("one"), u] = -1.0
        W[f1 + "W_out"][u, odm] = 1.0
        u += 1
    for src in (c("dep_neg"), c("dep_over")):  # bad += ReLU(flag − bos)
        W[f1 + "W_in"][src, u] = 1.0
        W[f1 + "W_in"][c("bos"), u] = -1.0
        W[f1 + "W_out"][u, c("bad")] = 1.0
        u += 1

    # ---- block 2: match a closing bracket (depth-after m) to the latest open with depth-after m+1
    a2 = "blocks.2.attn."
    W[a2 + "W_Q"][0, c("one"), 0] = 1.0
    W[a2 + "W_K"][0, c("pos"), 0] = 1.0
    for m in range(D):
        W[a2 + "W_Q"][0, g("dep")[m], m + 1] = M
        W[a2 + "W_K"][0, g("od")[m + 1], m + 1] = 1.0
    for t in range(k):
        W[a2 + "W_V"][0, opens[t], t] = 1.0
        W[a2 + "W_O"][0, t, g("mt")[t]] = 1.0
    f2 = "blocks.2.mlp."
    W[f2 + "W_in"][closes, 0] = 1.0  # bad += [closes]
    W[f2 + "W_out"][0, c("bad")] = 1.0
    for t in range(k):  # bad −= ReLU(mt[t] + close[t] − one)
        W[f2 + "W_in"][g("mt")[t], 1 + t] = 1.0
        W[f2 + "W_in"][closes[t], 1 + t] = 1.0
        W[f2 + "W_in"][c("one"), 1 + t] = -1.0
        W[f2 + "W_out"][1 + t, c("bad")] = -1.0

    # ---- block 3: anybad = max_j bad_j (hardmax), acc = ReLU(dep[0] − anybad)
    a3 = "blocks.3.attn."
    W[a3 + "W_Q"][0, c("one"), 0] = 1.0
    W[a3 + "W_K"][0, c("bad"), 0] = 1.0
    W[a3 + "W_V"][0, c("bad"), 0] = 1.0
    W[a3 + "W_O"][0, 0, c("anybad")] = 1.0
    f3 = "blocks.3.mlp."
    W[f3 + "W_in"][g("dep")[0], 0] = 1.0
    W[f3 + "W_in"][c("anybad"), 0] = -1.0
    W[f3 + "W_out"][0, c("acc")] = 1.0
    W["W_U"][c("acc"), 0] = 2.0 * scale
    W["b_U"][0] = -scale
    load_weights(model, W)

    encode = bracket_encoder("dyck", language, vocab, N, n_bos=D + 2)

    return Construction(
        name="dyck", transformer=model, attention="hardmax", language=language, encoder=encode,
        params={"k": k, "max_depth": D, "max_length": N, "scale": float(scale)},
        n_tokens=lambda n: n + D + 3, max_length=N,
        description=f"Dyck-({k}, {D}) by hard attention: prefix averages, depth lookup, matching, any-error",
        info={"n_blocks": 4, "n_ctx": n_ctx, "closed_form_logit": f"±{scale} (hardmax, exact)"},
    )
