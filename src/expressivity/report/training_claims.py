"""Trained transformers vs LSTMs at growing length (Delétang et al. 2023 protocol, small).

Hahn (2020) proves that no fixed-size transformer decides PARITY (or 2DYCK) at every length;
Delétang et al. (2023) observe it in training: trained on short strings and tested on longer
ones, transformers sit near chance on PARITY while LSTMs (recurrent, finite-state capable)
solve it. We train both with the project's harness (``expressivity.train``) on lengths
[1, N_train] and test each length up to several times N_train.

* ``train.parity``: LSTM mean test accuracy ≥ 0.9; transformer mean test accuracy ≤ 0.7
  (chance is 0.5).
* ``train.dyck2``: Dyck-2 recognition; the transformer's accuracy beyond 2·N_train is ≤ 0.75.
  The LSTM is shown for contrast.

Both claims say a transformer *fails to extrapolate*, which presumes it learned the training
range: each unit also evaluates its model on fresh strings of every training length
(``train_run(fit=True)``), and the claim is judged on the transformer's seeds whose accuracy
there is ≥ :data:`FIT`. With none, the requirement (:func:`.claims.status_of`) fails and the
claim is *not applicable* at that budget, the measured fit named — not violated, not held.

Measured (seed 0, one core): PARITY's transformer fits 1–10 at 99.7 % after 2000 steps and
1–20 at 97.3 % after 8000 (2 blocks × 4 heads, d_model 64, lr 1e-3; :data:`_TRANSFORMER`),
where the LSTM's budget (d_model 32, lr 3e-3, 2000 steps) gave 61.5 %. That 1–20 fit sat on the
edge: on another machine (stop 29's --standard run) the same budget fitted 81.3 / 93.8 / 89.1 %
(seeds 0–2) and the claim was not applicable; at lr 5e-4 (:data:`_PARITY_STANDARD_LR`) the three
seeds fit 96.4 / 97.9 / 99.9 % after 8000 steps (83–86 CPU-s each) and score 0.50–0.52 beyond. Dyck-2 recognition
(half members, half near-miss non-members) is not fitted ≥ 0.95 by a bidirectional transformer
on a CPU (2–24: 86.7 % after 2000 steps, 93.2 % after 6000 at d_model 64, 96 CPU-s; 2–16:
78.5–92.6 % up to 3000 steps; 2–12 after 4000 steps: 93.8 %). With causal attention (each
position reads only its prefix, as a left-to-right recogniser does; same blocks, width, lr)
it is: 2–16 at 98.0 / 99.6 % (seeds 0 / 1) after 3000 steps, 37 CPU-s; 2–24 at 97.3 / 95.6 /
97.7 % (seeds 0–2) after 4000 steps, 53 CPU-s each. Beyond 2·N_train the 2–24 models sit at
0.50–0.55 (the claim holds at standard). The 2–16 models (quick) differ by seed: seed 0 kept
0.81 at n = 34–90 in one build (0.79 on 128 strings per length; 0.74 after 4000 steps), 0.73 in
the next (32 strings per length), 0.77 alone in stop 38's (64) — around the bound 0.75, where
round-off decides a one-seed verdict. Over six seeds (trained together, 64 strings per length)
they score 0.67, 0.50, 0.65, 0.57, 0.50, 0.51 at n > 32 (mean 0.57) and fit 97.7–99.4 %: seed 0
is the outlier. So quick trains two seeds (0, 1), tests 64 strings per length, and names each
seed's score beside the mean (stop 38's quick report: 0.64, seeds 0.77 and 0.50). PARITY's
quick transformer also trains seeds 0 and 1, so that one seed missing the fit does not leave the
claim without a verdict, and 3000 steps instead of 2000: trained together seeds 0–3 fit
97.8–99.7 % after 2000 steps, but alone seed 1 fit 92.5 % (97.2 / 92.5 / 99.4 / 99.7 % for
seeds 0–3); after 3000 steps alone 100 / 99.7 / 99.4 / 97.5 %, scoring 0.50–0.57 beyond n = 10
(29–32 s a run on one core, against 16–20 s).
The Dyck-2 claim takes 72 s at quick (two seeds, stop 38; 85 s with one before) and 184 s at
standard (unit seconds, stop 38; 415 s on 2 shared cores before); ``full`` keeps the
bidirectional transformer (not measured).
"""

from __future__ import annotations

import numpy as np

from . import figures
from .claims import Check, ClaimSpec, Context, Measurement

