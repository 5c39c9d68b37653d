"""CLI commands of the train area: ``train``, ``sweep``, ``results``."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import typer

from ..train.options import RESULTS, SWEEP, TRAIN
from . import app
from ._common import console, err_console
from .options import with_options
from .output import progress_bar, show


@app.command()
@with_options(TRAIN)
def train(**given) -> None:
    """Train one model on one task and evaluate it per test length."""
    from ..train import single
    from ..train.protocols import run_config_from_options

    cfg, where = run_config_from_options(given)
    db, log = given["db"], given["log"]
    out_dir = given["out"] or Path("runs") / cfg.run_id
    if (aside := single.check_before_training(cfg, db, log, given["reset_db"], out_dir)) is not None:
        console.print(f"{db} held results of another code version: set aside as {aside}")
    console.print(f"[bold]{cfg.label()}[/]  run {cfg.run_id}  → {out_dir}  on {where}")
    with progress_bar(status=True, remaining=True) as bars:
        result = single.train_logged(cfg, out_dir, restart=given["restart"], log=log, **_bars_of(bars, cfg.steps))
    if not single.record(result, db):
        console.print(f"run {cfg.run_id} was already recorded in {db}; kept the earlier rows")
    if result.status == "diverged":
        console.print(f"[yellow]diverged[/]: the training loss was not finite at step {result.diverged_at} "
                      f"(try a smaller --lr); recorded as diverged in {db}", highlight=False)
        return
    show(single.metrics_listing(result.metrics, f"{cfg.label()} ({result.duration:.1f} s)"))
    console.print(single.scores_line(result, cfg, db))


def _bars_of(bars, steps: int) -> dict:
    """on_step (a training bar: its loss) and on_eval (an evaluation bar: test lengths)."""
    bar = bars.add_task("training", total=steps, status="")
    eval_bar = bars.add_task("evaluating", total=None, status="", start=False)

    def on_step(step: int, loss: float) -> None:
        bars.update(bar, completed=step, status=f"loss {loss:.4f}")

    def on_eval(done: int, total: int) -> None:
        if done == 0:
            bars.start_task(eval_bar)
        bars.update(eval_bar, completed=done, total=total, status="test lengths")

    return {"on_step": on_step, "on_eval": on_eval}


@app.command()
@with_options(SWEEP)
def sweep(**given) -> None:
    """Run a grid of training runs; results go to --db as each run finishes.

    Exit code 0 when every run is done (or diverged: recorded as such), 1 when a run failed."""
    from ..train import run_sweep
    from ..train.sweep import prepare_sweep, sweep_store

    o = SimpleNamespace(**given)
    grid, configs, bench = prepare_sweep(o.config, db=o.db, backend=o.backend, address=o.address, timeout=o.timeout,
                                         workers=o.workers, restart=o.restart, only=o.only, shard=o.shard,
                                         dry_run=o.dry_run, device=o.device, dtype=o.dtype, max_group=o.max_group,
                                         gpu_bench=o.gpu_bench, log=o.log)
    if o.dry_run:
        from ..train.budget import dry_run_report

        for line in dry_run_report(grid, configs, o.db, o.workers, retry_errors=o.retry_errors, reset_db=o.reset_db,
                                   group=not o.no_group, max_group=o.max_group, bench=bench):
            console.print(line, highlight=False, soft_wrap=True)  # a path is never broken
        return
    out_dir, aside = sweep_store(o.db, o.out, o.reset_db)
    if aside is not None:
        console.print(f"{o.db} held results of another code version: moved to {aside}", highlight=False)
    with progress_bar(status=True, remaining=True) as bars:
        bar = bars.add_task("sweep", total=len(configs), status="")
        summary = run_sweep(configs, o.db, backend=o.backend, workers=o.workers, address=o.address, out_dir=out_dir,
                            retry_errors=o.retry_errors, restart=o.restart, timeout=o.timeout, group=not o.no_group,
                            on_event=lambda kind, cfg, _: bars.update(bar, advance=1, status=f"{kind}: {cfg.label()}"),
                            max_group=o.max_group, sinks=o.log)
    console.print(summary.counts(o.db))
    for msg in summary.error_messages:
        console.print(f"[yellow]failed:[/] {msg}", highlight=False)
    if summary.advice is not None:
        console.print(summary.advice, highlight=False)
        raise typer.Exit(code=1)


@app.command()
@with_options(RESULTS)
def results(**given) -> None:
    """Print a table of recorded runs and optionally plot metrics against length.

    --json / --csv write the same table as records, to stdout or --output FILE; in Python,
    expressivity.runs.to_pandas(db) gives every run × test length as a DataFrame."""
    from ..train import results as recorded
    from ..train.compare import comparison_listing

    o = SimpleNamespace(**given)
    fmt = "json" if o.as_json else "csv" if o.as_csv else None
    say = err_console if fmt is not None and o.output is None else console  # stdout carries the records
    rows, runs = recorded.read_results(o.db, compare=o.compare, as_json=o.as_json, as_csv=o.as_csv, output=o.output,
                                       show_all=o.show_all, plot=o.plot)
    view = comparison_listing(rows, o.compare, show_all=o.show_all) if o.compare is not None else None
    records = list(view.records) if view is not None else recorded.run_records(rows, runs)
    if fmt is not None:
        columns = view.record_columns if view is not None else recorded.RUN_COLUMNS
        recorded.write_records(records, fmt, o.output, columns)
        if o.output is not None:
            err_console.print(f"wrote {len(records)} records to {o.output}", highlight=False, soft_wrap=True)
    else:
        show(view if view is not None else recorded.runs_listing(records, f"{len(runs)} runs in {o.db}"))
    if o.plot is not None:
        (view.plot if view is not None else lambda path: recorded.plot_results(rows, path))(o.plot)
        say.print(f"plot written to {o.plot}", highlight=False, soft_wrap=True)
