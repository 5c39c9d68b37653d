"""Training runs in the one results store (:class:`expressivity.runs.store.Store`).

:class:`ResultStore` is that store plus the conversion of the training types: a finished
:class:`RunResult` becomes one ``runs`` row and one ``results`` row per test length, written
in one transaction; a failed :class:`RunConfig` an ``error`` (or ``timed_out``) row. A run
whose training loss became NaN is recorded with status ``diverged`` (its reason in ``error``,
no result rows); a NaN metric of a finished run is a NULL. The tables, migrations of older
files and the one-code-version rule are the store's (see there). Any further number of a
metrics row (the closing-bracket counts of Dyck next-symbol runs) goes to ``extra_metrics``.
"""

from __future__ import annotations

from ..runs.store import Store, real
from .config import RunConfig
from .loop import RunResult

_COLUMNS = {"length", "accuracy", "ce_bits", "optimal_bits", "excess_bits", "n_strings"}  # of table results


class ResultStore(Store):
    """``ResultStore(path, name="--db", read_only=False, reset=False)``; ValueError if not ours."""

    def record_result(self, result: RunResult) -> bool:
        """Write a finished (or diverged) run and its rows atomically; False if the run was
        already recorded as finished. NaN numbers are stored as NULL."""
        if not isinstance(result, RunResult):
            raise ValueError(f"result must be a RunResult (from train_run), got {type(result).__name__}")
        cfg = result.config
        config_json = cfg.to_json()
        status = "diverged" if result.status == "diverged" else "done"
        reason = None
        if status == "diverged":
            reason = f"diverged: the training loss was not finite at step {result.diverged_at} (lr too high?)"
        run = {"run_id": cfg.run_id, "label": cfg.label(), "config": config_json, "status": status,
               "error": reason, "final_loss": real(result.final_loss), "n_params": result.n_params,
               "duration": real(result.duration), "score": real(result.score)}
        rows = [{"run_id": cfg.run_id, "length": m["length"], "accuracy": real(m["accuracy"]),
                 "ce_bits": real(m["ce_bits"]), "optimal_bits": real(m["optimal_bits"]),
                 "excess_bits": real(m["excess_bits"]), "n_strings": m["n_strings"], "task": cfg.task,
                 "kind": cfg.kind, "model": cfg.model, "seed": cfg.seed, "config": config_json}
                for m in result.metrics]
        extra = [(m["length"], k, v) for m in result.metrics for k, v in m.items()
                 if k not in _COLUMNS and isinstance(v, (int, float)) and not isinstance(v, bool)]
        return self.write_run(run, rows, extra)

    def record_error(self, cfg: RunConfig, error: str, status: str = "error") -> None:
        """Mark ``cfg`` as failed (``status`` error | timed_out) with the error text (replaced
        if the run is retried)."""
        if not isinstance(cfg, RunConfig):
            raise ValueError(f"cfg must be a RunConfig, got {type(cfg).__name__}")
        self.write_run_failure(cfg.run_id, cfg.label(), cfg.to_json(), error, status)

    def finished(self, include_errors: bool = True) -> set[str]:
        """Run ids recorded as done or diverged (and failed, with ``include_errors``)."""
        return self.finished_runs(include_errors)
