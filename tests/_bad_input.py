"""The bad-input contract, shared by every ``test_bad_input_*.py`` corpus file.

CLI: exit code 2, exactly one line on stderr that starts with ``error:`` and names the
parameter, nothing on stdout that looks like a traceback, and nothing written anywhere under
the working directory. API: a ``ValueError`` (never TypeError/KeyError/AttributeError or a
numpy message) whose one-line message names the parameter.

A corpus file is a table of named cases, e.g.::

    CASES = [Case("negative steps", ["train", "--task", "parity", "--steps", "-1"], "steps"), ...]

    @pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
    def test_cli_bad_input(case, tmp_path, monkeypatch):
        cli_rejects(case, tmp_path, monkeypatch)
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from typer.testing import CliRunner


@dataclass(frozen=True)
class Case:
    """One bad CLI input: ``args`` after ``expressivity``; ``mentions``: substrings that the
    message must contain (case-insensitive; the parameter's name at least). ``setup(tmp)``
    may write input files into the temporary working directory first and return extra
    args; files it writes do not count as "written by the command"."""

    name: str
    args: list[str]
    mentions: str | tuple[str, ...]
    setup: Callable[[Path], list[str] | None] | None = field(default=None, compare=False)


def _snapshot(root: Path) -> dict[str, tuple[int, float]]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            out[str(p.relative_to(root))] = (st.st_size, st.st_mtime)
    return out


def _mentions(case_mentions) -> tuple[str, ...]:
    return (case_mentions,) if isinstance(case_mentions, str) else tuple(case_mentions)


def cli_rejects(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run ``case`` in ``tmp_path`` (as the working directory) and assert the contract.
    Returns the message."""
    from expressivity.cli import app

    monkeypatch.chdir(tmp_path)
    extra = case.setup(tmp_path) if case.setup else None
    args = list(case.args) + list(extra or [])
    before = _snapshot(tmp_path)
    result = CliRunner().invoke(app, args)
    after = _snapshot(tmp_path)
    out, err = result.stdout, result.stderr
    assert result.exit_code == 2, f"exit code {result.exit_code} for {args}\nstdout: {out}\nstderr: {err}\n{result.exception!r}"
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, f"expected one line on stderr for {args}, got {len(lines)}:\n{err}"
    msg = lines[0]
    assert msg.startswith("error:"), msg
    assert "Traceback" not in out + err, out + err
    for word in _mentions(case.mentions):
        assert word.lower() in msg.lower(), f"message does not mention {word!r}: {msg}"
    assert after == before, f"{args} wrote files: {sorted(set(after) ^ set(before)) or 'modified existing files'}"
    return msg


def api_rejects(fn: Callable, *args, mentions: str | tuple[str, ...], **kwargs) -> str:
    """Call ``fn(*args, **kwargs)`` and assert a one-line ValueError naming ``mentions``."""
    with pytest.raises(ValueError) as info:
        fn(*args, **kwargs)
    msg = str(info.value)
    assert type(info.value) is ValueError or isinstance(info.value, ValueError), type(info.value)
    assert "\n" not in msg.strip(), f"multi-line message: {msg}"
    for word in _mentions(mentions):
        assert word.lower() in msg.lower(), f"message does not mention {word!r}: {msg}"
    return msg
