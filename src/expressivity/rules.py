"""Input rules shared by every package: one parser or rule per concept, one-line errors.

Every function raises ``ValueError`` whose message starts with the parameter's name and says
what is allowed, e.g. ``lengths: 8.5 is not an integer length``. This module imports nothing
of ours (a leaf, like :mod:`expressivity.fileio` and :mod:`expressivity.memory`), so the
library and the CLI use the same rules:

* lengths and ranges: :func:`parse_lengths` ("41-45", "8,16,32", 32, [8, 16]) and
  :func:`parse_length_range` ("1-40", (1, 40), 12 → (12, 12));
* ``KEY=VALUE`` parameters: :func:`parse_params`;
* scalars and names: :func:`check_int`, :func:`check_float`, :func:`check_bool`, :func:`check_choice`;
* arrays: :func:`as_real_array` (no complex, no NaN/inf, shape named);
* optional packages: :func:`missing_extra` (a :class:`MissingExtra`, which says what to install);
* user errors (:data:`USER_ERRORS`: bad input, a file, the store, memory) in one line: :func:`describe_error`.

Files (paths, atomic writes, safetensors and JSON) are :mod:`expressivity.fileio`'s; the
memory and chunking budget is :mod:`expressivity.memory`'s.
"""

from __future__ import annotations

import math
import numbers
import re
import sqlite3
from collections.abc import Iterable, Mapping

import numpy as np

# ---------------------------------------------------------------------------- scalars


