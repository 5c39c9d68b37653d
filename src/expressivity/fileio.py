"""Files: paths, output paths, atomic writes, the one safetensors writer and the one JSON reader.

A leaf (imports nothing of ours), used by every package that reads or writes a file:

* paths: :func:`check_path` (a str or PathLike, not empty), :func:`check_output_path` (before
  any work starts; never a device or pipe), :func:`make_dir`;
* writes: :func:`write_atomic` (a temporary file and a rename; an OS error is a
  :class:`WriteError` naming the path and the reason, e.g. ``cannot write out/m.safetensors:
  No space left on device``), :func:`write_bytes_atomic`, :func:`write_text_atomic`,
  :func:`write_json` and :func:`write_safetensors` — the one safetensors writer (deterministic
  bytes: sorted header, tensors in name order);
* reads: :func:`read_text_file` and :func:`read_json` — the one JSON reader (one-line errors
  for a missing, unreadable, binary or malformed file);
* the file-mode rule: every file we write gets :func:`file_mode` (0o666 filtered by the
  umask, as ``open`` makes it; 0o644 under umask 022), whatever library produced its bytes —
  :func:`write_atomic` sets it on the temporary file before the rename.
"""

from __future__ import annotations

import json
import os
import struct
import tempfile
from collections.abc import Mapping
from pathlib import Path


def check_path(value, name: str) -> Path:
    """``value`` as a :class:`~pathlib.Path`: a ``str`` or ``os.PathLike``, not empty (None, a
    number, bytes or a list are refused, naming ``name``)."""
    if isinstance(value, bytes) or not isinstance(value, (str, os.PathLike)):
        got = "None" if value is None else type(value).__name__
        raise ValueError(f"{name} must be a path (str or pathlib.Path), got {got}")
    if str(os.fspath(value)).strip() == "":
        raise ValueError(f"{name}: empty path")
    return Path(value).expanduser()


