"""Claims: a statement of a paper, the bound it gives, what we measured, and a verdict.

A claim's measurement is a list of :class:`Check` s — one comparison ``measured ⋈ bound`` per
number the theory constrains (⋈ ∈ {≤, ≥, =, ≈}). The status rule (:func:`status_of`) is
deliberately blunt:

* a requirement fails (``Measurement.requires``: a condition without which the checks say
  nothing about the claim, e.g. a trained model fits its training range) → ``"not
  applicable"``, the failed requirement named — whatever the checks say;
* every check passes                        → ``"holds"``;
* any check fails (or measured is NaN/inf)  → ``"violated"`` — the failing checks are named in
  the reason, never hidden;
* the measurement could not be made (its code is missing, or it raised) → ``"not applicable"``
  with the error message as the reason (:func:`measure_and_judge` catches it so the report
  goes on);
* a claim measured by work units (``ClaimSpec.units``) of which one timed out, failed or is
  missing → ``"incomplete"``, naming the units — never "holds" on part of the evidence.

Budgets (``Context.size``): ``test`` (seconds, the test suite), ``quick`` (minutes on 2 cores,
``make demo``), ``standard`` (about half an hour on 2 cores), ``full`` (the papers' scale; meant
for a Ray cluster). Every claim picks its sizes with ``ctx.pick({...})`` for each of them and
states its expected seconds per budget in ``budget_s``.

Example::

    >>> status_of([Check("max |error|", 3e-12, "<=", 1e-9)])
    ('holds', 'max |error| = 3e-12 ≤ 1e-09')
    >>> status_of([Check("max |error|", 2e-3, "<=", 1e-9)])[0]
    'violated'
"""

from __future__ import annotations

import math
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

Status = Literal["holds", "violated", "not applicable", "incomplete"]
Relation = Literal["<=", ">=", "==", "~"]
Size = Literal["test", "quick", "standard", "full"]
SIZES: tuple[str, ...] = ("test", "quick", "standard", "full")
STATUSES: tuple[str, ...] = ("holds", "violated", "not applicable", "incomplete")
FLAGS = {"test": "--size test", "quick": "--quick", "standard": "--standard", "full": "--full"}
_SYMBOL = {"<=": "≤", ">=": "≥", "==": "=", "~": "≈"}


def fmt(v: float) -> str:
    """A short, stable rendering of a number for tables (4 significant digits)."""
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return str(v)
    if v is None or not math.isfinite(v):
        return str(v)
    if v == 0:
        return "0"
    if abs(v) >= 1e5 or abs(v) < 1e-3:
        return f"{v:.3g}"
    return f"{v:.4g}"


@dataclass(frozen=True)
class Check:
    """One comparison ``measured ⋈ bound``.

    ``relation`` is ``"<="``, ``">="``, ``"=="`` (|measured − bound| ≤ tol) or ``"~"``
    (approximately: |measured − bound| ≤ tol, tol required). ``tol`` also loosens ``<=``/``>=``
    by an absolute amount (floating-point slack; state it).
    """

    what: str  # what is compared, e.g. "max |error| (hardmax)"
    measured: float
    relation: Relation
    bound: float
    tol: float = 0.0

    def __post_init__(self) -> None:
        if self.relation not in _SYMBOL:
            raise ValueError(f"relation must be one of {sorted(_SYMBOL)}, got {self.relation!r}")
        if not (self.tol >= 0):
            raise ValueError(f"tol must be ≥ 0, got {self.tol}")
        if self.relation == "~" and self.tol == 0:
            raise ValueError("tol must be > 0 for relation '~'")

    def ok(self) -> bool:
        m, b = float(self.measured), float(self.bound)
        if not math.isfinite(m):
            return False
        if self.relation == "<=":
            return m <= b + self.tol
        if self.relation == ">=":
            return m >= b - self.tol
        return abs(m - b) <= self.tol

    def text(self) -> str:
        tol = f" (±{fmt(self.tol)})" if self.tol and self.relation in ("~", "==") else ""
        return f"{self.what} = {fmt(self.measured)} {_SYMBOL[self.relation]} {fmt(self.bound)}{tol}"


