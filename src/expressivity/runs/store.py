"""The one results store: an SQLite file with a table per kind of result.

Tables (schema 3):

* ``meta`` (key, value): ``app = expressivity.results``, ``schema = 3`` and ``code_version``,
  the version (:func:`expressivity.runs.version.code_version`) every result in the file was
  produced by;
* ``runs`` — one row per training run (run_id, label, config JSON, status
  done | diverged | error | timed_out, error, final_loss, n_params, duration, score, finished,
  code_version); ``results`` — one row per run × test length (accuracy, ce_bits,
  optimal_bits, excess_bits, n_strings, task, kind, model, seed, config). Written by
  ``train``, ``sweep`` and the report's training claims alike, read by ``results``;
* ``extra_metrics`` (run_id, length, name, value) — any further number of a metrics row
  (e.g. the closing-bracket counts of Dyck next-symbol runs, ``close_count_1_20``), created on
  open when missing, read back into the rows by :meth:`Store.rows`;
* ``units`` — one row per finished work unit of a report claim (key, grp = claim id, budget,
  status done | error | timed_out, value JSON, error, seconds, code_version, finished); a
  training unit's value names its run (``run_id``) instead of repeating its metrics;
* ``claims`` — one judged claim per (claim id, budget): status, the claim as JSON, figure PNG.

Runs come in by protocol — :class:`FinishedRun` (``run_row()``, ``metric_rows()``: train's
RunResult) and :class:`RunIdentity` (``run_id``, ``label()``, ``to_json()``: RunConfig) — so
the store knows no training type; :meth:`Store.run_record` reads one run back.

Rules: every write is one transaction (``BEGIN IMMEDIATE`` … ``COMMIT``), so a killed
process never leaves half a run; NaN is stored as NULL; only the driver process writes (Ray
workers never open the file). **One store, one code version**: opening a store for writing
whose ``code_version`` differs from this code's raises :class:`VersionMismatch`, naming both
versions — results of different code are never mixed. The way out is a new file, or
``reset=True`` (CLI ``--reset-db``), which renames the old file to
``<name>.<old version>.sqlite`` and starts a fresh one. Reading (``read_only=True``, the
``results`` command) works whatever the version.

Older files are migrated in place, in one transaction, when opened: training stores of schema
1 (status done|error, metrics NOT NULL) and 2 (no timed_out, no code version), and report
stores (``expressivity-report-v1``: ``claims`` keyed by a code hash). Rows from before the
migration carry no code version: they stay readable, are never reused as a cached result,
and do not block writing.
"""

from __future__ import annotations

import errno
import json
import math
import sqlite3
import time
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from .version import code_version as current_version

DEFAULT_DB = Path("runs") / "results.sqlite"
"""The one results store: the default of ``train``, ``sweep``, ``results`` and ``reproduce``
(library and CLI), defined here only."""
APP = "expressivity.results"
SCHEMA_VERSION = "3"
_OLD_TRAIN_APP = "expressivity.train.results"
_OLD_REPORT_MAGIC = "expressivity-report-v1"
RUN_STATUSES = ("done", "diverged", "error", "timed_out")
UNIT_STATUSES = ("done", "error", "timed_out")

