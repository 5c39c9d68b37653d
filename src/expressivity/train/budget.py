"""What a run costs before it runs: an estimate of its seconds on one CPU core (and, grouped, on one GPU).

A sweep's budget is decided before any training (``chomsky-quick.yaml`` must fit 30 minutes
on 2 cores), so the estimate is a formula in the config alone, calibrated once by timing runs
on this project's CPU (bench: ``docs/benchmark.md`` lists the measurements):

* recurrent models step through time, so one training batch of B strings costs, per time
  step, ``a_model + b·B·g·d²`` (a fixed per-step cost of the model's small ops; the core's
  matrix products, g = 1 for an Elman core, 4 for the LSTM's four gates) plus, for a stack or
  tape of K cells, ``c_model·B·K`` (moving the memory), × 1/4 when only evaluating;
* the transformer costs, per block, ``c + B·T·(k_d·d·max(1, d/64) + k_h·H)`` per training
  step (B strings of T tokens; the per-token work grows with the width and the heads) plus
  the attention's ``k_attn·B·T²`` per head at long evaluation lengths;
* layers multiply the recurrent core's cost;
* every run pays ``RUN_OVERHEAD_S`` once: a sweep starts each run in a fresh process, whose
  first torch calls, task and model construction take about that long.

The constants are fitted to one idle core (``bench/budget_bench.py``, 2026-12-02: the quick
and full sizes of the two Chomsky sweeps; the table is in ``docs/benchmark.md``).

``T`` is the task's token count for input length n (``n + 1``; ``n + 1 + output_length(n)``
for transduction). ``estimate_seconds(cfg)`` and ``estimate_sweep(configs, workers)``
(the wall time of the sweep on ``workers`` cores, longest runs first) are estimates, good to
a factor of about 2 on an idle machine (more on a loaded one) — a budget check, not a timer.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from pathlib import Path

from .config import RunConfig

# recurrent, per time step of one training batch: a_model (s), b (s per B·g·d²), c_model (s per B·K)
RECURRENT_FIXED_S: dict[str, float] = {"rnn": 1.45e-4, "lstm": 1.45e-4, "stack_rnn": 4.35e-4,
                                       "stack_lstm": 4.35e-4, "tape_rnn": 1.13e-3}
CORE_S = 1.64e-10
GATES: dict[str, int] = {"rnn": 1, "lstm": 4, "stack_rnn": 1, "stack_lstm": 4, "tape_rnn": 1}
MEMORY_CELL_S: dict[str, float] = {"stack_rnn": 4.9e-8, "stack_lstm": 4.9e-8, "tape_rnn": 1.6e-7}
EVAL_FRACTION = 0.25  # forward only, per time step, relative to a training step
# transformer, per block and training step: c (s), k_d (s per token·d), k_h (s per token·head)
TRANSFORMER_BLOCK_S = 1.5e-3
TRANSFORMER_WIDTH_S = 1.25e-7
TRANSFORMER_HEAD_S = 1.35e-7
TRANSFORMER_ATTN_S = 2.75e-9  # k_attn: per string × T² × head × block at evaluation (the earlier calibration)
RUN_OVERHEAD_S = 1.5  # per run: a fresh worker's torch warm-up, task and model construction


def _tokens(task, n: int) -> int:
    return int(task.n_tokens(n))


def recurrent_step_s(cfg: RunConfig, batch: int) -> float:
    """Seconds per time step of one training batch of a recurrent ``cfg.model``."""
    from .models import memory_cells

    m = cfg.model
    core = CORE_S * batch * GATES[m] * cfg.d_model ** 2 * (cfg.layers if m in ("rnn", "lstm") else 1)
    return RECURRENT_FIXED_S[m] + core + MEMORY_CELL_S.get(m, 0.0) * batch * memory_cells(cfg)


def transformer_step_s(cfg: RunConfig, batch: int, tokens: float) -> float:
    """Seconds of one transformer training step on ``batch`` strings of ``tokens`` tokens."""
    per_token = TRANSFORMER_WIDTH_S * cfg.d_model * max(1.0, cfg.d_model / 64) + TRANSFORMER_HEAD_S * cfg.heads
    return cfg.layers * (TRANSFORMER_BLOCK_S + batch * tokens * per_token)


def estimate_seconds(cfg: RunConfig) -> float:
    """Estimated seconds of ``train_run(cfg)`` on one core (training + evaluation)."""
    if not isinstance(cfg, RunConfig):
        raise ValueError(f"cfg must be a RunConfig, got {type(cfg).__name__}")
    task = cfg.make_task()
    lo, hi = cfg.train_lengths
    train = task.valid_lengths(range(lo, hi + 1))
    t_train = sum(_tokens(task, n) for n in train) / len(train)
    tests = [_tokens(task, n) for n in task.valid_lengths(cfg.test_lengths)]
    if cfg.model == "transformer":
        step = transformer_step_s(cfg, cfg.batch_size, t_train)
        evaluation = sum(EVAL_FRACTION * transformer_step_s(cfg, cfg.eval_batch, t)
                         + TRANSFORMER_ATTN_S * cfg.layers * cfg.heads * cfg.eval_batch * t * t for t in tests)
    else:
        step = recurrent_step_s(cfg, cfg.batch_size) * t_train
        evaluation = sum(EVAL_FRACTION * recurrent_step_s(cfg, cfg.eval_batch) * t for t in tests)
    return RUN_OVERHEAD_S + cfg.steps * step + evaluation


def estimate_sweep(configs: Iterable[RunConfig], workers: int = 2) -> float:
    """Estimated wall seconds of running ``configs`` on ``workers`` cores (one run per core,
    longest first onto the least-loaded core, as a process pool would)."""
    from ..rules import check_int

    workers = check_int(workers, "workers", min=1, max=1024)
    loads = [0.0] * workers
    for cost in sorted((estimate_seconds(c) for c in configs), reverse=True):
        heapq.heapreplace(loads, loads[0] + cost)  # loads stays a heap: [0] is the least loaded
    return max(loads)


# ------------------------------------------------------------------ one GPU, runs grouped
# ASSUMED, not measured (no GPU was available when this was written): run-steps per second
# of a group of GPU_GROUP runs trained as one batched model (train/many.py) at the full
# Chomsky size on one GPU. A small model's step on a GPU is bound by kernel launches, not by
# arithmetic, so a group's step costs about the same for 1 … GPU_GROUP runs: a group of R
# runs takes steps × GPU_GROUP / rate seconds. The recurrent models step through time in
# Python (≈ 40 steps × tens of kernels each, forward and backward); the stack and tape models
# launch ≈ 3× more per time step. `sweep --dry-run --gpu-bench FILE` replaces these with the
# rates bench/gpu_bench.py measured (its --json output).
GPU_GROUP = 32
GPU_RUN_STEPS_PER_S: dict[str, float] = {"transformer": 2000.0, "rnn": 1200.0, "lstm": 1000.0,
                                         "stack_rnn": 400.0, "stack_lstm": 350.0, "tape_rnn": 250.0}
GPU_EVAL_LENGTH_S = 0.01  # ASSUMED: one test length of one run evaluated on the GPU (a forward pass)


def gpu_estimate(configs: Iterable[RunConfig], max_group: int = GPU_GROUP, bench: dict | None = None) -> dict:
    """Estimated seconds of ``configs`` on one GPU, grouped (:func:`.many.group_configs`, at
    most ``max_group`` runs each) and the groups run one after another:
    ``{"groups": …, "gpu_seconds": …, "gpu_hours": …}``. ``bench``: bench/gpu_bench.py's
    ``--json`` output (``run_steps_per_s`` per model kind at ``runs`` at once,
    ``eval_length_s``), else the assumed :data:`GPU_RUN_STEPS_PER_S`."""
    from .many import group_configs

    rates = dict(GPU_RUN_STEPS_PER_S)
    per_group, eval_s = GPU_GROUP, GPU_EVAL_LENGTH_S
    if bench is not None:
        rates.update({k: float(v) for k, v in bench.get("run_steps_per_s", {}).items()})
        per_group = int(bench.get("runs", GPU_GROUP))
        eval_s = float(bench.get("eval_length_s", GPU_EVAL_LENGTH_S))
    configs = list(configs)
    groups = group_configs(configs, max_group) if configs else []
    total = 0.0
    for g in groups:
        step_s = per_group / rates.get(g[0].model, min(rates.values()))  # one step of the whole group
        total += max(c.steps for c in g) * step_s * max(1.0, len(g) / per_group)
        total += sum(len(c.test_lengths) for c in g) * eval_s
    return {"groups": len(groups), "gpu_seconds": total, "gpu_hours": total / 3600}


def read_gpu_bench(path: Path, option: str = "--gpu-bench") -> dict:
    """The throughput table of ``bench/gpu_bench.py --json`` (model kind → run-steps/s at R
    runs); anything else is refused naming ``option``."""
    import json

    from ..fileio import read_text_file

    text = read_text_file(path, option)
    try:
        data = json.loads(text)
        rates = data["run_steps_per_s"]
        if not isinstance(rates, dict) or not rates:
            raise ValueError
        for rate in rates.values():
            if not isinstance(rate, (int, float)) or not rate > 0:
                raise ValueError
    except (ValueError, KeyError, TypeError):
        raise ValueError(f"{option} {path}: not a gpu_bench.py --json file (expected "
                         '{"run_steps_per_s": {"transformer": 123.0, ...}, ...})') from None
    return data


def dry_run_report(grid, configs: list[RunConfig], db: Path, workers: int | None, *, retry_errors: bool = False,
                   reset_db: bool = False, group: bool = True, max_group: int = GPU_GROUP,
                   bench: dict | None = None) -> list[str]:
    """The lines of ``sweep --dry-run``: what the sweep would run — counts, runs already in
    ``db``, core-hours (:func:`estimate_seconds`), wall time on ``workers`` cores
    (:func:`estimate_sweep`) and, with ``group``, GPU-hours (:func:`gpu_estimate`). As the
    sweep would: ``retry_errors`` counts failed runs as to run, ``reset_db`` a store of another
    version as set aside (every run to run)."""
    import os
    from collections import defaultdict

    from ..runs.store import Store

    finished: set[str] = set()
    other = None  # the version of a store this code would refuse
    if db.is_file():
        store = Store(db, read_only=True)
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
    lines = []
    if other is not None:
        then = ("with --reset-db the sweep sets it aside and starts a fresh store" if reset_db
                else "sweep refuses that store (--reset-db sets it aside)")
        lines.append(f"{db} holds results of expressivity {other[0]}; this is {other[1]}: {then}, so none of its "
                     "runs count")
    again = " (failed runs count as to run: --retry-errors)" if retry_errors else ""
    lines.append(f"{len(configs)} of {len(grid)} runs selected; {len(configs) - len(todo)} already in {db}, "
                 f"{len(todo)} to run{again}")
    by_model: dict = defaultdict(list)
    for c in todo:
        by_model[c.model].append(costs[c.run_id])
    for model, cs in sorted(by_model.items()):
        lines.append(f"  {model:<12} {len(cs):4d} runs  {sum(cs) / 3600:8.2f} core-h  (longest {max(cs) / 60:.1f} min)")
    lines.append(f"estimate (train/budget.py, idle cores): {sum(costs.values()) / 3600:.2f} core-hours, "
                 f"{wall / 3600:.2f} h wall on {cores} cores\n  (good to about 2x on an idle core; "
                 "bench/budget_bench.py measures it on yours)")
    if group:
        est = gpu_estimate(todo, max_group, bench)
        source = (f"measured by bench/gpu_bench.py ({bench.get('device', 'a GPU')})" if bench is not None
                  else "assumed GPU throughput, train/budget.py GPU_RUN_STEPS_PER_S; --gpu-bench FILE to use yours")
        lines.append(f"grouped ({est['groups']} groups of at most {max_group} runs): {est['gpu_hours']:.2f} "
                     f"GPU-hours on one GPU ({source})")
    lines.append("Dry run: nothing was trained.")
    return lines
