"""Dyck-(k, D) recognition with hard attention (in the spirit of Yao et al. 2021).

Tokens (causal hardmax attention, T = n + D + 3):
    [BOS × (D+2), w_1, …, w_n, CLS]      absolute positions j = 0..T−1, read at CLS.
Positional features (learned table, fixed for every length ≤ ``max_length``): j, j², ``one``
and a depth label lab(j): "neg" for j = 0, depth j − 1 for j = 1..D+1, "over" for j ≥ D+2.
d_i = #open − #close in w up to position i (BOS and CLS count 0).

Channels (names of the ChannelMap; weights are written by these names through
:class:`~expressivity.transformer.Weights`): open[t], close[t] (the token's bracket of type t),
bos, cls, one (= 1), pos (= j), pos2 (= j²), lab_neg | lab[0..D] | lab_over (the label lab(j));
a, b (block 0); dep_neg | dep[0..D] | dep_over (the one-hot depth d_i, block 1); od[m]
([w_i opens ∧ d_i = m]); mt[t] (type of the matched open bracket, block 2); bad, anybad, acc.

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

from ..languages import BOS, CLS, Language, Vocab, token_layout
from ..languages import get as get_language
from ..memory import check_memory
from ..rules import check_float, check_int
from ..transformer import ChannelMap, Weights, each
from .base import Construction, Encoded


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


def embed_brackets(w: Weights, vocab: Vocab, k: int) -> None:
    """Token embedding by name: pair type t's open symbol → open[t], its close symbol →
    close[t]; BOS → bos, CLS → cls."""
    for t in range(k):
        w.embed(int(vocab.ids_of(2 * t)), {f"open[{t}]": 1.0})
        w.embed(int(vocab.ids_of(2 * t + 1)), {f"close[{t}]": 1.0})
    w.embed(BOS, {"bos": 1.0})
    w.embed(CLS, {"cls": 1.0})


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
        ids = torch.from_numpy(token_layout(vocab.ids_of(language.to_ids(strings)), prefix=(BOS,) * n_bos,
                                            suffix=(CLS,)))
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
    w = Weights(ch, n_layers=4, n_heads=2, d_head=max(2, D + 3, k), d_vocab=len(vocab), n_ctx=n_ctx)
    opens, closes = ch.names_of("open"), ch.names_of("close")
    lab, dep, od, mt = (ch.names_of(base) for base in ("lab", "dep", "od", "mt"))

    # ---- embedding: tokens and positions
    embed_brackets(w, vocab, k)
    j = np.arange(n_ctx, dtype=np.float64)
    w.position("one", 1.0)
    w.position("pos", j)
    w.position("pos2", j**2)
    w.position("lab_neg", 1.0, rows=0)
    for m in range(D + 1):
        w.position(lab[m], 1.0, rows=m + 1)  # j = m + 1 ↦ depth m
    w.position("lab_over", 1.0, rows=slice(D + 2, None))

    # ---- block 0: a = d/(i+1), b = 1/(i+1) (Q = K = 0: uniform over the causal prefix)
    w.head(0, 0, value={**each(opens), **each(closes, -1.0)}, out={"a": 1.0})
    w.head(0, 1, value={"lab_neg": 1.0}, out={"b": 1.0})  # 1 at j = 0 only

    # ---- block 1: look up lab(d + 1), score (a + b)·2j − b·j²
    labs = ["lab_neg", *lab, "lab_over"]
    deps = ["dep_neg", *dep, "dep_over"]
    w.head(1, 0, query=[{"a": 1.0, "b": 1.0}, {"b": 1.0}], key=[{"pos": 2.0}, {"pos2": -1.0}],
           value=[{src: 1.0} for src in labs], out=[{dst: 1.0} for dst in deps])
    for m in range(D + 1):  # od[m] = ReLU(open + dep[m] − one)
        w.unit(1, {**each(opens), dep[m]: 1.0, "one": -1.0}, {od[m]: 1.0})
    for src in ("dep_neg", "dep_over"):  # bad += ReLU(flag − bos)
        w.unit(1, {src: 1.0, "bos": -1.0}, {"bad": 1.0})

    # ---- block 2: match a closing bracket (depth-after m) to the latest open with depth-after m+1
    w.head(2, 0, query=[{"one": 1.0}] + [{dep[m]: M} for m in range(D)],
           key=[{"pos": 1.0}] + [{od[m + 1]: 1.0} for m in range(D)],
           value=[{o: 1.0} for o in opens], out=[{t: 1.0} for t in mt])
    w.unit(2, each(closes), {"bad": 1.0})  # bad += [closes]
    for t in range(k):  # bad −= ReLU(mt[t] + close[t] − one)
        w.unit(2, {mt[t]: 1.0, closes[t]: 1.0, "one": -1.0}, {"bad": -1.0})

    # ---- block 3: anybad = max_j bad_j (hardmax), acc = ReLU(dep[0] − anybad)
    w.head(3, 0, query={"one": 1.0}, key={"bad": 1.0}, value={"bad": 1.0}, out={"anybad": 1.0})
    w.unit(3, {dep[0]: 1.0, "anybad": -1.0}, {"acc": 1.0})
    w.readout({"acc": 2.0 * scale}, bias=-scale)
    model = w.transformer(d_mlp=2 * (D + 1) + 2 * k + 4, positional="learned", attention="hardmax",
                          causal=True, dtype="float64")

    encode = bracket_encoder("dyck", language, vocab, N, n_bos=D + 2)

    return Construction(
        name="dyck", transformer=model, attention="hardmax", language=language, encoder=encode,
        params={"k": k, "max_depth": D, "max_length": N, "scale": float(scale)},
        n_tokens=lambda n: n + D + 3, max_length=N,
        description=f"Dyck-({k}, {D}) by hard attention: prefix averages, depth lookup, matching, any-error",
        info={"n_blocks": 4, "n_ctx": n_ctx, "closed_form_logit": f"±{scale} (hardmax, exact)"},
    )
