"""Recognizers with auxiliary losses (Butoi et al. 2025, §4) and their metrics by edit count.

FLaRe trains a recognizer on the binary cross-entropy of its decision, optionally plus

- ``"lm"`` — language modelling: on the *positive* strings, the cross-entropy of the next
  symbol (EOS after the last) from a softmax over Σ ∪ {EOS};
- ``"next_symbol"`` — next-symbol prediction: on the positive strings, a sigmoid per symbol of
  Σ ∪ {EOS} against the set of valid next symbols (binary cross-entropy, averaged over the
  symbols),

each averaged over a string's positions and over the batch's positives, times its
coefficient: ``RunConfig.aux = ("lm", "next_symbol")`` (coefficient 1; theirs draws each
coefficient log-uniformly from [0.01, 10] per run) or ``{"lm": 0.5}``. The heads are extra
outputs of the model's read-out (:func:`build`: the model is built with |Σ| + 1 more outputs
per loss and :class:`AuxHeads` returns the recognition logits, keeping the rest), read at the
positions of s₁ … s_n: position t, having read s₁ … s_{t+1}, predicts s_{t+2} (EOS at t = n − 1)
and the valid set after s₁ … s_{t+1}. Our recognizers read s₁ … s_n CLS with no BOS, so the
prediction from the empty prefix (their first LM position) is not trained.

An aux loss needs a model that reads causally — a recurrent model, or a transformer with
``causal=True`` (a bidirectional one would see the symbol it predicts) — on a recognition
task of a language (a function task has no next symbols); :func:`check_aux` says so in one
line otherwise.

:func:`edit_metrics` adds, per test length, the cross-entropy (bits) of the negatives by how
far they are from the language: ``edit_ce_d`` / ``edit_n_d`` by exact edit distance d (regular
FLaRe languages; d ≥ 6 in the last bin) and ``edits_ce_k`` / ``edits_n_k`` by the number of
random edits k that made them (k = 0: a uniform string; k ≥ 6 in the last bin) — sums and
counts, so lengths and runs pool. ``results --plot`` draws cross-entropy against both.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..rules import check_choice, check_float

AUX_LOSSES = ("lm", "next_symbol")
CAUSAL_MODELS = ("rnn", "lstm", "stack_rnn", "stack_lstm", "tape_rnn")  # recurrent: causal by construction
LAST_BIN = 6  # edit distances / edit counts ≥ this share one bin


def normalize_aux(value, name: str = "RunConfig.aux") -> dict[str, float]:
    """``("lm", "next_symbol")`` | ``{"lm": 0.5}`` | ``"lm,next_symbol"`` → {loss: coefficient}."""
    if value is None or value == () or value == {} or value == []:
        return {}
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, Mapping):
        items = list(value.items())
    elif isinstance(value, (list, tuple)):
        items = [(v, 1.0) for v in value]
    else:
        raise ValueError(f"{name} must name auxiliary losses ({', '.join(AUX_LOSSES)}), e.g. ('lm',) or "
                         f"{{'lm': 0.5}}, got {value!r}")
    out = {}
    for loss, coef in items:
        check_choice(loss, f"{name} loss", AUX_LOSSES)
        out[loss] = check_float(coef, f"{name} coefficient of {loss!r}", min=0, min_open=True)
    return dict(sorted(out.items()))


def check_aux(cfg, task) -> None:
    """One-line errors for an aux loss the run cannot carry (see the module docstring)."""
    from ..languages import Language

    if not cfg.aux:
        return
    carriers = f"{', '.join(CAUSAL_MODELS)}, or transformer with causal=True"
    if not isinstance(task.language, Language):
        raise ValueError(f"RunConfig.aux needs a language with next symbols; {cfg.task} is a {task.kind} task")
    if cfg.kind != "recognition":
        raise ValueError(f"RunConfig.aux adds losses to a recognizer; kind is {cfg.kind!r} (use kind='recognition')")
    if cfg.init != "random":
        raise ValueError(f"RunConfig.aux: a hand-built transformer ({cfg.init}) has no auxiliary heads; models that "
                         f"carry aux losses: {carriers}")
    if cfg.model == "transformer" and not cfg.causal:
        raise ValueError("RunConfig.aux on a transformer needs causal=True (a bidirectional transformer sees the "
                         f"symbols it would predict); models that carry aux losses: {carriers}")


def extra_outputs(cfg, task) -> int:
    return len(cfg.aux) * (len(task.language.alphabet) + 1)


class AuxHeads(nn.Module):
    """``base`` with the aux outputs after the task's ``n_outputs``: forward returns the task's
    logits and keeps the rest in ``self.aux_logits`` (B, T, extra)."""

    def __init__(self, base: nn.Module, n_outputs: int) -> None:
        super().__init__()
        self.base = base
        self.n_outputs = n_outputs
        self.aux_logits: torch.Tensor | None = None

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        out = self.base(ids)
        self.aux_logits = out[..., self.n_outputs:]
        return out[..., : self.n_outputs]


def build(cfg, task) -> nn.Module:
    """The run's model (:func:`.models.build_model`), with aux heads when ``cfg.aux``."""
    from .models import build_model

    if not cfg.aux:
        return build_model(cfg, len(task.vocab), task.n_outputs)
    base = build_model(cfg, len(task.vocab), task.n_outputs + extra_outputs(cfg, task))
    return AuxHeads(base, task.n_outputs)


