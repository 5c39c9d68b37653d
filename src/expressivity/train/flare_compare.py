"""Our FLaRe runs beside Butoi et al.'s Table 2 (``expressivity results --compare flare``), and
cross-entropy against length and edit distance.

A run counts when it used the ``flare`` preset (``config.protocol == "flare"``) on a
``flare.*`` language; its score is its mean accuracy over its test lengths. Per (language,
model), as their Table 2 takes it:

- ``inductive_bias`` — for each loss option (``aux``: rec, +lm, +next_symbol, both) the mean
  score over its runs (seeds), then the best option;
- ``expressivity`` — the best score of any run;
- ``perfect`` — expressivity ≥ :data:`PERFECT` (their Figure 1 marks a perfect 1.00).

``compare_recognizers(rows, table) -> list[RecognizerRow]``; ``plot_recognizers(rows, path)``;
``ce_by_edits(rows)`` pools the per-length sums of :func:`.recognizers.edit_metrics` into
cross-entropy (bits) per edit distance and per edit count, per (task, model).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .published import RecognizerTable

PROTOCOL = "flare"
PERFECT = 0.995  # their 1.00 at two decimals


@dataclass(frozen=True)
class RecognizerRow:
    task: str
    level: str
    model: str
    runs: int
    test_lengths: str  # e.g. "0–500"
    inductive_bias: float | None  # ours: best loss option's mean score over seeds
    expressivity: float | None  # ours: best run
    best: str  # the loss option / run behind them
    perfect: bool | None
    published_inductive_bias: float | None
    published_expressivity: float | None
    published_perfect: bool | None


def _option(cfg: dict) -> str:
    aux = cfg.get("aux") or {}
    return "rec" + "".join(f"+{'lm' if a == 'lm' else 'ns'}" for a in sorted(aux))


def run_scores(rows: list[dict]) -> list[dict]:
    """One entry per recorded flare-preset run: task, model, option, seed, score, lengths."""
    by_run: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        if r["config"].get("protocol") == PROTOCOL and r["accuracy"] is not None:
            by_run[r["run_id"]].append(r)
    out = []
    for run_id, rs in by_run.items():
        cfg = rs[0]["config"]
        out.append({"run_id": run_id, "task": cfg["task"], "model": cfg["model"], "option": _option(cfg),
                    "seed": cfg["seed"], "score": float(np.mean([r["accuracy"] for r in rs])),
                    "lo": min(r["length"] for r in rs), "hi": max(r["length"] for r in rs)})
    return out


def compare_recognizers(rows: list[dict], table: RecognizerTable) -> list[RecognizerRow]:
    """Our scores per (language, model) of ``table`` beside its numbers (module docstring)."""
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in run_scores(rows):
        groups[(r["task"], r["model"])].append(r)
    out = []
    for task, cells in table.tasks.items():
        for model in table.models:
            runs = [r for r in groups.get((task, model), []) if math.isfinite(r["score"])]
            pub = cells[model]
            ib = ex = None
            best, perfect, lengths = "", None, ""
            if runs:
                by_opt: dict[str, list[float]] = defaultdict(list)
                for r in runs:
                    by_opt[r["option"]].append(r["score"])
                opt = max(by_opt, key=lambda o: np.mean(by_opt[o]))
                ib = float(np.mean(by_opt[opt]))
                top = max(runs, key=lambda r: (r["score"], -r["seed"]))
                ex, perfect = top["score"], top["score"] >= PERFECT
                best = f"mean: {opt}; max: {top['option']} seed {top['seed']}"
                lengths = f"{min(r['lo'] for r in runs)}–{max(r['hi'] for r in runs)}"
            out.append(RecognizerRow(task, table.task_levels[task], model, len(runs), lengths, ib, ex, best, perfect,
                                     pub.scores.get("inductive_bias"), pub.scores.get("expressivity"), pub.perfect))
    return out


def plot_recognizers(rows: list[RecognizerRow], table: RecognizerTable, path: str | Path) -> None:
    """One panel per model: per language, our mean (filled) and best run (outline) beside the
    published numbers (hatched; "n/a" where none), a ✓/✗ for their Figure 1's perfect."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tasks = list(table.tasks)
    fig, axes = plt.subplots(len(table.models), 1, figsize=(12, 2.3 * len(table.models)), sharex=True)
    x = np.arange(len(tasks))
    for ax, model in zip(np.atleast_1d(axes), table.models):
        cells = {r.task: r for r in rows if r.model == model}

        def val(attr, cells=cells):
            return [np.nan if getattr(cells[t], attr) is None else getattr(cells[t], attr) for t in tasks]
        ax.bar(x - 0.2, val("inductive_bias"), 0.4, color="tab:blue", label="ours: mean over seeds (best loss)")
        ax.scatter(x - 0.2, val("expressivity"), marker="_", s=120, color="k", label="ours: best run")
        ax.bar(x + 0.2, val("published_inductive_bias"), 0.4, color="white", edgecolor="tab:gray", hatch="//",
               label="published (inductive bias)")
        for i, t in enumerate(tasks):
            c = cells[t]
            if c.published_inductive_bias is None:
                ax.text(x[i] + 0.2, 0.02, "n/a", ha="center", va="bottom", fontsize=6, rotation=90, color="gray")
            if c.published_perfect is not None:
                ax.text(x[i] + 0.2, 1.02, "✓" if c.published_perfect else "✗", ha="center", fontsize=8,
                        color="tab:green" if c.published_perfect else "tab:red")
        ax.axhline(0.5, color="k", lw=0.6, ls=":")
        ax.set_ylim(0, 1.12)
        ax.set_ylabel(f"{model}\naccuracy", fontsize=8)
    axes = np.atleast_1d(axes)
    axes[0].legend(fontsize=6, loc="lower right", ncol=2)
    axes[0].set_title(f"recognition accuracy per language beside {table.citation(short=True)} "
                      "(✓/✗: their Figure 1, perfect length generalization)", fontsize=9)
    axes[-1].set_xticks(x, [f"{t.removeprefix('flare.')} ({table.task_levels[t]})" for t in tasks], rotation=40,
                        ha="right", fontsize=7)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


_EDIT_KEY = re.compile(r"^(edit|edits)_ce_(\d+)$")


def ce_by_edits(rows: list[dict]) -> dict[tuple[str, str], dict[str, dict[int, float]]]:
    """(task, model) → {"distance": {d: bits}, "edits": {k: bits}}: the negatives' mean
    cross-entropy by exact edit distance and by number of edits (0: uniform strings), pooled
    over test lengths and runs (the sums and counts of :func:`.recognizers.edit_metrics`)."""
    sums: dict = defaultdict(lambda: {"distance": defaultdict(lambda: [0.0, 0.0]),
                                      "edits": defaultdict(lambda: [0.0, 0.0])})
    for r in rows:
        for key, value in r.items():
            m = _EDIT_KEY.match(key)
            if m is None or value is None:
                continue
            kind = "distance" if m.group(1) == "edit" else "edits"
            count = r.get(f"{m.group(1)}_n_{m.group(2)}")
            cell = sums[(r["task"], r["model"])][kind][int(m.group(2))]
            cell[0] += value
            cell[1] += count or 0.0
    return {k: {kind: {d: s / n for d, (s, n) in sorted(v[kind].items()) if n} for kind in v}
            for k, v in sums.items()}
