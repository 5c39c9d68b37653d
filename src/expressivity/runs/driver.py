"""The one run driver: independent work units on a local process pool or on Ray tasks.

A :class:`Unit` is a key and a call ``fn(*args, **kwargs)`` (``fn`` a module-level function,
so it can be shipped to a spawned process or a Ray worker). :func:`run_units` runs the units
and hands each :class:`Outcome` (status ``done`` | ``error`` | ``timed_out``) to
``on_done`` **in the driver process, as soon as it finishes** — the caller writes it to the
store there, so Ray workers (and child processes) never touch SQLite, and a run killed
part-way keeps every unit that finished. Resuming is the caller's: it passes only the units
its store does not hold yet.

Backends:

* ``local`` — one child process per unit (fork on Linux; ``EXPRESSIVITY_MP_START``
  overrides), at most ``workers`` at a time. A child that dies (kill -9, the out-of-memory
  killer) fails only its unit, recorded as an error saying how it died. Children die with the
  driver (:func:`expressivity.runs.procs.die_with_parent`) and are killed when the driver is
  interrupted.
* ``ray`` — one Ray task per unit, at most one in flight per cluster CPU (so a unit's clock
  starts about when it starts). ``address``: ``None`` starts a private local instance;
  ``"auto"`` or ``host:port`` joins a running cluster (a port where nothing answers is a
  one-line error within seconds, see :func:`connect`). A task whose worker or node dies is
  retried by Ray on another node (``max_retries``), so a lost node loses no unit; an
  exception inside a unit is not retried. Pending tasks are cancelled when the driver is
  interrupted, and Ray ends a driver's tasks when the driver process dies.

Timeout (both backends): a unit running longer than its ``timeout`` (or the run's) is
stopped — the process killed, the task force-cancelled — and reported ``timed_out``.

Progress: a unit may call :func:`report_progress` (fraction in [0, 1]); on the local backend
it reaches ``on_progress`` in the driver, elsewhere it is a no-op.
"""

from __future__ import annotations

import os
import pickle
import socket
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing import connection, get_context
from multiprocessing.reduction import ForkingPickler
from typing import Any

from ..rules import check_choice, check_float, check_int
from .procs import describe_exit, die_with_parent

BACKENDS = ("local", "ray")
_PROGRESS_EVERY_S = 0.5


@dataclass(frozen=True)
class Unit:
    """One independent piece of work: ``fn(*args, **kwargs)``, known by ``key``.

    ``group`` names what it belongs to (a claim id, a sweep) for progress; ``timeout`` (s)
    overrides the run's timeout for this unit."""

    key: str
    fn: Callable[..., Any]
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    group: str = ""
    timeout: float | None = None


@dataclass(frozen=True)
class Outcome:
    """How a unit ended: ``done`` (``value`` is what ``fn`` returned), ``error`` (``error`` is
    the message and traceback) or ``timed_out``."""

    unit: Unit
    status: str
    value: Any = None
    error: str = ""
    seconds: float = 0.0


# --------------------------------------------------------------------------- progress in a child
_progress_conn = None
_progress_last = 0.0


def report_progress(fraction: float) -> None:
    """Tell the driver how far the current unit is (local backend; a no-op elsewhere)."""
    global _progress_last
    if _progress_conn is None:
        return
    now = time.monotonic()
    if now - _progress_last < _PROGRESS_EVERY_S and fraction < 1:
        return
    _progress_last = now
    try:
        _progress_conn.send(("progress", float(fraction)))
    except Exception:  # noqa: BLE001 — progress is best effort
        pass


def _call(fn: Callable, args: tuple, kwargs: dict) -> tuple[str, Any]:
    """("done", value) or ("error", message + traceback): a unit's exception is its outcome."""
    try:
        return "done", fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 — recorded, the run goes on
        return "error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"


