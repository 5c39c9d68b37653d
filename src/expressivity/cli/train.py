"""CLI commands of the train area: ``train``, ``sweep``, ``results``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from ..runs.store import DEFAULT_DB
from . import app
from ._common import console, err_console, output_path, user_errors
from .options import (
    Address,
    Backend,
    Db,
    Device,
    Dtype,
    KindName,
    LayerNormName,
    Log,
    ModelName,
    NoGroup,
    Output,
    Plot,
    PositionalName,
    PresetName,
    ResetDb,
    Timeout,
    Workers,
)
from .output import progress, table


def _progress() -> Progress:
    return progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TextColumn("{task.fields[status]}"), TimeElapsedColumn(), TimeRemainingColumn())


_TrainTask = Annotated[str, typer.Option(help=(
    "a language or function task of expressivity.languages.REGISTRY, e.g. parity, dyck, tomita3, anbncn, "
    "reverse_string, binary_addition (all of them: docs/languages.md; an unknown name lists them)"))]
_TrainKind = Annotated[KindName | None, typer.Option(help=(
    "recognition | next_symbol (languages; default recognition, next_symbol under --preset bhattamishra "
    "or yao) | classification | transduction (a function task's own kind, the default)"))]
_TrainParam = Annotated[list[str], typer.Option("--param", help=(
    "task parameter KEY=VALUE, e.g. k=2, max_depth=4 (dyck), vocab_size=3 (reverse_string)"))]
_TrainDModel = Annotated[int | None, typer.Option("--d-model", help=(
    "residual width / hidden size of the recurrent models"))]
_TrainPositional = Annotated[PositionalName | None, typer.Option(help=(
    "transformer position encoding (default sinusoidal)"))]
_TrainMemorySize = Annotated[int | None, typer.Option("--memory-size", help=(
    "cells of the stack / tape of stack_rnn, stack_lstm, tape_rnn (default: 30 / 40, Delétang et al.'s "
    "code)"))]
_TrainAux = Annotated[str | None, typer.Option(help=(
    "auxiliary losses of a recognizer (FLaRe): lm, next_symbol or lm,next_symbol (needs a recurrent model"
    " or a causal transformer)"))]
_TrainCausal = Annotated[bool | None, typer.Option("--causal/--no-causal", help=(
    "transformer: causal attention for a recognizer too (default under --preset flare)"))]
_TrainInit = Annotated[str | None, typer.Option(help=(
    "random (default) | construction:NAME (parity, first, dyck, parity-compiled): fine-tune from a "
    "hand-built transformer"))]
_TrainInitParam = Annotated[list[str], typer.Option("--init-param", help=(
    "construction parameter KEY=VALUE, e.g. layer_norm=true"))]
_TrainPerturb = Annotated[float | None, typer.Option(help=(
    "σ of the Gaussian noise added to every weight of the construction (with --init construction:NAME)"))]
_TrainRestart = Annotated[bool, typer.Option("--restart", help=(
    "discard this run's checkpoint in --out (e.g. a corrupt one) and train from scratch"))]


@app.command()
def train(
    task: _TrainTask,
    kind: _TrainKind = None,
    param: _TrainParam = (),
    model: ModelName | None = typer.Option(None, help="the model (default: the preset's, else transformer)"),
    layers: int | None = typer.Option(None, help="transformer blocks / RNN or LSTM layers"),
    heads: int | None = typer.Option(None, help="attention heads"),
    d_model: _TrainDModel = None,
    train_lengths: str | None = typer.Option(None, "--train-lengths", help="e.g. 1-40"),
    test_lengths: str | None = typer.Option(None, "--test-lengths", help="e.g. 41-500 or 51-100,101-150"),
    steps: int | None = typer.Option(None, help="optimiser steps"),
    batch_size: int | None = typer.Option(None, "--batch-size"),
    lr: float | None = typer.Option(None, help="Adam learning rate"),
    seed: int | None = typer.Option(None, help="seed of init and data"),
    positional: _TrainPositional = None,
    layer_norm: LayerNormName | None = typer.Option(None, "--layer-norm", help="transformer layer norm"),
    ln_eps: float | None = typer.Option(None, "--ln-eps"),
    log_length_scaling: bool | None = typer.Option(None, "--log-length-scaling/--no-log-length-scaling"),
    eval_batch: int | None = typer.Option(None, "--eval-batch", help="strings per test length"),
    memory_size: _TrainMemorySize = None,
    preset: PresetName | None = typer.Option(None, help="protocol preset: a paper's lengths, sizes and steps"),
    aux: _TrainAux = None,
    causal: _TrainCausal = None,
    init: _TrainInit = None,
    init_param: _TrainInitParam = (),
    perturb: _TrainPerturb = None,
    device: Device = "auto",
    dtype: Dtype = None,
    db: Db = DEFAULT_DB,
    out: Path | None = typer.Option(None, help="checkpoint directory (default runs/<run_id>)"),
    restart: _TrainRestart = False,
    reset_db: ResetDb = False,
    log: Log = (),
) -> None:
    """Train one model on one task and evaluate it per test length."""
    from ..train.protocols import run_config_from_options

    given = dict(kind=kind, model=model, layers=layers, heads=heads, d_model=d_model, steps=steps,
                 batch_size=batch_size, lr=lr, seed=seed, positional=positional, layer_norm=layer_norm,
                 ln_eps=ln_eps, log_length_scaling=log_length_scaling, eval_batch=eval_batch, init=init,
                 perturb=perturb, memory_size=memory_size, aux=aux, causal=causal, dtype=dtype)
    with user_errors():
        cfg, where = run_config_from_options(task, preset, given, device=device, init_param=init_param,
                                 train_lengths=train_lengths, test_lengths=test_lengths, param=param)
    out_dir = out or Path("runs") / cfg.run_id
    output_path(out_dir, "--out", kind="dir")
    output_path(db, "--db")
    with user_errors():
        _check_before_training(cfg, db, log, reset_db)
    console.print(f"[bold]{cfg.label()}[/]  run {cfg.run_id}  → {out_dir}  on {where}")
    result = _train_with_progress(cfg, out_dir, restart=restart, log=log)
    _record(result, cfg, db)
    if result.status == "diverged":
        console.print(f"[yellow]diverged[/]: the training loss was not finite at step {result.diverged_at} "
                      f"(try a smaller --lr); recorded as diverged in {db}", highlight=False)
        return
    _metrics_table(result.metrics, f"{cfg.label()} ({result.duration:.1f} s)")
    _print_scores(result, cfg, db)


def _print_scores(result, cfg, db: Path) -> None:
    from ..train import protocol_score

    scores = protocol_score([dict(m) for m in result.metrics], cfg.protocol)
    console.print("  ".join(f"{k} = {v:.4f}" for k, v in scores.items()) + f"   recorded in {db}")


def _check_before_training(cfg, db: Path, log, reset_db: bool) -> None:
    """Sinks, memory and the store are checked before training: a --db file that is not ours
    is refused; a new one is created only when there is a result to record."""
    from ..runs.sinks import check_sinks
    from ..train import ResultStore
    from ..train.loop import check_run_memory

    check_sinks(log)
    check_run_memory(cfg)
    if db.exists():
        first = ResultStore(db, reset=reset_db)
        if first.set_aside is not None:
            console.print(f"{db} held results of another code version: set aside as {first.set_aside}")
        first.close()


def _train_with_progress(cfg, out_dir: Path, *, restart: bool, log):
    """train_run with a training bar (loss) and an evaluation bar (test lengths)."""
    from ..runs.sinks import close_sinks, open_sinks
    from ..train import train_run

    with _progress() as progress:
        bar = progress.add_task("training", total=cfg.steps, status="")
        eval_bar = progress.add_task("evaluating", total=None, status="", start=False)

        def on_step(step: int, loss: float) -> None:
            progress.update(bar, completed=step, status=f"loss {loss:.4f}")

        def on_eval(done: int, total: int) -> None:
            if done == 0:
                progress.start_task(eval_bar)
            progress.update(eval_bar, completed=done, total=total, status="test lengths")

        with user_errors():
            sinks = open_sinks(log, cfg.run_id, cfg.to_dict())
            try:
                return train_run(cfg, out_dir, on_step=on_step, on_eval=on_eval, restart=restart, sinks=sinks)
            finally:
                close_sinks(sinks)


def _record(result, cfg, db: Path) -> None:
    from ..train import ResultStore

    with user_errors():
        store = ResultStore(db)
    try:
        if not store.record_result(result):
            console.print(f"run {cfg.run_id} was already recorded in {db}; kept the earlier rows")
    finally:
        store.close()


def _metrics_table(metrics, title: str, max_rows: int = 12) -> None:
    rows = list(metrics)
    if len(rows) > max_rows:  # evenly spaced lengths, first and last included
        idx = sorted({round(i * (len(rows) - 1) / (max_rows - 1)) for i in range(max_rows)})
        rows = [rows[i] for i in idx]
    out = table("length", "accuracy", "CE (bits)", "optimum (bits)", "excess (bits)", title=title)
    for m in rows:
        out.add_row(str(m["length"]), _num(m["accuracy"], 3), _num(m["ce_bits"]), _num(m["optimal_bits"]),
                    _num(m["excess_bits"]))
    console.print(out)


def _num(x, digits: int = 4) -> str:
    """A metric for a table; NULL/NaN → 'nan'."""
    return "nan" if x is None else f"{x:.{digits}f}"


_SweepOut = Annotated[Path | None, typer.Option(help=(
    "checkpoint root, one directory per run (default: checkpoints/ next to --db; interrupted runs resume "
    "from there)"))]
_SweepRestart = Annotated[bool, typer.Option("--restart", help=(
    "runs started now discard their checkpoints and train from scratch (with --retry-errors: redo runs "
    "whose checkpoint was corrupt)"))]
_SweepOnly = Annotated[list[str], typer.Option("--only", help=(
    "run only the runs whose RunConfig field KEY takes one of the VALUEs, e.g. --only "
    "task=parity_check,reverse_string --only seed=0 (repeatable: every KEY must match)"))]
_SweepShard = Annotated[str | None, typer.Option("--shard", help=(
    "I/N: run shard I of N (a fixed split by the hash of the run id; N machines with 1/N … N/N run every "
    "run exactly once)"))]
_SweepDryRun = Annotated[bool, typer.Option("--dry-run", help=(
    "print the selected runs' count and estimated cost (train/budget.py) on --workers cores, and grouped "
    "on one GPU; train nothing"))]
_SweepGpuBench = Annotated[Path | None, typer.Option("--gpu-bench", help=(
    "with --dry-run: run-steps/s measured by bench/gpu_bench.py --json FILE, instead of the assumed GPU "
    "throughput"))]


@app.command()
def sweep(
    config: Path = typer.Argument(..., help="sweep YAML (preset / base / grid / runs)"),
    db: Db = DEFAULT_DB,
    backend: Backend = "local",
    address: Address = None,
    timeout: Timeout = None,
    reset_db: ResetDb = False,
    workers: Workers = None,
    out: _SweepOut = None,
    retry_errors: bool = typer.Option(False, "--retry-errors", help="re-run runs that failed before"),
    restart: _SweepRestart = False,
    only: _SweepOnly = (),
    shard: _SweepShard = None,
    dry_run: _SweepDryRun = False,
    device: Device = "auto",
    dtype: Dtype = None,
    no_group: NoGroup = False,
    max_group: int = typer.Option(32, "--max-group", help="most runs trained as one batched model"),
    gpu_bench: _SweepGpuBench = None,
    log: Log = (),
) -> None:
    """Run a grid of training runs; results go to --db as each run finishes.

    Exit code 0 when every run is done (or diverged: recorded as such), 1 when a run failed."""
    from ..train import run_sweep
    from ..train.sweep import prepare_sweep

    with user_errors():
        grid, configs, bench = prepare_sweep(config, db=db, backend=backend, address=address, timeout=timeout,
                                           workers=workers, restart=restart, only=only, shard=shard,
                                           dry_run=dry_run, device=device, dtype=dtype, max_group=max_group,
                                           gpu_bench=gpu_bench, log=log)
    if dry_run:
        from ..train.budget import dry_run_report

        with user_errors():
            lines = dry_run_report(grid, configs, db, workers, retry_errors=retry_errors, reset_db=reset_db,
                                   group=not no_group, max_group=max_group, bench=bench)
        for line in lines:
            console.print(line, highlight=False, soft_wrap=True)  # a path is never broken
        return
    out_dir = out if out is not None else db.parent / "checkpoints"
    output_path(db, "--db")
    output_path(out_dir, "--out", kind="dir")
    _open_store(db, reset_db)
    with _progress() as progress:
        bar = progress.add_task("sweep", total=len(configs), status="")

        def on_event(kind: str, cfg, payload) -> None:
            progress.advance(bar)
            progress.update(bar, status=f"{kind}: {cfg.label()}")

        with user_errors():
            summary = run_sweep(configs, db, backend=backend, workers=workers, address=address, out_dir=out_dir,
                                retry_errors=retry_errors, on_event=on_event, restart=restart, timeout=timeout,
                                group=not no_group, max_group=max_group, sinks=log)
    _sweep_summary(summary, db)


def _open_store(db: Path, reset_db: bool) -> None:
    """Fail early on a database that is not ours or of another version (--reset-db: set it aside)."""
    from ..train import ResultStore

    with user_errors():
        first = ResultStore(db, reset=reset_db)
        first.close()
        if first.set_aside is not None:
            console.print(f"{db} held results of another code version: moved to {first.set_aside}", highlight=False)


def _sweep_summary(summary, db: Path) -> None:
    """The sweep's counts and failures; exit code 1 when a run failed."""
    diverged = f", {summary.diverged} diverged" if summary.diverged else ""
    console.print(f"{summary.total} runs: {summary.done} done, {summary.skipped} skipped (already in {db}), "
                  f"{summary.errors} failed{diverged}")
    for msg in summary.error_messages:
        console.print(f"[yellow]failed:[/] {msg}", highlight=False)
    if not summary.ok:
        if any("--restart" in m for m in summary.error_messages):
            console.print("a checkpoint could not be used: rerun with --retry-errors --restart to train those "
                          "runs from scratch", highlight=False)
        else:
            console.print("some runs failed: fix the cause, then rerun with --retry-errors", highlight=False)
        raise typer.Exit(code=1)


