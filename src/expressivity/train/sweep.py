"""Sweeps: a YAML grid → RunConfigs → runs on a local process pool or on Ray.

YAML format (every key optional except ``grid`` or ``runs``)::

    preset: quick            # protocol preset applied to every run (deletang | bhattamishra | quick)
    base: {steps: 200}       # RunConfig fields shared by all runs
    grid:                    # the product of these lists (any RunConfig field)
      task: [parity, dyck]
      model: [transformer, lstm]
      seed: [0, 1]
    runs:                    # extra explicit runs (merged over preset and base)
      - {task: first, model: lstm}

The SQLite :class:`ResultStore` is the source of truth: runs already recorded (done,
diverged, or error unless ``retry_errors``) are skipped, so a killed sweep restarted with
the same file loses nothing and duplicates nothing. Each finished run is written by the
driver in one transaction as soon as it finishes; a run that raises records its error, a
run whose loss became NaN is recorded as diverged, and the sweep goes on.

Backends: ``local`` — one child process per run (fork on Linux), at most ``workers`` at a
time. A child that dies (kill -9, the out-of-memory killer) fails only its own run, recorded
as an error saying how it died; its slot gets a new process and runs that never started
wait their turn as usual. Children die with the driver (:func:`procs.die_with_parent`), so
a killed sweep leaves no orphan training on. ``ray`` — plain ``@ray.remote`` tasks;
``ray.init(address)`` (a local instance when no address).
"""

from __future__ import annotations

import itertools
import os
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing import connection, get_context
from pathlib import Path
from typing import Any

import yaml

from .. import checks
from .config import RunConfig
from .loop import train_run
from .procs import describe_exit, die_with_parent
from .protocols import preset as make_preset
from .store import ResultStore

_TOP_KEYS = {"preset", "base", "grid", "runs"}