def status_of(checks: list[Check] | tuple[Check, ...],
              requires: list[Check] | tuple[Check, ...] = ()) -> tuple[Status, str]:
    """The status rule: a requirement fails → not applicable (the failures named); else all
    checks pass → holds; any fails → violated (the failures named)."""
    unmet = [c for c in requires if not c.ok()]
    if unmet:
        return "not applicable", "not judged: " + "; ".join("FAILED requirement " + c.text() for c in unmet)
    if not checks:
        return "not applicable", "no comparison was measured"
    failed = [c for c in checks if not c.ok()]
    if failed:
        return "violated", "; ".join("FAILED " + c.text() for c in failed)
    if len(checks) <= 3:
        return "holds", "; ".join(c.text() for c in checks)
    return "holds", f"all {len(checks)} checks pass, e.g. " + "; ".join(c.text() for c in checks[:2])


@dataclass(frozen=True)
class Measurement:
    """What a claim's measurement function returns.

    ``summary`` is the one-line "measured" cell; ``numbers`` the raw data (lists of floats,
    JSON-serialisable) for claims.json; ``figure`` the PNG bytes of its figure; ``requires``
    the conditions for a verdict (see :func:`status_of`), listed with the checks in the claim
    (``"requires": True``).
    """

    checks: tuple[Check, ...]
    summary: str
    numbers: dict[str, Any] = field(default_factory=dict)
    figure: bytes | None = None
    notes: str = ""  # how to read the measurement, caveats
    requires: tuple[Check, ...] = ()


@dataclass(frozen=True)
class Context:
    """Passed to a measurement: the budget (``size``), a seed, a progress callback (fraction
    in [0, 1]) and, for a claim measured by units, ``units``: each unit's key → its value."""

    size: Size = "quick"
    seed: int = 0
    progress: Callable[[float], None] = lambda frac: None
    units: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.size not in SIZES:
            raise ValueError(f"size must be one of {SIZES}, got {self.size!r}")

    def pick(self, table: dict[str, Any]) -> Any:
        """The entry of ``{"test": …, "quick": …, "standard": …, "full": …}`` for this budget."""
        if self.size not in table:
            raise KeyError(f"this claim has no {self.size!r} budget (it gives {sorted(table)})")
        return table[self.size]


@dataclass(frozen=True)
class ClaimSpec:
    """A claim of a paper and the function that measures it.

    ``run(ctx) -> Measurement``. ``how_to_read`` is the claim's prose on how to read its
    figure, kept only here: the HTML report shows it under the figure, and the "How to read
    each claim" sections of README.md and docs/report.md are generated from it
    (:func:`expressivity.report.tables.how_to_read`, ``make tables``). A claim that is many independent pieces of work (training runs: model × length
    × seed) gives ``units(ctx) -> list[expressivity.runs.Unit]`` (keys unique within the
    claim): ``reproduce`` runs them in parallel (local processes or Ray), stores each as it
    finishes, and then calls ``run(ctx)`` with ``ctx.units`` = key → value to judge.
    """

    id: str  # stable id, e.g. "compile.hardmax-exact"
    title: str  # the claim, one sentence
    source: str  # paper and theorem, e.g. "Gu et al. 2026, Thm 3.1/3.2, Cor 3.3"
    bound: str  # the bound/prediction in words, formulas in TeX between $…$ (KaTeX renders them)
    bound_value: float | None  # headline numeric bound, if there is one
    run: Callable[[Context], Measurement]
    how_to_read: str = ""  # how to read its figure (Markdown; TeX between $…$)
    # expected seconds per budget, summed over units (the standard ones of the training claims
    # measured by bench/units_bench.py on 2 cores under load)
    budget_s: dict[str, float] = field(default_factory=dict)
    units: Callable[[Context], list] | None = None

    def __post_init__(self) -> None:
        if not self.id or any(ch.isspace() or ch == ":" for ch in self.id):
            raise ValueError(f"id must be a non-empty string without spaces or ':', got {self.id!r}")


