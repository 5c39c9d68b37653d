"""CLI commands of the train area: ``train``, ``sweep``, ``results``."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from . import app
from ._common import console, user_errors

DEFAULT_DB = "runs/results.sqlite"


def _progress() -> Progress:
    return Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TextColumn("{task.fields[status]}"), TimeElapsedColumn(), TimeRemainingColumn(),
                    console=console)


def _parse_params(items: list[str]) -> dict:
    import yaml

    out = {}
    for item in items:
        if "=" not in item:
            raise ValueError(f"--param expects KEY=VALUE, got {item!r}")
        key, value = item.split("=", 1)
        out[key.strip()] = yaml.safe_load(value)
    return out


@app.command()
def train(
    task: str = typer.Option(..., help="language: parity | first | majority | dyck"),
    kind: str | None = typer.Option(None, help="recognition (default) | next_symbol"),
    param: list[str] = typer.Option([], "--param", help="language parameter KEY=VALUE, e.g. k=2, max_depth=4"),
    model: str | None = typer.Option(None, help="transformer | lstm"),
    layers: int | None = typer.Option(None, help="blocks / LSTM layers"),
    heads: int | None = typer.Option(None, help="attention heads"),
    d_model: int | None = typer.Option(None, "--d-model", help="residual width / LSTM hidden size"),
    train_lengths: str | None = typer.Option(None, "--train-lengths", help="e.g. 1-40"),
    test_lengths: str | None = typer.Option(None, "--test-lengths", help="e.g. 41-500 or 51-100,101-150"),
    steps: int | None = typer.Option(None, help="optimiser steps"),
    batch_size: int | None = typer.Option(None, "--batch-size"),
    lr: float | None = typer.Option(None, help="Adam learning rate"),
    seed: int | None = typer.Option(None, help="seed of init and data"),
    positional: str | None = typer.Option(None, help="learned | sinusoidal | none"),
    layer_norm: str | None = typer.Option(None, "--layer-norm", help="none | pre | post"),
    ln_eps: float | None = typer.Option(None, "--ln-eps"),
    log_length_scaling: bool | None = typer.Option(None, "--log-length-scaling/--no-log-length-scaling"),
    eval_batch: int | None = typer.Option(None, "--eval-batch", help="strings per test length"),
    preset: str | None = typer.Option(None, help="protocol preset: deletang | bhattamishra | quick"),
    db: Path = typer.Option(Path(DEFAULT_DB), help="SQLite result store"),
    out: Path | None = typer.Option(None, help="checkpoint directory (default runs/<run_id>)"),
) -> None:
    """Train one model on one task and evaluate it per test length."""
    from ..train import ResultStore, RunConfig, protocol_score, train_run
    from ..train import preset as make_preset

    given = dict(kind=kind, model=model, layers=layers, heads=heads, d_model=d_model, train_lengths=train_lengths,
                 test_lengths=test_lengths, steps=steps, batch_size=batch_size, lr=lr, seed=seed,
                 positional=positional, layer_norm=layer_norm, ln_eps=ln_eps,
                 log_length_scaling=log_length_scaling, eval_batch=eval_batch)
    fields = {k: v for k, v in given.items() if v is not None}
    with user_errors():
        fields["task_params"] = _parse_params(param)
        cfg = make_preset(preset, task, **fields) if preset else RunConfig.from_dict({"task": task, **fields})
        store = ResultStore(db)
    out_dir = out or Path("runs") / cfg.run_id
    console.print(f"[bold]{cfg.label()}[/]  run {cfg.run_id}  → {out_dir}")
    with _progress() as progress:
        bar = progress.add_task("training", total=cfg.steps, status="")
        eval_bar = progress.add_task("evaluating", total=None, status="", start=False)

        def on_step(step: int, loss: float) -> None:
            progress.update(bar, completed=step, status=f"loss {loss:.4f}")

        def on_eval(done: int, total: int) -> None:
            if done == 1:
                progress.start_task(eval_bar)
            progress.update(eval_bar, completed=done, total=total, status="test lengths")

        result = train_run(cfg, out_dir, on_step=on_step, on_eval=on_eval)
    if not store.record_result(result):
        console.print(f"run {cfg.run_id} was already recorded in {db}; kept the earlier rows")
    store.close()
    _metrics_table(result.metrics, f"{cfg.label()} ({result.duration:.1f} s)")
    scores = protocol_score([dict(m) for m in result.metrics], cfg.protocol)
    console.print("  ".join(f"{k} = {v:.4f}" for k, v in scores.items()) + f"   recorded in {db}")


def _metrics_table(metrics, title: str, max_rows: int = 12) -> None:
    rows = list(metrics)
    if len(rows) > max_rows:  # evenly spaced lengths, first and last included
        idx = sorted({round(i * (len(rows) - 1) / (max_rows - 1)) for i in range(max_rows)})
        rows = [rows[i] for i in idx]
    table = Table(title=title)
    for col in ("length", "accuracy", "CE (bits)", "optimum (bits)", "excess (bits)"):
        table.add_column(col, justify="right")
    for m in rows:
        table.add_row(str(m["length"]), f"{m['accuracy']:.3f}", f"{m['ce_bits']:.4f}", f"{m['optimal_bits']:.4f}",
                      f"{m['excess_bits']:.4f}")
    console.print(table)


@app.command()
def sweep(
    config: Path = typer.Argument(..., help="sweep YAML (preset / base / grid / runs)"),
    db: Path = typer.Option(Path(DEFAULT_DB), help="SQLite result store (finished runs are skipped)"),
    backend: str = typer.Option("local", help="local (process pool) | ray"),
    address: str | None = typer.Option(None, help="Ray cluster address (default: a local instance)"),
    workers: int | None = typer.Option(None, help="parallel runs (default: number of CPUs)"),
    out: Path | None = typer.Option(None, help="checkpoint root, one directory per run (default: "
                                    "checkpoints/ next to --db; interrupted runs resume from there)"),
    retry_errors: bool = typer.Option(False, "--retry-errors", help="re-run runs that failed before"),
) -> None:
    """Run a grid of training runs; results go to --db as each run finishes."""
    from ..train import load_sweep, run_sweep

    with user_errors():
        if backend not in ("local", "ray"):
            raise ValueError(f"unknown backend {backend!r}; choose 'local' or 'ray'")
        configs = load_sweep(config)
        from ..train import ResultStore

        ResultStore(db).close()  # fail early on a database that is not ours
    with _progress() as progress:
        bar = progress.add_task("sweep", total=len(configs), status="")

        def on_event(kind: str, cfg, payload) -> None:
            progress.advance(bar)
            progress.update(bar, status=f"{kind}: {cfg.label()}")

        with user_errors():
            out_dir = out if out is not None else db.parent / "checkpoints"
            summary = run_sweep(configs, db, backend=backend, workers=workers, address=address, out_dir=out_dir,
                                retry_errors=retry_errors, on_event=on_event)
    console.print(f"{summary.total} runs: {summary.done} done, {summary.skipped} skipped (already in {db}), "
                  f"{summary.errors} failed")
    for msg in summary.error_messages:
        console.print(f"[yellow]failed:[/] {msg}", highlight=False)


@app.command()
def results(
    db: Path = typer.Option(Path(DEFAULT_DB), help="SQLite result store"),
    plot: Path | None = typer.Option(None, help="write accuracy / cross-entropy vs length (PNG)"),
) -> None:
    """Print a table of recorded runs and optionally plot metrics against length."""
    from ..train import ResultStore, protocol_score

    with user_errors():
        if not db.is_file():
            raise FileNotFoundError(f"no such results database: {db}")
        store = ResultStore(db)
    rows, runs = store.rows(), store.runs()
    store.close()
    by_run = defaultdict(list)
    for r in rows:
        by_run[r["run_id"]].append(r)
    table = Table(title=f"{len(runs)} runs in {db}")
    for col in ("run", "protocol", "lengths", "accuracy", "bins", "CE bits", "excess"):
        table.add_column(col, justify="left" if col in ("run", "protocol", "bins") else "right")
    import json

    for run in runs:
        cfg = json.loads(run["config"])
        name = f"{cfg['task']} {cfg['kind']} {cfg['model']} s{cfg['seed']}"
        rs = by_run.get(run["run_id"], [])
        if run["status"] == "error":
            table.add_row(name, cfg["protocol"], "", "[red]error[/]", (run["error"] or "").splitlines()[0][:50], "", "")
            continue
        scores = protocol_score(rs, cfg["protocol"])
        bins = " ".join(f"{k.removeprefix('accuracy_')}:{v:.2f}" for k, v in scores.items() if k != "mean_accuracy")
        n = max(len(rs), 1)
        table.add_row(name, cfg["protocol"], f"{min(r['length'] for r in rs)}–{max(r['length'] for r in rs)}" if rs else "",
                      f"{scores.get('mean_accuracy', float('nan')):.3f}", bins,
                      f"{sum(r['ce_bits'] for r in rs) / n:.4f}", f"{sum(r['excess_bits'] for r in rs) / n:.4f}")
    console.print(table)
    if plot is not None:
        _plot(rows, plot)
        console.print(f"plot written to {plot}")


def _plot(rows: list[dict], path: Path) -> None:
    """Accuracy and cross-entropy vs length, one line per (task, kind, model), mean over seeds."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    groups: dict = defaultdict(lambda: defaultdict(list))
    for r in rows:
        groups[(r["task"], r["kind"], r["model"])][r["length"]].append(r)
    fig, (ax_acc, ax_ce) = plt.subplots(1, 2, figsize=(11, 4))
    for (task, kind, model), by_len in sorted(groups.items()):
        lengths = sorted(by_len)
        acc = [np.mean([r["accuracy"] for r in by_len[n]]) for n in lengths]
        ce = [np.mean([r["ce_bits"] for r in by_len[n]]) for n in lengths]
        ax_acc.plot(lengths, acc, label=f"{task} {kind} {model}")
        ax_ce.plot(lengths, ce, label=f"{task} {kind} {model}")
    ax_acc.set(xlabel="length n", ylabel="accuracy", ylim=(-0.02, 1.02), title="accuracy vs length")
    ax_ce.set(xlabel="length n", ylabel="cross-entropy (bits / scored position)", title="cross-entropy vs length")
    ax_acc.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
