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

The SQLite :class:`ResultStore` is the source of truth: runs already recorded (done, or
error unless ``retry_errors``) are skipped, so a killed sweep restarted with the same
file loses nothing and duplicates nothing. Each finished run is written by the driver in one
transaction as soon as it finishes; a run that raises records its traceback and the sweep
goes on. Backends: ``local`` (concurrent.futures.ProcessPoolExecutor; fork on Linux) and ``ray``
(plain ``@ray.remote`` tasks; ``ray.init(address)`` — local instance when no address).
"""

from __future__ import annotations

import itertools
import os
import traceback
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import yaml

from .config import RunConfig
from .loop import train_run
from .protocols import preset as make_preset
from .store import ResultStore

_TOP_KEYS = {"preset", "base", "grid", "runs"}


@dataclass
class SweepSummary:
    total: int = 0
    skipped: int = 0
    done: int = 0
    errors: int = 0
    error_messages: list[str] = field(default_factory=list)


def _make(fields: dict[str, Any], preset_name: str | None) -> RunConfig:
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
    """Read a sweep YAML file; ValueError for malformed YAML or bad fields."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such sweep config: {path}")
    try:
        spec = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise ValueError(f"{path}: malformed YAML ({str(exc).splitlines()[0]})") from None
    return expand_grid(spec)


def _run_one(cfg_dict: dict, out_dir: str | None, run_fn: Callable | None, threads: int = 1):
    """Worker body: ("done", RunResult) or ("error", traceback text)."""
    import torch

    torch.set_num_threads(threads)
    try:
        cfg = RunConfig.from_dict(cfg_dict)
        fn = run_fn or train_run
        out = None if out_dir is None else str(Path(out_dir) / cfg.run_id)
        return "done", fn(cfg, out)
    except Exception as exc:  # recorded, the sweep goes on
        return "error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"


def run_sweep(configs: list[RunConfig], db: str | Path, backend: str = "local", workers: int | None = None,
              address: str | None = None, out_dir: str | Path | None = None, run_fn: Callable | None = None,
              retry_errors: bool = False, on_event: Callable[[str, RunConfig, Any], None] | None = None
              ) -> SweepSummary:
    """Run every config not yet finished in ``db``; record each as it finishes."""
    if backend not in ("local", "ray"):
        raise ValueError(f"unknown backend {backend!r}; choose 'local' or 'ray'")
    if workers is not None and workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
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
            if status == "done":
                store.record_result(payload)
                summary.done += 1
            else:
                store.record_error(cfg, str(payload))
                summary.errors += 1
                summary.error_messages.append(f"{cfg.label()}: {str(payload).splitlines()[0]}")
            if on_event:
                on_event(status, cfg, payload)

        if backend == "local":
            _local(todo, n_workers, out, run_fn, record)
        else:
            _ray(todo, n_workers, address, out, run_fn, record)
    finally:
        store.close()
    return summary


def _start_method() -> str:
    """fork where available (workers inherit the imported torch; each sets 1 thread, as
    DataLoader workers do), spawn elsewhere; override with EXPRESSIVITY_MP_START."""
    import multiprocessing

    default = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    return os.environ.get("EXPRESSIVITY_MP_START", default)


def _local(todo, n_workers, out, run_fn, record) -> None:
    with ProcessPoolExecutor(max_workers=n_workers, mp_context=get_context(_start_method())) as pool:
        pending = {pool.submit(_run_one, c.to_dict(), out, run_fn): c for c in todo}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                cfg = pending.pop(fut)
                try:
                    status, payload = fut.result()
                except Exception as exc:  # the worker process itself died
                    status, payload = "error", f"worker failed: {type(exc).__name__}: {exc}"
                record(cfg, status, payload)


def _ray(todo, n_workers, address, out, run_fn, record) -> None:
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
        refs = {task.remote(c.to_dict(), out, run_fn): c for c in todo}
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