@app.command()
def results(
    db: Db = DEFAULT_DB,
    plot: Plot = None,
    compare: str | None = typer.Option(None, "--compare", help="print (and with --plot, plot) our best score "
                                       "per task × model beside a published table: deletang, flare, or the path "
                                       "of a table file in the same layout (.json, e.g. with more cells filled)"),
    show_all: bool = typer.Option(False, "--all", help="with --compare: every cell of the published table, also "
                                  "those we have no run for (default: only the measured ones)"),
    as_json: bool = typer.Option(False, "--json", help="write the table as JSON records instead (one per run; with "
                                 "--compare one per cell)"),
    as_csv: bool = typer.Option(False, "--csv", help="write the table as CSV instead (the same records as --json)"),
    output: Output = None,
) -> None:
    """Print a table of recorded runs and optionally plot metrics against length.

    --json / --csv write the same table as records, to stdout or --output FILE; in Python,
    expressivity.runs.to_pandas(db) gives every run × test length as a DataFrame."""
    output_path(plot, "--plot")
    output_path(output, "--output")
    with user_errors():
        rows, runs = _read_results(db, compare=compare, as_json=as_json, as_csv=as_csv, output=output,
                                   show_all=show_all)
    fmt = "json" if as_json else "csv" if as_csv else None
    say = err_console if fmt is not None and output is None else console  # stdout carries the records
    if compare is not None:
        _compare(rows, compare, plot, show_all=show_all, fmt=fmt, output=output, say=say)
        return
    from ..train.results import plot_results, run_records

    records = run_records(rows, runs)
    if fmt is not None:
        _write_records(records, fmt, output)
    else:
        _runs_table(records, f"{len(runs)} runs in {db}")
    if plot is not None:
        plot_results(rows, plot)
        say.print(f"plot written to {plot}", highlight=False, soft_wrap=True)


