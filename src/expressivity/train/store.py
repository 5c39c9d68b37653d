"""SQLite result store: one row per run × test length, with the full config JSON.

Tables: ``meta`` (key, value) identifies the file as ours (app = expressivity.train.results,
schema = 2); ``runs`` (run_id, label, config, status done|diverged|error, error, final_loss,
n_params, duration, score, finished); ``results`` (run_id, length, accuracy, ce_bits,
optimal_bits, excess_bits, n_strings, task, kind, model, seed, config), primary key (run_id,
length); ``extra_metrics`` (run_id, length, name, value): any further number of a metrics row
(e.g. the closing-bracket counts of Dyck next-symbol runs, ``close_count_1_20``), created on
open when missing, read back into the rows by :meth:`ResultStore.rows`. A run's rows are written in one transaction together with its ``runs`` row, so a
killed process never leaves a half-written run; the ``runs`` table is the source of truth of
what is finished.

Non-finite numbers (NaN) are stored as NULL, never refused: a run whose training loss became
NaN is recorded with status ``diverged`` (its reason in ``error``, no result rows), and a
NaN metric of a finished run is a NULL in its row. Schema-1 files (status done|error, metrics
NOT NULL) are migrated to schema 2 in one transaction when opened.
"""

from __future__ import annotations

import json
import math
import sqlite3
import time
from pathlib import Path

from .config import RunConfig
from .loop import RunResult

APP = "expressivity.train.results"
SCHEMA_VERSION = "2"
STATUSES = ("done", "diverged", "error")

_RUNS = """
CREATE TABLE runs (
    run_id TEXT PRIMARY KEY, label TEXT NOT NULL, config TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('done', 'diverged', 'error')), error TEXT,
    final_loss REAL, n_params INTEGER, duration REAL, score REAL, finished REAL NOT NULL
)"""
_RESULTS = """
CREATE TABLE results (
    run_id TEXT NOT NULL REFERENCES runs(run_id), length INTEGER NOT NULL,
    accuracy REAL, ce_bits REAL, optimal_bits REAL, excess_bits REAL, n_strings INTEGER NOT NULL,
    task TEXT NOT NULL, kind TEXT NOT NULL, model TEXT NOT NULL, seed INTEGER NOT NULL,
    config TEXT NOT NULL,
    PRIMARY KEY (run_id, length)
)"""
_EXTRA = """
CREATE TABLE IF NOT EXISTS extra_metrics (
    run_id TEXT NOT NULL REFERENCES runs(run_id), length INTEGER NOT NULL, name TEXT NOT NULL, value REAL,
    PRIMARY KEY (run_id, length, name)
)"""
_SCHEMA = ["CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)", _RUNS, _RESULTS, _EXTRA]
_COLUMNS = {"length", "accuracy", "ce_bits", "optimal_bits", "excess_bits", "n_strings"}  # of table results


def _real(x) -> float | None:
    """A float for SQLite; NaN (and None) → NULL."""
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