# --------------------------------------------------------------------------- the driver
def run_units(units: Sequence[Unit], backend: str = "local", workers: int | None = None,
              address: str | None = None, timeout: float | None = None,
              on_start: Callable[[Unit], None] | None = None,
              on_done: Callable[[Outcome], None] | None = None,
              on_progress: Callable[[Unit, float], None] | None = None,
              start: str | None = None, preload: Sequence[str] = ()) -> list[Outcome]:
    """Run ``units``; call ``on_done(outcome)`` in this process as each finishes; return all
    outcomes in finishing order. ``workers``: parallel units (default: the CPUs, local; the
    cluster's CPUs, Ray). ``timeout``: seconds per unit (None: no limit). ``start``: the
    local start method (default fork; ``forkserver`` forks each unit from a clean
    single-threaded server that imported ``preload`` once — safe when this process runs
    threads, and then units must be picklable)."""
    check_choice(backend, "backend", BACKENDS)
    if workers is not None:
        workers = check_int(workers, "workers", min=1, max=1024)
    if timeout is not None:
        timeout = check_float(timeout, "timeout (seconds)", min=0, min_open=True)
    units = list(units)
    bad = [type(u).__name__ for u in units if not isinstance(u, Unit)]
    if bad:
        raise ValueError(f"units must be Unit objects, got items of type {sorted(set(bad))}")
    keys = [u.key for u in units]
    if len(set(keys)) != len(keys):
        raise ValueError(f"unit keys must be unique; repeated: {sorted({k for k in keys if keys.count(k) > 1})}")
    outcomes: list[Outcome] = []

    def finish(outcome: Outcome) -> None:
        outcomes.append(outcome)
        if on_done is not None:
            on_done(outcome)

    if not units:
        return outcomes
    hooks = (on_start or (lambda u: None), finish, on_progress or (lambda u, f: None))
    if backend == "local":
        _local(units, workers or min(len(units), os.cpu_count() or 1), timeout, *hooks, start=start,
               preload=tuple(preload))
    else:
        _ray(units, workers, address, timeout, *hooks)
    return outcomes


def _limit(unit: Unit, timeout: float | None) -> float | None:
    return unit.timeout if unit.timeout is not None else timeout


def _timed_out_text(limit: float) -> str:
    return f"timed out after {limit:g} s: stopped before it finished (give a larger --timeout)"


# --------------------------------------------------------------------------- local processes
def start_method(preferred: str | None = None) -> str:
    """``preferred`` (or fork) where available — children inherit the imported modules —,
    spawn elsewhere; override with EXPRESSIVITY_MP_START."""
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    default = preferred if preferred in methods else "fork" if "fork" in methods else "spawn"
    method = os.environ.get("EXPRESSIVITY_MP_START", default)
    return check_choice(method, "EXPRESSIVITY_MP_START", multiprocessing.get_all_start_methods())


def _child(conn, payload: Unit | bytes, parent_pid: int) -> None:
    """Child body of the local backend: run one unit, send its outcome, exit. A spawned or
    forkserver child gets the unit pickled and loads it only after ``die_with_parent``: loading
    imports its module (torch and the rest, seconds under load), and a driver killed meanwhile
    must not leave it behind (a forked child has it in memory already)."""
    global _progress_conn
    die_with_parent(parent_pid)
    try:
        unit = payload if isinstance(payload, Unit) else pickle.loads(payload)
    except Exception as exc:  # noqa: BLE001 — e.g. its module does not import here
        conn.send(("error", f"the unit could not be loaded in its process: {type(exc).__name__}: {exc}"))
        conn.close()
        return
    _progress_conn = conn
    outcome = _call(unit.fn, unit.args, unit.kwargs)
    _progress_conn = None
    try:
        conn.send(outcome)
    except Exception as exc:  # noqa: BLE001 — e.g. a value that cannot be pickled
        try:
            conn.send(("error", f"the unit's process could not send its result: {type(exc).__name__}: {exc}"))
        except Exception:  # noqa: BLE001
            pass
    finally:
        conn.close()


def _local(units, n_workers, timeout, on_start, finish, on_progress, start=None, preload=()) -> None:
    """One process per unit, at most ``n_workers`` at once; a dead process fails only its unit."""
    method = start_method(start)
    ctx = get_context(method)
    if method == "forkserver" and preload:
        ctx.set_forkserver_preload(list(preload))
    queue = list(units)
    running: dict = {}  # reader connection -> (process, unit, start time)

    def stop(proc) -> None:
        if proc.is_alive():
            proc.kill()
        proc.join(5)

    try:
        while queue or running:
            while queue and len(running) < n_workers:
                unit = queue.pop(0)
                reader, writer = ctx.Pipe(duplex=False)
                payload = unit if method == "fork" else bytes(ForkingPickler.dumps(unit))
                proc = ctx.Process(target=_child, args=(writer, payload, os.getpid()), daemon=True,
                                   name=f"unit-{unit.key}"[:60])
                proc.start()
                writer.close()  # only the child holds the write end: its death reads as EOF
                running[reader] = (proc, unit, time.monotonic())
                on_start(unit)
            now = time.monotonic()
            limits = [t0 + lim - now for _, u, t0 in running.values() if (lim := _limit(u, timeout)) is not None]
            wait_s = max(0.0, min(limits)) if limits else None
            for reader in connection.wait(list(running), timeout=wait_s):
                proc, unit, t0 = running[reader]
                try:
                    msg = reader.recv()
                except (EOFError, OSError):
                    proc.join(10)
                    msg = ("error", f"the unit's process died before finishing ({describe_exit(proc.exitcode)})")
                if msg[0] == "progress":
                    on_progress(unit, msg[1])
                    continue
                del running[reader]
                reader.close()
                proc.join(10)
                finish(Outcome(unit, msg[0], msg[1] if msg[0] == "done" else None,
                               "" if msg[0] == "done" else str(msg[1]), time.monotonic() - t0))
            now = time.monotonic()
            for reader, (proc, unit, t0) in list(running.items()):
                lim = _limit(unit, timeout)
                if lim is not None and now - t0 >= lim:
                    del running[reader]
                    stop(proc)
                    reader.close()
                    finish(Outcome(unit, "timed_out", error=_timed_out_text(lim), seconds=now - t0))
    finally:
        for reader, (proc, _, _) in running.items():  # interrupted: stop what is still running
            stop(proc)
            reader.close()