def _read_results(db: Path, *, compare, as_json: bool, as_csv: bool, output, show_all: bool):
    """Check the options of ``results``, then read the store: (per-length rows, runs)."""
    from ..train import ResultStore

    if as_json and as_csv:
        raise ValueError("--json and --csv exclude each other: give one")
    if output is not None and not (as_json or as_csv):
        raise ValueError("--output writes the --json or --csv records: give one of them (the table prints to "
                         "the terminal)")
    if show_all and compare is None:
        raise ValueError("--all applies to --compare (it shows the published cells we have no run for)")
    if compare is not None:  # an unknown name or a bad table file fails before the database is read
        from ..train.published import published

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


def _runs_table(records: list[dict], title: str) -> None:
    from ..train.results import FAILED

    out = table("run", "protocol", "lengths", "accuracy", "bins", "CE bits", "excess", title=title,
                text=("run", "protocol", "bins"))
    for r in records:
        if r["status"] in FAILED:
            out.add_row(r["name"], r["protocol"], "", f"[red]{r['status']}[/]", escape((r["error"] or "")[:50]), "", "")
            continue
        bins = " ".join(f"{k.removeprefix('accuracy_')}:{v:.2f}" for k, v in r["scores"].items()
                        if k != "mean_accuracy")
        out.add_row(r["name"], r["protocol"], f"{r['min_length']}–{r['max_length']}" if r["lengths"] else "",
                    _num(r["mean_accuracy"], 3), bins, _num(r["mean_ce_bits"]), _num(r["mean_excess_bits"]))
    console.print(out)