_SIZES = {
    # train lengths, test lengths, steps, seeds, eval strings per length
    "parity": {
        "test": ((1, 6), (8, 16), 40, (0,), 8),
        "quick": ((1, 10), tuple(range(11, 101, 8)), 700, (0, 1), 32),
        "standard": ((1, 20), tuple(range(21, 201, 12)), 2000, (0, 1, 2), 64),
        "full": ((1, 40), tuple(range(41, 501, 23)), 5000, (0, 1, 2), 64),
    },
    "dyck": {
        "test": ((2, 6), (4, 14, 20), 40, (0,), 8),
        "quick": ((2, 16), tuple(range(2, 97, 8)), 600, (0, 1), 64),
        "standard": ((2, 24), tuple(range(2, 201, 12)), 2000, (0, 1, 2), 64),
        "full": ((2, 40), tuple(range(2, 501, 22)), 5000, (0, 1, 2), 64),
    },
}
_MODELS = {
    "transformer": {"model": "transformer", "layers": 2, "heads": 2, "d_model": 32, "positional": "sinusoidal"},
    "lstm": {"model": "lstm", "layers": 1, "d_model": 32},
}
# the transformer's own budget where it needs more than the LSTM to fit its training lengths
# (≥ FIT): its steps, learning rate and width per task and size (else _SIZES' steps, lr 3e-3, _MODELS)
_WIDE = {"heads": 4, "d_model": 64, "lr": 1e-3}
# PARITY 1–20 at lr 1e-3 sits on the edge of the fit (the CPU's round-off moves it: 97.3 % on one machine,
# 81–94 % on another, stop 29); at 5e-4 every seed fits with margin, at the same cost (83–86 CPU-s a run)
_PARITY_STANDARD_LR = 5e-4
_TRANSFORMER: dict[str, dict[str, dict]] = {
    # measured, seed 0: 1–10 fitted at 99.7 % after 2000 steps; 1–20 at 97.3 % after 8000 (61.5 % after 2000, d_model 32);
    # 1–10, seeds 0–3 alone (stop 38): 97.2 / 92.5 / 99.4 / 99.7 % after 2000 steps, 100 / 99.7 / 99.4 / 97.5 % after 3000
    # at lr 1e-3 on one machine, 81.3 / 93.8 / 89.1 % (seeds 0–2) on another; at lr 5e-4 96.4 / 97.9 / 99.9 %
    "parity": {"quick": {**_WIDE, "steps": 3000}, "standard": {**_WIDE, "lr": _PARITY_STANDARD_LR, "steps": 8000}},
    # measured: causal attention fits 2–16 at 98.0 / 99.6 % (seeds 0 / 1) after 3000 steps, 2–24 at 97.3 / 95.6 /
    # 97.7 % (seeds 0–2) after 4000; bidirectional 2–16 after 3000: 92.6 % (module docstring)
    "dyck": {"quick": {"causal": True, "steps": 3000}, "standard": {"causal": True, "steps": 4000}},
}
_PARAMS = {"parity": {}, "dyck": {"k": 2}}
FIT = 0.95  # accuracy on fresh strings of its training lengths the transformer needs for a verdict


def train_unit(task: str, model: str, seed: int, size: str):
    """One work unit: train ``model`` on ``task`` with this budget's sizes; the RunResult."""
    import torch

    from ..runs import report_progress
    from ..train import train_run

    torch.set_num_threads(1)
    cfg = unit_config(task, model, seed, size)
    return train_run(cfg, on_step=lambda s, _l: report_progress(s / cfg.steps) if s % 50 == 0 else None, fit=True)


def unit_config(task: str, model: str, seed: int, size: str):
    """The RunConfig of :func:`train_unit` (``reproduce`` groups compatible units)."""
    from ..train import preset

    train_lengths, test_lengths, steps, _seeds, eval_batch = _SIZES[task][size]
    shape = {"steps": steps, "lr": 3e-3, **_MODELS[model]}
    if model == "transformer":
        shape |= _TRANSFORMER[task].get(size, {})
    return preset(
        "quick", task, task_params=_PARAMS[task], batch_size=64,
        train_lengths=train_lengths, test_lengths=test_lengths, eval_batch=eval_batch, seed=seed, **shape,
    )


train_unit.run_config, train_unit.fit = unit_config, True  # groupable by reproduce (fit: the transformer's fit rule)


