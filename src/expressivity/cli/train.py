"""CLI commands of the train area: ``train``, ``sweep``, ``results``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..runs.store import DEFAULT_DB
from . import app
from ._common import console, err_console, open_store, output_path
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
from .output import progress_bar, show

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


_GIVEN = ("kind", "model", "layers", "heads", "d_model", "steps", "batch_size", "lr", "seed", "positional",
          "layer_norm", "ln_eps", "log_length_scaling", "eval_batch", "init", "perturb", "memory_size", "aux",
          "causal", "dtype")


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
    from ..train import single
    from ..train.protocols import run_config_from_options

    args = locals()
    given = {k: args[k] for k in _GIVEN}  # the RunConfig fields as given on the command line (None: not given)
    cfg, where = run_config_from_options(task, preset, given, device=device, init_param=init_param,
                                         train_lengths=train_lengths, test_lengths=test_lengths, param=param)
    out_dir = out or Path("runs") / cfg.run_id
    output_path(out_dir, "--out", kind="dir")
    output_path(db, "--db")
    if (aside := single.check_before_training(cfg, db, log, reset_db)) is not None:
        console.print(f"{db} held results of another code version: set aside as {aside}")
    console.print(f"[bold]{cfg.label()}[/]  run {cfg.run_id}  → {out_dir}  on {where}")
    with progress_bar(status=True, remaining=True) as bars:
        result = single.train_logged(cfg, out_dir, restart=restart, log=log, **_bars_of(bars, cfg.steps))
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
    from ..train import ResultStore, run_sweep
    from ..train.sweep import prepare_sweep

    grid, configs, bench = prepare_sweep(config, db=db, backend=backend, address=address, timeout=timeout,
                                         workers=workers, restart=restart, only=only, shard=shard, dry_run=dry_run,
                                         device=device, dtype=dtype, max_group=max_group, gpu_bench=gpu_bench, log=log)
    if dry_run:
        from ..train.budget import dry_run_report

        for line in dry_run_report(grid, configs, db, workers, retry_errors=retry_errors, reset_db=reset_db,
                                   group=not no_group, max_group=max_group, bench=bench):
            console.print(line, highlight=False, soft_wrap=True)  # a path is never broken
        return
    out_dir = out if out is not None else db.parent / "checkpoints"
    output_path(db, "--db")
    output_path(out_dir, "--out", kind="dir")
    open_store(ResultStore, db, reset_db)
    with progress_bar(status=True, remaining=True) as bars:
        bar = bars.add_task("sweep", total=len(configs), status="")
        summary = run_sweep(configs, db, backend=backend, workers=workers, address=address, out_dir=out_dir,
                            retry_errors=retry_errors, restart=restart, timeout=timeout, group=not no_group,
                            on_event=lambda kind, cfg, _: bars.update(bar, advance=1, status=f"{kind}: {cfg.label()}"),
                            max_group=max_group, sinks=log)
    console.print(summary.counts(db))
    for msg in summary.error_messages:
        console.print(f"[yellow]failed:[/] {msg}", highlight=False)
    if summary.advice is not None:
        console.print(summary.advice, highlight=False)
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
    from ..train import results as recorded
    from ..train.compare import comparison_listing

    output_path(plot, "--plot")
    output_path(output, "--output")
    fmt = "json" if as_json else "csv" if as_csv else None
    say = err_console if fmt is not None and output is None else console  # stdout carries the records
    rows, runs = recorded.read_results(db, compare=compare, as_json=as_json, as_csv=as_csv, output=output,
                                       show_all=show_all)
    view = comparison_listing(rows, compare, show_all=show_all) if compare is not None else None
    records = list(view.records) if view is not None else recorded.run_records(rows, runs)
    if fmt is not None:
        columns = view.record_columns if view is not None else recorded.RUN_COLUMNS
        recorded.write_records(records, fmt, output, columns)
        if output is not None:
            err_console.print(f"wrote {len(records)} records to {output}", highlight=False, soft_wrap=True)
    else:
        show(view if view is not None else recorded.runs_listing(records, f"{len(runs)} runs in {db}"))
    if plot is not None:
        (view.plot if view is not None else lambda path: recorded.plot_results(rows, path))(plot)
        say.print(f"plot written to {plot}", highlight=False, soft_wrap=True)
