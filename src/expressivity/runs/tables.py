"""The results store as flat tables: records (lists of dicts), CSV, JSON and pandas.

Two tables of :class:`~expressivity.runs.store.Store`, flattened so that every cell is one
value:

* ``"results"`` — one record per training run × test length: the run's id, label and
  status, every field of its ``RunConfig`` (``task``, ``model``, ``seed``, ``layers``,
  ``positional`` …), the length and its metrics (``accuracy``, ``ce_bits``,
  ``optimal_bits``, ``excess_bits``, ``n_strings``) and any extra metrics of the row;
* ``"runs"`` — one record per run, failed and diverged runs included: id, label, status,
  error, the config fields, ``final_loss``, ``n_params``, ``duration``, ``score`` (the mean
  accuracy over the test lengths), ``finished`` (Unix time), ``code_version``.

``to_pandas(db)`` is the same table as a :class:`pandas.DataFrame` (needs the ``pandas``
extra: ``pip install 'expressivity[pandas]'``). In CSV a list-valued cell (e.g.
``train_lengths``) is written as JSON.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..fileio import check_path
from ..rules import check_choice, missing_extra
from .store import Store

TABLES = ("results", "runs")
_RUN_KEYS = ("run_id", "label", "status")


def _open(db) -> Store:
    path = check_path(db, "db")
    if path.is_dir():
        raise ValueError(f"db {path} is a directory; give the results database file")
    if not path.is_file():
        raise ValueError(f"db {path} does not exist (no results database there yet)")
    return Store(path, "db", read_only=True)


def _flat_config(config: Mapping[str, Any] | str) -> dict[str, Any]:
    return json.loads(config) if isinstance(config, str) else dict(config)


def records(db: str | Path, table: str = "results") -> list[dict[str, Any]]:
    """The store's ``table`` ("results" or "runs") as flat records (see the module docstring)."""
    check_choice(table, "table", TABLES)
    store = _open(db)
    try:
        runs = store.runs()
        rows = store.rows() if table == "results" else []
    finally:
        store.close()
    if table == "runs":
        out = []
        for r in runs:
            cfg = _flat_config(r.pop("config"))
            first = {k: r.pop(k) for k in _RUN_KEYS}
            out.append(first | {k: v for k, v in cfg.items() if k not in first} | r)
        return out
    by_id = {r["run_id"]: r for r in runs}
    out = []
    for row in rows:
        cfg = _flat_config(row.pop("config"))
        run = by_id.get(row["run_id"], {})
        first = {"run_id": row.pop("run_id"), "label": run.get("label"), "status": run.get("status")}
        metrics = {k: row.pop(k) for k in ("length", "accuracy", "ce_bits", "optimal_bits", "excess_bits", "n_strings")
                   if k in row}
        for k in ("task", "kind", "model", "seed"):  # the results table's copies of config fields
            row.pop(k, None)
        out.append(first | {k: v for k, v in cfg.items() if k not in first} | metrics | row)
    return out


def columns_of(recs: Iterable[Mapping[str, Any]]) -> list[str]:
    """Every key of ``recs``, in first-seen order (records may differ in their extra metrics)."""
    seen: dict[str, None] = {}
    for r in recs:
        seen.update(dict.fromkeys(r))
    return list(seen)


def _cell(v: Any) -> Any:
    if isinstance(v, (list, tuple, dict)):
        return json.dumps(v, sort_keys=isinstance(v, dict))
    return "" if v is None else v


def to_csv(recs: list[Mapping[str, Any]], columns: list[str] | None = None) -> str:
    """``recs`` as CSV text (a header line, then one line per record; missing cells empty)."""
    cols = columns or columns_of(recs)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for r in recs:
        w.writerow([_cell(r.get(c)) for c in cols])
    return buf.getvalue()


def to_json(recs: list[Mapping[str, Any]]) -> str:
    """``recs`` as a JSON array (NaN and infinities, which JSON lacks, as null)."""
    def clean(v):
        if isinstance(v, float) and not math.isfinite(v):
            return None
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [clean(x) for x in v]
        return v
    return json.dumps([clean(dict(r)) for r in recs], indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def to_pandas(db: str | Path, table: str = "results"):
    """The store's ``table`` ("results": one row per run × test length; "runs": one per run)
    as a :class:`pandas.DataFrame`. Needs pandas (``pip install 'expressivity[pandas]'``)."""
    try:
        import pandas as pd
    except ImportError:
        raise missing_extra("pandas", "pandas", "expressivity.runs.to_pandas") from None
    recs = records(db, table)
    return pd.DataFrame.from_records(recs, columns=columns_of(recs) or None)