_META = "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
_RUNS = """
CREATE TABLE runs (
    run_id TEXT PRIMARY KEY, label TEXT NOT NULL, config TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('done', 'diverged', 'error', 'timed_out')), error TEXT,
    final_loss REAL, n_params INTEGER, duration REAL, score REAL, finished REAL NOT NULL,
    code_version TEXT
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
_UNITS = """
CREATE TABLE units (
    key TEXT PRIMARY KEY, grp TEXT NOT NULL, budget TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('done', 'error', 'timed_out')),
    value TEXT, error TEXT, seconds REAL, code_version TEXT, finished REAL NOT NULL
)"""
_CLAIMS = """
CREATE TABLE claims (
    claim_id TEXT NOT NULL, budget TEXT NOT NULL, status TEXT NOT NULL, claim TEXT NOT NULL,
    figure BLOB, code_version TEXT, created REAL NOT NULL,
    PRIMARY KEY (claim_id, budget)
)"""
_RUN_COLS = ("run_id", "label", "config", "status", "error", "final_loss", "n_params", "duration", "score",
             "finished", "code_version")
_RESULT_COLS = ("run_id", "length", "accuracy", "ce_bits", "optimal_bits", "excess_bits", "n_strings", "task",
                "kind", "model", "seed", "config")
_REAL_RUN_COLS = ("final_loss", "duration", "score")  # NaN → NULL
_REAL_RESULT_COLS = ("accuracy", "ce_bits", "optimal_bits", "excess_bits")


@runtime_checkable
class RunIdentity(Protocol):
    """What the store needs of a run's configuration (``train.RunConfig``): its id, a label and
    its canonical JSON."""

    @property
    def run_id(self) -> str: ...

    def label(self) -> str: ...

    def to_json(self) -> str: ...


@runtime_checkable
class FinishedRun(Protocol):
    """What the store needs of a finished run (``train.RunResult``): its ``runs`` row (run_id,
    label, config, status done | diverged, error, final_loss, n_params, duration, score) and one
    ``results`` row per test length (its metrics, any further numbers, and run_id, task, kind,
    model, seed, config)."""

    def run_row(self) -> dict[str, Any]: ...

    def metric_rows(self) -> list[dict[str, Any]]: ...


# SQLite result codes that are the operating system's doing, not a damaged or foreign file
_OS_CODES = {"SQLITE_FULL": errno.ENOSPC, "SQLITE_IOERR": errno.EIO, "SQLITE_READONLY": errno.EROFS,
             "SQLITE_CANTOPEN": errno.EACCES, "SQLITE_PERM": errno.EACCES}


def _os_failure(exc: sqlite3.Error, where: str) -> OSError | None:
    """An SQLite error caused by the disk or the permissions (full, I/O error, read-only, cannot
    open) as one :class:`~expressivity.fileio.WriteError` naming ``where``; None for others."""
    from ..fileio import WriteError

    name = getattr(exc, "sqlite_errorname", "") or ""
    code = next((c for prefix, c in _OS_CODES.items() if name == prefix or name.startswith(prefix + "_")), None)
    text = str(exc)
    if code is None and ("disk is full" in text or "disk I/O error" in text or "readonly database" in text):
        code = errno.ENOSPC if "full" in text else errno.EROFS if "readonly" in text else errno.EIO
    if code is None:
        return None
    hint = {errno.ENOSPC: "the disk is full?", errno.EIO: "the disk is full, or the file is too large?",
            errno.EROFS: "a read-only file or directory?", errno.EACCES: "no permission?"}[code]
    return WriteError(code, f"{where}: cannot write the database: {text} ({hint})", f"{text} ({hint})")


class VersionMismatch(ValueError):
    """A store holds results of another code version than the one trying to write to it."""


def real(x) -> float | None:
    """A float for SQLite; NaN (and None) → NULL."""
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


class Store:
    """Open (or create, or migrate) the results store at ``path``; ValueError if it is not ours.

    ``name`` is the option the path came from (for messages). ``read_only``: no version check
    (and no writes). ``reset``: if the file holds another code version, rename it aside and
    start afresh (``self.set_aside`` is then the old file's new path). ``version`` overrides
    this code's version (tests)."""

    def __init__(self, path: str | Path, name: str = "--db", *, read_only: bool = False, reset: bool = False,
                 version: str | None = None) -> None:
        if not isinstance(path, (str, Path)) or str(path).strip() == "":
            raise ValueError(f"{name}: expected a file path, got {path!r}")
        from ..rules import check_bool

        self.path = Path(path)
        self.name = name
        self.read_only = check_bool(read_only, "read_only")
        reset = check_bool(reset, "reset")
        self.version = version or current_version()
        self.set_aside: Path | None = None
        self._open()
        if not read_only:
            try:
                self._check_version()
            except VersionMismatch:
                stamp = self.stored_version
                self.conn.close()
                if not reset:
                    raise
                self.set_aside = _aside(self.path, stamp or "unknown")
                self.path.rename(self.set_aside)
                self._open()
                self._check_version()

    # ----------------------------------------------------------------- opening, migrating
    def _open(self) -> None:
        name, where = self.name, f"{self.name} {self.path}"
        if self.path.is_dir():
            raise ValueError(f"{where} is a directory; give the results database file")
        _check_sqlite_file(self.path, name)
        fresh = not self.path.exists() or self.path.stat().st_size == 0
        if fresh and self.read_only:
            raise ValueError(f"{where} does not exist (no results database there yet)")
        if fresh:
            from ..fileio import check_output_path, make_dir

            check_output_path(self.path, name)
            make_dir(self.path.parent, name)
        try:
            self.conn = sqlite3.connect(str(self.path), timeout=60, isolation_level=None)
        except sqlite3.Error as exc:
            raise _os_failure(exc, where) or ValueError(f"{where}: cannot open the database ({exc})") from None
        try:
            if fresh:
                with self.tx():
                    for stmt in (_META, _RUNS, _RESULTS, _EXTRA, _UNITS, _CLAIMS):
                        self.conn.execute(stmt)
                    self.conn.executemany("INSERT INTO meta VALUES (?, ?)", [("app", APP), ("schema", SCHEMA_VERSION)])
            self._check_ours()
            if not self.read_only:
                self.conn.execute(_EXTRA)  # added to a store written before it existed
        except sqlite3.DatabaseError as exc:
            self.conn.close()
            os_error = _os_failure(exc, where)
            if os_error is not None:
                if fresh:  # the file this call created is not a database: leave nothing behind
                    self.path.unlink(missing_ok=True)
                raise os_error from None
            raise ValueError(f"{where} is not an expressivity results database: SQLite cannot "
                             f"read it ({exc}; a damaged or foreign file)") from None
        except OSError:  # a WriteError of a transaction (disk full, read-only)
            self.conn.close()
            if fresh:
                self.path.unlink(missing_ok=True)
            raise
        except ValueError:
            self.conn.close()
            raise

    def tx(self) -> _Transaction:
        """A write transaction (BEGIN IMMEDIATE … COMMIT, ROLLBACK on error); a full disk or a
        read-only file raises one :class:`~expressivity.fileio.WriteError` naming the store."""
        return _Transaction(self.conn, f"{self.name} {self.path}")

    def _tables(self) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}

    def _check_ours(self) -> None:
        where = f"{self.name} {self.path}"
        tables = self._tables()
        cols = [r[1] for r in self.conn.execute("PRAGMA table_info(meta)")] if "meta" in tables else []
        if cols == ["name", "value"]:  # an old report store: meta(name, value) with a magic
            magic = self.conn.execute("SELECT value FROM meta WHERE name='magic'").fetchone()
            if magic is None or magic[0] != _OLD_REPORT_MAGIC or "claims" not in tables:
                raise ValueError(f"{where} is an SQLite database but not an expressivity results database "
                                 f"(meta magic = {None if magic is None else magic[0]!r})")
            self._migrate_report_v1()
            return
        try:
            meta = dict(self.conn.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.OperationalError:
            what = "no meta table" if "meta" not in tables else "its meta table is not ours"
            raise ValueError(f"{where} is an SQLite database but not an expressivity results database "
                             f"({what}; tables: {', '.join(sorted(tables)) or 'none'})") from None
        if meta.get("app") not in (APP, _OLD_TRAIN_APP):
            raise ValueError(f"{where} is an SQLite database but not an expressivity results database "
                             f"(meta app = {meta.get('app')!r})")
        schema = meta.get("schema")
        if schema in ("1", "2") and meta.get("app") == _OLD_TRAIN_APP:
            self._migrate_train(schema)
        elif schema != SCHEMA_VERSION or meta.get("app") != APP:
            raise ValueError(f"{where} has result schema {schema!r}; this version reads schemas 1, 2 and "
                             f"{SCHEMA_VERSION} (a newer expressivity wrote it?)")

    def _migrate_train(self, schema: str) -> None:
        """Training store schema 1 or 2 → 3: runs gains timed_out and code_version; the
        units and claims tables are added. One transaction."""
        old = ", ".join(_RUN_COLS[:-1])
        with self.tx():
            self.conn.execute("ALTER TABLE runs RENAME TO runs_old")
            self.conn.execute(_RUNS)
            self.conn.execute(f"INSERT INTO runs ({old}) SELECT {old} FROM runs_old")
            self.conn.execute("DROP TABLE runs_old")
            if schema == "1":  # metrics were NOT NULL
                self.conn.execute("ALTER TABLE results RENAME TO results_old")
                self.conn.execute(_RESULTS)
                self.conn.execute("INSERT INTO results SELECT * FROM results_old")
                self.conn.execute("DROP TABLE results_old")
            self.conn.execute(_UNITS)
            self.conn.execute(_CLAIMS)
            self.conn.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (SCHEMA_VERSION,))
            self.conn.execute("UPDATE meta SET value = ? WHERE key = 'app'", (APP,))

    def _migrate_report_v1(self) -> None:
        """Report store v1 (claims keyed by claim id, size, code hash) → schema 3: the newest
        row per (claim, size) is kept, without a code version (so it is not reused)."""
        with self.tx():
            self.conn.execute("ALTER TABLE meta RENAME TO meta_old")
            self.conn.execute("ALTER TABLE claims RENAME TO claims_old")
            for stmt in (_META, _RUNS, _RESULTS, _UNITS, _CLAIMS):
                self.conn.execute(stmt)
            self.conn.executemany("INSERT INTO meta VALUES (?, ?)", [("app", APP), ("schema", SCHEMA_VERSION)])
            self.conn.execute("INSERT OR REPLACE INTO claims SELECT claim_id, size, status, claim, figure, NULL, "
                              "created FROM claims_old ORDER BY created")
            self.conn.execute("DROP TABLE claims_old")
            self.conn.execute("DROP TABLE meta_old")

    @property
    def stored_version(self) -> str | None:
        """The code version whose results the file holds (None: none yet); a store opened
        for writing with another :attr:`version` raises :class:`VersionMismatch`."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'code_version'").fetchone()
        return None if row is None else row[0]

    def _check_version(self) -> None:
        stamp = self.stored_version
        if stamp is None:
            with self.tx():
                self.conn.execute("INSERT OR IGNORE INTO meta VALUES ('code_version', ?)", (self.version,))
        elif stamp != self.version:
            raise VersionMismatch(
                f"{self.name} {self.path} holds results of expressivity {stamp}; this is {self.version}: "
                f"results of different code versions are not mixed in one store — give a new {self.name} "
                "file, or set the old one aside (--reset-db of train, sweep and reproduce, or move the file)")

    def close(self) -> None:
        self.conn.close()

    @classmethod
    def check(cls, path: str | Path, reset: bool = False) -> Path | None:
        """Open the store at ``path`` once and close it, so a file that is not one (or, without
        ``reset``, one of another code version) fails before any work; returns where ``reset``
        set such a store aside (None when it did not)."""
        first = cls(path, reset=reset)
        first.close()
        return first.set_aside

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _writable(self) -> None:
        if self.read_only:
            raise ValueError(f"{self.name} {self.path} was opened read-only")

    # ----------------------------------------------------------------- training runs
    def record_result(self, result: FinishedRun) -> bool:
        """Write a finished (or diverged) run — its ``run_row()`` and ``metric_rows()`` — in one
        transaction; False (nothing written) if this code version already recorded it as done or
        diverged (one from before versioning is replaced). NaN numbers are stored as NULL; a
        row's further numbers go to ``extra_metrics``."""
        self._writable()
        if not isinstance(result, FinishedRun):
            raise ValueError(f"result must be a finished run (a RunResult of train_run), got {type(result).__name__}")
        run = result.run_row()
        run = {**run, **{c: real(run.get(c)) for c in _REAL_RUN_COLS}, "finished": time.time(),
               "code_version": self.version}
        rows = [{**m, **{c: real(m.get(c)) for c in _REAL_RESULT_COLS}} for m in result.metric_rows()]
        extra = [(m["run_id"], m["length"], k, real(v)) for m in rows for k, v in m.items()
                 if k not in _RESULT_COLS and isinstance(v, (int, float)) and not isinstance(v, bool)]
        with self.tx():
            row = self.conn.execute("SELECT status, code_version FROM runs WHERE run_id = ?",
                                    (run["run_id"],)).fetchone()
            if row is not None and row[0] in ("done", "diverged") and row[1] == self.version:
                return False
            for table in ("results", "extra_metrics", "runs"):
                self.conn.execute(f"DELETE FROM {table} WHERE run_id = ?", (run["run_id"],))
            self.conn.execute(f"INSERT INTO runs VALUES ({','.join('?' * len(_RUN_COLS))})",
                              [run.get(c) for c in _RUN_COLS])
            self.conn.executemany(f"INSERT INTO results VALUES ({','.join('?' * len(_RESULT_COLS))})",
                                  [[r.get(c) for c in _RESULT_COLS] for r in rows])
            self.conn.executemany("INSERT INTO extra_metrics VALUES (?, ?, ?, ?)", extra)
        return True

    def record_error(self, cfg: RunIdentity, error: str, status: str = "error") -> None:
        """Mark the run of ``cfg`` as failed (``status`` error | timed_out) with the error text;
        replaces an earlier failure (a retry), never a result."""
        self._writable()
        if not isinstance(cfg, RunIdentity):
            raise ValueError(f"cfg must be a run configuration (a RunConfig), got {type(cfg).__name__}")
        if status not in ("error", "timed_out"):
            raise ValueError(f"failure status must be 'error' or 'timed_out', got {status!r}")
        with self.tx():
            self.conn.execute("DELETE FROM runs WHERE run_id = ? AND status IN ('error', 'timed_out')",
                              (cfg.run_id,))
            self.conn.execute(
                "INSERT OR IGNORE INTO runs (run_id, label, config, status, error, finished, code_version) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (cfg.run_id, cfg.label(), cfg.to_json(), status, error, time.time(), self.version))

    def finished(self, include_errors: bool = True) -> set[str]:
        """Run ids recorded as done or diverged (and error / timed out, with ``include_errors``)."""
        statuses = RUN_STATUSES if include_errors else ("done", "diverged")
        q = f"SELECT run_id FROM runs WHERE status IN ({','.join('?' * len(statuses))})"
        return {r[0] for r in self.conn.execute(q, statuses)}

    def run_record(self, run_id: str) -> dict | None:
        """The run ``run_id`` recorded as done or diverged by this code version — its ``runs`` row
        with ``"metrics"``: its ``results`` rows by length (the metrics and any extra ones; a
        NULL metric read back as NaN) — or None (not recorded, failed, or of older code)."""
        (run,) = self._dicts("SELECT * FROM runs WHERE run_id = ? AND code_version = ? AND status IN "
                             "('done', 'diverged')", (run_id, self.version)) or (None,)
        if run is None:
            return None
        rows = self._dicts("SELECT * FROM results WHERE run_id = ? ORDER BY length", (run_id,))
        extra: dict[int, dict] = {}
        for length, name, value in self.conn.execute(
                "SELECT length, name, value FROM extra_metrics WHERE run_id = ?", (run_id,)):
            extra.setdefault(length, {})[name] = value
        metric = ("length", "n_strings", *_REAL_RESULT_COLS)
        run["metrics"] = [{k: (math.nan if v is None and k != "n_strings" else v)
                           for k, v in ({k: r[k] for k in metric} | extra.get(r["length"], {})).items()} for r in rows]
        return run

    def runs(self) -> list[dict]:
        return self._dicts("SELECT * FROM runs ORDER BY finished")

    def rows(self) -> list[dict]:
        """All result rows (one per run × test length), config parsed, with the row's extra
        metrics (``extra_metrics``) as further keys."""
        extra: dict[tuple[str, int], dict] = {}
        if "extra_metrics" in self._tables():  # absent from an old store opened read-only
            for run_id, length, name, value in self.conn.execute("SELECT * FROM extra_metrics"):
                extra.setdefault((run_id, length), {})[name] = value
        out = self._dicts("SELECT * FROM results ORDER BY task, kind, model, run_id, length")
        for i, d in enumerate(out):
            d["config"] = json.loads(d["config"])
            out[i] = extra.get((d["run_id"], d["length"]), {}) | d
        return out

    def _dicts(self, query: str, args=()) -> list[dict]:
        cur = self.conn.execute(query, args)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]

    # ----------------------------------------------------------------- work units
    def put_unit(self, key: str, group: str, budget: str, status: str, value: Any = None,
                 error: str | None = None, seconds: float | None = None) -> None:
        """Record a finished unit (``value`` JSON-serialisable); replaces an earlier row of ``key``."""
        self._writable()
        if status not in UNIT_STATUSES:
            raise ValueError(f"unit status must be one of {UNIT_STATUSES}, got {status!r}")
        with self.tx():
            self.conn.execute("INSERT OR REPLACE INTO units VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                              (key, group, budget, status, None if value is None else json.dumps(value), error,
                               real(seconds), self.version, time.time()))

    def units(self, group: str | None = None, done_only: bool = False) -> dict[str, dict]:
        """Units of this code version (of claim ``group``), key → row with ``value`` parsed."""
        q, args = "SELECT * FROM units WHERE code_version = ?", [self.version]
        if group is not None:
            q, args = q + " AND grp = ?", [*args, group]
        if done_only:
            q += " AND status = 'done'"
        out = {}
        for d in self._dicts(q, args):
            d["value"] = None if d["value"] is None else json.loads(d["value"])
            out[d["key"]] = d
        return out

    # ----------------------------------------------------------------- judged claims
    def put_claim(self, claim_id: str, budget: str, status: str, claim: dict, figure: bytes | None) -> None:
        self._writable()
        with self.tx():
            self.conn.execute("INSERT OR REPLACE INTO claims VALUES (?, ?, ?, ?, ?, ?, ?)",
                              (claim_id, budget, status, json.dumps(claim), figure, self.version, time.time()))

    def get_claim(self, claim_id: str, budget: str) -> tuple[dict, bytes | None] | None:
        """The stored claim JSON and figure of this code version, or None."""
        row = self.conn.execute("SELECT claim, figure FROM claims WHERE claim_id = ? AND budget = ? AND "
                                "code_version = ?", (claim_id, budget, self.version)).fetchone()
        return None if row is None else (json.loads(row[0]), row[1])

    def count_claims(self, budget: str | None = None) -> int:
        q, args = "SELECT COUNT(*) FROM claims", ()
        if budget is not None:
            q, args = q + " WHERE budget = ?", (budget,)
        return int(self.conn.execute(q, args).fetchone()[0])


