"""Our scores beside a published table (``expressivity results --compare deletang``).

The score is the paper's (:mod:`.published`): for one run, the mean accuracy over its test
lengths in 41–500 (:func:`.protocols.protocol_score`, bin ``accuracy_41_500``) in percent;
for a (task, model) cell, the best such score over every recorded run of that task and model
under the ``deletang`` preset — the max over seeds (and over whatever else the sweep varied,
e.g. the learning rate), as :func:`.protocols.best_of_seeds` picks; the Transformer cell is
the best over its position encodings, as in the paper, and each encoding also gets its own
row. A cell nobody ran has ``ours = None``; a published number no source gave has
``published = None``.

``compare(rows, name) -> Comparison`` (``rows``: :meth:`ResultStore.rows`);
``plot_comparison(comparison, path)`` writes bars, ours beside the paper's, per model.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..listing import Listing
from .protocols import PROTOCOLS, protocol_score
from .published import PublishedTable, published

PROTOCOL = "deletang"
_LO, _HI = PROTOCOLS[PROTOCOL].bins[0]  # 41, 500


@dataclass(frozen=True)
class Cell:
    """One (task, model) entry: our best score and the published one, in percent."""

    task: str
    level: str  # the paper's level code (R | DCF | CS)
    model: str  # the paper's column: rnn | stack_rnn | tape_rnn | transformer | lstm
    positional: str  # the encoding of a per-encoding transformer row; "best" for the transformer cell; "" otherwise
    ours: float | None  # best score over our runs
    runs: int  # how many of our runs the best is taken over
    best: str  # the best run: "seed s, lr …" (and the encoding for the transformer cell)
    published: float | None

    @property
    def difference(self) -> float | None:
        """ours − published (percentage points), when both exist."""
        return None if self.ours is None or self.published is None else self.ours - self.published


@dataclass(frozen=True)
class Comparison:
    table: PublishedTable
    cells: tuple[Cell, ...]  # task × model, in the paper's row and column order
    encodings: tuple[Cell, ...]  # transformer per position encoding we ran (published: the paper's best)

    def cell(self, task: str, model: str) -> Cell:
        for c in self.cells:
            if c.task == task and c.model == model:
                return c
        raise KeyError(f"no cell for {task} × {model}")


def run_scores(rows: list[dict]) -> list[dict]:
    """One entry per recorded ``deletang`` run with rows in 41–500: task, model, positional,
    seed, lr, run_id and score (percent)."""
    by_run: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        if r["config"].get("protocol") == PROTOCOL and r["accuracy"] is not None and _LO <= r["length"] <= _HI:
            by_run[r["run_id"]].append(r)
    out = []
    for run_id, rs in by_run.items():
        cfg = rs[0]["config"]
        score = protocol_score(rs, PROTOCOL)[f"accuracy_{_LO}_{_HI}"]
        out.append({"run_id": run_id, "task": cfg["task"], "model": cfg["model"], "positional": cfg["positional"],
                    "seed": cfg["seed"], "lr": cfg["lr"], "score": 100.0 * score})
    return out


def _best(task: str, level: str, model: str, positional: str, runs: list[dict], pub: float | None) -> Cell:
    scored = [r for r in runs if math.isfinite(r["score"])]
    if not scored:
        return Cell(task, level, model, positional, None, len(runs), "", pub)
    b = max(scored, key=lambda r: (r["score"], -r["seed"]))
    enc = f"{b['positional']}, " if model == "transformer" and positional == "best" else ""
    return Cell(task, level, model, positional, b["score"], len(runs), f"{enc}seed {b['seed']}, lr {b['lr']:g}", pub)


def compare(rows: list[dict], name: str = "deletang") -> Comparison:
    """Our best score per (task, model) of the published table ``name`` beside its number."""
    table = published(name)
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in run_scores(rows):
        groups[(r["task"], r["model"])].append(r)
    cells, encodings = [], []
    for task, t in table.tasks.items():
        for model in table.models:
            runs = groups.get((task, model), [])
            pub = t.scores.get(model)
            cells.append(_best(task, t.level, model, "best" if model == "transformer" else "", runs, pub))
            if model == "transformer":
                for enc in sorted({r["positional"] for r in runs}):
                    encodings.append(_best(task, t.level, model, enc, [r for r in runs if r["positional"] == enc], pub))
    return Comparison(table, tuple(cells), tuple(encodings))


def plot_comparison(comparison: Comparison, path: str | Path) -> None:
    """One panel per model: per task, our best score (filled) beside the published (hatched)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    table = comparison.table
    tasks = list(table.tasks)
    fig, axes = plt.subplots(len(table.models), 1, figsize=(12, 2.2 * len(table.models)), sharex=True)
    x = np.arange(len(tasks))
    for ax, model in zip(np.atleast_1d(axes), table.models):
        cells = [comparison.cell(t, model) for t in tasks]
        ours = [np.nan if c.ours is None else c.ours for c in cells]
        pub = [np.nan if c.published is None else c.published for c in cells]
        ax.bar(x - 0.2, ours, 0.4, label="ours (best run)", color="tab:blue")
        ax.bar(x + 0.2, pub, 0.4, label=f"published ({table.table})", color="white", edgecolor="tab:gray",
               hatch="//")
        for i, c in enumerate(cells):
            if c.published is None:
                ax.text(x[i] + 0.2, 2, "n/a", ha="center", va="bottom", fontsize=6, rotation=90, color="gray")
            if c.ours is None:
                ax.text(x[i] - 0.2, 2, "not run", ha="center", va="bottom", fontsize=6, rotation=90, color="gray")
        ax.axhline(90, color="k", lw=0.6, ls=":")
        ax.set_ylim(0, 105)
        ax.set_ylabel(f"{model}\nscore (%)", fontsize=8)
    axes = np.atleast_1d(axes)
    axes[0].legend(fontsize=7, loc="lower right")
    axes[0].set_title(f"accuracy on lengths {_LO}–{_HI}, best run, beside {table.citation(short=True)}", fontsize=9)
    axes[-1].set_xticks(x, [f"{t} ({table.tasks[t].level})" for t in tasks], rotation=40, ha="right", fontsize=7)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