def _units(task: str):
    """The claim's work units: one training run per model × seed (each tests every length)."""
    def units(ctx: Context) -> list:
        from ..runs import Unit

        seeds = ctx.pick(_SIZES[task])[3]
        return [Unit(f"{name}/s{seed}", train_unit, (task, name, ctx.seed + seed, ctx.size))
                for name in _MODELS for seed in seeds]
    return units


def _rows(ctx: Context, task: str):
    """Rows per (model, seed, length) from the finished units in ``ctx.units``, and each
    model's fit: its accuracy on fresh strings of the training lengths (mean over lengths; NaN
    for a unit without them), by seed. The transformer is judged on its seeds that fit (≥
    :data:`FIT`) when any does — its rows and ``fit`` are theirs — else on all of them, whose
    mean fit then fails the requirement."""
    train_lengths, _tests, steps, seeds, _ = ctx.pick(_SIZES[task])
    rows, by_seed = [], {}
    for name in _MODELS:
        by_seed[name] = {}
        for seed in seeds:
            unit = ctx.units[f"{name}/s{ctx.seed + seed}"]
            for m in unit["metrics"]:
                rows.append({"model": name, "seed": seed, "length": m["length"], "accuracy": m["accuracy"],
                             "ce_bits": m.get("ce_bits")})
            fitted = [m["accuracy"] for m in unit.get("train_range") or ()]
            by_seed[name][seed] = float(np.mean(fitted)) if fitted else float("nan")
    judged = [s for s in seeds if by_seed["transformer"][s] >= FIT] or list(seeds)
    rows = [r for r in rows if r["model"] != "transformer" or r["seed"] in judged]
    fit = {name: float(np.mean([f for s, f in by_seed[name].items() if name != "transformer" or s in judged]))
           for name in _MODELS}
    return rows, train_lengths, steps, seeds, {"fit": fit, "fit_by_seed": by_seed, "judged_seeds": judged}


def fit_requirement(transformer_fit: float, train_lengths: tuple[int, int]) -> Check:
    """The condition for a verdict on a transformer that "fails to extrapolate": it fitted its
    training lengths, accuracy ≥ :data:`FIT` on fresh strings of them (mean over the seeds
    judged, :func:`_rows`)."""
    lo, hi = train_lengths
    return Check(f"transformer accuracy on fresh strings of its training lengths {lo}–{hi} (mean over its "
                 f"seeds that fit, if any), fitted at ≥ {FIT:g}", transformer_fit, ">=", FIT)


def _seeds_txt(f: dict, seeds) -> str:
    judged = f["judged_seeds"]
    return "" if len(judged) == len(seeds) else f" ({len(judged)} of {len(seeds)} transformer seeds fit)"


def _by_seed_txt(rows) -> str:
    """The transformer's mean accuracy over ``rows`` per judged seed, where there are several: a
    mean near the bound can hide one seed that extrapolates."""
    seeds = sorted({r["seed"] for r in rows if r["model"] == "transformer"})
    if len(seeds) < 2:
        return ""
    accs = [np.mean([r["accuracy"] for r in rows if r["model"] == "transformer" and r["seed"] == s]) for s in seeds]
    return " (seeds " + ", ".join(f"{s}: {a:.2f}" for s, a in zip(seeds, accs)) + ")"


def _curves(rows, name):
    lengths = sorted({r["length"] for r in rows if r["model"] == name})
    acc = np.array([np.mean([r["accuracy"] for r in rows if r["model"] == name and r["length"] == n])
                    for n in lengths])
    return np.array(lengths), acc


def _plot(rows, train_lengths, title, ok):
    fig, (ax,) = figures.new(1, width=6.2, height=3.8)
    for name, style in (("transformer", "o-"), ("lstm", "s-")):
        n, a = _curves(rows, name)
        ax.plot(n, a, style, label=name)
    ax.axvspan(train_lengths[0], train_lengths[1], color="gray", alpha=0.15, label="training lengths")
    ax.axhline(0.5, color="k", lw=0.8, ls=":", label="chance")
    ax.set_ylim(-0.02, 1.05)
    ax.set_xlabel("test length n")
    ax.set_ylabel("accuracy (mean over seeds)")
    figures.legend(ax, fontsize=8)
    figures.status_title(ax, title, ok)
    return figures.png(fig)