def _aside(path: Path, version: str) -> Path:
    """``results.sqlite`` → ``results.0.1.0+abc.sqlite`` (or ``….1.sqlite`` … if taken)."""
    safe = "".join(ch if ch.isalnum() or ch in ".+-_" else "_" for ch in version)
    cand, k = path.with_name(f"{path.stem}.{safe}{path.suffix}"), 1
    while cand.exists():
        cand, k = path.with_name(f"{path.stem}.{safe}.{k}{path.suffix}"), k + 1
    return cand


class _Transaction:
    """BEGIN IMMEDIATE … COMMIT (ROLLBACK on error) on an autocommit connection. An SQLite error
    of the disk or the permissions (:func:`_os_failure`) leaves as a WriteError naming ``where``."""

    def __init__(self, conn: sqlite3.Connection, where: str = "the results store") -> None:
        self.conn, self.where = conn, where

    def __enter__(self):
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise _os_failure(exc, self.where) or exc from None
        return self.conn

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            try:
                self.conn.execute("COMMIT")
                return False
            except sqlite3.Error as commit_exc:
                exc = commit_exc
        try:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass
        if isinstance(exc, sqlite3.Error):
            os_error = _os_failure(exc, self.where)
            if os_error is not None:
                raise os_error from None
            if exc_type is None:
                raise exc
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
