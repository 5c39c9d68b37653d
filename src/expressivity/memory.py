"""The memory budget: one rule for refusing work before allocating, one for chunking.

* :func:`memory_budget`: bytes one allocation may take (``$EXPRESSIVITY_MEMORY_BUDGET``, else
  half the machine's memory);
* :func:`check_memory`: refuse work whose estimate exceeds it, with the estimate in the message;
* :func:`chunk_rows`: rows per chunk of batched work so that a chunk's working set stays under
  :data:`CHUNK_BYTES` — the one chunking rule for batched work;
* :func:`fmt_bytes`: 1536 → '1.5 KiB'.

A leaf: imports nothing of ours.
"""

from __future__ import annotations

import functools
import math
import os

CHUNK_BYTES = 256 * 2**20  # working-set budget of one chunk of batched work (256 MiB)
_MEMORY_ENV = "EXPRESSIVITY_MEMORY_BUDGET"  # bytes, or with a suffix: 512M, 8G, 2GiB


def fmt_bytes(n: float) -> str:
    """1536 → '1.5 KiB'."""
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} EiB"  # pragma: no cover


def _parse_bytes(text: str) -> int:
    t = text.strip().upper().replace("IB", "").replace("B", "")
    scale = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
    try:
        if t and t[-1] in scale:
            return int(float(t[:-1]) * scale[t[-1]])
        return int(float(t))
    except ValueError:
        raise ValueError(f"{_MEMORY_ENV}: cannot read {text!r} (bytes, or e.g. 512M, 8G)") from None


def memory_budget() -> int:
    """Bytes one allocation may take: ``$EXPRESSIVITY_MEMORY_BUDGET`` if set, else half of
    the machine's memory (MemTotal; 8 GiB where it cannot be read). The machine's total, not
    what is free right now, so the same input gets the same answer however loaded the machine
    is."""
    env = os.environ.get(_MEMORY_ENV)
    if env:
        return _parse_bytes(env)
    return _half_machine_memory()


@functools.cache
def _half_machine_memory() -> int:
    """Half of MemTotal, read once (it does not change while we run; samplers ask per batch)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024 // 2
    except OSError:
        pass
    return 8 * 2**30


def check_memory(nbytes: float, what: str, *, hint: str = "") -> None:
    """Refuse work whose estimated size ``nbytes`` exceeds :func:`memory_budget`.

    The message gives the estimate, the budget and ``hint`` (which option helps)."""
    budget = memory_budget()
    if not math.isfinite(nbytes) or nbytes > budget:
        size = fmt_bytes(nbytes) if math.isfinite(nbytes) else "an unbounded amount"
        tail = f"; {hint}" if hint else ""
        raise ValueError(f"{what} needs about {size}, over the memory budget of {fmt_bytes(budget)} "
                         f"(set {_MEMORY_ENV} to change it){tail}")


def chunk_rows(bytes_per_row: float, *, total: int | None = None, budget: int = CHUNK_BYTES) -> int:
    """Rows per chunk so that one chunk's working set stays under ``budget`` (≥ 1; ≤ total)."""
    rows = max(1, int(budget // max(1.0, float(bytes_per_row))))
    return max(1, min(rows, total)) if total is not None else rows