def _special(p: Path) -> str | None:
    """What an existing path is when it is neither a regular file nor a directory."""
    import stat

    try:
        mode = p.stat().st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return ("a pipe (FIFO)" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file")


def check_output_path(path, name: str, *, kind: str = "file") -> Path:
    """Refuse an output path that cannot be written, before any work starts.

    ``kind="file"``: the path must not be a directory, no existing ancestor may be a file, and
    the file (or its nearest existing directory) must be writable. ``kind="dir"``: the path must
    not be a file, likewise. Nothing is created (writability is probed with a temporary file
    that is removed at once).
    """
    if kind not in ("file", "dir"):
        raise ValueError(f"kind must be 'file' or 'dir', got {kind!r}")
    if path is None or (isinstance(path, str) and path.strip() == ""):
        raise ValueError(f"{name}: empty path")
    p = check_path(path, name)
    special = _special(p)
    if special is not None:  # a rename would replace the device or pipe; opening a FIFO blocks
        raise ValueError(f"{name} {p} is {special}, not a regular {'file' if kind == 'file' else 'directory'}; "
                         f"give a {'file' if kind == 'file' else 'directory'} path")
    if kind == "file" and p.is_dir():
        raise ValueError(f"{name} {p} is a directory; give a file path")
    if kind == "dir" and p.exists() and not p.is_dir():
        raise ValueError(f"{name} {p} is a file; give a directory")
    probe = p if p.is_dir() else p.parent
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir():
        raise ValueError(f"{name} {p}: {probe} is a file, not a directory")
    if kind == "file" and p.exists():
        try:
            with open(p, "ab"):
                pass
        except OSError as exc:
            raise ValueError(f"{name} {p} is not writable ({exc.strerror or exc})") from None
        return p
    try:
        with tempfile.TemporaryFile(dir=probe):
            pass
    except OSError as exc:
        raise ValueError(f"{name} {p}: cannot write in {probe} ({exc.strerror or exc})") from None
    return p


class WriteError(OSError):
    """An output could not be written (disk full, permission, read-only file system, …): the
    message names the path and the OS's reason (``reason``), on one line."""

    def __init__(self, errno_: int | None, message: str, reason: str | None = None) -> None:
        super().__init__(errno_, message)
        self.reason = reason or message


def write_error(exc: OSError, path) -> OSError:
    """``exc`` (raised while writing ``path``) as a :class:`WriteError` naming ``path``;
    already one: unchanged."""
    if isinstance(exc, WriteError):
        return exc
    reason = exc.strerror or str(exc) or type(exc).__name__
    return WriteError(exc.errno, f"cannot write {path}: {reason}", reason)


def write_atomic(path, write) -> None:
    """``write(tmp)`` to a temporary file beside ``path``, then rename it over ``path``: a crash
    or a full disk never leaves half a file under ``path`` (the old file, or none, stays). The
    file's mode is :func:`file_mode` (the umask's, as ``open``), even where ``write`` used a
    library that makes its files 0o600. An ``OSError`` is raised as a
    :class:`WriteError` naming ``path``; a ``path`` that is a directory, a device or a pipe is
    refused (a rename would replace it)."""
    path = check_path(path, "path")
    special = _special(path)
    if special is not None or path.is_dir():
        raise ValueError(f"{path} is {special or 'a directory'}, not a regular file; give a file path")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        os.chmod(tmp, file_mode())  # the one file-mode rule, whoever wrote the bytes
        os.replace(tmp, path)
    except OSError as exc:
        raise write_error(exc, path) from None
    finally:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass


def file_mode() -> int:
    """The mode of every file we write: 0o666 filtered by the process's umask (what ``open``
    gives a new file; 0o644 under umask 022)."""
    return 0o666 & ~_umask()


def _umask() -> int:
    """The process's umask, read without changing it where the OS tells (Linux: /proc), so no
    other thread ever sees a zero umask; elsewhere set and restored at once."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_bytes_atomic(path, data: bytes) -> None:
    """:func:`write_atomic` of ``data``."""
    def write(tmp: Path) -> None:
        with open(tmp, "wb") as fh:
            fh.write(data)

    write_atomic(path, write)


def write_text_atomic(path, text: str) -> None:
    """:func:`write_atomic` of ``text`` as UTF-8."""
    write_bytes_atomic(path, text.encode("utf-8"))


def write_json(path, value, *, indent: int | None = 2, sort_keys: bool = True) -> None:
    """``value`` as JSON (sorted keys, UTF-8, a final newline) written atomically to ``path``."""
    write_text_atomic(path, json.dumps(value, sort_keys=sort_keys, indent=indent, ensure_ascii=False) + "\n")


_ST_DTYPES = {"float64": "F64", "float32": "F32", "float16": "F16", "bfloat16": "BF16",
              "int64": "I64", "int32": "I32", "int16": "I16", "int8": "I8",
              "uint8": "U8", "bool": "BOOL"}


def safetensors_dtype(dtype) -> str | None:
    """The safetensors name of a torch dtype (``torch.float64`` → ``"F64"``); None if it has none here."""
    return _ST_DTYPES.get(str(dtype).removeprefix("torch."))


def write_safetensors(path, tensors: Mapping, metadata: Mapping[str, str] | None = None) -> None:
    """The one safetensors writer: ``tensors`` (name → torch tensor) and string ``metadata``
    (default ``{"format": "pt"}``, as the hub writes it) to ``path``, atomically, with
    :func:`file_mode`.

    Bytes are deterministic (the same tensors give the same file): the header is JSON with
    sorted keys (``__metadata__`` included), tensors are laid out in name order and the data
    start 8-aligned; the format is the standard one (``safetensors.safe_open`` reads it).
    """
    import torch

    meta = {"format": "pt"} if metadata is None else dict(metadata)
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in meta.items()):
        raise ValueError("safetensors metadata must map strings to strings (use json.dumps)")
    header: dict = {"__metadata__": {k: meta[k] for k in sorted(meta)}}
    blobs, offset = [], 0
    for name in sorted(tensors):
        t = tensors[name].detach().cpu().contiguous()
        kind = str(t.dtype).removeprefix("torch.")
        if kind not in _ST_DTYPES:
            raise ValueError(f"tensor {name}: dtype {t.dtype} cannot be saved")
        data = t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
        header[name] = {"dtype": _ST_DTYPES[kind], "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    head = json.dumps(header, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    head += b" " * (-len(head) % 8)  # the data start 8-aligned, as safetensors writes them

    def write(tmp: Path) -> None:
        with open(tmp, "wb") as fh:
            fh.write(struct.pack("<Q", len(head)))
            fh.write(head)
            for data in blobs:
                fh.write(data)

    write_atomic(path, write)


def make_dir(path, name: str) -> Path:
    """``mkdir -p path``; an OS error is a :class:`WriteError` naming ``name`` and the path."""
    p = Path(path)
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise WriteError(exc.errno, f"{name} {p}: cannot create the directory: {reason}", reason) from None
    return p


def read_text_file(path, name: str) -> str:
    """The UTF-8 text of ``path``; one-line errors for a missing, unreadable or binary file (and
    for a pipe or device, which could block forever)."""
    p = check_path(path, name)
    if p.is_dir():
        raise ValueError(f"{name} {p} is a directory, not a file")
    special = _special(p)
    if special is not None:
        raise ValueError(f"{name} {p} is {special}, not a regular file")
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise ValueError(f"{name} {p} does not exist") from None
    except OSError as exc:
        raise ValueError(f"{name} {p} cannot be read ({exc.strerror or exc})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{name} {p} is not UTF-8 text (a binary file?)") from None


def read_json(path, name: str):
    """The parsed JSON of ``path``: the one JSON reader. One-line errors (naming ``name`` and
    the path) for a missing, unreadable, binary or malformed file."""
    text = read_text_file(path, name)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{name} {check_path(path, name)} is not valid JSON ({exc.msg}, line {exc.lineno})") from None
