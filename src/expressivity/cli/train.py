"""CLI commands of the train area: ``train``, ``sweep``, ``results``."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

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
    KindName,
    LayerNormName,
    Log,
    ModelName,
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


@app.command()
def train(
    task: str = typer.Option(..., help="a language or function task of expressivity.languages.REGISTRY, e.g. "
                             "parity, dyck, tomita3, anbncn, reverse_string, binary_addition (all of them: "
                             "docs/languages.md; an unknown name lists them)"),
    kind: KindName | None = typer.Option(None, help="recognition | next_symbol (languages; default recognition, "
                                    "next_symbol under --preset bhattamishra or yao) | classification | "
                                    "transduction (a function task's own kind, the default)"),
    param: list[str] = typer.Option([], "--param", help="task parameter KEY=VALUE, e.g. k=2, max_depth=4 (dyck), "
                                    "vocab_size=3 (reverse_string)"),
    model: ModelName | None = typer.Option(None, help="the model (default: the preset's, else transformer)"),
    layers: int | None = typer.Option(None, help="transformer blocks / RNN or LSTM layers"),
    heads: int | None = typer.Option(None, help="attention heads"),
    d_model: int | None = typer.Option(None, "--d-model", help="residual width / hidden size of the recurrent "
                                       "models"),
    train_lengths: str | None = typer.Option(None, "--train-lengths", help="e.g. 1-40"),
    test_lengths: str | None = typer.Option(None, "--test-lengths", help="e.g. 41-500 or 51-100,101-150"),
    steps: int | None = typer.Option(None, help="optimiser steps"),
    batch_size: int | None = typer.Option(None, "--batch-size"),
    lr: float | None = typer.Option(None, help="Adam learning rate"),
    seed: int | None = typer.Option(None, help="seed of init and data"),
    positional: PositionalName | None = typer.Option(None, help="transformer position encoding (default "
                                                     "sinusoidal)"),
    layer_norm: LayerNormName | None = typer.Option(None, "--layer-norm", help="transformer layer norm"),
    ln_eps: float | None = typer.Option(None, "--ln-eps"),
    log_length_scaling: bool | None = typer.Option(None, "--log-length-scaling/--no-log-length-scaling"),
    eval_batch: int | None = typer.Option(None, "--eval-batch", help="strings per test length"),
    memory_size: int | None = typer.Option(None, "--memory-size", help="cells of the stack / tape of stack_rnn, "
                                           "stack_lstm, tape_rnn (default: 30 / 40, Delétang et al.'s code)"),
    preset: PresetName | None = typer.Option(None, help="protocol preset: a paper's lengths, sizes and steps"),
    aux: str | None = typer.Option(None, help="auxiliary losses of a recognizer (FLaRe): lm, next_symbol or "
                                   "lm,next_symbol (needs a recurrent model or a causal transformer)"),
    causal: bool | None = typer.Option(None, "--causal/--no-causal", help="transformer: causal attention for a "
                                       "recognizer too (default under --preset flare)"),
    init: str | None = typer.Option(None, help="random (default) | construction:NAME (parity, first, dyck, "
                                    "parity-compiled): fine-tune from a hand-built transformer"),
    init_param: list[str] = typer.Option([], "--init-param", help="construction parameter KEY=VALUE, "
                                         "e.g. layer_norm=true"),
    perturb: float | None = typer.Option(None, help="σ of the Gaussian noise added to every weight of the "
                                         "construction (with --init construction:NAME)"),
    device: str = typer.Option("auto", "--device", help="auto (cuda, else mps, else cpu) | cpu | cuda | cuda:N | "
                               "mps; not part of the run id (a run resumes on any device)"),
    dtype: str | None = typer.Option(None, "--dtype", help="float32 (default) | bfloat16: the transformer under "
                                     "autocast (an accelerator or a CPU with native bfloat16)"),
    db: Db = DEFAULT_DB,
    out: Path | None = typer.Option(None, help="checkpoint directory (default runs/<run_id>)"),
    restart: bool = typer.Option(False, "--restart", help="discard this run's checkpoint in --out (e.g. a "
                                 "corrupt one) and train from scratch"),
    reset_db: ResetDb = False,
    log: Log = (),
) -> None:
    """Train one model on one task and evaluate it per test length."""
    from ..rules import parse_length_range, parse_lengths, parse_params
    from ..runs.sinks import check_sinks, close_sinks, open_sinks
    from ..train import ResultStore, RunConfig, protocol_score, train_run
    from ..train import preset as make_preset
    from ..train.config import MAX_TEST_LENGTHS
    from ..train.loop import check_run_memory

    given = dict(kind=kind, model=model, layers=layers, heads=heads, d_model=d_model,
                 steps=steps, batch_size=batch_size, lr=lr, seed=seed,
                 positional=positional, layer_norm=layer_norm, ln_eps=ln_eps,
                 log_length_scaling=log_length_scaling, eval_batch=eval_batch, init=init, perturb=perturb,
                 memory_size=memory_size, aux=aux, causal=causal, dtype=dtype)
    fields = {k: v for k, v in given.items() if v is not None}
    with user_errors():
        from ..train.devices import check_dtype, resolve_device

        where = resolve_device(device, "--device")  # absent or unknown: one line naming what is here
        if dtype is not None:
            check_dtype(dtype, where, "--dtype")
        fields["device"] = device
        if init_param:
            fields["init_params"] = parse_params(init_param, "--init-param")
        if train_lengths is not None:
            fields["train_lengths"] = parse_length_range(train_lengths, "--train-lengths")
        if test_lengths is not None:
            fields["test_lengths"] = parse_lengths(test_lengths, "--test-lengths", max_count=MAX_TEST_LENGTHS)
        fields["task_params"] = parse_params(param, "--param")
        cfg = make_preset(preset, task, **fields) if preset else RunConfig.from_dict({"task": task, **fields})
        _refuse_unused(cfg, given)
    out_dir = out or Path("runs") / cfg.run_id
    output_path(out_dir, "--out", kind="dir")
    output_path(db, "--db")
    with user_errors():
        check_sinks(log)
        check_run_memory(cfg)
        if db.exists():  # a file that is not ours is refused before training; a new one is
            first = ResultStore(db, reset=reset_db)  # created only when there is a result to record
            if first.set_aside is not None:
                console.print(f"{db} held results of another code version: set aside as {first.set_aside}")
            first.close()
    console.print(f"[bold]{cfg.label()}[/]  run {cfg.run_id}  → {out_dir}  on {where}")
    store = None
    try:
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
                    result = train_run(cfg, out_dir, on_step=on_step, on_eval=on_eval, restart=restart, sinks=sinks)
                finally:
                    close_sinks(sinks)
        with user_errors():
            store = ResultStore(db)
        if not store.record_result(result):
            console.print(f"run {cfg.run_id} was already recorded in {db}; kept the earlier rows")
    finally:
        if store is not None:
            store.close()
    if result.status == "diverged":
        console.print(f"[yellow]diverged[/]: the training loss was not finite at step {result.diverged_at} "
                      f"(try a smaller --lr); recorded as diverged in {db}", highlight=False)
        return
    _metrics_table(result.metrics, f"{cfg.label()} ({result.duration:.1f} s)")
    scores = protocol_score([dict(m) for m in result.metrics], cfg.protocol)
    console.print("  ".join(f"{k} = {v:.4f}" for k, v in scores.items()) + f"   recorded in {db}")


_TRANSFORMER_ONLY = {"heads": "--heads", "positional": "--positional", "layer_norm": "--layer-norm",
                     "ln_eps": "--ln-eps", "log_length_scaling": "--log-length-scaling"}
_CONSTRUCTION_FIXES = {"layers": "--layers", "heads": "--heads", "d_model": "--d-model", "positional": "--positional",
                       "layer_norm": "--layer-norm", "ln_eps": "--ln-eps"}  # a construction fixes its architecture


def _refuse_unused(cfg, given: dict) -> None:
    """An option that the run does not use is refused, not ignored (it would also change the
    run id of an otherwise identical run)."""
    if cfg.model != "transformer":
        unused = [opt for key, opt in _TRANSFORMER_ONLY.items() if given.get(key) is not None]
        if unused:
            raise ValueError(f"{', '.join(unused)} appl{'ies' if len(unused) == 1 else 'y'} to transformers only; "
                             f"a {cfg.model} has no attention or layer norm (leave {'it' if len(unused) == 1 else 'them'} out)")
    if cfg.init != "random":
        unused = [opt for key, opt in _CONSTRUCTION_FIXES.items() if given.get(key) is not None]
        if unused:
            raise ValueError(f"{', '.join(unused)}: a run with --init {cfg.init} takes the construction's architecture, "
                             "so these sizes are not used (leave them out; --init-param sets the construction's)")


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


def _mean(values) -> float | None:
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


@app.command()
def sweep(
    config: Path = typer.Argument(..., help="sweep YAML (preset / base / grid / runs)"),
    db: Db = DEFAULT_DB,
    backend: Backend = "local",
    address: Address = None,
    timeout: Timeout = None,
    reset_db: ResetDb = False,
    workers: Workers = None,
    out: Path | None = typer.Option(None, help="checkpoint root, one directory per run (default: "
                                    "checkpoints/ next to --db; interrupted runs resume from there)"),
    retry_errors: bool = typer.Option(False, "--retry-errors", help="re-run runs that failed before"),
    restart: bool = typer.Option(False, "--restart", help="runs started now discard their checkpoints and "
                                 "train from scratch (with --retry-errors: redo runs whose checkpoint was corrupt)"),
    only: list[str] = typer.Option([], "--only", help="run only the runs whose RunConfig field KEY takes one of "
                                   "the VALUEs, e.g. --only task=parity_check,reverse_string --only seed=0 "
                                   "(repeatable: every KEY must match)"),
    shard: str | None = typer.Option(None, "--shard", help="I/N: run shard I of N (a fixed split by the hash of "
                                     "the run id; N machines with 1/N … N/N run every run exactly once)"),
    dry_run: bool = typer.Option(False, "--dry-run", help="print the selected runs' count and estimated cost "
                                 "(train/budget.py) on --workers cores, and grouped on one GPU; train nothing"),
    device: str = typer.Option("auto", "--device", help="auto (cuda, else mps, else cpu) | cpu | cuda | cuda:N | "
                               "mps for every run; not part of the run ids"),
    dtype: str | None = typer.Option(None, "--dtype", help="float32 (default) | bfloat16 for the grid's "
                                     "transformer runs (autocast; changes their run ids)"),
    no_group: bool = typer.Option(False, "--no-group", help="one process per run: do not train runs that differ "
                                  "only in seed / lr / grad_clip / steps as one batched model"),
    max_group: int = typer.Option(32, "--max-group", help="most runs trained as one batched model"),
    gpu_bench: Path | None = typer.Option(None, "--gpu-bench", help="with --dry-run: run-steps/s measured by "
                                          "bench/gpu_bench.py --json FILE, instead of the assumed GPU throughput"),
    log: Log = (),
) -> None:
    """Run a grid of training runs; results go to --db as each run finishes.

    Exit code 0 when every run is done (or diverged: recorded as such), 1 when a run failed."""
    from ..rules import check_choice, check_float, check_int
    from ..runs.sinks import check_sinks
    from ..train import ResultStore, load_sweep, run_sweep
    from ..train.sweep import parse_only, parse_shard, select_runs

    with user_errors():
        check_choice(backend, "--backend", ("local", "ray"))
        if workers is not None:
            check_int(workers, "--workers", min=1, max=1024)
        if timeout is not None:
            check_float(timeout, "--timeout (seconds)", min=0, min_open=True)
        if address is not None and backend != "ray":
            raise ValueError("--address needs --backend ray")
        if dry_run and restart:
            raise ValueError("--restart discards the checkpoints of the runs a sweep starts; --dry-run starts none "
                             "(leave --restart out of the dry run)")
        if dry_run and db.is_dir():
            raise ValueError(f"--db {db} is a directory; give the results database file")
        check_sinks(log)
        picked = parse_shard(shard) if shard is not None else None
        wanted = parse_only(only)
        if backend == "ray" and not dry_run:
            from ..runs import check_address

            check_address(address)
        check_int(max_group, "--max-group", min=1, max=10**6)
        from ..train.devices import check_device_name, check_dtype, resolve_device

        check_device_name(device, "--device")
        if not dry_run:
            where = resolve_device(device, "--device")
            if dtype is not None:
                check_dtype(dtype, where, "--dtype")
        elif dtype is not None:
            check_choice(dtype, "--dtype", ("float32", "bfloat16"))
        if gpu_bench is not None and not dry_run:
            raise ValueError("--gpu-bench is read by --dry-run only (the GPU-hours estimate)")
        bench = None if gpu_bench is None else _read_gpu_bench(gpu_bench)
        grid = load_sweep(config)
        configs = _on_device(select_runs(grid, wanted, picked), device, dtype)
    if dry_run:
        _dry_run(grid, configs, db, workers, retry_errors=retry_errors, reset_db=reset_db,
                 group=not no_group, max_group=max_group, bench=bench)
        return
    out_dir = out if out is not None else db.parent / "checkpoints"
    output_path(db, "--db")
    output_path(out_dir, "--out", kind="dir")
    with user_errors():
        first = ResultStore(db, reset=reset_db)  # fail early on a database that is not ours or of another version
        first.close()
        if first.set_aside is not None:
            console.print(f"{db} held results of another code version: moved to {first.set_aside}", highlight=False)
    with _progress() as progress:
        bar = progress.add_task("sweep", total=len(configs), status="")

        def on_event(kind: str, cfg, payload) -> None:
            progress.advance(bar)
            progress.update(bar, status=f"{kind}: {cfg.label()}")

        with user_errors():
            summary = run_sweep(configs, db, backend=backend, workers=workers, address=address, out_dir=out_dir,
                                retry_errors=retry_errors, on_event=on_event, restart=restart, timeout=timeout,
                               group=not no_group, max_group=max_group, sinks=log)
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


def _on_device(configs, device: str, dtype: str | None):
    """The configs on ``device`` (not part of their ids) and, with ``dtype``, their
    transformer runs in it (bfloat16 is part of the id)."""
    from dataclasses import replace

    out = []
    for c in configs:
        changes = {"device": device}
        if dtype is not None and c.model == "transformer" and c.init == "random":
            changes["dtype"] = dtype
        out.append(replace(c, **changes))
    return out


def _read_gpu_bench(path: Path) -> dict:
    """The throughput table of ``bench/gpu_bench.py --json`` (model kind → run-steps/s at R runs)."""
    import json

    from ..fileio import read_text_file

    text = read_text_file(path, "--gpu-bench")
    try:
        data = json.loads(text)
        rates = data["run_steps_per_s"]
        if not isinstance(rates, dict) or not rates:
            raise ValueError
        for rate in rates.values():
            if not isinstance(rate, (int, float)) or not rate > 0:
                raise ValueError
    except (ValueError, KeyError, TypeError):
        raise ValueError(f"--gpu-bench {path}: not a gpu_bench.py --json file (expected "
                         '{"run_steps_per_s": {"transformer": 123.0, ...}, ...})') from None
    return data


def _dry_run(grid, configs, db: Path, workers: int | None, *, retry_errors: bool = False,
             reset_db: bool = False, group: bool = True, max_group: int = 32, bench: dict | None = None) -> None:
    """What ``sweep`` would run: counts, runs already in ``db``, the budget estimate. As the
    sweep would: ``retry_errors`` counts failed runs as to run, ``reset_db`` a store of another
    version as set aside (every run to run)."""
    import os

    from ..train import ResultStore
    from ..train.budget import estimate_seconds, estimate_sweep

    with user_errors():
        finished: set[str] = set()
        other = None  # the version of a store this code would refuse
        if db.is_file():
            store = ResultStore(db, read_only=True)
            try:
                if store.stored_version not in (None, store.version):
                    other = store.stored_version, store.version
                else:
                    finished = store.finished(include_errors=not retry_errors)
            finally:
                store.close()
        todo = [c for c in configs if c.run_id not in finished]
        cores = workers or os.cpu_count() or 1
        costs = {c.run_id: estimate_seconds(c) for c in todo}
        wall = estimate_sweep(todo, cores)
    if other is not None and reset_db:
        console.print(f"{db} holds results of expressivity {other[0]}; this is {other[1]}: with --reset-db the sweep "
                      "sets it aside and starts a fresh store, so none of its runs count", highlight=False, soft_wrap=True)
    elif other is not None:
        console.print(f"{db} holds results of expressivity {other[0]}; this is {other[1]}: sweep refuses that "
                      "store (--reset-db sets it aside), so none of its runs count", highlight=False, soft_wrap=True)
    again = " (failed runs count as to run: --retry-errors)" if retry_errors else ""
    console.print(f"{len(configs)} of {len(grid)} runs selected; {len(configs) - len(todo)} already in {db}, "
                  f"{len(todo)} to run{again}", highlight=False, soft_wrap=True)  # a path is never broken
    by_model: dict = defaultdict(list)
    for c in todo:
        by_model[c.model].append(costs[c.run_id])
    for model, cs in sorted(by_model.items()):
        console.print(f"  {model:<12} {len(cs):4d} runs  {sum(cs) / 3600:8.2f} core-h  "
                      f"(longest {max(cs) / 60:.1f} min)", highlight=False)
    console.print(f"estimate (train/budget.py, idle cores): {sum(costs.values()) / 3600:.2f} core-hours, "
                  f"{wall / 3600:.2f} h wall on {cores} cores\n  (good to about 2x on an idle core; "
                  "bench/budget_bench.py measures it on yours)", highlight=False)
    if group:
        from ..train.budget import gpu_estimate

        est = gpu_estimate(todo, max_group, bench)
        source = (f"measured by bench/gpu_bench.py ({bench.get('device', 'a GPU')})" if bench is not None
                  else "assumed GPU throughput, train/budget.py GPU_RUN_STEPS_PER_S; --gpu-bench FILE to use yours")
        console.print(f"grouped ({est['groups']} groups of at most {max_group} runs): {est['gpu_hours']:.2f} "
                      f"GPU-hours on one GPU ({source})", highlight=False, soft_wrap=True)
    console.print("Dry run: nothing was trained.", highlight=False)


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
    from ..train import ResultStore

    output_path(plot, "--plot")
    output_path(output, "--output")
    with user_errors():
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
            rows, runs = store.rows(), store.runs()
        finally:
            store.close()
    fmt = "json" if as_json else "csv" if as_csv else None
    say = err_console if fmt is not None and output is None else console  # stdout carries the records
    if compare is not None:
        _compare(rows, compare, plot, show_all=show_all, fmt=fmt, output=output, say=say)
        return
    records = _run_records(rows, runs)
    if fmt is not None:
        _write_records(records, fmt, output)
    else:
        out = table("run", "protocol", "lengths", "accuracy", "bins", "CE bits", "excess", title=f"{len(runs)} runs in {db}",
                    text=("run", "protocol", "bins"))
        for r in records:
            if r["status"] in ("error", "diverged", "timed_out"):
                out.add_row(r["name"], r["protocol"], "", f"[red]{r['status']}[/]", escape((r["error"] or "")[:50]), "", "")
                continue
            bins = " ".join(f"{k.removeprefix('accuracy_')}:{v:.2f}" for k, v in r["scores"].items()
                            if k != "mean_accuracy")
            out.add_row(r["name"], r["protocol"], f"{r['min_length']}–{r['max_length']}" if r["lengths"] else "",
                        _num(r["mean_accuracy"], 3), bins, _num(r["mean_ce_bits"]), _num(r["mean_excess_bits"]))
        console.print(out)
    if plot is not None:
        _plot(rows, plot)
        say.print(f"plot written to {plot}", highlight=False, soft_wrap=True)


def _run_records(rows: list[dict], runs: list[dict]) -> list[dict]:
    """One record per run: the table's cells and the run's config, for the table and --json/--csv."""
    import json

    from ..train import protocol_score

    by_run = defaultdict(list)
    for r in rows:
        by_run[r["run_id"]].append(r)
    out = []
    for run in runs:
        cfg = json.loads(run["config"])
        rs = by_run.get(run["run_id"], [])
        failed = run["status"] in ("error", "diverged", "timed_out")
        scores = {} if failed else protocol_score([r for r in rs if r["accuracy"] is not None], cfg["protocol"])
        out.append({"run_id": run["run_id"], "name": f"{cfg['task']} {cfg['kind']} {cfg['model']} s{cfg['seed']}",
                    "status": run["status"], "error": ((run["error"] or "").splitlines() or [None])[0],
                    "task": cfg["task"], "kind": cfg["kind"], "model": cfg["model"], "seed": cfg["seed"],
                    "protocol": cfg["protocol"], "lengths": len(rs),
                    "min_length": min((r["length"] for r in rs), default=None),
                    "max_length": max((r["length"] for r in rs), default=None),
                    "mean_accuracy": scores.get("mean_accuracy"), "scores": scores,
                    "mean_ce_bits": _mean(r["ce_bits"] for r in rs), "mean_excess_bits": _mean(r["excess_bits"] for r in rs),
                    "final_loss": run["final_loss"], "n_params": run["n_params"], "duration": run["duration"],
                    "config": cfg})
    return out


_RUN_COLUMNS = ("run_id", "name", "status", "error", "task", "kind", "model", "seed", "protocol", "lengths",
                "min_length", "max_length", "mean_accuracy", "mean_ce_bits", "mean_excess_bits", "final_loss",
                "n_params", "duration", "config")  # the CSV header of --csv, also when no run is recorded


def _write_records(records: list[dict], fmt: str, output: Path | None, columns=_RUN_COLUMNS) -> None:
    """--json / --csv: to stdout, or atomically to --output. In CSV the per-bin scores are
    columns of their own (``accuracy_41_500`` …) and the config is one JSON cell."""
    import sys

    from ..fileio import make_dir, write_atomic
    from ..runs.tables import to_csv, to_json

    if fmt == "csv":
        records = [{k: v for k, v in r.items() if k != "scores"} | {k: v for k, v in r.get("scores", {}).items()
                                                                    if k != "mean_accuracy"} for r in records]
    if fmt == "csv":
        more = [c for r in records for c in r if c not in columns]
        columns = [*columns, *dict.fromkeys(more)]
    text = to_json(records) if fmt == "json" else to_csv(records, list(columns))
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
    from dataclasses import asdict, fields

    from ..train.compare import Cell, compare, plot_comparison
    from ..train.published import RecognizerTable, published

    if isinstance(published(name, "--compare"), RecognizerTable):
        _compare_recognizers(rows, name, plot, show_all=show_all, fmt=fmt, output=output, say=say)
        return

    with user_errors():
        comparison = compare(rows, name)
    paper = comparison.table
    cells = [c for c in comparison.cells if show_all or c.runs > 0]
    encodings = [e for e in comparison.encodings if show_all or e.runs > 0]
    if fmt is not None:
        _write_records([asdict(c) | {"difference": c.difference} for c in cells]
                       + [asdict(e) | {"difference": None} for e in encodings], fmt, output,
                       [f.name for f in fields(Cell)] + ["difference"])
    else:
        console.print(f"best score (%) on lengths 41–500, ours beside {paper.citation(short=True)}", highlight=False,
                      soft_wrap=True)
        out = table("", "task", "model", "ours", "paper", "Δ", "n", text=("", "task", "model"))
        for col in out.columns[:3]:
            col.no_wrap = True
        extra = {}
        for c in encodings:
            extra.setdefault(c.task, []).append(c)

        def pct(x):
            return "—" if x is None else f"{x:.1f}"

        level = None
        for c in cells:
            if level is not None and c.level != level:
                out.add_section()
            level = c.level
            diff = "" if c.difference is None else f"{c.difference:+.1f}"
            out.add_row(c.level, c.task, c.model, pct(c.ours), pct(c.published), diff, str(c.runs))
            if c.model == "transformer":
                for e in extra.get(c.task, []):
                    out.add_row("", "", f"  └ {e.positional}", pct(e.ours), "", "", str(e.runs))
        console.print(out)
        console.print(f"paper: {paper.paper}", highlight=False, soft_wrap=True)
        _unmeasured(len(comparison.cells) - len(cells), len(comparison.cells), show_all)
        missing = sum(c.published is None for c in cells)
        if missing:
            console.print(f"{missing} of {len(cells)} published cells shown are not available (—): "
                          f"{paper.missing}", highlight=False, soft_wrap=True)
    if plot is not None:
        plot_comparison(comparison, plot)
        say.print(f"plot written to {plot}", highlight=False, soft_wrap=True)


def _unmeasured(hidden: int, total: int, show_all: bool) -> None:
    if hidden and not show_all:
        console.print(f"{hidden} of {total} published cells have no run of ours (not shown; --all shows them)",
                      highlight=False, soft_wrap=True)


def _compare_recognizers(rows: list[dict], name: str, plot: Path | None, *, show_all: bool = False,
                         fmt: str | None = None, output: Path | None = None, say=console) -> None:
    """``results --compare flare``: our FLaRe runs beside Butoi et al.'s Table 2."""
    from dataclasses import asdict, fields

    from ..train.flare_compare import RecognizerRow, compare_recognizers, plot_recognizers
    from ..train.published import published

    paper = published(name, "--compare")
    every = compare_recognizers(rows, paper)
    cells = [c for c in every if show_all or c.runs > 0]
    if fmt is not None:
        _write_records([asdict(c) for c in cells], fmt, output, [f.name for f in fields(RecognizerRow)])
    else:
        lengths = sorted({c.test_lengths for c in cells if c.test_lengths})
        console.print(f"recognition accuracy, ours beside {paper.citation(short=True)}: mean over seeds of the best "
                      f"loss option / best run (test lengths {', '.join(lengths) or '—'}); perfect: best run ≥ 0.995 "
                      "(theirs: Figure 1)", highlight=False, soft_wrap=True)
        out = table("language", "model", "runs", "ours", "paper", "perfect", text=("language", "model", "ours", "paper",
                                                                                   "perfect"))
        for col in out.columns[1:]:
            col.no_wrap = True

        def num(x):
            return "—" if x is None else f"{x:.2f}"

        def yes(x):
            return "—" if x is None else ("yes" if x else "no")

        level = None
        for c in cells:
            if level is not None and c.level != level:
                out.add_section()
            level = c.level
            out.add_row(f"{c.task.removeprefix('flare.')} ({c.level})", c.model, str(c.runs),
                        f"{num(c.inductive_bias)} / {num(c.expressivity)}",
                        f"{num(c.published_inductive_bias)} / {num(c.published_expressivity)}",
                        f"{yes(c.perfect)} / {yes(c.published_perfect)}")
        console.print(out)
        console.print(f"paper: {paper.paper}", highlight=False, soft_wrap=True)
        _unmeasured(len(every) - len(cells), len(every), show_all)
        missing = sum(c.published_inductive_bias is None for c in cells)
        if missing:
            console.print(f"{missing} of {len(cells)} published scores shown are not available (—): {paper.missing}",
                          highlight=False, soft_wrap=True)
    if plot is not None:
        plot_recognizers(every, paper, plot)  # the figure has a panel place for every cell
        say.print(f"plot written to {plot}", highlight=False, soft_wrap=True)