@dataclass(frozen=True)
class Claim:
    """One row of the report (and of claims.json)."""

    id: str
    claim: str
    source: str
    bound: str
    bound_value: float | None
    measured: str  # the one-line measured cell
    numbers: dict[str, Any]
    checks: tuple[dict, ...]  # each: what, measured, relation, bound, tol, ok
    status: Status
    reason: str
    figure: str | None  # path relative to the report directory
    command: str
    size: str
    seconds: float
    how_to_read: str = ""
    notes: str = ""
    reused: bool = False
    units: dict[str, int] | None = None  # {"done": …, "total": …} for a claim measured by units
    code: str = ""  # where its measurement is: "expressivity/report/compile_claims.py:123"

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")
        if self.status != "holds" and not self.reason:
            raise ValueError(f"reason must be given when status is {self.status!r}")

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> Claim:
        d = dict(d)
        d["checks"] = tuple(d.get("checks", ()))
        return cls(**d)


def command_for(claim_id: str, size: str) -> str:
    """The exact shell command that regenerates one claim (and its figure)."""
    return f"expressivity reproduce {FLAGS[size]} --only {claim_id} --out report"


def measure_and_judge(spec: ClaimSpec, ctx: Context) -> tuple[Claim, bytes | None]:
    """Run one claim's measurement and judge it. Never raises for a failing measurement.

    Returns the Claim (figure path filled in as ``figures/<id>.png`` when there is one) and
    the figure's PNG bytes.
    """
    t0 = time.perf_counter()
    try:
        m = spec.run(ctx)
        if not isinstance(m, Measurement):
            raise TypeError(f"measurement returned {type(m).__name__}, not Measurement")
        status, reason = status_of(m.checks, m.requires)
        numbers, summary, fig, notes = m.numbers, m.summary, m.figure, m.notes
        checks = (tuple({**asdict(c), "ok": c.ok(), "requires": True} for c in m.requires)
                  + tuple({**asdict(c), "ok": c.ok()} for c in m.checks))
    except Exception as exc:  # noqa: BLE001 — a broken area must not take the report down
        status = "not applicable"
        where = traceback.extract_tb(exc.__traceback__)[-1]
        reason = (
            f"{type(exc).__name__}: {exc}"
            f" (at {where.filename.split('src/')[-1]}:{where.lineno})"
        )
        numbers, summary, fig, notes, checks = {}, "—", None, "", ()
    seconds = time.perf_counter() - t0
    claim = _claim(spec, ctx, status, reason, numbers, summary, fig, notes, checks, seconds)
    return claim, fig


def incomplete(spec: ClaimSpec, ctx: Context, seconds: float, reason: str,
               units: dict[str, int] | None = None) -> Claim:
    """The verdict for a claim whose measurement did not finish (a unit timed out, failed or
    is missing): incomplete, with the reason (never stored, so a later run measures the
    missing part again)."""
    return replace(_claim(spec, ctx, "incomplete", reason, {}, "—", None, "", (), seconds), units=units)


def _claim(spec, ctx, status, reason, numbers, summary, fig, notes, checks, seconds) -> Claim:
    return Claim(
        id=spec.id,
        claim=spec.title,
        source=spec.source,
        bound=spec.bound,
        bound_value=spec.bound_value,
        measured=summary,
        numbers=_jsonable(numbers),
        checks=_jsonable(checks),
        status=status,
        reason=reason,
        figure=f"figures/{spec.id}.png" if fig else None,
        command=command_for(spec.id, ctx.size),
        size=ctx.size,
        seconds=round(seconds, 3),
        how_to_read=spec.how_to_read,
        notes=notes,
        code=code_of(spec.run),
    )


def code_of(fn: Callable) -> str:
    """``package/module.py:line`` of a measurement function ("" when it has no source file)."""
    import inspect
    from pathlib import Path

    try:
        path = Path(inspect.getsourcefile(fn) or "")
        line = inspect.getsourcelines(fn)[1]
    except (TypeError, OSError):
        return ""
    parts = path.parts
    if "expressivity" not in parts:
        return f"{path.name}:{line}"
    return "/".join(parts[len(parts) - parts[::-1].index("expressivity") - 1:]) + f":{line}"


def _jsonable(x: Any) -> Any:
    """numpy scalars/arrays and tuples → plain JSON types; non-finite floats → strings."""
    import numpy as np

    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, tuple):
        return tuple(_jsonable(v) for v in x)
    if isinstance(x, list):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return _jsonable(x.tolist())
    if isinstance(x, (np.bool_, bool)):
        return bool(x)
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, (np.floating, float)):
        v = float(x)
        return v if math.isfinite(v) else str(v)
    return x
