"""Training at growing lengths: models, loop, protocol presets, SQLite store, sweeps.

Main entry points:
``RunConfig`` (frozen run description), ``train_run(cfg, out_dir=None, on_step=None) ->
RunResult`` (deterministic given ``cfg.seed``; checkpoints and resumes when ``out_dir`` is
given), ``preset(name, task, **overrides)`` (``deletang`` | ``bhattamishra`` | ``yao`` | ``quick``),
``ResultStore(path)``, ``run_sweep(configs, db, backend="local"|"ray", ...)``,
``load_sweep(yaml_path)``, ``select_runs(configs, only=…, shard=(i, n))``,
``train_many(configs) -> list[RunResult]`` (runs that differ in seed / lr as one batched
model, each result as ``train_run`` gives it) and ``group_configs(configs)`` (which runs can
share); ``RunConfig.device`` / ``dtype`` (:mod:`.devices`).
"""

import importlib

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
    "ResultStore": "store",
    **dict.fromkeys(("SweepSummary", "expand_grid", "load_sweep", "run_sweep", "select_runs"), "sweep"),
}

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    """A public name or a submodule of the package, imported when first asked for."""
    if name in _WHERE:
        value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
        globals()[name] = value
        return value
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
