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
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.con = sqlite3.connect(self.path)
            self.con.executescript(_SCHEMA)
            row = self.con.execute("SELECT value FROM meta WHERE name='magic'").fetchone()
        except sqlite3.DatabaseError as exc:
            raise ValueError(f"--db {self.path}: not an SQLite database ({exc})") from None
        if row is None:
            other = self.con.execute(
                "SELECT name FROM sqlite_master WHERE type='table' AND name NOT IN ('claims','meta')"
            ).fetchall()
            if other:
                raise ValueError(
                    f"--db {self.path}: database holds other tables {[o[0] for o in other]};"
                    " not a report store"
                )
            self.con.execute("INSERT INTO meta VALUES ('magic', ?)", (_MAGIC,))
            self.con.commit()
        elif row[0] != _MAGIC:
            raise ValueError(f"--db {self.path}: not a report store (magic {row[0]!r})")

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