def _show(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_int(value, name: str, *, min: int | None = None, max: int | None = None) -> int:
    """``value`` as an int: ints, numpy ints and integral floats (3.0) pass; bools, 2.9, NaN
    and strings are refused. ``min``/``max`` are inclusive."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be an integer, got {_show(value)}")
    if isinstance(value, numbers.Integral):
        out = int(value)
    else:
        v = float(value)
        if not math.isfinite(v) or v != int(v):
            raise ValueError(f"{name} must be an integer, got {_show(value)}")
        out = int(v)
    if min is not None and out < min:
        raise ValueError(f"{name} must be >= {min}, got {out}")
    if max is not None and out > max:
        raise ValueError(f"{name} must be <= {max}, got {out}")
    return out


def check_float(value, name: str, *, min: float | None = None, max: float | None = None,
                min_open: bool = False, finite: bool = True) -> float:
    """``value`` as a float; NaN always refused, ±inf unless ``finite=False``.
    ``min`` is inclusive unless ``min_open`` (then ``value > min`` is required)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {_show(value)}")
    v = float(value)
    if math.isnan(v) or (finite and math.isinf(v)):
        raise ValueError(f"{name} must be a finite number, got {v}")
    if min is not None and (v <= min if min_open else v < min):
        raise ValueError(f"{name} must be {'>' if min_open else '>='} {min}, got {v}")
    if max is not None and v > max:
        raise ValueError(f"{name} must be <= {max}, got {v}")
    return v


def check_bool(value, name: str) -> bool:
    """``value`` if it is True or False (numpy booleans too); 1, "yes" and None are refused."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {_show(value)}")
    return bool(value)


def check_choice(value, name: str, choices: Iterable[str]) -> str:
    """``value`` if it is one of ``choices``; else the error lists the valid names."""
    options = list(choices)
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"unknown {name} {_show(value)}; choose one of: {', '.join(map(str, options))}")
    return value


# ---------------------------------------------------------------------------- lengths


def _length(value, name: str) -> int:
    try:
        return check_int(value, name, min=0)
    except ValueError:
        raise ValueError(f"{name}: {_show(value)} is not a length (a non-negative integer)") from None


def _parse_part(part: str, name: str) -> range:
    text = part.strip()
    lo_s, sep, hi_s = text.partition("-")
    if not text or (sep and (not lo_s.strip() or not hi_s.strip())):
        raise ValueError(f"{name}: bad range {part!r}; use LO-HI or comma-separated integers, e.g. '41-500' or '8,16,32'")
    try:
        lo = _length(_number(lo_s), name)
        hi = _length(_number(hi_s), name) if sep else lo
    except ValueError:
        raise ValueError(f"{name}: bad range {part!r}; use LO-HI or comma-separated integers, e.g. '41-500' or '8,16,32'") from None
    if hi < lo:
        raise ValueError(f"{name}: range {part!r} is empty (HI < LO)")
    return range(lo, hi + 1)


def _number(text: str):
    text = text.strip()
    try:
        return int(text)
    except ValueError:
        return float(text)  # "8.5" parses, then fails the integer check with a clear message


def parse_lengths(value, name: str = "lengths", *, max_count: int | None = None) -> tuple[int, ...]:
    """Lengths as a tuple of ints, in the order given.

    Accepts an int (32), a string ("32", "41-45", "8,16,32", "51-100,101-150") or a sequence
    of ints and such strings. Refuses bools, non-integers (8.5), negative lengths, HI < LO and
    an empty result. A string is never iterated character by character. ``max_count`` refuses
    more lengths than that before any range is expanded ("1-10000000000" does not allocate).
    """
    if isinstance(value, (bool, np.bool_)) or value is None:
        raise ValueError(f"{name}: expected lengths like 32, '41-45' or '8,16,32', got {_show(value)}")
    if isinstance(value, str):
        parts = [_parse_part(part, name) for part in value.split(",")]
        total = sum(len(r) for r in parts)
        if max_count is not None and total > max_count:
            raise ValueError(f"{name}: {_show(value)} gives {total:,} lengths, over the limit of {max_count:,}")
        out = [n for r in parts for n in r]
    elif isinstance(value, numbers.Real):
        out = [_length(value, name)]
    elif isinstance(value, np.ndarray) or (isinstance(value, Iterable) and not isinstance(value, Mapping)):
        out = []
        for item in (value.tolist() if isinstance(value, np.ndarray) else value):
            if isinstance(item, str):
                out.extend(parse_lengths(item, name, max_count=max_count))
            else:
                out.append(_length(item, name))
    else:
        raise ValueError(f"{name}: expected lengths like 32, '41-45' or '8,16,32', got {_show(value)}")
    if not out:
        raise ValueError(f"{name}: no lengths given")
    if max_count is not None and len(out) > max_count:
        raise ValueError(f"{name}: {len(out):,} lengths, over the limit of {max_count:,}")
    return tuple(out)


def parse_length_range(value, name: str = "train_lengths") -> tuple[int, int]:
    """An inclusive range (lo, hi): "1-40", (1, 40), [1, 40], 12 or "12" (→ (12, 12)).

    A sequence of other lengths is refused unless it is contiguous ("3,4,5" → (3, 5)), so no
    length is silently added or dropped.
    """
    if isinstance(value, (tuple, list)) and len(value) == 2 and not any(isinstance(v, str) for v in value):
        lo, hi = (_length(v, name) for v in value)
        if hi < lo:
            raise ValueError(f"{name}: range ({lo}, {hi}) is empty (HI < LO)")
        return lo, hi
    if isinstance(value, str) and "," not in value:  # "LO-HI": no need to list the lengths
        r = _parse_part(value, name)
        return r.start, r.stop - 1
    lengths = parse_lengths(value, name)
    lo, hi = min(lengths), max(lengths)
    if sorted(set(lengths)) != list(range(lo, hi + 1)):
        raise ValueError(f"{name}: must be one contiguous range LO-HI, got {_show(value)}")
    return lo, hi


_FLOAT_TEXT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+")


def parse_params(items: Iterable[str] | None, name: str = "--param") -> dict:
    """["k=2", "p_open=0.4", "flag=true"] → {"k": 2, "p_open": 0.4, "flag": True} (YAML scalars;
    exponent notation such as 1e-5, a string in YAML 1.1, is read as a float)."""
    import yaml

    out: dict = {}
    if items is None:
        return out
    if isinstance(items, str):
        items = [items]
    for item in items:
        if not isinstance(item, str) or "=" not in item:
            raise ValueError(f"{name} expects KEY=VALUE, got {_show(item)}")
        key, text = (s.strip() for s in item.split("=", 1))
        if not key.isidentifier():
            raise ValueError(f"{name}: bad key {key!r} in {item!r} (a parameter name, e.g. k=2)")
        if key in out:
            raise ValueError(f"{name}: {key} given twice")
        try:
            value = yaml.safe_load(text) if text else ""
        except yaml.YAMLError:
            raise ValueError(f"{name}: cannot read the value of {key}: {text!r}") from None
        if isinstance(value, (dict, list)) or value is None and text.lower() not in ("null", "none", "~"):
            raise ValueError(f"{name}: {key} needs a scalar value, got {text!r}")
        if isinstance(value, str) and _FLOAT_TEXT.fullmatch(text):  # YAML 1.1 reads 1e-5 as a string
            value = float(text)
        out[key] = value
    return out


# ---------------------------------------------------------------------------- arrays


def as_real_array(a, name: str, *, ndim: int | None = None, shape: tuple | None = None,
                  finite: bool = True) -> np.ndarray:
    """``a`` as a float64 array. Refuses complex numbers (never cast silently), non-numeric
    entries, NaN/inf (unless ``finite=False``), and the wrong ``ndim`` or ``shape``
    (``None`` entries of ``shape`` match any size)."""
    if isinstance(a, np.ndarray) and (np.iscomplexobj(a) or a.dtype.kind not in "biuf"):
        kind = "complex" if np.iscomplexobj(a) else f"non-numeric dtype {a.dtype}"
        raise ValueError(f"{name} must be a real numeric array, got {kind}")
    try:
        import torch

        if isinstance(a, torch.Tensor):
            if a.is_complex():
                raise ValueError(f"{name} must be a real array, got complex")
            a = a.detach().cpu().double().numpy()
    except ImportError:  # pragma: no cover - torch is a dependency
        pass
    try:
        raw = np.asarray(a)
    except ValueError:
        raise ValueError(f"{name} must be a rectangular numeric array (ragged nesting?)") from None
    if np.iscomplexobj(raw):
        raise ValueError(f"{name} must be a real array, got complex")
    if raw.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be a numeric array, got {'ragged or non-numeric' if raw.dtype == object else raw.dtype} entries")
    out = raw.astype(np.float64, copy=False)
    if ndim is not None and out.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimension(s), got shape {out.shape}")
    if shape is not None:
        if out.ndim != len(shape) or any(s is not None and s != t for s, t in zip(shape, out.shape)):
            want = "(" + ", ".join("·" if s is None else str(s) for s in shape) + ")"
            raise ValueError(f"{name} must have shape {want}, got {out.shape}")
    if finite and not np.all(np.isfinite(out)):
        raise ValueError(f"{name} contains NaN or inf")
    return out


# ---------------------------------------------------------------------------- optional packages


class MissingExtra(ImportError, ValueError):
    """An optional package is not installed. An ``ImportError`` (what it is) and a
    ``ValueError`` (bad input to us: the command line reports it in one line, exit code 2)."""


def missing_extra(package: str, extra: str, what: str) -> MissingExtra:
    """``what needs the 'package' package, which is not installed: pip install 'expressivity[extra]'``."""
    return MissingExtra(f"{what} needs the '{package}' package, which is not installed: "
                        f"pip install 'expressivity[{extra}]' (or pip install {package})")


USER_ERRORS = (ValueError, OSError, sqlite3.DatabaseError, MemoryError, UnicodeError)  # the user's to fix


def describe_error(exc: BaseException) -> str:
    """A one-line message for a user error (``OSError`` with its path, ``MemoryError``…)."""
    if isinstance(exc, MemoryError):
        return "out of memory: the requested size does not fit (try smaller sizes)"
    if isinstance(exc, UnicodeError):
        return "input is not UTF-8 text (a binary file?)"
    if isinstance(exc, sqlite3.DatabaseError):
        return f"database: {exc}"
    if isinstance(exc, OSError):
        what = exc.strerror or str(exc) or type(exc).__name__
        if exc.filename is None:
            return what
        if what[:1].isupper() and not what[1:2].isupper():  # "No space left on device" → "no space …"
            what = what[:1].lower() + what[1:]
        return f"{exc.filename}: {what}"
    if exc.args and isinstance(exc.args[0], str):
        return exc.args[0]
    return str(exc) or type(exc).__name__
