"""Training at growing lengths: models, loop, protocol presets, SQLite store, sweeps.

Main entry points:
``RunConfig`` (frozen run description), ``train_run(cfg, out_dir=None, on_step=None) ->
RunResult`` (deterministic given ``cfg.seed``; checkpoints and resumes when ``out_dir`` is
given), ``preset(name, task, **overrides)`` (``deletang`` | ``bhattamishra`` | ``yao`` | ``quick``),
``ResultStore(path)`` (the one results store, :class:`expressivity.runs.Store`), ``run_sweep(configs, db, backend="local"|"ray", ...)``,
``load_sweep(yaml_path)``, ``select_runs(configs, only=…, shard=(i, n))``,
``train_many(configs) -> list[RunResult]`` (runs that differ in seed / lr as one batched
model, each result as ``train_run`` gives it) and ``group_configs(configs)`` (which runs can
share); ``RunConfig.device`` / ``dtype`` (:mod:`.devices`).
"""

from ..runs.store import Store
from .config import RunConfig, parse_lengths
from .loop import (
           RunResult,
           batch_metrics,
           check_run_memory,
           clear_checkpoint,
           evaluate_lengths,
           memory_estimate,
           train_run,
)
from .many import group_configs, train_many
from .models import (
           MODELS,
           LSTMModel,
           RNNModel,
           StackLSTM,
           StackRNN,
           TapeRNN,
           build_model,
           transformer_config,
)
from .protocols import (
           PROTOCOLS,
           Protocol,
           best_of_seeds,
           get_protocol,
           preset,
           protocol_score,
           seed_configs,
)
from .sweep import SweepSummary, expand_grid, load_sweep, run_sweep, select_runs

ResultStore = Store  # the training name of the one results store (expressivity.runs.store.Store)

__all__ = [
           "PROTOCOLS",
           "LSTMModel",
           "MODELS",
           "Protocol",
           "RNNModel",
           "ResultStore",
           "RunConfig",
           "RunResult",
           "StackLSTM",
           "StackRNN",
           "SweepSummary",
           "TapeRNN",
           "batch_metrics",
           "best_of_seeds",
           "build_model",
           "check_run_memory",
           "clear_checkpoint",
           "evaluate_lengths",
           "expand_grid",
           "get_protocol",
           "group_configs",
           "load_sweep",
           "memory_estimate",
           "parse_lengths",
           "preset",
           "protocol_score",
           "run_sweep",
           "seed_configs",
           "select_runs",
           "train_many",
           "train_run",
           "transformer_config",
]
