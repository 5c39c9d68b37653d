"""One claim per hierarchy level of FLaRe (Butoi et al. 2025, ICLR; arXiv 2411.07107).

Their headline (Figure 1, Table 2 "Expressivity"): trained as recognizers — binary
classifiers of strings, positives and perturbed negatives, lengths 0–40 in training and 0–500
in the test — the simple RNN, the LSTM and the causal transformer reach perfect length
generalization only on regular languages and on Majority, and the transformer is no better
than the RNN/LSTM. We train the three on one or two of their languages per level with the
``flare`` preset's data and causal transformer, small and short (the CPU budgets), on
lengths 0–16, and score them on longer strings (mean accuracy at 20 … 64 for the budgets
below):

* ``flare.regular`` — PARITY (``flare.parity``): the best of RNN/LSTM generalizes (score ≥
  :data:`SOLVED`); the transformer is no better (≤ the best RNN/LSTM + :data:`SLACK`).
  Beside it, Hahn's Lemma 5 for the trained transformer (from its weights, at the longest test
  length) and the output change one flipped bit causes — every flip flips PARITY's label.
  Dyck-(2, 3) has no such row: Hahn's 2DYCK result is about unbounded depth, and
  bounded-depth Dyck is regular and within a transformer's reach (Yao et al. 2021).
* ``flare.dcf`` — Majority (``flare.majority``), the one non-regular language they find
  learnable: the best RNN/LSTM ≥ :data:`SOLVED`; and Marked Reversal: no model ≥ SOLVED;
  the transformer no better on either.
* ``flare.cf`` — Unmarked Reversal: no model ≥ SOLVED; the transformer no better.
* ``flare.cs`` — Marked Copy: no model ≥ SOLVED; the transformer no better.

A verdict needs trained models: on every language a model (an RNN/LSTM for a learnable one)
must fit its training lengths (the best run's accuracy on fresh strings of lengths 0–16 ≥
:data:`FIT`); otherwise the claim is not applicable at that budget (a requirement), since an
untrained model fails for no reason of expressivity. Published numbers: the per-cell scores of their Table 2 were not available
(``train/data/butoi2025.json``: null); their Figure 1 says which cells are not perfect, and the
checks encode exactly that statement.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import figures
from .claims import Check, ClaimSpec, Context, Measurement

# mean accuracy on the test lengths counted as length generalization at these budgets; above what the
# marked languages' shape alone gives (one marker, in the middle: 0.92 on these batches, docs/flare.md)
SOLVED = 0.95
SLACK = 0.05  # the transformer may be this much above the best RNN/LSTM and still count as no better
FIT = 0.90  # accuracy on the training lengths a model needs before its failure beyond them means anything
MODELS = ("rnn", "lstm", "transformer")
RECURRENT = ("rnn", "lstm")


@dataclass(frozen=True)
class Budget:
    steps: int
    seeds: tuple[int, ...]
    test_lengths: tuple[int, ...]
    train_lengths: tuple[int, int] = (0, 16)
    eval_batch: int = 64
    d_model: int = 32  # RNN/LSTM hidden units; the transformer: 2 blocks × 2 heads of this width
    lr: float = 3e-3
    batch_size: int = 32


_BUDGETS = {
    # odd and even lengths: the marked languages have odd lengths only, the reversals even ones
    "test": Budget(3, (0,), (9, 10, 11, 12), (0, 8), 8, 8),
    "quick": Budget(400, (0,), (20, 21, 32, 33, 48, 49)),
    "standard": Budget(800, (0, 1), (20, 21, 32, 33, 48, 49, 64, 65)),
    # their protocol: lengths 0–40 / 0–500 and their sizes (the preset's), 10 000 steps, 5 seeds
    "full": Budget(10_000, (0, 1, 2, 3, 4), tuple(range(41, 501, 23)), (0, 40), 64, 0, 1e-3),
}
# level → (the languages measured, which of them their Figure 1 calls learnable)
LEVELS = {
    "regular": (("flare.parity",), ("flare.parity",)),
    "dcf": (("flare.majority", "flare.marked_reversal"), ("flare.majority",)),
    "cf": (("flare.unmarked_reversal",), ()),
    "cs": (("flare.marked_copy",), ()),
}
HAHN_LANGUAGES = ("flare.parity",)  # where Lemma 5 speaks (every flipped bit flips the label)


def _config(task: str, model: str, seed: int, b: Budget):
    from ..train import preset

    shape = {}
    if b.d_model:  # the CPU budgets: small models; full: the preset's sizes (theirs)
        shape = ({"layers": 2, "heads": 2, "d_model": b.d_model, "d_mlp": 4 * b.d_model} if model == "transformer"
                 else {"layers": 1, "d_model": b.d_model, "heads": 1})
    return preset("flare", task, model=model, steps=b.steps, lr=b.lr, batch_size=b.batch_size,
                  train_lengths=b.train_lengths, test_lengths=b.test_lengths, eval_batch=b.eval_batch, seed=seed,
                  **shape)


def train_unit(task: str, model: str, seed: int, size: str):
    """One work unit: train ``model`` on ``task`` (this budget), evaluate it on the test lengths
    and on its training range; for a transformer on a language of :data:`HAHN_LANGUAGES`, also
    Lemma 5 from its weights (``extra["lemma5"]``). The RunResult."""
    import tempfile
    from dataclasses import replace
    from pathlib import Path

    import torch

    from ..runs import report_progress
    from ..train import train_run

    b = _BUDGETS[size]
    torch.set_num_threads(1)
    cfg = _config(task, model, seed, b)
    on_step = lambda s, _l: report_progress(s / b.steps) if s % 50 == 0 else None  # noqa: E731
    if model != "transformer" or task not in HAHN_LANGUAGES:
        return train_run(cfg, on_step=on_step, fit=True)
    with tempfile.TemporaryDirectory() as d:
        result = train_run(cfg, d, on_step=on_step, fit=True)
        return replace(result, extra=result.extra | {"lemma5": _lemma5(Path(d) / "model.safetensors", b)})


def _lemma5(checkpoint, b: Budget) -> dict:
    """Hahn's Lemma 5 for a trained transformer at the longest test length: the bound on the
    output change one flipped bit can cause, from the weights, and the largest change measured."""
    from ..limits import flip_sensitivity
    from ..limits.trained import load_trained

    encoder = load_trained(checkpoint)
    n = max(b.test_lengths)
    report = flip_sensitivity(encoder, encoder.language, lengths=(n,), n_strings=4)
    last = [r for r in report.rows if r.output_change is not None][-1]
    return {"n": n, "applicable": report.applicable, "reason": report.reason,
            "output_bound": last.output_bound, "output_change": last.output_change}


def _units(level: str):
    def units(ctx: Context) -> list:
        from ..runs import Unit

        b = ctx.pick(_BUDGETS)
        return [Unit(f"{task.removeprefix('flare.')}/{m}/s{ctx.seed + s}", train_unit, (task, m, ctx.seed + s, ctx.size))
                for task in LEVELS[level][0] for m in MODELS for s in b.seeds]
    return units


def _runs(ctx: Context, task: str, model: str, b: Budget) -> list[dict]:
    """Per seed: score (mean accuracy over the test lengths), per-length accuracy, fit, lemma5."""
    out = []
    for s in b.seeds:
        key = f"{task.removeprefix('flare.')}/{model}/s{ctx.seed + s}"
        if key in ctx.units:
            value = ctx.units[key]
        else:
            r = train_unit(task, model, ctx.seed + s, ctx.size)
            value = {"metrics": list(r.metrics), **r.extra}
        acc = {int(m["length"]): float(m["accuracy"]) for m in value["metrics"]}
        fitted = value.get("train_range", [])
        out.append({"seed": s, "score": float(np.mean(list(acc.values()))), "accuracy": acc,
                    "fit": float(np.mean([m["accuracy"] for m in fitted])) if fitted else float("nan"),
                    "lemma5": value.get("lemma5")})
    return out


def _best(runs: list[dict]) -> dict:
    return max(runs, key=lambda r: -math.inf if math.isnan(r["score"]) else r["score"])


def _plot(results: dict, b: Budget, ok: bool, title: str) -> bytes:
    fig, axes = figures.new(len(results), width=4.4, height=3.6)
    for ax, (task, by_model) in zip(np.atleast_1d(axes), results.items()):
        for model, style in zip(MODELS, ("s-", "o-", "^-")):
            best = _best(by_model[model])
            n = sorted(best["accuracy"])
            ax.plot(n, [best["accuracy"][x] for x in n], style, label=f"{model}: {best['score']:.2f}")
        ax.axvspan(*b.train_lengths, color="gray", alpha=0.15, label="training lengths")
        ax.axhline(0.5, color="k", lw=0.6, ls=":")
        ax.set_ylim(-0.02, 1.05)
        ax.set_xlabel("test length n")
        ax.set_ylabel("recognition accuracy (best run)")
        ax.legend(fontsize=7)
        figures.status_title(ax, f"{title}: {task.removeprefix('flare.')}", ok)
    return figures.png(fig)


def _measure(level: str, ctx: Context) -> Measurement:
    b = ctx.pick(_BUDGETS)
    tasks, learnable = LEVELS[level]
    results = {t: {m: _runs(ctx, t, m, b) for m in MODELS} for t in tasks}
    score = {t: {m: _best(results[t][m])["score"] for m in MODELS} for t in tasks}
    fit = {t: {m: _best(results[t][m])["fit"] for m in MODELS} for t in tasks}
    checks, requires, parts = [], [], []
    lo, hi = b.train_lengths
    for t in tasks:
        name = t.removeprefix("flare.")
        rec = max(score[t][m] for m in RECURRENT)
        if t in learnable:
            requires.append(Check(f"{name}: best RNN/LSTM on its training lengths {lo}–{hi}, fitted at ≥ {FIT:g}",
                                  max(fit[t][m] for m in RECURRENT), ">=", FIT))
            checks.append(Check(f"{name}: best RNN/LSTM score (learnable: ≥ {SOLVED:g})", rec, ">=", SOLVED))
        else:
            requires.append(Check(f"{name}: best model on its training lengths {lo}–{hi}, fitted at ≥ {FIT:g}",
                                  max(fit[t].values()), ">=", FIT))
            checks.append(Check(f"{name}: best score of any model (not learnable: < {SOLVED:g})",
                                max(score[t].values()), "<=", SOLVED - 1e-9))
        checks.append(Check(f"{name}: transformer − best RNN/LSTM (no better: ≤ {SLACK:g})",
                            score[t]["transformer"] - rec, "<=", SLACK))
        parts.append(f"{name}: " + ", ".join(f"{m} {score[t][m]:.2f}" for m in MODELS)
                     + f" (fit {', '.join(f'{fit[t][m]:.2f}' for m in MODELS)})")
    hahn = {t: _best(results[t]["transformer"])["lemma5"] for t in tasks if t in HAHN_LANGUAGES}
    hahn_text = "".join(
        f"; Hahn's Lemma 5 for the trained transformer at n = {h['n']}: one flipped bit moves its output by "
        f"≤ {h['output_bound']:.3g} (measured {h['output_change']:.3g}; every flip flips the label)"
        + ("" if h["output_bound"] is None or h["output_bound"] < 1 else " — vacuous at this n")
        for h in hahn.values() if h and h.get("applicable"))
    ok = all(c.ok() for c in (*requires, *checks))
    return Measurement(
        checks=tuple(checks), requires=tuple(requires),
        summary=(f"score = mean accuracy on n = {min(b.test_lengths)}…{max(b.test_lengths)} after training on "
                 f"{lo}–{hi} (best of {len(b.seeds)} seed(s)): " + "; ".join(parts) + hahn_text),
        numbers={"tasks": list(tasks), "learnable": list(learnable), "score": score, "fit": fit, "runs": results,
                 "lemma5": hahn, "train_lengths": [lo, hi], "test_lengths": list(b.test_lengths), "steps": b.steps,
                 "seeds": list(b.seeds)},
        figure=_plot(results, b, ok, f"FLaRe {level}"),
        notes=("published: Butoi et al. 2025, Figure 1 and Table 2 (arXiv 2411.07107): regular languages and "
               "Majority are where the architectures reach perfect length generalization; their scores are "
               "the mean and max test accuracy over 10 runs of 64 000-parameter models (ours: small models, "
               "CPU minutes; the transformer is causal, as theirs)"),
    )


def regular(ctx: Context) -> Measurement:
    return _measure("regular", ctx)


def dcf(ctx: Context) -> Measurement:
    return _measure("dcf", ctx)


def cf(ctx: Context) -> Measurement:
    return _measure("cf", ctx)


def cs(ctx: Context) -> Measurement:
    return _measure("cs", ctx)


_SOURCE = "Butoi et al. 2025 (ICLR), Figure 1, Table 2; arXiv 2411.07107"
_READ = ("Recognition accuracy vs test length of the RNN, LSTM and causal transformer (best seed) per "
         "language, trained on the shaded lengths with FLaRe's data (half members, half FLaRe negatives — "
         "uniform strings and perturbed members — at every length); the legend gives each model's score "
         "(mean accuracy over the test lengths). A learnable language stays near 1 for the RNN/LSTM; "
         "elsewhere every model falls toward 0.5 beyond its training range, the transformer never above "
         "the RNN/LSTM (`docs/flare.md`).")
_MEASURE = {"regular": regular, "dcf": dcf, "cf": cf, "cs": cs}
_TITLES = {
    "regular": "FLaRe, regular level (PARITY): the RNN/LSTM recognize it at every tested length, the transformer "
               "is no better",
    "dcf": "FLaRe, deterministic context-free level: Majority is learnable, Marked Reversal is not; the "
           "transformer is no better than the RNN/LSTM",
    "cf": "FLaRe, context-free level (Unmarked Reversal): no recognizer generalizes in length; the transformer "
          "is no better",
    "cs": "FLaRe, context-sensitive level (Marked Copy): no recognizer generalizes in length; the transformer "
          "is no better",
}


def _spec(level: str, budget_s: dict[str, float]) -> ClaimSpec:
    return ClaimSpec(
        id=f"flare.{level}", title=_TITLES[level], source=_SOURCE,
        bound=(f"learnable (regular, Majority): best RNN/LSTM score ≥ {SOLVED:g}; otherwise every model < "
               f"{SOLVED:g}; transformer ≤ best RNN/LSTM + {SLACK:g} (judged when a model fits its training "
               f"lengths, ≥ {FIT:g})"),
        bound_value=SOLVED, run=_MEASURE[level],
        how_to_read=_READ, budget_s=budget_s, units=_units(level))


SPECS = [
    _spec("regular", {"test": 10, "quick": 25, "standard": 70, "full": 9000}),
    _spec("dcf", {"test": 10, "quick": 40, "standard": 110, "full": 18000}),
    _spec("cf", {"test": 10, "quick": 20, "standard": 50, "full": 9000}),
    _spec("cs", {"test": 10, "quick": 20, "standard": 50, "full": 9000}),
]