@dataclass(frozen=True)
class ComparisonListing(Listing):
    """``results --compare`` as text (a :class:`~expressivity.listing.Listing`: rows, ``None``
    a section break between levels); ``records`` / ``record_columns`` for --json / --csv;
    ``plot(path)`` draws the figure."""

    records: tuple[dict, ...] = ()
    record_columns: tuple[str, ...] = ()
    plot: Callable[[Path], None] | None = None


def _sections(cells, row_of) -> list:
    """The rows of ``cells`` (each one or more from ``row_of``), a ``None`` between levels."""
    out, level = [], None
    for c in cells:
        if level is not None and c.level != level:
            out.append(None)
        level = c.level
        out.extend(row_of(c))
    return out


def _unmeasured(hidden: int, total: int, show_all: bool) -> list[str]:
    return ([f"{hidden} of {total} published cells have no run of ours (not shown; --all shows them)"]
            if hidden and not show_all else [])


def comparison_listing(rows: list[dict], name: str, *, show_all: bool = False, option: str = "--compare") -> ComparisonListing:
    """Our best scores beside the published table ``name`` (deletang, flare or a table file)
    as a :class:`ComparisonListing`: only the cells we have runs for unless ``show_all``."""
    from .published import RecognizerTable

    if isinstance(published(name, option), RecognizerTable):
        return _recognizer_listing(rows, published(name, option), show_all)
    from dataclasses import asdict, fields

    comparison = compare(rows, name)
    paper = comparison.table
    cells = [c for c in comparison.cells if show_all or c.runs > 0]
    encodings = [e for e in comparison.encodings if show_all or e.runs > 0]
    extra: dict = {}
    for e in encodings:
        extra.setdefault(e.task, []).append(e)

    def pct(x):
        return "—" if x is None else f"{x:.1f}"

    def row_of(c):
        diff = "" if c.difference is None else f"{c.difference:+.1f}"
        yield (c.level, c.task, c.model, pct(c.ours), pct(c.published), diff, str(c.runs))
        if c.model == "transformer":
            for e in extra.get(c.task, []):
                yield ("", "", f"  └ {e.positional}", pct(e.ours), "", "", str(e.runs))

    missing = sum(c.published is None for c in cells)
    notes = [f"paper: {paper.paper}", *_unmeasured(len(comparison.cells) - len(cells), len(comparison.cells),
                                                   show_all)]
    if missing:
        notes.append(f"{missing} of {len(cells)} published cells shown are not available (—): {paper.missing}")
    return ComparisonListing(
        heading=f"best score (%) on lengths 41–500, ours beside {paper.citation(short=True)}",
        columns=("", "task", "model", "ours", "paper", "Δ", "n"), text=("", "task", "model"), no_wrap=(0, 1, 2),
        rows=tuple(_sections(cells, row_of)), notes=tuple(notes),
        records=tuple([asdict(c) | {"difference": c.difference} for c in cells]
                      + [asdict(e) | {"difference": None} for e in encodings]),
        record_columns=(*(f.name for f in fields(Cell)), "difference"),
        plot=lambda path: plot_comparison(comparison, path))


def _recognizer_listing(rows: list[dict], paper, show_all: bool) -> ComparisonListing:
    """``--compare flare``: our FLaRe runs beside Butoi et al.'s Table 2."""
    from dataclasses import asdict, fields

    from .flare_compare import RecognizerRow, compare_recognizers, plot_recognizers

    every = compare_recognizers(rows, paper)
    cells = [c for c in every if show_all or c.runs > 0]
    lengths = sorted({c.test_lengths for c in cells if c.test_lengths})

    def num(x):
        return "—" if x is None else f"{x:.2f}"

    def yes(x):
        return "—" if x is None else ("yes" if x else "no")

    def row_of(c):
        yield (f"{c.task.removeprefix('flare.')} ({c.level})", c.model, str(c.runs),
               f"{num(c.inductive_bias)} / {num(c.expressivity)}",
               f"{num(c.published_inductive_bias)} / {num(c.published_expressivity)}",
               f"{yes(c.perfect)} / {yes(c.published_perfect)}")

    missing = sum(c.published_inductive_bias is None for c in cells)
    notes = [f"paper: {paper.paper}", *_unmeasured(len(every) - len(cells), len(every), show_all)]
    if missing:
        notes.append(f"{missing} of {len(cells)} published scores shown are not available (—): {paper.missing}")
    return ComparisonListing(
        heading=(f"recognition accuracy, ours beside {paper.citation(short=True)}: mean over seeds of the best "
                 f"loss option / best run (test lengths {', '.join(lengths) or '—'}); perfect: best run ≥ 0.995 "
                 "(theirs: Figure 1)"),
        columns=("language", "model", "runs", "ours", "paper", "perfect"),
        text=("language", "model", "ours", "paper", "perfect"), no_wrap=(1, 2, 3, 4, 5),
        rows=tuple(_sections(cells, row_of)), notes=tuple(notes), records=tuple(asdict(c) for c in cells),
        record_columns=tuple(f.name for f in fields(RecognizerRow)),
        plot=lambda path: plot_recognizers(every, paper, path))  # a panel place for every cell