def parity(ctx: Context) -> Measurement:
    rows, tl, steps, seeds, f = _rows(ctx, "parity")
    fit = f["fit"]
    test = [r for r in rows if r["length"] > tl[1]]
    acc = {m: float(np.mean([r["accuracy"] for r in test if r["model"] == m])) for m in ("transformer", "lstm")}
    checks = (
        Check("LSTM mean accuracy on test lengths", acc["lstm"], ">=", 0.9),
        Check("transformer mean accuracy on test lengths", acc["transformer"], "<=", 0.7),
    )
    requires = (fit_requirement(fit["transformer"], tl),)
    fig = _plot(rows, tl, "PARITY: accuracy vs length", all(c.ok() for c in (*requires, *checks)))
    return Measurement(
        checks=checks, requires=requires,
        summary=(f"mean test accuracy (n = {tl[1] + 1}…{max(r['length'] for r in rows)}): "
                 f"transformer {acc['transformer']:.2f}{_by_seed_txt(test)}, LSTM {acc['lstm']:.2f}; on fresh strings of the "
                 f"training lengths: transformer {fit['transformer']:.2f}, LSTM {fit['lstm']:.2f}"
                 + _seeds_txt(f, seeds)),
        numbers={"rows": rows, "train_lengths": list(tl), "steps": steps, "seeds": list(seeds), "mean": acc, **f},
        figure=fig,
    )


def dyck2(ctx: Context) -> Measurement:
    rows, tl, steps, seeds, f = _rows(ctx, "dyck")
    fit = f["fit"]
    far = [r for r in rows if r["length"] > 2 * tl[1]]
    inside = [r for r in rows if r["length"] <= tl[1]]
    acc = {m: float(np.mean([r["accuracy"] for r in far if r["model"] == m])) for m in ("transformer", "lstm")}
    acc_in = {m: float(np.mean([r["accuracy"] for r in inside if r["model"] == m]))
              for m in ("transformer", "lstm") if any(r["model"] == m for r in inside)}
    checks = (Check(f"transformer mean accuracy at n > {2 * tl[1]}", acc["transformer"], "<=", 0.75),)
    requires = (fit_requirement(fit["transformer"], tl),)
    fig = _plot(rows, tl, "Dyck-2 recognition: accuracy vs length", all(c.ok() for c in (*requires, *checks)))
    inside_txt = (f"; on fresh strings of the training lengths: transformer {fit['transformer']:.2f}, "
                  f"LSTM {fit['lstm']:.2f}" + _seeds_txt(f, seeds))
    return Measurement(
        checks=checks, requires=requires,
        summary=(f"mean accuracy at n > {2 * tl[1]}: transformer {acc['transformer']:.2f}{_by_seed_txt(far)}, "
                 f"LSTM {acc['lstm']:.2f}{inside_txt}"),
        numbers={"rows": rows, "train_lengths": list(tl), "steps": steps, "seeds": list(seeds),
                 "far": acc, "inside": acc_in, **f},
        figure=fig,
    )


SPECS = [
    ClaimSpec(
        id="train.parity",
        title="Trained transformers stay near chance on PARITY beyond training lengths; LSTMs solve it",
        source="Hahn 2020, Thm 1 & Lemma 5; Delétang et al. 2023 (protocol)",
        bound=(r"transformer mean test accuracy $\le 0.7$ (chance 0.5); LSTM $\ge 0.9$ (judged when the transformer "
               r"fits its training lengths, $\ge 0.95$)"),
        bound_value=0.7,
        run=parity,
        units=_units("parity"),
        how_to_read=(
            "Accuracy vs test length; the shaded band is the training range, the dotted line chance. "
            "The transformer stays at chance beyond it (no length-general solution is found), while the "
            "LSTM, a finite-state machine in disguise, solves PARITY at every length."
        ),
        budget_s={"test": 15, "quick": 90, "standard": 380, "full": 1800},
    ),
    ClaimSpec(
        id="train.dyck2",
        title="Trained transformers do not extrapolate Dyck-2 recognition to longer strings",
        source="Hahn 2020, §5 (2DYCK); Delétang et al. 2023 (protocol)",
        bound=(r"transformer accuracy at $n > 2 N_{\mathrm{train}}$ $\le 0.75$ (judged when it fits its training "
               r"lengths, $\ge 0.95$)"),
        bound_value=0.75,
        run=dyck2,
        units=_units("dyck"),
        how_to_read=(
            "Accuracy of recognising balanced two-bracket strings (balanced classes, negatives include "
            "near-misses) vs test length; the shaded band is the training range, the dotted line "
            "chance. Inside it both models do well; the claim is that far beyond it the transformer falls to "
            "chance while the LSTM degrades more slowly (it has no stack either)."
        ),
        budget_s={"test": 15, "quick": 90, "standard": 420, "full": 3600},  # measured: quick 85 s, standard 415 s
    ),
]