class ResultStore:
    """Open (or create) the result database at ``path``; ValueError if it is not ours."""

    def __init__(self, path: str | Path, name: str = "--db") -> None:
        if not isinstance(path, (str, Path)) or str(path).strip() == "":
            raise ValueError(f"{name}: expected a file path, got {path!r}")
        self.path = Path(path)
        self.name = name
        if self.path.is_dir():
            raise ValueError(f"{name} {self.path} is a directory; give the results database file")
        _check_sqlite_file(self.path, name)
        fresh = not self.path.exists() or self.path.stat().st_size == 0
        if fresh:
            from ..checks import check_output_path

            check_output_path(self.path, name)
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.conn = sqlite3.connect(str(self.path), timeout=60, isolation_level=None)
        except sqlite3.Error as exc:
            raise ValueError(f"{name} {self.path}: cannot open the database ({exc})") from None
        try:
            if fresh:
                with self._tx():
                    for stmt in _SCHEMA:
                        self.conn.execute(stmt)
                    self.conn.executemany("INSERT INTO meta VALUES (?, ?)", [("app", APP), ("schema", SCHEMA_VERSION)])
            self._check_ours()
            self.conn.execute(_EXTRA)  # added to a store written before it existed
        except sqlite3.DatabaseError as exc:
            self.conn.close()
            raise ValueError(f"{name} {self.path} is not an expressivity results database: SQLite cannot "
                             f"read it ({exc}; a damaged or foreign file)") from None
        except ValueError:
            self.conn.close()
            raise

    def _tx(self):
        return _Transaction(self.conn)

    def _check_ours(self) -> None:
        where = f"{self.name} {self.path}"
        tables = {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "claims" in tables and "meta" in tables:
            raise ValueError(f"{where} is a report store (expressivity reproduce --db), not a training "
                             "results database; give another --db")
        try:
            meta = dict(self.conn.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.OperationalError:
            what = "no meta table" if "meta" not in tables else "its meta table is not ours"
            raise ValueError(f"{where} is an SQLite database but not an expressivity results database "
                             f"({what}; tables: {', '.join(sorted(tables)) or 'none'})") from None
        if meta.get("app") != APP:
            raise ValueError(f"{where} is an SQLite database but not an expressivity results database "
                             f"(meta app = {meta.get('app')!r})")
        if meta.get("schema") == "1":
            self._migrate_from_1()
        elif meta.get("schema") != SCHEMA_VERSION:
            raise ValueError(f"{where} has result schema {meta.get('schema')!r}; this version reads "
                             f"schema 1 and {SCHEMA_VERSION}")

    def _migrate_from_1(self) -> None:
        """Schema 1 → 2 (status 'diverged' allowed, metrics nullable), in one transaction."""
        with self._tx():
            for table, ddl in (("runs", _RUNS), ("results", _RESULTS)):
                self.conn.execute(f"ALTER TABLE {table} RENAME TO {table}_v1")
                self.conn.execute(ddl)
                self.conn.execute(f"INSERT INTO {table} SELECT * FROM {table}_v1")
                self.conn.execute(f"DROP TABLE {table}_v1")
            self.conn.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (SCHEMA_VERSION,))

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---------------------------------------------------------------------- writing
    def record_result(self, result: RunResult) -> bool:
        """Write a finished (or diverged) run and its rows atomically; False if the run was
        already recorded as finished. NaN numbers are stored as NULL."""
        if not isinstance(result, RunResult):
            raise ValueError(f"result must be a RunResult (from train_run), got {type(result).__name__}")
        cfg = result.config
        config_json = cfg.to_json()
        status = result.status if result.status in STATUSES else "done"
        reason = None
        if status == "diverged":
            reason = f"diverged: the training loss was not finite at step {result.diverged_at} (lr too high?)"
        with self._tx():
            row = self.conn.execute("SELECT status FROM runs WHERE run_id = ?", (cfg.run_id,)).fetchone()
            if row is not None and row[0] in ("done", "diverged"):
                return False
            self.conn.execute("DELETE FROM results WHERE run_id = ?", (cfg.run_id,))
            self.conn.execute("DELETE FROM extra_metrics WHERE run_id = ?", (cfg.run_id,))
            self.conn.execute("DELETE FROM runs WHERE run_id = ?", (cfg.run_id,))
            self.conn.execute(
                "INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (cfg.run_id, cfg.label(), config_json, status, reason, _real(result.final_loss), result.n_params,
                 _real(result.duration), _real(result.score), time.time()))
            self.conn.executemany(
                "INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(cfg.run_id, m["length"], _real(m["accuracy"]), _real(m["ce_bits"]), _real(m["optimal_bits"]),
                  _real(m["excess_bits"]), m["n_strings"], cfg.task, cfg.kind, cfg.model, cfg.seed, config_json)
                 for m in result.metrics])
            self.conn.executemany(
                "INSERT INTO extra_metrics VALUES (?, ?, ?, ?)",
                [(cfg.run_id, m["length"], k, _real(v)) for m in result.metrics for k, v in m.items()
                 if k not in _COLUMNS and isinstance(v, (int, float)) and not isinstance(v, bool)])
        return True

    def record_error(self, cfg: RunConfig, error: str) -> None:
        """Mark ``cfg`` as failed with the error text (replaced if the run is retried)."""
        if not isinstance(cfg, RunConfig):
            raise ValueError(f"cfg must be a RunConfig, got {type(cfg).__name__}")
        with self._tx():
            self.conn.execute("DELETE FROM runs WHERE run_id = ? AND status = 'error'", (cfg.run_id,))
            self.conn.execute(
                "INSERT OR IGNORE INTO runs VALUES (?, ?, ?, 'error', ?, NULL, NULL, NULL, NULL, ?)",
                (cfg.run_id, cfg.label(), cfg.to_json(), error, time.time()))

    # ---------------------------------------------------------------------- reading
    def finished(self, include_errors: bool = True) -> set[str]:
        """Run ids recorded as done or diverged (and error, with ``include_errors``)."""
        statuses = STATUSES if include_errors else ("done", "diverged")
        q = f"SELECT run_id FROM runs WHERE status IN ({','.join('?' * len(statuses))})"
        return {r[0] for r in self.conn.execute(q, statuses)}

    def runs(self) -> list[dict]:
        cur = self.conn.execute("SELECT * FROM runs ORDER BY finished")
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]

    def rows(self) -> list[dict]:
        """All result rows (one per run × test length), config parsed, with the row's extra
        metrics (``extra_metrics``) as further keys."""
        extra: dict[tuple[str, int], dict] = {}
        for run_id, length, name, value in self.conn.execute("SELECT * FROM extra_metrics"):
            extra.setdefault((run_id, length), {})[name] = value
        cur = self.conn.execute("SELECT * FROM results ORDER BY task, kind, model, run_id, length")
        names = [d[0] for d in cur.description]
        out = []
        for r in cur.fetchall():
            d = dict(zip(names, r))
            d["config"] = json.loads(d["config"])
            out.append(extra.get((d["run_id"], d["length"]), {}) | d)
        return out


class _Transaction:
    """BEGIN IMMEDIATE … COMMIT (ROLLBACK on error) on an autocommit connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self):
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, exc_type, exc, tb):
        self.conn.execute("ROLLBACK" if exc_type else "COMMIT")
        return False


_SQLITE_MAGIC = b"SQLite format 3\x00"


def _check_sqlite_file(path: Path, name: str) -> None:
    """Refuse an existing non-empty file that is not SQLite, saying what it is instead."""
    try:
        if not path.is_file() or path.stat().st_size == 0:
            return
        with open(path, "rb") as fh:
            head = fh.read(16)
    except OSError as exc:
        raise ValueError(f"{name} {path} cannot be read ({exc.strerror or exc})") from None
    if head != _SQLITE_MAGIC:
        kind = "a text file" if _looks_like_text(head) else "a binary file"
        raise ValueError(f"{name} {path} is not an SQLite database ({kind}); give an expressivity "
                         "results database or a new file name")


def _looks_like_text(head: bytes) -> bool:
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return b"\x00" not in head