@dataclass
class SweepSummary:
    total: int = 0
    skipped: int = 0
    done: int = 0
    errors: int = 0
    diverged: int = 0
    error_messages: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No run failed (diverged runs are results, not failures)."""
        return self.errors == 0


def _make(fields: dict[str, Any], preset_name: str | None) -> RunConfig:
    if preset_name is not None and not isinstance(preset_name, str):
        raise ValueError(f"sweep config: preset must be a name, got {preset_name!r}")
    if preset_name is not None:
        fields = dict(fields)
        task = fields.pop("task", None)
        if task is None:
            raise ValueError("sweep: every run needs a 'task'")
        return make_preset(preset_name, task, **fields)
    return RunConfig.from_dict(fields)


def expand_grid(spec: dict[str, Any]) -> list[RunConfig]:
    """RunConfigs of a sweep spec (the parsed YAML), in grid order, duplicates removed."""
    if not isinstance(spec, dict):
        raise ValueError("sweep config must be a YAML mapping with keys preset/base/grid/runs")
    if not all(isinstance(k, str) for k in spec):
        raise ValueError(f"sweep config: keys must be names; allowed: {sorted(_TOP_KEYS)}")
    unknown = set(spec) - _TOP_KEYS
    if unknown:
        raise ValueError(f"sweep config: unknown keys {sorted(unknown)}; allowed: {sorted(_TOP_KEYS)}")
    preset_name = spec.get("preset")
    base = spec.get("base") or {}
    grid = spec.get("grid") or {}
    extra = spec.get("runs") or []
    if not isinstance(base, dict) or not isinstance(grid, dict) or not isinstance(extra, list):
        raise ValueError("sweep config: 'base' and 'grid' must be mappings, 'runs' a list")
    if not grid and not extra:
        raise ValueError("sweep config: give a 'grid' or a list of 'runs'")
    configs: list[RunConfig] = []
    if grid:
        keys = list(grid)
        values = [v if isinstance(v, list) else [v] for v in grid.values()]
        empty = [str(k) for k, v in zip(keys, values) if not v]
        if empty:
            raise ValueError(f"sweep config: grid lists {empty} are empty (the grid would have no runs)")
        for combo in itertools.product(*values):
            configs.append(_make({**base, **dict(zip(keys, combo))}, preset_name))
    for run in extra:
        if not isinstance(run, dict):
            raise ValueError(f"sweep config: each entry of 'runs' must be a mapping, got {run!r}")
        configs.append(_make({**base, **run}, preset_name))
    seen, unique = set(), []
    for c in configs:
        if c.run_id not in seen:
            seen.add(c.run_id)
            unique.append(c)
    return unique


def load_sweep(path: str | Path) -> list[RunConfig]:
    """Read a sweep YAML file; one-line ValueError naming the file for a missing, binary or
    non-UTF-8 file, malformed YAML and bad fields."""
    if not isinstance(path, (str, Path)):
        raise ValueError(f"sweep config: expected a file path, got {type(path).__name__}")
    path = Path(path)
    text = checks.read_text_file(path, "sweep config")
    try:
        spec = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ValueError(f"sweep config {path}: malformed YAML{where} ({problem})") from None
    try:
        return expand_grid(spec)
    except ValueError as exc:
        raise ValueError(f"sweep config {path}: {exc}") from None


def _run_one(cfg_dict: dict, out_dir: str | None, run_fn: Callable | None, threads: int = 1,
             restart: bool = False):
    """Worker body: ("done", RunResult) or ("error", traceback text)."""
    import torch

    torch.set_num_threads(threads)
    try:
        cfg = RunConfig.from_dict(cfg_dict)
        out = None if out_dir is None else str(Path(out_dir) / cfg.run_id)
        if run_fn is not None:
            return "done", run_fn(cfg, out)
        return "done", train_run(cfg, out, restart=restart)
    except Exception as exc:  # recorded, the sweep goes on
        return "error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"


def run_sweep(configs: list[RunConfig], db: str | Path, backend: str = "local", workers: int | None = None,
              address: str | None = None, out_dir: str | Path | None = None, run_fn: Callable | None = None,
              retry_errors: bool = False, on_event: Callable[[str, RunConfig, Any], None] | None = None,
              restart: bool = False) -> SweepSummary:
    """Run every config not yet finished in ``db``; record each as it finishes.

    ``restart``: the runs started now ignore (and replace) their checkpoints under
    ``out_dir`` — with ``retry_errors``, the way to redo runs whose checkpoint was corrupt."""
    if backend not in ("local", "ray"):
        raise ValueError(f"unknown backend {backend!r}; choose 'local' or 'ray'")
    if workers is not None:
        workers = checks.check_int(workers, "workers", min=1, max=1024)
    if isinstance(configs, RunConfig) or not isinstance(configs, (list, tuple)):
        raise ValueError(f"configs must be a list of RunConfig, got {type(configs).__name__}")
    bad = [type(c).__name__ for c in configs if not isinstance(c, RunConfig)]
    if bad:
        raise ValueError(f"configs must be a list of RunConfig, got items of type {sorted(set(bad))}")
    if on_event is not None and not callable(on_event):
        raise ValueError("on_event must be callable")
    if out_dir is not None:
        checks.check_output_path(out_dir, "out_dir", kind="dir")
    store = ResultStore(db)
    summary = SweepSummary(total=len(configs))
    try:
        finished = store.finished(include_errors=not retry_errors)
        todo = [c for c in configs if c.run_id not in finished]
        summary.skipped = len(configs) - len(todo)
        for c in configs:
            if c.run_id in finished and on_event:
                on_event("skipped", c, None)
        if not todo:
            return summary
        n_workers = workers or min(len(todo), os.cpu_count() or 1)
        out = None if out_dir is None else str(out_dir)

        def record(cfg: RunConfig, status: str, payload: Any) -> None:
            if status == "done" and getattr(payload, "status", "done") == "diverged":
                store.record_result(payload)
                summary.diverged += 1
                status = "diverged"
            elif status == "done":
                store.record_result(payload)
                summary.done += 1
            else:
                store.record_error(cfg, str(payload))
                summary.errors += 1
                summary.error_messages.append(f"{cfg.label()}: {str(payload).splitlines()[0]}")
            if on_event:
                on_event(status, cfg, payload)

        if backend == "local":
            _local(todo, n_workers, out, run_fn, record, restart)
        else:
            _ray(todo, n_workers, address, out, run_fn, record, restart)
    finally:
        store.close()
    return summary


def _start_method() -> str:
    """fork where available (workers inherit the imported torch; each sets 1 thread, as
    DataLoader workers do), spawn elsewhere; override with EXPRESSIVITY_MP_START."""
    import multiprocessing

    default = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    method = os.environ.get("EXPRESSIVITY_MP_START", default)
    return checks.check_choice(method, "EXPRESSIVITY_MP_START", multiprocessing.get_all_start_methods())


def _worker(conn, cfg_dict: dict, out: str | None, run_fn, restart: bool, parent_pid: int) -> None:
    """Child body of the local backend: run one config, send the outcome, exit."""
    die_with_parent(parent_pid)
    outcome = _run_one(cfg_dict, out, run_fn, restart=restart)
    try:
        conn.send(outcome)
    except Exception as exc:  # e.g. a result that cannot be pickled
        try:
            conn.send(("error", f"worker could not send its result: {type(exc).__name__}: {exc}"))
        except Exception:
            pass
    finally:
        conn.close()


def _local(todo, n_workers, out, run_fn, record, restart: bool = False) -> None:
    """One process per run, at most ``n_workers`` at once; a dead process fails only its run."""
    ctx = get_context(_start_method())
    queue = list(todo)
    running: dict = {}  # reader connection -> (process, cfg)
    try:
        while queue or running:
            while queue and len(running) < n_workers:
                cfg = queue.pop(0)
                reader, writer = ctx.Pipe(duplex=False)
                proc = ctx.Process(target=_worker, args=(writer, cfg.to_dict(), out, run_fn, restart, os.getpid()),
                                   daemon=True, name=f"sweep-{cfg.run_id}")
                proc.start()
                writer.close()  # only the child holds the write end: its death reads as EOF
                running[reader] = (proc, cfg)
            for reader in connection.wait(list(running)):
                proc, cfg = running.pop(reader)
                try:
                    status, payload = reader.recv()
                except (EOFError, OSError):
                    proc.join(10)
                    status, payload = "error", (f"worker process died before finishing the run "
                                                f"({describe_exit(proc.exitcode)}); rerun with "
                                                "--retry-errors (it resumes from its checkpoint)")
                finally:
                    reader.close()
                proc.join(10)
                record(cfg, status, payload)
    finally:
        for reader, (proc, _) in running.items():  # interrupted: stop what is still running
            if proc.is_alive():
                proc.kill()
            proc.join(5)
            reader.close()


def _ray(todo, n_workers, address, out, run_fn, record, restart: bool = False) -> None:
    try:
        import ray
    except ImportError:
        raise ValueError("backend 'ray' needs the ray package (pip install 'expressivity[ray]')") from None
    started = False
    if not ray.is_initialized():
        kwargs: dict[str, Any] = {"include_dashboard": False, "logging_level": "WARNING"}
        if address is None:
            kwargs["num_cpus"] = n_workers
        ray.init(address=address, **kwargs)
        started = True
    try:
        task = ray.remote(num_cpus=1, max_retries=0)(_run_one)
        refs = {task.remote(c.to_dict(), out, run_fn, 1, restart): c for c in todo}
        while refs:
            done, _ = ray.wait(list(refs), num_returns=1)
            for ref in done:
                cfg = refs.pop(ref)
                try:
                    status, payload = ray.get(ref)
                except Exception as exc:  # the Ray task or its worker died
                    status, payload = "error", f"ray task failed: {type(exc).__name__}: {exc}"
                record(cfg, status, payload)
    finally:
        if started:
            ray.shutdown()
