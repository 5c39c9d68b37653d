"""The code version a result was produced by: ``"<package version>+<source hash>"``.

The hash is the SHA-256 (first 12 hex digits) of every ``*.py`` file of the installed
``expressivity`` package, by relative path and content, so two checkouts that differ in any
source file have different versions. A store refuses to mix results of two versions
(:class:`expressivity.runs.store.VersionMismatch`).
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

_PKG = Path(__file__).resolve().parents[1]  # src/expressivity


@cache
def source_hash() -> str:
    h = hashlib.sha256()
    for f in sorted(_PKG.rglob("*.py")):
        if "__pycache__" in f.parts:
            continue
        h.update(str(f.relative_to(_PKG)).encode())
        h.update(b"\0")
        h.update(f.read_bytes())
        h.update(b"\0")
    return h.hexdigest()[:12]


def code_version() -> str:
    """E.g. ``"0.1.0+3fa2c19b0d4e"``."""
    from .. import __version__

    return f"{__version__}+{source_hash()}"
