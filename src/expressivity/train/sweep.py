"""Sweeps: a YAML grid → RunConfigs → runs on a local process pool or on Ray.

YAML format (every key optional except ``grid`` or ``runs``)::

    preset: quick            # protocol preset applied to every run (deletang | bhattamishra | yao | quick)
    base: {steps: 200}       # RunConfig fields shared by all runs
    grid:                    # the product of these lists (any RunConfig field)
      task: [parity, dyck]
      model: [transformer, lstm]
      seed: [0, 1]
    runs:                    # extra explicit runs (merged over preset and base)
      - {task: first, model: lstm}

The SQLite results store (:class:`expressivity.runs.Store`) is the source of truth: runs
already recorded (done, diverged, or error unless ``retry_errors``) are skipped, so a killed
sweep restarted with the same file loses nothing and duplicates nothing. Each finished run is written by the
driver in one transaction as soon as it finishes; a run that raises records its error, a
run whose loss became NaN is recorded as diverged, and the sweep goes on.

Each run is one work unit of the shared driver (:func:`expressivity.runs.run_units`):
``local`` — one child process per run, at most ``workers`` at a time; a child that dies
(kill -9, the out-of-memory killer) fails only its own run, recorded as an error saying how
it died, and children die with the driver; ``ray`` — Ray tasks on a local instance or the
cluster at ``address``. Results reach the store through the driver process only. Runs start
longest first (:func:`.budget.estimate_seconds`), the schedule ``estimate_sweep`` assumes.
With a ``timeout`` a run that takes longer is stopped and recorded as ``timed_out``.

Many runs at once (default): runs that differ only in seed and optimiser settings
(:func:`.many.group_configs`, at most :data:`MAX_GROUP` each) are one unit that trains them as
one batched model (:func:`.many.train_many`); each run is still recorded, checkpointed under
``out_dir/<run_id>`` and resumed as its own run. A group's process that dies fails its runs
(each recorded as an error, each resuming from its own checkpoint). ``group=False``
(``sweep --no-group``) gives one unit per run.

Part of a grid: :func:`select_runs` keeps the runs whose fields take the given values
(``only``, ANDed over fields, ORed over the values of a field) and/or one shard ``(i, n)``:
run ``r`` belongs to shard ``1 + h(r.run_id) mod n`` with ``h`` the first 64 bits of
SHA-256, so the shards of a grid are disjoint, cover it, and do not depend on the grid's order
or on the other runs (N machines each given ``--shard i/N`` run every run exactly once).
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from ..fileio import check_output_path, read_text_file
from ..memory import fmt_bytes
from ..rules import check_bool, check_choice, check_float, check_int
from ..runs.driver import BACKENDS, Outcome, Unit, check_address, run_units
from ..runs.sinks import check_sinks, close_sinks, open_sinks
from ..runs.store import Store
from .budget import estimate_seconds
from .config import RunConfig
from .loop import train_run
from .many import RunFailure, group_unit
from .protocols import preset as make_preset

_TOP_KEYS = {"preset", "base", "grid", "runs"}
MAX_RUNS = 20_000  # runs of one sweep file: sized before anything is expanded (each run is minutes or more)
MAX_FILE_BYTES = 2 * 2**20  # a sweep file's size, checked before it is parsed
MAX_GROUP = 32  # runs trained as one batched model by default (train/many.py)

log = logging.getLogger(__name__)  # one INFO line per finished run


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

    def counts(self, db) -> str:
        """One line: runs done, skipped (already in ``db``), failed, diverged."""
        diverged = f", {self.diverged} diverged" if self.diverged else ""
        return (f"{self.total} runs: {self.done} done, {self.skipped} skipped (already in {db}), "
                f"{self.errors} failed{diverged}")

    @property
    def advice(self) -> str | None:
        """What to do when a run failed (None when none did)."""
        if self.ok:
            return None
        if any("--restart" in m for m in self.error_messages):
            return "a checkpoint could not be used: rerun with --retry-errors --restart to train those runs from scratch"
        return "some runs failed: fix the cause, then rerun with --retry-errors"


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
    bad_keys = [k for k in grid if not isinstance(k, str)]
    if bad_keys:
        raise ValueError(f"sweep config: grid keys must be RunConfig field names, got {bad_keys[0]!r}")
    keys = list(grid)
    values = [v if isinstance(v, list) else [v] for v in grid.values()]
    empty = [str(k) for k, v in zip(keys, values) if not v]
    if empty:
        raise ValueError(f"sweep config: grid lists {empty} are empty (the grid would have no runs)")
    check_size(keys, values, len(extra))
    configs: list[RunConfig] = []
    if grid:
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


def check_size(keys: list, values: list[list], extra: int = 0, limit: int | None = None) -> int:
    """The number of runs of a grid (the product of its axes' lengths) plus ``extra`` explicit
    runs, refused over ``limit`` (:data:`MAX_RUNS`) before anything is expanded."""
    limit = MAX_RUNS if limit is None else limit
    size = math.prod(len(v) for v in values) if values else 0
    total = size + extra
    if total > limit:
        axes = " × ".join(f"{len(v)} {k}" for k, v in zip(keys, values) if len(v) > 1) or "1"
        grid = f"a grid of {size:,} runs ({axes})" if size else "no grid"
        more = f" and {extra:,} explicit runs" if extra else ""
        raise ValueError(f"sweep config: {grid}{more} makes {total:,} runs, over the limit of {limit:,} per sweep "
                         "file; split it into several files (e.g. one per task or seed)")
    return total


def load_sweep(path: str | Path) -> list[RunConfig]:
    """Read a sweep YAML file; one-line ValueError naming the file for a missing, binary or
    non-UTF-8 file, malformed YAML and bad fields."""
    if not isinstance(path, (str, Path)):
        raise ValueError(f"sweep config: expected a file path, got {type(path).__name__}")
    path = Path(path)
    size = path.stat().st_size if path.is_file() else 0
    if size > MAX_FILE_BYTES:
        raise ValueError(f"sweep config {path} is {fmt_bytes(size)}, over the limit of "
                         f"{fmt_bytes(MAX_FILE_BYTES)} for a sweep file (a grid lists axes, not runs); split it")
    text = read_text_file(path, "sweep config")
    try:
        spec = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # libyaml: 10x faster
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ValueError(f"sweep config {path}: malformed YAML{where} ({problem})") from None
    try:
        return expand_grid(spec)
    except ValueError as exc:
        raise ValueError(f"sweep config {path}: {exc}") from None


def _scalar_fields() -> list[str]:
    """RunConfig fields a run can be selected by (the ones holding one name or number)."""
    probe = RunConfig(task="parity")
    return [f.name for f in fields(RunConfig) if isinstance(getattr(probe, f.name), (str, int, float, bool))]


def _same(given, value) -> bool:
    """Does ``given`` (a string from the command line, or a typed value) name ``value``?"""
    if not isinstance(given, str):
        given = _show(given)
    if isinstance(value, bool):
        return given.strip().lower() == str(value).lower()
    if isinstance(value, (int, float)):
        try:
            return float(given) == value
        except ValueError:
            return False
    return given == value


def _show(value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def parse_only(items, name: str = "--only") -> dict[str, list[str]]:
    """["task=parity_check,even_pairs", "seed=0"] → {"task": [...], "seed": ["0"]}; a key given
    twice gets the union of its values."""
    if isinstance(items, str):
        items = [items]
    if items is not None and not isinstance(items, (list, tuple)):
        raise ValueError(f"{name} expects a list of KEY=VALUE[,VALUE...] strings, got {type(items).__name__}")
    out: dict[str, list[str]] = {}
    for item in items or ():
        if not isinstance(item, str) or "=" not in item:
            raise ValueError(f"{name} expects KEY=VALUE[,VALUE...], e.g. task=parity_check, got {item!r}")
        key, text = (s.strip() for s in item.split("=", 1))
        values = [v.strip() for v in text.split(",")]
        if not key or not all(values):
            raise ValueError(f"{name} expects KEY=VALUE[,VALUE...], e.g. task=parity_check, got {item!r}")
        have = out.setdefault(key, [])
        have.extend(v for v in dict.fromkeys(values) if v not in have)
    return out


def parse_shard(text, name: str = "--shard") -> tuple[int, int]:
    """"I/N" → (I, N) with 1 <= I <= N."""
    i_s, sep, n_s = str(text).partition("/") if isinstance(text, str) else ("", "", "")
    if not sep or not i_s.strip().isdigit() or not n_s.strip().isdigit():
        raise ValueError(f"{name} expects I/N (shard I of N, 1 <= I <= N), e.g. 2/8, got {text!r}")
    return check_shard((int(i_s), int(n_s)), name)


def check_shard(shard, name: str = "shard") -> tuple[int, int]:
    """``(i, n)`` as ints with 1 <= i <= n <= 10⁶."""
    if not isinstance(shard, (tuple, list)) or len(shard) != 2:
        raise ValueError(f"{name} must be (i, n): shard i of n, got {shard!r}")
    n = check_int(shard[1], f"{name}: the number of shards N", min=1, max=10**6)
    i = check_int(shard[0], f"{name}: the shard I", min=1, max=n)
    return i, n


def shard_of(run_id: str, n: int) -> int:
    """The shard (1..n) of a run: 1 + the first 64 bits of SHA-256(run_id) mod n."""
    return 1 + int(hashlib.sha256(run_id.encode()).hexdigest()[:16], 16) % n


def select_runs(configs: list[RunConfig], only: dict | None = None,
                shard: tuple[int, int] | None = None) -> list[RunConfig]:
    """The configs (in their order) whose every ``only`` field takes one of its values, and
    that fall in ``shard = (i, n)``. ``only``: field → value or list of values (strings as
    typed on the command line, e.g. ``{"seed": ["0"], "model": ["rnn", "lstm"]}``). A field
    that is not selectable, a value no config has, or an ``only`` that matches no run is a
    one-line ValueError listing the valid choices."""
    configs = list(configs)
    if only:
        if not isinstance(only, dict):
            raise ValueError(f"only must be a mapping of field → values, got {type(only).__name__}")
        keys = _scalar_fields()
        only = {k: list(v) if isinstance(v, (list, tuple)) else [v] for k, v in only.items()}
        for key, wanted in only.items():  # every value is checked against the whole grid
            check_choice(key, "--only key", keys)
            present = list(dict.fromkeys(getattr(c, key) for c in configs))
            for w in wanted:
                if not any(_same(w, v) for v in present):
                    raise ValueError(f"--only {key}: {w!r} is in no run of the grid; valid: "
                                     f"{', '.join(_show(v) for v in present)}")
        configs = [c for c in configs if all(any(_same(w, getattr(c, k)) for w in ws) for k, ws in only.items())]
        if not configs:
            given = " ".join(f"{k}={','.join(map(_show, ws))}" for k, ws in only.items())
            raise ValueError(f"--only {given}: no run of the grid matches all of these")
    if shard is not None:
        i, n = check_shard(shard, "--shard")
        configs = [c for c in configs if shard_of(c.run_id, n) == i]
    return configs


def _run_one(cfg_dict: dict, out_dir: str | None, run_fn: Callable | None, threads: int = 1,
             restart: bool = False, device: str = "auto", sinks: tuple[str, ...] = ()):
    """Unit body: train one config (its RunResult; an exception is the unit's error). The
    device travels beside the config: it is not part of ``to_dict``. ``sinks``: specs of
    :mod:`expressivity.runs.sinks`, opened here, in the worker, one per run."""
    import torch

    torch.set_num_threads(threads)
    cfg = RunConfig.from_dict({**cfg_dict, "device": device})
    out = None if out_dir is None else str(Path(out_dir) / cfg.run_id)
    if run_fn is not None:
        return run_fn(cfg, out)
    opened = open_sinks(sinks, cfg.run_id, cfg.to_dict(), group="sweep")
    try:
        return train_run(cfg, out, restart=restart, sinks=opened)
    finally:
        close_sinks(opened)


def plan_groups(configs: list[RunConfig], workers: int, max_group: int | None = MAX_GROUP) -> list[list[RunConfig]]:
    """The sweep's units when grouping: :func:`.many.group_configs` (at most ``max_group`` runs
    each) of the runs :func:`.many.worth_grouping` (on an accelerator, all; on the CPU, the
    small ones), the rest one unit each; the largest group halved while there are fewer units
    than ``workers`` (so every worker has one); longest first (the sum of
    :func:`.budget.estimate_seconds`)."""
    from .many import group_configs, worth_grouping

    worth = [c for c in configs if worth_grouping(c)]
    groups = group_configs(worth, max_group) + [[c] for c in configs if not worth_grouping(c)]
    while len(groups) < workers:
        big = max(range(len(groups)), key=lambda i: len(groups[i]), default=None)
        if big is None or len(groups[big]) < 2:
            break
        g = groups.pop(big)
        groups[big:big] = [g[: len(g) // 2], g[len(g) // 2:]]
    return sorted(groups, key=lambda g: sum(estimate_seconds(c) for c in g), reverse=True)


def sweep_units(plan: list[list[RunConfig]], out: str | None, run_fn: Callable | None, restart: bool,
                sinks: tuple[str, ...], timeout: float | None) -> tuple[list[Unit], dict[str, list[RunConfig]]]:
    """The sweep's units for ``plan`` (groups of runs): a single run trains by :func:`_run_one`, a
    group as one batched model by :func:`.many.group_unit` (its timeout R × ``timeout``); also,
    per unit key, the runs it stands for."""
    units, members = [], {}
    for g in plan:
        if len(g) == 1:
            c = g[0]
            units.append(Unit(c.run_id, _run_one, (c.to_dict(), out, run_fn, 1, restart, c.device, sinks),
                              group="sweep"))
        else:
            key = "group:" + "+".join(c.run_id for c in g)[:200]
            lim = None if timeout is None else timeout * len(g)
            units.append(Unit(key, group_unit, ([c.to_dict() for c in g], out, 1, restart, g[0].device),
                              group="sweep", timeout=lim))
        members[units[-1].key] = g
    return units, members


def run_sweep(configs: list[RunConfig], db: str | Path, backend: str = "local", workers: int | None = None,
              address: str | None = None, out_dir: str | Path | None = None, run_fn: Callable | None = None,
              retry_errors: bool = False, on_event: Callable[[str, RunConfig, Any], None] | None = None,
              restart: bool = False, timeout: float | None = None, reset_db: bool = False,
              group: bool = True, max_group: int | None = MAX_GROUP,
              sinks: list[str] | tuple[str, ...] = ()) -> SweepSummary:
    """Run every config not yet finished in ``db``; record each as it finishes.

    ``restart``: the runs started now ignore (and replace) their checkpoints under
    ``out_dir`` — with ``retry_errors``, the way to redo runs whose checkpoint was corrupt.
    ``timeout``: seconds per run (both backends); a run stopped by it is recorded as
    ``timed_out`` (retried with ``retry_errors``); a group's unit gets R × timeout.
    ``reset_db``: a ``db`` of another code version is set aside instead of refused.
    ``group``: compatible runs (:func:`.many.group_configs`, at most ``max_group``) train as
    one batched model, one unit (:func:`plan_groups`); each is still recorded, checkpointed
    and resumed as its own run. Off with ``group=False``, a ``run_fn`` or ``sinks``.
    ``sinks``: where each run also logs its loss and metrics, e.g. ``["tensorboard:runs/tb"]``
    (:mod:`expressivity.runs.sinks`)."""
    check_choice(backend, "backend", BACKENDS)
    retry_errors, restart, reset_db = (check_bool(v, n) for v, n in
                                       ((retry_errors, "retry_errors"), (restart, "restart"), (reset_db, "reset_db")))
    group = check_bool(group, "group")
    if workers is not None:
        workers = check_int(workers, "workers", min=1, max=1024)
    if max_group is not None:
        max_group = check_int(max_group, "max_group (runs per group)", min=1, max=10**6)
    if timeout is not None:  # before the store is created
        timeout = check_float(timeout, "timeout (seconds)", min=0, min_open=True)
    if isinstance(configs, RunConfig) or not isinstance(configs, (list, tuple)):
        raise ValueError(f"configs must be a list of RunConfig, got {type(configs).__name__}")
    bad = [type(c).__name__ for c in configs if not isinstance(c, RunConfig)]
    if bad:
        raise ValueError(f"configs must be a list of RunConfig, got items of type {sorted(set(bad))}")
    if on_event is not None and not callable(on_event):
        raise ValueError("on_event must be callable")
    if out_dir is not None:
        check_output_path(out_dir, "out_dir", kind="dir")
    sinks = tuple(check_sinks(list(sinks or ()), "sinks"))
    if backend == "ray":
        check_address(address)  # before the store is touched: a wrong address fails at once
    store = Store(db, reset=reset_db)
    summary = SweepSummary(total=len(configs))
    try:
        finished = store.finished(include_errors=not retry_errors)
        todo = sorted((c for c in configs if c.run_id not in finished), key=estimate_seconds, reverse=True)
        summary.skipped = len(configs) - len(todo)
        for c in configs:
            if c.run_id in finished and on_event:
                on_event("skipped", c, None)
        out = None if out_dir is None else str(out_dir)
        grouping = group and run_fn is None and not sinks
        plan = plan_groups(todo, workers or os.cpu_count() or 1, max_group) if grouping else [[c] for c in todo]
        units, members = sweep_units(plan, out, run_fn, restart, sinks, timeout)
        if summary.skipped:
            log.info("%d of %d runs already in %s: skipped", summary.skipped, len(configs), db)
        if todo:
            log.info("%d runs to train in %d units (%s backend)", len(todo), len(units), backend)

        def record(outcome: Outcome) -> None:
            g = members[outcome.unit.key]
            if len(g) == 1:
                record_one(g[0], outcome.value, outcome.status, outcome.error, outcome.seconds)
            else:
                values = outcome.value if outcome.status == "done" else [None] * len(g)
                for cfg, value in zip(g, values):
                    if isinstance(value, RunFailure):  # this run could not start: it fails alone
                        record_one(cfg, None, "error", value.error, outcome.seconds / len(g))
                    else:
                        record_one(cfg, value, outcome.status, outcome.error, outcome.seconds / len(g))

        def record_one(cfg: RunConfig, payload, status: str, error: str, seconds: float) -> None:
            if status == "done" and getattr(payload, "status", "done") == "diverged":
                store.record_result(payload)
                summary.diverged += 1
                status = "diverged"
            elif status == "done":
                store.record_result(payload)
                summary.done += 1
            else:
                payload = error
                if status == "error" and "process died" in payload:
                    payload += "; rerun with --retry-errors (it resumes from its checkpoint)"
                store.record_error(cfg, payload, status)
                summary.errors += 1
                summary.error_messages.append(f"{cfg.label()}: {payload.splitlines()[0]}")
            left = len(todo) - summary.done - summary.diverged - summary.errors
            more = f"; {left} to go" if left else ""
            if status == "done":
                log.info("run %s done in %.1f s (score %.3f)%s", cfg.label(), seconds,
                         getattr(payload, "score", float("nan")), more)
            else:
                log.warning("run %s %s after %.1f s%s", cfg.label(), status.replace("_", " "), seconds, more)
            if on_event:
                on_event(status, cfg, payload)

        run_units(units, backend=backend, workers=workers, address=address, timeout=timeout, on_done=record)
    finally:
        store.close()
    return summary


def on_device(configs: list[RunConfig], device: str, dtype: str | None = None) -> list[RunConfig]:
    """The configs on ``device`` (not part of their ids) and, with ``dtype``, their randomly
    initialised transformer runs in it (bfloat16 is part of the id)."""
    from dataclasses import replace

    out = []
    for c in configs:
        changes = {"device": device}
        if dtype is not None and c.model == "transformer" and c.init == "random":
            changes["dtype"] = dtype
        out.append(replace(c, **changes))
    return out


def sweep_store(db: Path, out: Path | None, reset_db: bool) -> tuple[Path, Path | None]:
    """``expressivity sweep``'s store and checkpoint directory checked before the first run:
    (the checkpoint directory — ``out``, else ``checkpoints`` beside ``db`` — and where a store of
    another code version was set aside, None when none was)."""
    out_dir = out if out is not None else db.parent / "checkpoints"
    check_output_path(db, "--db")
    check_output_path(out_dir, "--out", kind="dir")
    return out_dir, Store.check(db, reset_db)


def prepare_sweep(config: Path, *, db: Path, backend: str, address, timeout, workers, restart: bool, only, shard,
                dry_run: bool, device: str, dtype, max_group: int, gpu_bench, log):
    """``expressivity sweep``'s options checked (each error names its option: ``--backend``,
    ``--workers`` …; a Ray ``address`` is probed unless ``dry_run``), then the grid loaded:
    (the grid, the selected configs on ``device`` (:func:`on_device`; ``--only`` / ``--shard``:
    :func:`select_runs`), the ``gpu_bench`` table or None)."""
    from ..rules import check_choice, check_float, check_int
    from .budget import read_gpu_bench
    from .devices import check_device_name, check_dtype, resolve_device

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
        check_address(address)
    check_int(max_group, "--max-group", min=1, max=10**6)
    check_device_name(device, "--device")
    if not dry_run:
        where = resolve_device(device, "--device")
        if dtype is not None:
            check_dtype(dtype, where, "--dtype")
    elif dtype is not None:
        check_choice(dtype, "--dtype", ("float32", "bfloat16"))
    if gpu_bench is not None and not dry_run:
        raise ValueError("--gpu-bench is read by --dry-run only (the GPU-hours estimate)")
    bench = None if gpu_bench is None else read_gpu_bench(gpu_bench, "--gpu-bench")
    grid = load_sweep(config)
    return grid, on_device(select_runs(grid, wanted, picked), device, dtype), bench
