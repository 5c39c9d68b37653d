"""One training run from start to record (``expressivity train``): checks, training, the store.

Before training: the metric sinks, the run's memory and the store are checked, so a bad
``--log``, a run that cannot fit or a ``--db`` that is not ours fails before any step. A
store of another code version is set aside (``reset_db``); a new store is created only when
there is a result to record. After training: the result is recorded (a run already there
keeps its earlier rows), its per-length metrics are shown as a table of at most 12 evenly
spaced lengths (first and last included), its protocol scores as one line.
"""

from __future__ import annotations

from pathlib import Path

from ..listing import Listing, num
from .config import RunConfig
from .protocols import protocol_score


def check_before_training(cfg: RunConfig, db: Path, log, reset_db: bool, out_dir: Path | None = None) -> Path | None:
    """The checkpoint directory (``--out``) and the store's path, sinks, memory and an existing
    store checked; returns where a store of another code version was set aside (None when it was not)."""
    from ..fileio import check_output_path
    from ..runs.sinks import check_sinks
    from . import ResultStore
    from .loop import check_run_memory

    if out_dir is not None:
        check_output_path(out_dir, "--out", kind="dir")
    check_output_path(db, "--db")
    check_sinks(log)
    check_run_memory(cfg)
    return ResultStore.check(db, reset_db) if db.exists() else None


def train_logged(cfg: RunConfig, out_dir: Path, *, restart: bool, log, on_step=None, on_eval=None):
    """:func:`.loop.train_run` with the metric sinks of ``log`` opened around it."""
    from ..runs.sinks import close_sinks, open_sinks
    from .loop import train_run

    sinks = open_sinks(log, cfg.run_id, cfg.to_dict())
    try:
        return train_run(cfg, out_dir, on_step=on_step, on_eval=on_eval, restart=restart, sinks=sinks)
    finally:
        close_sinks(sinks)


def record(result, db: Path) -> bool:
    """Record ``result`` in the store ``db``; False when the run was already recorded there."""
    from . import ResultStore

    store = ResultStore(db)
    try:
        return store.record_result(result)
    finally:
        store.close()


def scores_line(result, cfg: RunConfig, db: Path) -> str:
    """The protocol scores (``k = v`` each) and where they were recorded."""
    scores = protocol_score([dict(m) for m in result.metrics], cfg.protocol)
    return "  ".join(f"{k} = {v:.4f}" for k, v in scores.items()) + f"   recorded in {db}"


def metrics_listing(metrics, title: str, max_rows: int = 12) -> Listing:
    """The per-length metrics as a table: at most ``max_rows`` evenly spaced lengths."""
    rows = list(metrics)
    if len(rows) > max_rows:
        idx = sorted({round(i * (len(rows) - 1) / (max_rows - 1)) for i in range(max_rows)})
        rows = [rows[i] for i in idx]
    return Listing(("length", "accuracy", "CE (bits)", "optimum (bits)", "excess (bits)"), title=title,
                   rows=tuple((str(m["length"]), num(m["accuracy"], 3), num(m["ce_bits"]), num(m["optimal_bits"]),
                               num(m["excess_bits"])) for m in rows))