def _plot(rows: list[dict], path: Path) -> None:
    """Accuracy and cross-entropy vs length, one line per (task, kind, model), mean over seeds."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    groups: dict = defaultdict(lambda: defaultdict(list))
    for r in rows:
        groups[(r["task"], r["kind"], r["model"])][r["length"]].append(r)
    from ..train.flare_compare import ce_by_edits

    edits = ce_by_edits(rows)  # FLaRe runs: the negatives' cross-entropy by edit distance / count
    fig, axes = plt.subplots(1, 3 if edits else 2, figsize=(16 if edits else 11, 4))
    ax_acc, ax_ce = axes[0], axes[1]
    for (task, kind, model), by_len in sorted(groups.items()):
        lengths = sorted(by_len)
        acc = [_mean(r["accuracy"] for r in by_len[n]) for n in lengths]
        ce = [_mean(r["ce_bits"] for r in by_len[n]) for n in lengths]
        acc = [np.nan if a is None else a for a in acc]
        ce = [np.nan if c is None else c for c in ce]
        ax_acc.plot(lengths, acc, label=f"{task} {kind} {model}")
        ax_ce.plot(lengths, ce, label=f"{task} {kind} {model}")
    ax_acc.set(xlabel="length n", ylabel="accuracy", ylim=(-0.02, 1.02), title="accuracy vs length")
    ax_ce.set(xlabel="length n", ylabel="cross-entropy (bits / scored position)", title="cross-entropy vs length")
    ax_acc.legend(fontsize=7)
    if edits:
        ax = axes[2]
        for (task, model), by in sorted(edits.items()):
            for kind, style in (("distance", "o-"), ("edits", "x--")):
                if by.get(kind):
                    ds = sorted(by[kind])
                    label = f"{task} {model} ({'edit distance' if kind == 'distance' else 'edits; 0 = uniform'})"
                    ax.plot(ds, [by[kind][d] for d in ds], style, label=label)
        ax.set(xlabel="edit distance to L / edits applied (6 = 6 or more)", ylabel="cross-entropy (bits / string)",
               title="negatives: cross-entropy vs edits")
        ax.legend(fontsize=6)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
