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

from ..lazy import lazy_names
from ..runs.store import Store

ResultStore = Store  # the training name of the one results store (expressivity.runs.store.Store)

_WHERE = {  # each public name -> the submodule that defines it, imported on first use (PEP 562), so
    # reading .options (the command line's option specs, at its start-up) imports no torch
    "RunConfig": "config", "parse_lengths": "config",
    **dict.fromkeys(("RunResult", "batch_metrics", "check_run_memory", "clear_checkpoint", "evaluate_lengths",
                     "memory_estimate", "train_run"), "loop"),
    "group_configs": "many", "train_many": "many",
    **dict.fromkeys(("MODELS", "LSTMModel", "RNNModel", "StackLSTM", "StackRNN", "TapeRNN", "build_model",
                     "transformer_config"), "models"),
    **dict.fromkeys(("PROTOCOLS", "Protocol", "best_of_seeds", "get_protocol", "preset", "protocol_score",
                     "seed_configs"), "protocols"),
    **dict.fromkeys(("SweepSummary", "expand_grid", "load_sweep", "run_sweep", "select_runs"), "sweep"),
}

__all__ = sorted([*_WHERE, "ResultStore"])

__getattr__, __dir__ = lazy_names(__name__, _WHERE)
