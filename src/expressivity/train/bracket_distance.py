"""Closing-bracket accuracy binned by distance (Hewitt et al. 2020; Yao et al. 2021, §6).

For a next-symbol model on Dyck-(k, D) positives: at each closing bracket s_j, with s_i the
open bracket it closes and d = j − i its distance (:func:`~expressivity.languages.dyck.match_distance`),
the prediction q(· | s_<j) is *right* iff

    q(c*) / Σ_{c closing} q(c) > 0.8,

c* = the closing bracket of s_i's type (the threshold 0.8 is their ``P_THRESHOLD``). Our
choice: only positions that hold a closing bracket are scored (their code also scores every
position with a non-empty stack, at the distance a close would have there).

Per test length the metrics row gets ``close_accuracy`` (all closing brackets), and per
distance bin b = [lo, hi] (bins of :data:`BIN_WIDTH`: 1–20, 21–40, …) the integer counts
``close_right_lo_hi`` and ``close_count_lo_hi``, so bins add up exactly over lengths and
runs (:func:`distance_scores`, which :func:`~expressivity.train.protocols.protocol_score`
uses).

Example: ``(())`` has closing brackets at j = 2 (d = 1) and j = 3 (d = 3): both in bin 1–20.
"""

from __future__ import annotations

import re

import numpy as np
import torch

from ..languages.dyck import Dyck, match_distance
from ..languages.vocab import SPECIALS

P_THRESHOLD = 0.8  # Hewitt et al. / Yao et al.: mass on the right close over all closes
BIN_WIDTH = 20  # distance bins 1–20, 21–40, …
_KEY = re.compile(r"close_(right|count)_(\d+)_(\d+)$")


def applies(task) -> bool:
    """True for next-symbol tasks on a Dyck language (the metric's domain)."""
    return task.kind == "next_symbol" and isinstance(getattr(task, "language", None), Dyck)


def distance_bin(d: int) -> tuple[int, int]:
    """The bin [lo, hi] of distance d ≥ 1."""
    lo = (d - 1) // BIN_WIDTH * BIN_WIDTH + 1
    return lo, lo + BIN_WIDTH - 1


@torch.no_grad()
def closing_bracket_metrics(logits: torch.Tensor, batch: dict) -> dict:
    """``close_accuracy`` and per-bin ``close_right_lo_hi`` / ``close_count_lo_hi`` for one
    next-symbol batch of Dyck positives (input BOS s_1 … s_n, logits (B, n + 1, 2k + 1): the
    logits at input position j predict s_j, 0-based)."""
    ids = batch["input"][:, 1:].numpy() - len(SPECIALS)  # (B, n) alphabet indices
    B, n = ids.shape
    if n == 0:
        return {"close_accuracy": float("nan")}
    q = torch.softmax(logits[:, :n].double(), dim=-1).numpy()  # (B, n, C): q(· | s_<j)
    closes = q[:, :, 1:q.shape[-1] - 1:2]  # (B, n, k): closing brackets are the odd symbols
    dist = match_distance(ids)  # (B, n)
    is_close = dist > 0
    target = ids // 2  # the type each closing bracket must have
    right_mass = np.take_along_axis(closes, target[:, :, None], axis=2)[:, :, 0]
    right = right_mass > P_THRESHOLD * closes.sum(-1)  # (B, n)
    out: dict = {"close_accuracy": float(right[is_close].mean()) if is_close.any() else float("nan")}
    d, r = dist[is_close], right[is_close]
    b = (d - 1) // BIN_WIDTH
    for bi in np.unique(b):
        lo, hi = distance_bin(int(bi) * BIN_WIDTH + 1)
        sel = b == bi
        out[f"close_right_{lo}_{hi}"] = int(r[sel].sum())
        out[f"close_count_{lo}_{hi}"] = int(sel.sum())
    return out


def distance_scores(rows: list[dict]) -> dict[str, float]:
    """Close-bracket accuracy over ``rows`` (metrics rows that carry the counts above):
    ``close_accuracy`` and ``close_lo_hi`` per bin, each Σ right / Σ count; {} without counts."""
    right: dict[tuple[int, int], int] = {}
    count: dict[tuple[int, int], int] = {}
    for row in rows:
        for key, value in row.items():
            m = _KEY.match(key)
            if m is None or value is None:
                continue
            which = right if m.group(1) == "right" else count
            b = (int(m.group(2)), int(m.group(3)))
            which[b] = which.get(b, 0) + int(value)
    total = sum(count.values())
    if not total:
        return {}
    out = {"close_accuracy": sum(right.values()) / total}
    for b in sorted(count):
        if count[b]:
            out[f"close_{b[0]}_{b[1]}"] = right.get(b, 0) / count[b]
    return out
