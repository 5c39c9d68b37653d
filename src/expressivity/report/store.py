"""SQLite store of finished claim results, so an interrupted ``reproduce`` resumes.

One row per (claim id, size, key); ``key`` hashes the source code of the packages the claim
depends on plus the report's own measurement code, so a result is reused only while the code
that produced it is unchanged. Only judged results ("holds" / "violated") are stored; a claim
that could not be measured ("not applicable") is retried next time. Each row is committed as
soon as its claim finishes.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from functools import cache
from pathlib import Path

from ..checks import check_output_path
from .claims import Claim, ClaimSpec

_SCHEMA = """
CREATE TABLE IF NOT EXISTS claims (
    claim_id TEXT NOT NULL,
    size     TEXT NOT NULL,
    key      TEXT NOT NULL,
    status   TEXT NOT NULL,
    claim    TEXT NOT NULL,   -- Claim as JSON
    figure   BLOB,            -- PNG bytes or NULL
    created  REAL NOT NULL,
    PRIMARY KEY (claim_id, size, key)
);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
_MAGIC = "expressivity-report-v1"
_PKG = Path(__file__).resolve().parents[1]  # src/expressivity


@cache
def _tree_hash(package: str) -> str:
    h = hashlib.sha256()
    root = _PKG / package
    files = sorted(root.rglob("*.py")) if root.is_dir() else [root.with_suffix(".py")]
    for f in files:
        if f.exists():
            h.update(str(f.relative_to(_PKG)).encode())
            h.update(f.read_bytes())
    return h.hexdigest()


def code_key(spec: ClaimSpec, size: str) -> str:
    """Hash of the claim id, size and the source of everything its measurement runs."""
    h = hashlib.sha256(f"{spec.id}|{size}".encode())
    own = spec.run.__module__.rsplit(".", 1)[-1]  # e.g. compile_claims
    for part in sorted({*spec.depends, "cpwl", "transformer", f"report/{own}", "report/claims",
                        "report/figures"}):
        h.update(part.encode())
        h.update(_tree_hash(part).encode())
    return h.hexdigest()[:16]


class Store:
    """``Store(path)``: get/put finished claims. Raises ValueError for a file that is not ours."""

    def __init__(self, path: str | Path) -> None:
        if not isinstance(path, (str, Path)) or str(path).strip() == "":
            raise ValueError(f"--db: expected a file path, got {path!r}")
        self.path = Path(path)
        where = f"--db {self.path}"
        if self.path.is_dir():
            raise ValueError(f"{where} is a directory; give the report database file")
        fresh = not self.path.exists() or self.path.stat().st_size == 0
        if fresh:
            check_output_path(self.path, "--db")
        else:
            try:
                with open(self.path, "rb") as fh:
                    head = fh.read(16)
            except OSError as exc:
                raise ValueError(f"{where} cannot be read ({exc.strerror or exc})") from None
            if head != b"SQLite format 3\x00":
                raise ValueError(f"{where} is not an SQLite database; give a report store or a new file name")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.con = sqlite3.connect(self.path)
            tables = {r[0] for r in self.con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        except sqlite3.DatabaseError as exc:
            raise ValueError(f"{where}: not a usable SQLite database ({exc})") from None
        try:
            if tables and not {"claims", "meta"} <= tables:
                if "runs" in tables and "results" in tables:
                    what = "a training results database (expressivity train/sweep --db)"
                else:
                    what = f"tables: {', '.join(sorted(tables))}"
                raise ValueError(f"{where} is an SQLite database but not a report store ({what}); "
                                 "give another --db")
            try:
                row = None if not tables else self.con.execute(
                    "SELECT value FROM meta WHERE name='magic'").fetchone()
            except sqlite3.OperationalError:
                raise ValueError(f"{where} is an SQLite database but not a report store "
                                 "(its meta table is not ours)") from None
            if tables and (row is None or row[0] != _MAGIC):
                magic = "no magic" if row is None else f"magic {row[0]!r}"
                raise ValueError(f"{where} is an SQLite database but not a report store ({magic})")
            if not tables:
                self.con.executescript(_SCHEMA)
                self.con.execute("INSERT INTO meta VALUES ('magic', ?)", (_MAGIC,))
                self.con.commit()
        except ValueError:
            self.con.close()
            raise
        except sqlite3.DatabaseError as exc:
            self.con.close()
            raise ValueError(f"{where}: cannot use this database ({exc})") from None

    def get(self, spec: ClaimSpec, size: str) -> tuple[Claim, bytes | None] | None:
        row = self.con.execute(
            "SELECT claim, figure FROM claims WHERE claim_id=? AND size=? AND key=?",
            (spec.id, size, code_key(spec, size)),
        ).fetchone()
        if row is None:
            return None
        return Claim.from_json(json.loads(row[0])), row[1]

    def put(self, spec: ClaimSpec, claim: Claim, figure: bytes | None) -> bool:
        """Store a judged claim; returns False (and stores nothing) for "not applicable"."""
        if claim.status == "not applicable":
            return False
        with self.con:
            self.con.execute(
                "INSERT OR REPLACE INTO claims VALUES (?,?,?,?,?,?,?)",
                (
                    claim.id,
                    claim.size,
                    code_key(spec, claim.size),
                    claim.status,
                    json.dumps(claim.to_json()),
                    figure,
                    time.time(),
                ),
            )
        return True

    def count(self, size: str | None = None) -> int:
        q, args = "SELECT COUNT(*) FROM claims", ()
        if size is not None:
            q, args = q + " WHERE size=?", (size,)
        return int(self.con.execute(q, args).fetchone()[0])

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Store:  # noqa: PYI034
        return self

    def __exit__(self, *exc) -> None:
        self.close()