def valid_next_sets(language, ids: np.ndarray) -> np.ndarray:
    """(count, n + 1, |Σ| + 1) bool: FLaRe's sets, or the support of p* for our other languages."""
    sets = getattr(language, "next_symbol_sets", None)
    return sets(ids) if sets is not None else language.next_symbol_table(ids) > 0


def aux_loss(cfg, task, model: nn.Module, batch: dict) -> torch.Tensor | float:
    """Σ over ``cfg.aux`` of coefficient × loss, on the positives of a recognition batch (0.0
    without aux losses or without positives of length ≥ 1)."""
    if not cfg.aux:
        return 0.0
    label = batch["label"].bool()
    tokens = batch["input"][label]  # s₁ … s_n CLS of the positives
    n = tokens.shape[1] - 1
    if n < 1 or not len(tokens):
        return 0.0
    K = len(task.language.alphabet)
    ids = (tokens[:, :n] - (len(task.vocab) - K)).cpu().numpy()  # alphabet indices
    logits = model.aux_logits[label][:, :n].float()  # (P, n, extra): position t has read s₁ … s_{t+1}
    total = torch.zeros((), device=logits.device)
    for j, (loss, coef) in enumerate(cfg.aux.items()):
        head = logits[..., j * (K + 1):(j + 1) * (K + 1)]
        if loss == "lm":
            target = torch.from_numpy(np.concatenate([ids[:, 1:], np.full((len(ids), 1), K)], axis=1)).to(head.device)
            per = F.cross_entropy(head.reshape(-1, K + 1), target.reshape(-1), reduction="none").view(len(ids), n)
        else:
            sets = torch.from_numpy(valid_next_sets(task.language, ids)[:, 1:]).float().to(head.device)  # after s₁…s_{t+1}
            per = F.binary_cross_entropy_with_logits(head, sets, reduction="none").mean(-1)
        total = total + coef * per.mean(1).mean()
    return total


def _bins(values: np.ndarray) -> np.ndarray:
    return np.minimum(values, LAST_BIN)


def edit_metrics(task, logits: torch.Tensor, batch: dict) -> dict[str, float]:
    """Cross-entropy sums (bits) and counts of a recognition batch's negatives by edit distance
    and by edit count (module docstring); {} for a batch without edit counts."""
    if "num_edits" not in batch:
        return {}
    label = batch["label"]
    n = batch["input"].shape[1] - 1
    ce = F.cross_entropy(logits[:, n].double(), label, reduction="none").numpy() / math.log(2)
    neg = ~label.bool().numpy()
    out: dict[str, float] = {}
    edits = batch["num_edits"].numpy()
    for k in np.unique(_bins(np.maximum(edits[neg], 0))):  # 0: a uniform string
        sel = neg & (_bins(np.maximum(edits, 0)) == k)
        out[f"edits_ce_{k}"], out[f"edits_n_{k}"] = float(ce[sel].sum()), float(sel.sum())
    distance = getattr(task.language, "edit_distance", None)
    if distance is not None and neg.any():
        K = len(task.language.alphabet)
        d = np.zeros(len(neg), dtype=np.int64)
        d[neg] = _bins(distance((batch["input"][neg][:, :n] - (len(task.vocab) - K)).numpy()))
        for v in np.unique(d[neg]):
            sel = neg & (d == v)
            out[f"edit_ce_{v}"], out[f"edit_n_{v}"] = float(ce[sel].sum()), float(sel.sum())
    return out