# --------------------------------------------------------------------------- Ray
def _probe(address: str, seconds: float = 3.0) -> None:
    """One-line ValueError if nothing listens at ``host:port`` (so a wrong --address fails
    at once instead of after Ray's own retries)."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"--address {address!r}: expected 'auto' or host:port of a Ray head "
                         "(e.g. 127.0.0.1:6379)")
    try:
        socket.create_connection((host, int(port)), timeout=seconds).close()
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        raise ValueError(f"--address {address}: no Ray cluster answers there ({why}); start one with "
                         "`ray start --head` or give the head's host:port") from None


def check_address(address: str | None) -> None:
    """Refuse, in seconds and in one line, a Ray ``address`` that is malformed or where
    nothing listens ("auto", ``ray://…`` and None are left to Ray)."""
    if address is None or address == "auto" or address.startswith("ray://"):
        return
    _probe(address)


def connect(address: str | None, num_cpus: int | None = None) -> bool:
    """Initialise Ray unless it is already; True if this call started it (then the caller
    shuts it down). ``address`` None: a private local instance with ``num_cpus``."""
    try:
        import ray
    except ImportError:
        raise ValueError("backend 'ray' needs the ray package (pip install 'expressivity[ray]')") from None
    if ray.is_initialized():
        return False
    kwargs: dict[str, Any] = {"include_dashboard": False, "logging_level": "WARNING", "log_to_driver": False}
    if address is None:
        kwargs["num_cpus"] = num_cpus or os.cpu_count() or 1
    else:
        check_address(address)
    try:
        ray.init(address=address, **kwargs)
    except Exception as exc:  # noqa: BLE001 — ConnectionError, RuntimeError, …: one line
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ValueError(f"--address {address}: cannot connect to a Ray cluster ({first[:200]})") from None
    return True


def _ray_slots(ray, workers: int | None) -> int:
    if workers is not None:
        return workers
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def _ray(units, workers, address, timeout, on_start, finish, on_progress) -> None:
    import ray

    started = connect(address, workers)
    task = ray.remote(num_cpus=1, max_retries=3)(_call)
    queue = list(units)
    inflight: dict = {}  # ObjectRef -> (unit, submit time)
    try:
        while queue or inflight:
            if queue:
                slots = _ray_slots(ray, workers)
                while queue and len(inflight) < slots:
                    unit = queue.pop(0)
                    inflight[task.remote(unit.fn, unit.args, unit.kwargs)] = (unit, time.monotonic())
                    on_start(unit)
            now = time.monotonic()
            limits = [t0 + lim - now for u, t0 in inflight.values() if (lim := _limit(u, timeout)) is not None]
            wait_s = min(max(0.0, min(limits)) if limits else 5.0, 5.0)  # wake up to refill slots
            ready, _ = ray.wait(list(inflight), num_returns=1, timeout=wait_s)
            for ref in ready:
                unit, t0 = inflight.pop(ref)
                try:
                    status, payload = ray.get(ref)
                except Exception as exc:  # noqa: BLE001 — its worker/node died after all retries
                    first = (str(exc).strip().splitlines() or [""])[0]
                    status, payload = "error", f"ray task failed: {type(exc).__name__}: {first[:300]}"
                finish(Outcome(unit, status, payload if status == "done" else None,
                               "" if status == "done" else str(payload), time.monotonic() - t0))
            now = time.monotonic()
            for ref, (unit, t0) in list(inflight.items()):
                lim = _limit(unit, timeout)
                if lim is not None and now - t0 >= lim:
                    del inflight[ref]
                    ray.cancel(ref, force=True)
                    finish(Outcome(unit, "timed_out", error=_timed_out_text(lim), seconds=now - t0))
    finally:
        for ref in inflight:  # interrupted: cancel what is still pending or running
            try:
                ray.cancel(ref, force=True)
            except Exception:  # noqa: BLE001
                pass
        if started:
            ray.shutdown()
