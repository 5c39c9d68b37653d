"""The training view of recorded runs: one record per run, their CSV/JSON text, the plot.

A run's record holds its table cells — protocol scores (mean accuracy and per-bin
accuracy over the protocol's length bins), mean cross-entropy and excess over the optimum
(bits) over its test lengths — and its config; ``expressivity results`` prints, writes
(--json / --csv) and plots (--plot) them; :func:`read_results` checks its options first.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from ..listing import Listing, num
from .protocols import protocol_score

FAILED = ("error", "diverged", "timed_out")  # run statuses without scores

RUN_COLUMNS = ("run_id", "name", "status", "error", "task", "kind", "model", "seed", "protocol", "lengths",
               "min_length", "max_length", "mean_accuracy", "mean_ce_bits", "mean_excess_bits", "final_loss",
               "n_params", "duration", "config")  # the CSV header of --csv, also when no run is recorded


def mean(values: Iterable[float | None]) -> float | None:
    """The mean of the values that are not None (None when there are none)."""
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def run_records(rows: list[dict], runs: list[dict]) -> list[dict]:
    """One record per run of ``runs`` (the store's runs table) from ``rows`` (its per-length
    results): the table's cells and the run's config."""
    by_run = defaultdict(list)
    for r in rows:
        by_run[r["run_id"]].append(r)
    out = []
    for run in runs:
        cfg = json.loads(run["config"])
        rs = by_run.get(run["run_id"], [])
        failed = run["status"] in FAILED
        scores = {} if failed else protocol_score([r for r in rs if r["accuracy"] is not None], cfg["protocol"])
        out.append({"run_id": run["run_id"], "name": f"{cfg['task']} {cfg['kind']} {cfg['model']} s{cfg['seed']}",
                    "status": run["status"], "error": ((run["error"] or "").splitlines() or [None])[0],
                    "task": cfg["task"], "kind": cfg["kind"], "model": cfg["model"], "seed": cfg["seed"],
                    "protocol": cfg["protocol"], "lengths": len(rs),
                    "min_length": min((r["length"] for r in rs), default=None),
                    "max_length": max((r["length"] for r in rs), default=None),
                    "mean_accuracy": scores.get("mean_accuracy"), "scores": scores,
                    "mean_ce_bits": mean(r["ce_bits"] for r in rs), "mean_excess_bits": mean(r["excess_bits"] for r in rs),
                    "final_loss": run["final_loss"], "n_params": run["n_params"], "duration": run["duration"],
                    "config": cfg})
    return out


def read_results(db: Path, *, compare=None, as_json: bool = False, as_csv: bool = False, output=None,
                 show_all: bool = False, plot=None) -> tuple[list[dict], list[dict]]:
    """Check the options of ``expressivity results`` (the --plot and --output paths first), then
    read the store ``db``: (its per-length rows, its runs). An unknown --compare table fails
    before the store is read."""
    from ..fileio import check_output_path
    from . import ResultStore

    for path, name in ((plot, "--plot"), (output, "--output")):
        if path is not None:
            check_output_path(path, name)
    if as_json and as_csv:
        raise ValueError("--json and --csv exclude each other: give one")
    if output is not None and not (as_json or as_csv):
        raise ValueError("--output writes the --json or --csv records: give one of them (the table prints to "
                         "the terminal)")
    if show_all and compare is None:
        raise ValueError("--all applies to --compare (it shows the published cells we have no run for)")
    if compare is not None:
        from .published import published

        published(compare, "--compare")
    if db.is_dir():
        raise ValueError(f"--db {db} is a directory; give the results database file")
    if not db.is_file():
        raise ValueError(f"--db {db} does not exist (no results database there yet)")
    store = ResultStore(db, read_only=True)
    try:
        return store.rows(), store.runs()
    finally:
        store.close()


def runs_listing(records: list[dict], title: str) -> Listing:
    """One table row per run record: lengths, mean accuracy, per-bin accuracy, CE and excess
    (a failed run: its status, in red, and the first 50 characters of its error)."""
    rows, styles = [], []
    for i, r in enumerate(records):
        if r["status"] in FAILED:
            rows.append((r["name"], r["protocol"], "", r["status"], (r["error"] or "")[:50], "", ""))
            styles.append((i, 3, "red"))
            continue
        bins = " ".join(f"{k.removeprefix('accuracy_')}:{v:.2f}" for k, v in r["scores"].items()
                        if k != "mean_accuracy")
        rows.append((r["name"], r["protocol"], f"{r['min_length']}–{r['max_length']}" if r["lengths"] else "",
                     num(r["mean_accuracy"], 3), bins, num(r["mean_ce_bits"]), num(r["mean_excess_bits"])))
    return Listing(("run", "protocol", "lengths", "accuracy", "bins", "CE bits", "excess"), tuple(rows),
                   title=title, text=("run", "protocol", "bins"), styles=tuple(styles))


def write_records(records: list[dict], fmt: str, output: Path | None, columns=RUN_COLUMNS) -> None:
    """``records`` as JSON / CSV text (:func:`records_text`): to stdout, or atomically to ``output``."""
    import sys

    from ..fileio import make_dir, write_atomic

    text = records_text(records, fmt, columns)
    if output is None:
        sys.stdout.write(text)
        return
    make_dir(output.parent, "--output")
    write_atomic(output, lambda p: p.write_text(text, encoding="utf-8"))


def records_text(records: list[dict], fmt: str, columns: Iterable[str] = RUN_COLUMNS) -> str:
    """``records`` as JSON (``fmt="json"``) or CSV text. In CSV the per-bin scores are columns
    of their own (``accuracy_41_500`` …) after ``columns``, and the config is one JSON cell."""
    from ..runs.tables import to_csv, to_json

    if fmt == "json":
        return to_json(records)
    records = [{k: v for k, v in r.items() if k != "scores"} | {k: v for k, v in r.get("scores", {}).items()
                                                                if k != "mean_accuracy"} for r in records]
    more = [c for r in records for c in r if c not in columns]
    return to_csv(records, [*columns, *dict.fromkeys(more)])


def plot_results(rows: list[dict], path: Path) -> None:
    """Accuracy and cross-entropy vs length n, one line per (task, kind, model), mean over seeds;
    with FLaRe runs a third panel: the negatives' cross-entropy by edit distance / edits."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from .flare_compare import ce_by_edits

    groups: dict = defaultdict(lambda: defaultdict(list))
    for r in rows:
        groups[(r["task"], r["kind"], r["model"])][r["length"]].append(r)
    edits = ce_by_edits(rows)
    fig, axes = plt.subplots(1, 3 if edits else 2, figsize=(16 if edits else 11, 4))
    ax_acc, ax_ce = axes[0], axes[1]
    for (task, kind, model), by_len in sorted(groups.items()):
        lengths = sorted(by_len)
        acc = [mean(r["accuracy"] for r in by_len[n]) for n in lengths]
        ce = [mean(r["ce_bits"] for r in by_len[n]) for n in lengths]
        ax_acc.plot(lengths, [np.nan if a is None else a for a in acc], label=f"{task} {kind} {model}")
        ax_ce.plot(lengths, [np.nan if c is None else c for c in ce], label=f"{task} {kind} {model}")
    ax_acc.set(xlabel="length n", ylabel="accuracy", ylim=(-0.02, 1.02), title="accuracy vs length")
    ax_ce.set(xlabel="length n", ylabel="cross-entropy (bits / scored position)", title="cross-entropy vs length")
    ax_acc.legend(fontsize=7)
    if edits:
        _plot_edits(axes[2], edits)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _plot_edits(ax, edits: dict) -> None:
    for (task, model), by in sorted(edits.items()):
        for kind, style in (("distance", "o-"), ("edits", "x--")):
            if by.get(kind):
                ds = sorted(by[kind])
                label = f"{task} {model} ({'edit distance' if kind == 'distance' else 'edits; 0 = uniform'})"
                ax.plot(ds, [by[kind][d] for d in ds], style, label=label)
    ax.set(xlabel="edit distance to L / edits applied (6 = 6 or more)", ylabel="cross-entropy (bits / string)",
           title="negatives: cross-entropy vs edits")
    ax.legend(fontsize=6)
