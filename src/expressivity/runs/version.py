"""The code version a result was produced by: ``"<package version>+<source hash>"``.

The hash is the SHA-256 (first 12 hex digits) of every ``*.py`` file of the installed
``expressivity`` package, by relative path and content, so two checkouts that differ in any
source file have different versions. A store refuses to mix results of two versions
(:class:`expressivity.runs.store.VersionMismatch`).

:func:`build_info` is what a result says about the code that made it (package version, git
commit, code version; ``expressivity --version`` and the report print it), :func:`machine_info`
where it ran.
"""

from __future__ import annotations

import hashlib
import os
import platform
import subprocess
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


@cache
def git_commit() -> str | None:
    """The commit of the git checkout the package runs from (``+dirty`` when tracked files
    differ from it), or None (an installed wheel, no git, not a checkout)."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(_PKG), *args], capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip()

    try:
        commit = git("rev-parse", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no", "--", ".")
    except (OSError, subprocess.SubprocessError):
        return None
    return commit[:12] + ("+dirty" if dirty else "") if commit else None


def build_info() -> dict[str, str | None]:
    """``{"version", "commit", "code_version"}``: the package version, the git commit (None
    outside a checkout) and the code version results are stored under."""
    from .. import __version__

    return {"version": __version__, "commit": git_commit(), "code_version": code_version()}


def machine_info() -> dict[str, str | int | None]:
    """Where a result was measured: host, OS, CPU architecture and count, Python and torch."""
    try:
        from importlib.metadata import version

        torch = version("torch")
    except Exception:  # noqa: BLE001 — torch metadata missing: say so, do not fail a report
        torch = None
    return {"host": platform.node(), "os": f"{platform.system()} {platform.release()}",
            "machine": platform.machine(), "cpus": os.cpu_count(),
            "python": platform.python_version(), "torch": torch}


def version_text() -> str:
    """One line for ``expressivity --version``."""
    b = build_info()
    return f"expressivity {b['version']} (commit {b['commit'] or 'unknown'}, code version {b['code_version']})"
