"""What a run costs before it runs: an estimate of its seconds on one CPU core.

A sweep's budget is decided before any training (``chomsky-quick.yaml`` must fit 30 minutes
on 2 cores), so the estimate is a formula in the config alone, calibrated once by timing runs
on this project's CPU (bench: ``docs/benchmark.md`` lists the measurements):

* recurrent models (rnn, lstm, stack_rnn, tape_rnn) step through time, so a batch costs
  ``k_model`` seconds per time step T (the batch is processed in parallel), × 1/4 when only
  evaluating (no backward pass);
* the transformer costs ``c₀ + k·B·T`` per training step (B strings of T tokens) plus the
  attention's ``k_attn·B·T²`` at long evaluation lengths;
* widths past 64 scale the per-step cost by (d_model/64)², layers multiply it;
* a stack or tape of K cells where the model's own has K₀ scales a recurrent step by
  1 + μ·(K/K₀ − 1), μ the memory's share of the step at K₀ (:data:`MEMORY_SHARE`);
* every run pays ``RUN_OVERHEAD_S`` once: a sweep starts each run in a fresh process, whose
  first torch calls, task and model construction take about that long.

``T`` is the task's token count for input length n (``n + 1``; ``n + 1 + output_length(n)``
for transduction). ``estimate_seconds(cfg)`` and ``estimate_sweep(configs, workers)``
(the wall time of the sweep on ``workers`` cores, longest runs first) are estimates, good to
a factor of about 2 on an idle machine — a budget check, not a timer.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable

from .config import RunConfig

# seconds per time step of one training batch at d_model ≤ 64, one layer (measured, 1 core)
# (stack_lstm: the Stack-RNN's, its stack dominating — not timed on its own)
RECURRENT_STEP_S: dict[str, float] = {"rnn": 1.7e-4, "lstm": 1.7e-4, "stack_rnn": 1.1e-3, "stack_lstm": 1.1e-3,
                                      "tape_rnn": 1.85e-3}
# μ: share of a training step spent on the memory at the model's own size (30 stack / 40 tape
# cells), from one training step at B = 128, T = 42, d = 256 with the own size and with 501
# cells (2026-12-02, loaded 2-core machine): Stack-RNN 0.354 → 0.672 s, Tape-RNN 0.483 → 1.541 s
MEMORY_SHARE: dict[str, float] = {"stack_rnn": 0.057, "stack_lstm": 0.057, "tape_rnn": 0.19}
EVAL_FRACTION = 0.25  # forward only, per time step, relative to a training step
TRANSFORMER_STEP_S = 0.012  # c₀: fixed cost of one transformer training step (2 layers)
TRANSFORMER_TOKEN_S = 7e-6  # k: per token of a batch (2 layers, d_model ≤ 64)
TRANSFORMER_ATTN_S = 1.1e-8  # k_attn: per string × T² at evaluation (2 layers, 2 heads)
RUN_OVERHEAD_S = 1.5  # per run: a fresh worker's torch warm-up, task and model construction


def _tokens(task, n: int) -> int:
    return int(task.n_tokens(n))


def _scale(cfg: RunConfig) -> float:
    width = max(1.0, (cfg.d_model / 64) ** 2)
    if cfg.model == "transformer":
        return width * cfg.layers / 2
    return width * (cfg.layers if cfg.model in ("rnn", "lstm") else 1)


def estimate_seconds(cfg: RunConfig) -> float:
    """Estimated seconds of ``train_run(cfg)`` on one core (training + evaluation)."""
    if not isinstance(cfg, RunConfig):
        raise ValueError(f"cfg must be a RunConfig, got {type(cfg).__name__}")
    task = cfg.make_task()
    lo, hi = cfg.train_lengths
    train = task.valid_lengths(range(lo, hi + 1))
    t_train = sum(_tokens(task, n) for n in train) / len(train)
    tests = [_tokens(task, n) for n in task.valid_lengths(cfg.test_lengths)]
    s = _scale(cfg)
    if cfg.model == "transformer":
        step = TRANSFORMER_STEP_S + TRANSFORMER_TOKEN_S * cfg.batch_size * t_train
        heads = cfg.heads / 2
        evaluation = sum(EVAL_FRACTION * TRANSFORMER_STEP_S + TRANSFORMER_TOKEN_S * cfg.eval_batch * t
                         + TRANSFORMER_ATTN_S * heads * cfg.eval_batch * t * t for t in tests)
    else:
        from .models import OWN_MEMORY, memory_cells

        k = RECURRENT_STEP_S[cfg.model]
        if cfg.model in MEMORY_SHARE:
            k *= 1 + MEMORY_SHARE[cfg.model] * (memory_cells(cfg) / OWN_MEMORY[cfg.model] - 1)
        step = k * t_train
        evaluation = sum(EVAL_FRACTION * k * t for t in tests)
    return RUN_OVERHEAD_S + s * (cfg.steps * step + evaluation)


def estimate_sweep(configs: Iterable[RunConfig], workers: int = 2) -> float:
    """Estimated wall seconds of running ``configs`` on ``workers`` cores (one run per core,
    longest first onto the least-loaded core, as a process pool would)."""
    from .. import checks

    workers = checks.check_int(workers, "workers", min=1, max=1024)
    loads = [0.0] * workers
    for cost in sorted((estimate_seconds(c) for c in configs), reverse=True):
        heapq.heapreplace(loads, loads[0] + cost)  # loads stays a heap: [0] is the least loaded
    return max(loads)
