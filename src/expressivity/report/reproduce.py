"""``reproduce``: measure every claim as work units, judge it, write the report; resume from SQLite.

Every claim becomes work units for the one run driver (:func:`expressivity.runs.run_units`):
a claim with ``ClaimSpec.units`` (the training claims: one unit per model × length × seed)
gives its own units; any other claim is one unit that runs its whole measurement. Units run
in parallel on local processes or Ray tasks (``backend``), each with the per-unit
``timeout``. As each unit finishes, the driver process — only it — writes it to the results
store (``units`` table). A training run is stored once: as a run in ``runs``/``results``
(where the ``results`` command reads it), its unit keeping only the run id and what those
tables do not hold (:func:`recorded`); the claim is judged on the run's rows read back
(:func:`with_run`). When the last unit of a claim is in, the claim is judged and stored.

Resume: a claim stored for this budget and code version is reused; of a split claim only
the units not yet stored are run (and a unit whose run is gone from the store). A unit that timed out, failed or never ran makes its claim
``incomplete`` (naming the units), never "holds"; incomplete claims are not stored, so the
next run measures the missing units again.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sys
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..runs.driver import BACKENDS, Outcome, Unit, check_address, report_progress, run_units
from ..runs.store import DEFAULT_DB, Store
from . import html
from .claims import SIZES, Claim, ClaimSpec, Context, incomplete, measure_and_judge
from .registry import by_id, ref, select

# Local units start as fresh processes (spawn): forking this process, which may run threads,
# can deadlock a child, and children forked from a server that preloaded the areas measured
# regions.depth 3× slower than fresh ones. The price is the imports, ≈ 3 s per unit.
_START = "spawn"

log = logging.getLogger(__name__)  # one INFO line per finished unit and per judged claim

STORED = ("holds", "violated")  # the judged claims a store keeps; not applicable and incomplete are measured again


def stored_claim(store: Store, spec: ClaimSpec, size: str) -> tuple[Claim, bytes | None] | None:
    """The claim ``spec`` judged at budget ``size`` by this code version, and its figure; None if not stored."""
    hit = store.get_claim(spec.id, size)
    return None if hit is None else (Claim.from_json(hit[0]), hit[1])


def store_claim(store: Store, spec: ClaimSpec, claim: Claim, figure: bytes | None) -> bool:
    """Store a judged claim; False (nothing stored) unless it holds or is violated."""
    if claim.status not in STORED:
        return False
    store.put_claim(spec.id, claim.size, claim.status, claim.to_json(), figure)
    return True


@dataclass(frozen=True)
class Event:
    """Progress for a front end: ``kind`` is "start", "progress" or "done" (then ``claim``).

    ``units_done`` / ``units_total`` count the claim's units; ``eta_s`` is the whole run's
    remaining seconds estimated from the units finished so far (None before the first)."""

    kind: str
    spec: ClaimSpec
    fraction: float = 0.0
    claim: Claim | None = None
    units_done: int = 0
    units_total: int = 1
    eta_s: float | None = None


@dataclass(frozen=True)
class ReproduceResult:
    claims: tuple[Claim, ...]
    index: Path
    computed: tuple[str, ...]  # claim ids measured in this run
    reused: tuple[str, ...]  # claim ids taken from the store
    seconds: float
    set_aside: Path | None = None  # the old store, if --reset-db moved one of another version


def measure_unit(spec_or_id: ClaimSpec | str, size: str, seed: int) -> tuple[Claim, bytes | None]:
    """Unit body of a claim that is not split: its whole measurement, judged. Units run side
    by side, one per core: torch (imported after this) is held to one thread."""
    if "torch" not in sys.modules:
        os.environ.setdefault("OMP_NUM_THREADS", "1")
    spec = by_id(spec_or_id) if isinstance(spec_or_id, str) else spec_or_id
    return measure_and_judge(spec, Context(size=size, seed=seed, progress=report_progress))


def recorded(value: Any, store: Store | None) -> Any:
    """A unit's value as the ``units`` table keeps it. A training run (a RunResult) is recorded
    as a run (``runs``/``results`` tables) and kept as ``{"run_id", **extra}``: only what those
    tables do not hold (its ``extra``, e.g. the per-length metrics on the training range,
    ``train_run(fit=True)``, or a claim's own numbers such as Lemma 5 of the trained model).
    Without a store the run's status and metrics stay in the value. Other values as they are."""
    from ..train import RunResult

    if not isinstance(value, RunResult):
        return value
    kept = {"run_id": value.config.run_id, **{k: list(v) if isinstance(v, tuple) else v for k, v in value.extra.items()}}
    if store is None:
        return kept | {"status": value.status, "metrics": list(value.metrics)}
    store.record_result(value)
    return kept


def with_run(value: Any, store: Store | None) -> Any:
    """A kept unit value as its claim reads it: a run id joined with the run's ``status`` and
    ``metrics`` read back from the store (:meth:`~expressivity.runs.store.Store.run_record`);
    None if that run is not in the store (the unit is then trained again)."""
    if store is None or not isinstance(value, dict) or "run_id" not in value:
        return value
    run = store.run_record(value["run_id"])
    return None if run is None else value | {"status": run["status"], "metrics": run["metrics"]}


class _Plan:
    """The claims of one run and the bookkeeping of their units."""

    def __init__(self, size: str, seed: int, store: Store | None, emit, parallel: int) -> None:
        self.size, self.seed, self.store, self.emit, self.parallel = size, seed, store, emit, parallel
        self.results: dict[str, tuple[Claim, bytes | None]] = {}
        self.computed: list[str] = []
        self.units: list[Unit] = []
        self.owner: dict[str, tuple[ClaimSpec, str]] = {}  # unit key -> (spec, key within the claim)
        self.expected: dict[str, list[str]] = {}  # claim id -> its units' keys (split claims)
        self.values: dict[str, dict[str, Any]] = {}
        self.failed: dict[str, list[str]] = {}
        self.seconds: dict[str, float] = {}
        self.done_s: list[float] = []
        self.pending = 0

    def key(self, spec: ClaimSpec, local: str) -> str:
        return f"{spec.id}|{self.size}|seed={self.seed}|{local}"

    def unit_seconds(self, unit: Unit) -> float:
        """The expected seconds of one of the plan's units: its claim's ``budget_s`` at this size,
        shared equally by the claim's units (0 where the claim gives none)."""
        spec, _ = self.owner[unit.key]
        return float(spec.budget_s.get(self.size, 0.0)) / max(1, len(self.expected.get(spec.id, ())))

    def add(self, spec: ClaimSpec, custom: bool) -> None:
        if spec.units is None:
            unit = Unit(self.key(spec, "claim"), measure_unit, (spec if custom else ref(spec.id), self.size, self.seed),
                        group=spec.id)
            self.owner[unit.key] = (spec, "")
            self.units.append(unit)
            self.pending += 1
            return
        ctx = Context(size=self.size, seed=self.seed)
        try:
            units = list(spec.units(ctx))
            keys = [u.key for u in units]
            if len(set(keys)) != len(keys):
                raise ValueError(f"units of {spec.id} must have unique keys, got {keys}")
        except Exception as exc:  # noqa: BLE001 — a broken claim must not take the report down
            self._finish(spec, *measure_and_judge(replace(spec, run=_raiser(exc), units=None), ctx))
            return
        stored = self.store.units(group=spec.id, done_only=True) if self.store is not None else {}
        self.expected[spec.id] = keys
        self.values[spec.id], self.failed[spec.id], self.seconds[spec.id] = {}, [], 0.0
        for u in units:
            full = self.key(spec, u.key)
            kept = stored[full]["value"] if full in stored else None
            value = with_run(kept, self.store)
            if full in stored and (value is not None or kept is None):  # else never ran, or its run is gone
                self.values[spec.id][u.key] = value
                self.seconds[spec.id] += stored[full]["seconds"] or 0.0
                continue
            self.owner[full] = (spec, u.key)
            self.units.append(replace(u, key=full, group=spec.id))
            self.pending += 1
        if len(self.values[spec.id]) == len(keys):
            self._judge(spec)

    def progress_of(self, spec: ClaimSpec) -> tuple[int, int]:
        if spec.id not in self.expected:
            return int(spec.id in self.results), 1
        return len(self.values[spec.id]) + len(self.failed[spec.id]), len(self.expected[spec.id])

    def eta(self) -> float | None:
        if not self.done_s:
            return None
        return sum(self.done_s) / len(self.done_s) * self.pending / max(1, self.parallel)

    def event(self, kind: str, spec: ClaimSpec, fraction: float = 0.0, claim: Claim | None = None) -> None:
        done, total = self.progress_of(spec)
        self.emit(Event(kind, spec, fraction, claim, done, total, self.eta()))

    def on_done(self, o: Outcome) -> None:
        spec, local = self.owner[o.unit.key]
        self.pending -= 1
        self.done_s.append(o.seconds)
        name = f"{spec.id}/{local}" if local else spec.id
        left = f"; {self.pending} unit{'s' * (self.pending != 1)} to go" if self.pending else ""
        if o.status == "done":
            log.info("unit %s done in %.1f s%s", name, o.seconds, left)
        else:
            log.warning("unit %s %s after %.1f s: %s%s", name, o.status.replace("_", " "), o.seconds, _why(o), left)
        if not local:  # a whole claim
            if self.store is not None:
                self.store.put_unit(o.unit.key, spec.id, self.size, o.status, None, o.error or None, o.seconds)
            if o.status == "done":
                claim, fig = o.value
            else:
                ctx = Context(size=self.size, seed=self.seed)
                claim, fig = incomplete(spec, ctx, o.seconds, _why(o), {"done": 0, "total": 1}), None
            self._finish(spec, claim, fig)
            return
        if o.status == "done":
            value = recorded(o.value, self.store)
            self.values[spec.id][local] = with_run(value, self.store)
        else:
            value = None
            self.failed[spec.id].append(f"{local} {_why(o)}")
        if self.store is not None:
            self.store.put_unit(o.unit.key, spec.id, self.size, o.status, value, o.error or None, o.seconds)
        self.seconds[spec.id] += o.seconds
        done, total = self.progress_of(spec)
        if done < total:
            self.event("progress", spec, done / total)
            return
        self._judge(spec)

    def _judge(self, spec: ClaimSpec) -> None:
        ctx = Context(size=self.size, seed=self.seed, units=dict(self.values[spec.id]))
        total = len(self.expected[spec.id])
        counts = {"done": len(self.values[spec.id]), "total": total}
        if self.failed[spec.id]:
            bad = self.failed[spec.id]
            reason = (f"{len(bad)} of {total} units did not finish: " + "; ".join(bad[:3])
                      + (f"; … {len(bad) - 3} more" if len(bad) > 3 else "") + " — run again to measure them")
            claim, fig = incomplete(spec, ctx, self.seconds[spec.id], reason, counts), None
        else:
            claim, fig = measure_and_judge(spec, ctx)
            claim = replace(claim, seconds=round(claim.seconds + self.seconds[spec.id], 3), units=counts)
        self._finish(spec, claim, fig)

    def _finish(self, spec: ClaimSpec, claim: Claim, fig: bytes | None) -> None:
        log.log(logging.WARNING if claim.status in ("violated", "incomplete") else logging.INFO,
                "claim %s %s in %.1f s: %s", spec.id, claim.status, claim.seconds, _one_line(claim.measured))
        self.results[spec.id] = (claim, fig)
        self.computed.append(spec.id)
        if self.store is not None:
            store_claim(self.store, spec, claim, fig)
        self.event("done", spec, 1.0, claim)


def _one_line(text: Any, limit: int = 120) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def member_outcomes(o: Outcome, mine: list[Unit] | None) -> list[Outcome]:
    """A group unit's outcome as its members' (each judged as itself; a member whose run could
    not start, a RunFailure, fails alone); a plain unit's outcome as it is."""
    if mine is None:
        return [o]
    values = o.value if o.status == "done" else [None] * len(mine)
    share = o.seconds / len(mine)
    return [Outcome(u, "error", None, v.error, share) if getattr(v, "status", None) == "error"
            else Outcome(u, o.status, v, o.error, share) for u, v in zip(mine, values)]


@contextmanager
def units_on(device: str | None):
    """While it lasts, what the training units' ``auto`` device means (DEVICE_ENV, inherited by
    local units and a local Ray instance; they start inside it); restored after. None: unchanged."""
    from ..train.devices import DEVICE_ENV

    if device is None:
        yield
        return
    before = os.environ.get(DEVICE_ENV)
    os.environ[DEVICE_ENV] = device
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(DEVICE_ENV, None)
        else:
            os.environ[DEVICE_ENV] = before


def longest_first(units: list[Unit], seconds: Callable[[Unit], float]) -> list[Unit]:
    """``units`` by expected ``seconds``, longest first (ties in their order): with W workers
    taking units in this order, no long unit starts last and sets the wall time alone — the
    longest-processing-time rule, within 4/3 of the best schedule. (A ``--standard`` run in claim
    order started its longest unit, chomsky.cs's 15 Tape-RNN runs batched, 950 s,
    after 13 of its 29 minutes.)"""
    return sorted(units, key=lambda u: -seconds(u))


def group_units(units: list[Unit], timeout: float | None = None, max_group: int = 32
                ) -> tuple[list[Unit], dict[str, list[Unit]]]:
    """Training units that can share trained as one batched model: units whose function
    names its run (``fn.run_config(*args)`` → RunConfig; ``fn.fit``) and whose runs
    :func:`expressivity.train.many.group_configs` puts together (and
    :func:`~expressivity.train.many.worth_grouping` finds worth it) become one unit of
    :func:`~expressivity.train.many.group_unit`. Returns the units to run and, per group unit's
    key, the units it stands for (each is still stored, and judged, as itself)."""
    from ..train.many import group_configs, group_unit, worth_grouping

    by_fn: dict[tuple, list[tuple[Unit, Any]]] = {}
    seen: set[str] = set()
    out: list[Unit] = []
    for u in units:
        make = getattr(u.fn, "run_config", None)
        cfg = None
        if make is not None:
            try:
                cfg = make(*u.args, **u.kwargs)
            except Exception:  # noqa: BLE001 — the unit reports it itself when it runs
                cfg = None
        if cfg is None or cfg.run_id in seen or not worth_grouping(cfg):
            out.append(u)
            continue
        seen.add(cfg.run_id)
        by_fn.setdefault((u.fn.__module__, u.fn.__qualname__, bool(getattr(u.fn, "fit", False))), []).append((u, cfg))
    members: dict[str, list[Unit]] = {}
    for (_mod, _name, fit), pairs in by_fn.items():
        unit_of = {cfg.run_id: u for u, cfg in pairs}
        for g in group_configs([cfg for _, cfg in pairs], max_group):
            if len(g) == 1:
                out.append(unit_of[g[0].run_id])
                continue
            mine = [unit_of[c.run_id] for c in g]
            key = "group:" + hashlib.sha256("|".join(u.key for u in mine).encode()).hexdigest()[:16]
            out.append(Unit(key, group_unit, ([c.to_dict() for c in g], None, 1, False, "auto", fit),
                            group=mine[0].group, timeout=None if timeout is None else timeout * len(g)))
            members[key] = mine
    return out, members


def _why(o: Outcome) -> str:
    if o.status == "timed_out":
        return o.error
    return "failed: " + (o.error.strip().splitlines() or ["?"])[0]


def _raiser(exc: Exception) -> Callable[[Context], Any]:
    def run(ctx: Context):
        raise exc
    return run


def size_of(quick: bool, standard: bool, full: bool, size: str | None = None) -> str:
    """The budget that ``expressivity reproduce --quick | --standard | --full | --size NAME`` asks
    for (``--size`` overrides the flags; none given: quick); the flags exclude each other."""
    if quick + standard + full > 1:
        raise ValueError("--quick, --standard and --full are mutually exclusive")
    return size or ("full" if full else "standard" if standard else "quick")


def check_options(*, size: str = "quick", backend: str = "local", address: str | None = None,
                  timeout: float | None = None, workers: int | None = None, device: str | None = None,
                  prefix: str = "", ray: bool = True, out: str | Path | None = None,
                  db: str | Path | None = None) -> None:
    """The checks of :func:`reproduce`'s options, done before anything is measured or stored:
    ``size`` one of :data:`SIZES`, ``backend`` one of local | ray, ``address`` only with
    ray, ``timeout`` > 0 seconds, 1 ≤ ``workers`` ≤ 1024, ``device`` one that is here and, with
    ``ray``, a Ray cluster answering at ``address``; the ``out`` directory and the ``db`` file
    writable paths (when given). Each error names its option as ``prefix + name`` (the CLI:
    ``--size`` …)."""
    from ..fileio import check_output_path
    from ..rules import check_choice, check_float, check_int

    if out is not None:
        check_output_path(out, f"{prefix}out", kind="dir")
    if db is not None:
        check_output_path(db, f"{prefix}db")
    check_choice(size, f"{prefix}size", SIZES)
    check_choice(backend, f"{prefix}backend", BACKENDS)
    if address is not None and backend != "ray":
        raise ValueError(f"{prefix}address needs {prefix}backend ray")
    if timeout is not None:
        check_float(timeout, f"{prefix}timeout (seconds)" if prefix else "timeout", min=0, min_open=True)
    if workers is not None:
        check_int(workers, f"{prefix}workers", min=1, max=1024)
    if device is not None:
        from ..train.devices import resolve_device

        resolve_device(device, f"{prefix}device")  # unknown or absent: one line naming what is here
    if backend == "ray" and ray:
        check_address(address)  # before the store is touched: a wrong address fails at once


def reproduce(
    out: str | Path = "report",
    size: str = "quick",
    backend: str = "local",
    db: str | Path | None = DEFAULT_DB,
    only: list[str] | tuple[str, ...] | None = None,
    reuse: bool = True,
    seed: int = 0,
    on_event: Callable[[Event], None] | None = None,
    specs: list[ClaimSpec] | None = None,
    address: str | None = None,
    timeout: float | None = None,
    workers: int | None = None,
    reset_db: bool = False,
    device: str | None = None,
    group: bool = True,
    prefix: str = "",
) -> ReproduceResult:
    """Measure the claims and write ``out/index.html``, ``out/claims.json``, ``out/figures/``.

    ``size`` — the budget: "test" (seconds), "quick" (minutes on 2 cores, ``make demo``),
    "standard" (about half an hour on 2 cores) or "full" (the papers' scale). ``backend``: "local"
    (a process pool of ``workers``, default the CPUs) or "ray" (``address``: None for a local
    instance, "auto" or host:port for a cluster). ``timeout``: seconds per unit, both
    backends. ``db``: the results store (None: none); ``reset_db``: set a store of another
    code version aside instead of refusing it. ``only``: claim ids or group prefixes.
    ``specs`` overrides the registry (tests inject claims with a wrong bound). ``device``
    (auto | cpu | cuda | cuda:N | mps): where the training units train — what ``auto`` means
    for them (:data:`expressivity.train.devices.DEVICE_ENV`, inherited by local units and a
    local Ray instance); not part of any run id. ``group``: training units whose runs can
    share train as one batched model (:func:`group_units`); each is stored as its own unit.
    The options are checked first (:func:`check_options`; errors name them as ``prefix + name``).
    """
    check_options(size=size, backend=backend, address=address, timeout=timeout, workers=workers, device=device,
                  prefix=prefix, out=out, db=db)
    emit = on_event or (lambda e: None)
    t0 = time.perf_counter()
    chosen = list(specs) if specs is not None else select(only)
    if specs is not None and only:
        chosen = [s for s in chosen if any(s.id == o or s.id.startswith(o + ".") for o in only)]
    store = Store(db, reset=reset_db) if db is not None else None
    plan = _Plan(size, seed, store, emit, workers or os.cpu_count() or 1)
    reused: list[str] = []
    try:
        for spec in chosen:
            hit = stored_claim(store, spec, size) if (store is not None and reuse) else None
            if hit is not None:
                claim, fig = hit
                plan.results[spec.id] = (replace(claim, reused=True, how_to_read=spec.how_to_read), fig)
                reused.append(spec.id)
                log.info("claim %s %s (reused from %s)", spec.id, claim.status, db)
                plan.event("done", spec, 1.0, plan.results[spec.id][0])
            else:
                plan.add(spec, specs is not None)
        started: set[str] = set()
        members: dict[str, list[Unit]] = {}

        def on_start(unit: Unit) -> None:
            log.debug("unit %s started", unit.key)
            for u in members.get(unit.key, [unit]):
                spec = plan.owner[u.key][0]
                if spec.id not in started:
                    started.add(spec.id)
                    plan.event("start", spec)

        def on_progress(unit: Unit, fraction: float) -> None:
            if unit.key in members:  # a group of a split claim's units: progress counts units
                return
            spec, local = plan.owner[unit.key]
            if not local:
                plan.event("progress", spec, fraction)

        if plan.units:
            n, c = len(plan.units), len(chosen) - len(reused)
            log.info("%d unit%s to run for %d claim%s (%s backend, size %s)", n, "s" * (n != 1), c, "s" * (c != 1),
                     backend, size)

        def on_done(o: Outcome) -> None:
            for each in member_outcomes(o, members.get(o.unit.key)):
                plan.on_done(each)

        with units_on(device):
            units = plan.units
            if group:
                units, grouped = group_units(units, timeout)
                members.update(grouped)
            units = longest_first(units, lambda u: sum(map(plan.unit_seconds, members.get(u.key, [u]))))
            run_units(units, backend=backend, workers=workers, address=address, timeout=timeout,
                      on_start=on_start, on_done=on_done, on_progress=on_progress,
                      start=_START)
    finally:
        if store is not None:
            store.close()
    total = time.perf_counter() - t0
    ordered = [plan.results[s.id] for s in chosen]
    claims = [c for c, _ in ordered]
    figures = {c.id: f for c, f in ordered if f}
    index = html.write(out, claims, figures, size, total)
    return ReproduceResult(tuple(claims), index, tuple(plan.computed), tuple(reused), total,
                           store.set_aside if store is not None else None)