def _write_records(records: list[dict], fmt: str, output: Path | None, columns=None) -> None:
    """--json / --csv: to stdout, or atomically to --output."""
    import sys

    from ..fileio import make_dir, write_atomic
    from ..train.results import RUN_COLUMNS, records_text

    text = records_text(records, fmt, RUN_COLUMNS if columns is None else columns)
    if output is None:
        sys.stdout.write(text)
        return
    with user_errors():
        make_dir(output.parent, "--output")
        write_atomic(output, lambda p: p.write_text(text, encoding="utf-8"))
    err_console.print(f"wrote {len(records)} records to {output}", highlight=False, soft_wrap=True)


def _compare(rows: list[dict], name: str, plot: Path | None, *, show_all: bool = False, fmt: str | None = None,
             output: Path | None = None, say=console) -> None:
    """``results --compare``: our best score per task × model beside the published table; only
    the cells we have runs for unless ``show_all``."""
    from ..train.compare import comparison_listing

    with user_errors():
        view = comparison_listing(rows, name, show_all=show_all)
    if fmt is not None:
        _write_records(list(view.records), fmt, output, view.record_columns)
    else:
        console.print(view.heading, highlight=False, soft_wrap=True)
        out = table(*view.columns, text=view.text)
        for i in view.no_wrap:
            out.columns[i].no_wrap = True
        for row in view.rows:
            if row is None:
                out.add_section()
            else:
                out.add_row(*row)
        console.print(out)
        for note in view.notes:
            console.print(note, highlight=False, soft_wrap=True)
    if plot is not None:
        view.plot(plot)
        say.print(f"plot written to {plot}", highlight=False, soft_wrap=True)
