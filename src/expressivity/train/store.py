"""SQLite result store: one row per run × test length, with the full config JSON.

Tables: ``meta`` (key, value) identifies the file as ours (app = expressivity.train.results,
schema = 1); ``runs`` (run_id, label, config, status done|error, error, final_loss, n_params,
duration, score, finished); ``results`` (run_id, length, accuracy, ce_bits, optimal_bits,
excess_bits, n_strings, task, kind, model, seed, config), primary key (run_id, length).
A run's rows are written in one transaction together with its ``runs`` row, so a killed
process never leaves a half-written run; the ``runs`` table is the source of truth of what is
finished.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

from .config import RunConfig
from .loop import RunResult

APP = "expressivity.train.results"
SCHEMA_VERSION = "1"

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (
    run_id TEXT PRIMARY KEY, label TEXT NOT NULL, config TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('done', 'error')), error TEXT,
    final_loss REAL, n_params INTEGER, duration REAL, score REAL, finished REAL NOT NULL
);
CREATE TABLE results (
    run_id TEXT NOT NULL REFERENCES runs(run_id), length INTEGER NOT NULL,
    accuracy REAL NOT NULL, ce_bits REAL NOT NULL, optimal_bits REAL NOT NULL,
    excess_bits REAL NOT NULL, n_strings INTEGER NOT NULL,
    task TEXT NOT NULL, kind TEXT NOT NULL, model TEXT NOT NULL, seed INTEGER NOT NULL,
    config TEXT NOT NULL,
    PRIMARY KEY (run_id, length)
);
"""


class ResultStore:
    """Open (or create) the result database at ``path``; ValueError if it is not ours."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        fresh = not self.path.exists() or self.path.stat().st_size == 0
        if fresh:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(str(self.path), timeout=60, isolation_level=None)
        try:
            if fresh:
                with self._tx():
                    for stmt in _SCHEMA.strip().split(";"):
                        if stmt.strip():
                            self.conn.execute(stmt)
                    self.conn.executemany("INSERT INTO meta VALUES (?, ?)", [("app", APP), ("schema", SCHEMA_VERSION)])
            self._check_ours()
        except sqlite3.DatabaseError as exc:
            self.conn.close()
            raise ValueError(f"{self.path} is not an expressivity results database ({exc})") from None
        except ValueError:
            self.conn.close()
            raise

    def _tx(self):
        return _Transaction(self.conn)

    def _check_ours(self) -> None:
        try:
            meta = dict(self.conn.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.OperationalError:
            raise ValueError(f"{self.path} is not an expressivity results database (no meta table)") from None
        if meta.get("app") != APP:
            raise ValueError(f"{self.path} is not an expressivity results database (meta app = {meta.get('app')!r})")
        if meta.get("schema") != SCHEMA_VERSION:
            raise ValueError(f"{self.path} has result schema {meta.get('schema')!r}; this version reads {SCHEMA_VERSION}")

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---------------------------------------------------------------------- writing
    def record_result(self, result: RunResult) -> bool:
        """Write a finished run and its rows atomically; False if the run was already done."""
        cfg = result.config
        config_json = cfg.to_json()
        with self._tx():
            row = self.conn.execute("SELECT status FROM runs WHERE run_id = ?", (cfg.run_id,)).fetchone()
            if row is not None and row[0] == "done":
                return False
            self.conn.execute("DELETE FROM runs WHERE run_id = ?", (cfg.run_id,))
            self.conn.execute(
                "INSERT INTO runs VALUES (?, ?, ?, 'done', NULL, ?, ?, ?, ?, ?)",
                (cfg.run_id, cfg.label(), config_json, result.final_loss, result.n_params, result.duration,
                 result.score, time.time()))
            self.conn.executemany(
                "INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(cfg.run_id, m["length"], m["accuracy"], m["ce_bits"], m["optimal_bits"], m["excess_bits"],
                  m["n_strings"], cfg.task, cfg.kind, cfg.model, cfg.seed, config_json) for m in result.metrics])
        return True

    def record_error(self, cfg: RunConfig, error: str) -> None:
        """Mark ``cfg`` as failed with the error text (replaced if the run is retried)."""
        with self._tx():
            self.conn.execute("DELETE FROM runs WHERE run_id = ? AND status = 'error'", (cfg.run_id,))
            self.conn.execute(
                "INSERT OR IGNORE INTO runs VALUES (?, ?, ?, 'error', ?, NULL, NULL, NULL, NULL, ?)",
                (cfg.run_id, cfg.label(), cfg.to_json(), error, time.time()))

    # ---------------------------------------------------------------------- reading
    def finished(self, include_errors: bool = True) -> set[str]:
        statuses = ("done", "error") if include_errors else ("done",)
        q = f"SELECT run_id FROM runs WHERE status IN ({','.join('?' * len(statuses))})"
        return {r[0] for r in self.conn.execute(q, statuses)}

    def runs(self) -> list[dict]:
        cur = self.conn.execute("SELECT * FROM runs ORDER BY finished")
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]

    def rows(self) -> list[dict]:
        """All result rows (one per run × test length), config parsed."""
        cur = self.conn.execute("SELECT * FROM results ORDER BY task, kind, model, run_id, length")
        names = [d[0] for d in cur.description]
        out = []
        for r in cur.fetchall():
            d = dict(zip(names, r))
            d["config"] = json.loads(d["config"])
            out.append(d)
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
