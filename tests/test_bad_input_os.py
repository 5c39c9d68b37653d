"""OS errors on output (see docs/errors.md): a full disk, a permission error or a read-only file
system gives one line naming the path and the OS's reason — a ``WriteError`` (an ``OSError``)
in Python, ``error: …`` with exit code 2 on the command line — for every writer, and nothing
is half-written: no temporary file is left and an existing output keeps its old bytes.

The faults are injected where the bytes are written (Python's ``open``: every writer of ours
goes through it, torch's checkpoints and safetensors included), as ENOSPC at ``write`` and
EACCES / EROFS at ``open``; SQLite's own I/O through a connection that fails as SQLite
reports a full or read-only disk. Real conditions where a test can make them as any user:
a file-size limit (RLIMIT_FSIZE, so every write past it fails with EFBIG) in a subprocess,
and pipes where a file is expected (chmod-based permissions do not bind root, as in CI)."""

from __future__ import annotations

import builtins
import errno
import io
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from _bad_input import Case, cli_rejects
from _saved_models import RUN, build, copy_into
from typer.testing import CliRunner

from expressivity.fileio import WriteError

ERRNOS = [errno.ENOSPC, errno.EACCES, errno.EROFS]


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("saved"))


class _FullFile:
    """A real file object whose writes fail as on a full disk."""

    def __init__(self, fh, path):
        self._fh, self._path = fh, path

    def write(self, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def __getattr__(self, name):
        return getattr(self._fh, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._fh.close()
        return False


def fail_writes(monkeypatch, err: int, under: Path) -> None:
    """Make every write-mode ``open`` of a path under ``under`` fail with ``err`` (ENOSPC: at the
    first ``write``, so a check that writes nothing still passes, as on a real full disk)."""
    real = builtins.open
    under = str(under)

    def fake(file, mode="r", *args, **kwargs):
        if isinstance(file, (str, os.PathLike)) and os.path.abspath(file).startswith(under) \
                and any(c in mode for c in "wax+"):
            if err == errno.ENOSPC:  # the file is created, its bytes do not fit
                return _FullFile(real(file, mode, *args, **kwargs), file)
            raise OSError(err, os.strerror(err), str(file))
        return real(file, mode, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", fake)
    monkeypatch.setattr(io, "open", fake)


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _assert_nothing_half_written(root: Path, before: dict[str, bytes]) -> None:
    after = _files(root)
    assert not [n for n in after if n.endswith(".tmp")], sorted(after)  # no temporary file left
    changed = [n for n in before if after.get(n) != before[n]]
    assert not changed, changed  # existing files keep their bytes
    new = [n for n in set(after) - set(before) if after[n]]
    assert not new, new  # nothing new with content (an empty file may be what ENOSPC leaves)


# --------------------------------------------------------------------------- API writers
def _cm(d):
    from expressivity.compile import load_compiled

    return load_compiled(d / "m.safetensors")


def _save_pretrained(d):
    from expressivity.interop import save_pretrained

    save_pretrained(_cm(d), d / "hub_compiled")  # over an existing hub directory
    return d / "hub_compiled" / "model.safetensors"


def _save_transformer(d):
    from expressivity.transformer import load_transformer, save_transformer

    save_transformer(load_transformer(d / "tr.safetensors"), d / "tr.safetensors")
    return d / "tr.safetensors"


def _compiled_save(d):
    _cm(d).save(d / "m.safetensors")
    return d / "m.safetensors"


def _export_onnx(d):
    from expressivity.interop import export_onnx

    pytest.importorskip("onnx")
    export_onnx(_cm(d), d / "m.onnx")
    return d / "m.onnx"


def _train_run(d):
    from expressivity.train import RunConfig, train_run

    train_run(RunConfig(model="transformer", **RUN), out_dir=d / "run")  # over its own finished checkpoint
    return d / "run"


def _train_run_lstm(d):
    from expressivity.train import RunConfig, train_run

    train_run(RunConfig(model="lstm", **{**RUN, "steps": 3}), out_dir=d / "fresh")
    return d / "fresh"


def _report(d):
    from expressivity.report import html

    html.write(d / "report", [], {"x": b"png"}, "test", 1.0)
    return d / "report"


WRITERS = [("save_pretrained", _save_pretrained), ("save_transformer", _save_transformer),
           ("CompiledModel.save", _compiled_save), ("export_onnx", _export_onnx), ("train_run", _train_run),
           ("train_run lstm", _train_run_lstm), ("report html.write", _report)]


@pytest.mark.parametrize("err", ERRNOS, ids=lambda e: errno.errorcode[e])
@pytest.mark.parametrize("writer", WRITERS, ids=lambda w: w[0])
def test_api_write_error_names_path_and_reason(writer, err, saved, tmp_path, monkeypatch):
    copy_into(saved, tmp_path)
    (tmp_path / "m.onnx").write_bytes(b"old")  # an earlier export the failed one must not replace
    before = _files(tmp_path)
    fail_writes(monkeypatch, err, tmp_path)
    _, write = writer
    with pytest.raises((OSError, ValueError)) as info:
        write(tmp_path)
    msg = str(info.value)
    # a full disk shows only when the bytes are written (a WriteError); a location that cannot be
    # written at all may already be refused by the check before any work (a ValueError)
    assert isinstance(info.value, WriteError if err == errno.ENOSPC else (WriteError, ValueError)), repr(info.value)
    assert "\n" not in msg and os.strerror(err) in msg and str(tmp_path) in msg, msg
    assert ".tmp" not in msg, msg  # the path named is the output, not a temporary file
    monkeypatch.undo()
    _assert_nothing_half_written(tmp_path, before)


# --------------------------------------------------------------------------- CLI writers
def _spec(tmp: Path) -> list[str]:
    import json

    from _saved_models import SPEC

    (tmp / "spec.json").write_text(json.dumps(SPEC))
    return []


TRAIN = ["train", "--task", "parity", "--d-model", "4", "--layers", "1", "--steps", "1", "--batch-size", "2",
         "--train-lengths", "2-3", "--test-lengths", "4", "--eval-batch", "2", "--db", "db.sqlite"]
CLI_WRITERS = [
    ("compile --out", ["compile", "spec.json", "--out", "m.safetensors"], "m.safetensors"),
    ("export --onnx", ["export", "m.safetensors", "--onnx", "m.onnx", "--check", "0"], "m.onnx"),
    ("export --hub", ["export", "m.safetensors", "--hub", "hub_compiled"], "hub_compiled"),
    ("train --out (rnn)", TRAIN + ["--model", "rnn", "--out", "o"], "o"),
    ("train --out (transformer)", TRAIN + ["--model", "transformer", "--heads", "1", "--out", "o"], "o"),
]


@pytest.mark.parametrize("err", ERRNOS, ids=lambda e: errno.errorcode[e])
@pytest.mark.parametrize("writer", CLI_WRITERS, ids=lambda w: w[0])
def test_cli_write_error_is_one_line(writer, err, saved, tmp_path, monkeypatch):
    from expressivity.cli import app

    name, args, target = writer
    if "onnx" in name:
        pytest.importorskip("onnx")
    copy_into(saved, tmp_path)
    (tmp_path / "m.onnx").write_bytes(b"old")
    monkeypatch.chdir(tmp_path)
    before = _files(tmp_path)
    fail_writes(monkeypatch, err, tmp_path)
    r = CliRunner().invoke(app, args)
    monkeypatch.undo()
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.exit_code == 2, (r.exit_code, r.stdout, r.stderr)
    assert len(lines) == 1 and lines[0].startswith("error:"), r.stderr
    assert target in lines[0] and os.strerror(err).lower() in lines[0].lower(), lines[0]
    assert "internal error" not in r.stderr and "Traceback" not in r.stdout + r.stderr
    _assert_nothing_half_written(tmp_path, before)


# --------------------------------------------------------------------------- SQLite
class _FailingConnection:
    """An sqlite3 connection whose writes fail as SQLite reports ``code`` (e.g. a full disk)."""

    def __init__(self, conn, code: str, text: str):
        self._conn, self._code, self._text = conn, code, text

    def _fail(self, sql: str):
        head = sql.lstrip().split(None, 1)[0].upper()
        if head in ("INSERT", "CREATE", "UPDATE", "DELETE", "ALTER", "BEGIN", "COMMIT"):
            exc = sqlite3.OperationalError(self._text)
            exc.sqlite_errorname = self._code
            raise exc

    def execute(self, sql, *args):
        self._fail(sql)
        return self._conn.execute(sql, *args)

    def executemany(self, sql, *args):
        self._fail(sql)
        return self._conn.executemany(sql, *args)

    def __getattr__(self, name):
        return getattr(self._conn, name)


SQLITE_FAULTS = [("SQLITE_FULL", "database or disk is full", "full"),
                 ("SQLITE_IOERR_WRITE", "disk I/O error", "i/o error"),
                 ("SQLITE_READONLY", "attempt to write a readonly database", "read-only"),
                 ("SQLITE_CANTOPEN", "unable to open database file", "permission")]


def _failing_sqlite(monkeypatch, code, text):
    real = sqlite3.connect
    monkeypatch.setattr(sqlite3, "connect", lambda *a, **k: _FailingConnection(real(*a, **k), code, text))


@pytest.mark.parametrize("fault", SQLITE_FAULTS, ids=lambda f: f[0])
def test_api_store_disk_errors_name_the_store(fault, tmp_path, monkeypatch):
    """A full or read-only disk is named as such (it used to read "not an expressivity results
    database"), a new store file that could not be created is removed, and a write into an
    existing store leaves it as it was."""
    from expressivity.runs.store import Store

    code, text, word = fault
    _failing_sqlite(monkeypatch, code, text)
    with pytest.raises(WriteError) as info:
        Store(tmp_path / "new.sqlite")
    msg = str(info.value)
    assert "new.sqlite" in msg and "cannot write the database" in msg and word in msg.lower(), msg
    assert "not an expressivity results database" not in msg
    assert not (tmp_path / "new.sqlite").exists()
    monkeypatch.undo()
    Store(tmp_path / "old.sqlite").close()
    before = (tmp_path / "old.sqlite").read_bytes()
    _failing_sqlite(monkeypatch, code, text)

    def write_one():  # opening for writing may already write (the version stamp), or the write fails
        with Store(tmp_path / "old.sqlite") as store:
            store.put_unit("k", "g", "test", "done", value=1)

    with pytest.raises(WriteError, match="old.sqlite: cannot write the database"):
        write_one()
    assert (tmp_path / "old.sqlite").read_bytes() == before


@pytest.mark.parametrize("fault", SQLITE_FAULTS[:3], ids=lambda f: f[0])
def test_cli_train_db_disk_error_is_one_line(fault, tmp_path, monkeypatch):
    """The store is written when the run has finished: a disk error then is one line naming the
    store, the new store file is removed, and the run's checkpoint (complete files) stays, so
    the same command resumes from it."""
    from expressivity.cli import app

    code, text, word = fault
    monkeypatch.chdir(tmp_path)
    _failing_sqlite(monkeypatch, code, text)
    r = CliRunner().invoke(app, TRAIN + ["--model", "rnn", "--out", "o"])
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: --db db.sqlite"), r.stderr
    assert "cannot write the database" in lines[0] and word in lines[0].lower(), lines[0]
    assert not (tmp_path / "db.sqlite").exists() and not list(tmp_path.rglob("*.tmp"))
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)
    again = CliRunner().invoke(app, TRAIN + ["--model", "rnn", "--out", "o"])
    assert again.exit_code == 0 and (tmp_path / "db.sqlite").is_file(), again.stderr


# --------------------------------------------------------------------------- special files
FIFO_CASES = [
    Case("compile --out a pipe", ["compile", "spec.json", "--out", "p"], ("--out", "pipe")),
    Case("train --db a pipe", TRAIN + ["--model", "rnn", "--db", "p"], ("--db", "pipe")),
    Case("train --out a pipe", TRAIN + ["--model", "rnn", "--out", "p"], ("--out", "pipe")),
    Case("sweep config a pipe", ["sweep", "p", "--dry-run"], ("sweep config", "pipe")),
    Case("results --plot a pipe", ["results", "--db", "db.sqlite", "--plot", "p"], ("--plot", "pipe")),
]


@pytest.mark.parametrize("case", FIFO_CASES, ids=lambda c: c.name)
def test_cli_pipe_is_not_a_file(case, tmp_path, monkeypatch):
    """A FIFO where a file is expected is refused at once (opening it used to block forever, and
    a rename over it replaces it; as root a device such as /dev/full was replaced)."""
    def setup(tmp: Path):
        _spec(tmp)
        os.mkfifo(tmp / "p")
    cli_rejects(Case(case.name, case.args, case.mentions, setup), tmp_path, monkeypatch)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="permissions do not bind root")
def test_cli_unwritable_directory(tmp_path, monkeypatch):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        cli_rejects(Case("compile into a read-only directory", ["compile", "spec.json", "--out", "locked/m.safetensors"],
                         ("--out", "locked")), tmp_path, monkeypatch) if _spec(tmp_path) is not None else None
    finally:
        locked.chmod(0o755)


# --------------------------------------------------------------------------- real: RLIMIT_FSIZE
def _limited(args: list[str], cwd: Path, limit: int) -> subprocess.CompletedProcess:
    import resource
    import signal

    def pre():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run([sys.executable, "-m", "expressivity", *args], cwd=cwd, capture_output=True, text=True,
                          preexec_fn=pre, timeout=600)


REAL = [
    ("train --out, rnn checkpoint", TRAIN + ["--model", "rnn", "--out", "o"], 3000, "checkpoint in o"),
    ("train --db", TRAIN + ["--model", "rnn", "--out", "o"], 9000, "db.sqlite: cannot write the database"),
    ("compile --out", ["compile", "spec.json", "--out", "m.safetensors"], 2000, "m.safetensors"),
]


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_FSIZE semantics are Linux's")
@pytest.mark.parametrize("case", REAL, ids=lambda c: c[0])
def test_cli_file_size_limit_is_one_line(case, tmp_path):
    """A real OS error (EFBIG: the file-size limit; SQLite's disk I/O error): one line, exit 2.
    ``train --out`` under it used to end in ``internal error (RuntimeError: basic_ios::clear)``."""
    name, args, limit, words = case
    _spec(tmp_path)
    r = _limited(args, tmp_path, limit)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 2 and len(lines) == 1 and lines[0].startswith("error:"), (r.returncode, r.stderr)
    assert words in lines[0] and "internal error" not in lines[0], lines[0]
    assert "too large" in lines[0].lower() or "i/o error" in lines[0].lower(), lines[0]
    assert not list(tmp_path.rglob("*.tmp"))
