"""``reproduce``: measure every claim, judge it, write the report; resume from SQLite.

For each claim (in registry order): if the store holds a result for (claim id, size, code
key), reuse it; otherwise run the measurement (locally in this process, or as a Ray task with
``backend="ray"``), judge it with the status rule, commit it to the store at once, and go on.
So a run that is killed part-way and started again redoes only the unfinished claims.
With ``timeout`` (local backend) every claim runs in its own process and is stopped when it
exceeds the timeout: it is reported "not applicable" with the reason and not stored, so the
rest of the report still comes out and a later run measures it again. The child dies with
this process (``expressivity.train.procs.die_with_parent``): a ``reproduce`` killed with
kill -9 leaves no claim process (nor, with it, multiprocessing's resource tracker) behind.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from . import html
from .claims import SIZES, Claim, ClaimSpec, Context, evaluate, stopped
from .registry import by_id, select
from .store import Store

DEFAULT_DB = Path("runs") / "report.sqlite"
Backend = Literal["local", "ray"]


@dataclass(frozen=True)
class Event:
    """Progress events for a front end: kind is "start", "progress" or "done"."""

    kind: str
    spec: ClaimSpec
    fraction: float = 0.0
    claim: Claim | None = None


@dataclass(frozen=True)
class ReproduceResult:
    claims: tuple[Claim, ...]
    index: Path
    computed: tuple[str, ...]  # claim ids measured in this run
    reused: tuple[str, ...]  # claim ids taken from the store
    seconds: float


def _evaluate_by_id(claim_id: str, size: str, seed: int) -> tuple[Claim, bytes | None]:
    """Ray task body: look the spec up in the worker and evaluate it."""
    return evaluate(by_id(claim_id), Context(size=size, seed=seed))


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
    ray_address: str | None = None,
    timeout: float | None = None,
) -> ReproduceResult:
    """Measure the claims and write ``out/index.html``, ``out/claims.json``, ``out/figures/``.

    ``size``: "test" (seconds, for the test suite), "quick" (≤ 10 min on 2 cores, what
    ``make demo`` runs) or "full" (bigger sweeps). ``db``: SQLite file of finished results
    (None: no store). ``only``: claim ids or group prefixes (e.g. ``["compile"]``).
    ``specs`` overrides the registry (tests use it to inject a claim with a wrong bound).
    ``timeout``: seconds per claim (local backend; each claim then runs in a child process).
    """
    if size not in SIZES:
        raise ValueError(f"size must be one of {SIZES}, got {size!r}")
    if backend not in ("local", "ray"):
        raise ValueError(f"backend must be 'local' or 'ray', got {backend!r}")
    if timeout is not None and not timeout > 0:
        raise ValueError(f"timeout must be > 0 seconds, got {timeout!r}")
    if timeout is not None and backend != "local":
        raise ValueError("timeout works with the local backend (Ray tasks are not stopped per claim)")
    emit = on_event or (lambda e: None)
    t0 = time.perf_counter()
    chosen = list(specs) if specs is not None else select(only)
    if specs is not None and only:
        chosen = [s for s in chosen if any(s.id == o or s.id.startswith(o + ".") for o in only)]
    store = Store(db) if db is not None else None
    results: dict[str, tuple[Claim, bytes | None]] = {}
    computed: list[str] = []
    reused: list[str] = []
    try:
        todo: list[ClaimSpec] = []
        for spec in chosen:
            hit = store.get(spec, size) if (store is not None and reuse) else None
            if hit is not None:
                claim, fig = hit
                results[spec.id] = (replace(claim, reused=True), fig)
                reused.append(spec.id)
                emit(Event("done", spec, 1.0, results[spec.id][0]))
            else:
                todo.append(spec)

        def finish(spec: ClaimSpec, claim: Claim, fig: bytes | None) -> None:
            results[spec.id] = (claim, fig)
            computed.append(spec.id)
            if store is not None:
                store.put(spec, claim, fig)
            emit(Event("done", spec, 1.0, claim))

        if backend == "local" or not todo:
            for spec in todo:
                emit(Event("start", spec))
                if timeout is not None:
                    claim, fig = _evaluate_in_child(spec, size, seed, timeout, emit, specs is not None)
                else:
                    ctx = Context(
                        size=size, seed=seed, progress=lambda f, s=spec: emit(Event("progress", s, f))
                    )
                    claim, fig = evaluate(spec, ctx)
                finish(spec, claim, fig)
        else:
            _run_ray(todo, size, seed, emit, finish, specs is not None, ray_address)
    finally:
        if store is not None:
            store.close()
    total = time.perf_counter() - t0
    ordered = [results[s.id] for s in chosen]
    claims = [c for c, _ in ordered]
    figures = {c.id: f for c, f in ordered if f}
    index = html.write(out, claims, figures, size, total)
    return ReproduceResult(tuple(claims), index, tuple(computed), tuple(reused), total)


def _child(spec_or_id, size: str, seed: int, q, parent_pid: int | None = None) -> None:
    """Child process body: evaluate one claim, send progress and the result through ``q``."""
    if parent_pid is not None:
        from ..train.procs import die_with_parent  # here: the parent need not import torch

        die_with_parent(parent_pid)
    spec = by_id(spec_or_id) if isinstance(spec_or_id, str) else spec_or_id
    ctx = Context(size=size, seed=seed, progress=lambda f: q.put(("progress", f)))
    q.put(("done", *evaluate(spec, ctx)))


def _evaluate_in_child(spec: ClaimSpec, size: str, seed: int, timeout: float, emit,
                       custom_spec: bool) -> tuple[Claim, bytes | None]:
    """Evaluate ``spec`` in a fresh process (spawn: no inherited thread pools); stop it after
    ``timeout`` seconds."""
    mp = multiprocessing.get_context("spawn")
    q = mp.Queue()
    proc = mp.Process(target=_child, args=(spec if custom_spec else spec.id, size, seed, q, os.getpid()),
                      daemon=True)
    t0 = time.perf_counter()
    proc.start()
    try:
        while (left := timeout - (time.perf_counter() - t0)) > 0:
            try:
                msg = q.get(timeout=min(left, 0.5))
            except queue.Empty:
                if proc.is_alive():
                    continue
                try:  # it may have put its result just before exiting
                    msg = q.get(timeout=1.0)
                except queue.Empty:
                    return stopped(spec, Context(size=size, seed=seed), time.perf_counter() - t0,
                                   f"the measurement process died (exit code {proc.exitcode})"), None
            if msg[0] == "progress":
                emit(Event("progress", spec, msg[1]))
            else:
                return msg[1], msg[2]
        return stopped(spec, Context(size=size, seed=seed), time.perf_counter() - t0,
                       f"timed out after {timeout:g} s: stopped before it finished "
                       "(run it again with a larger --timeout)"), None
    finally:
        if proc.is_alive():
            proc.terminate()
            proc.join(5)
            if proc.is_alive():
                proc.kill()
        proc.join(5)


def _run_ray(todo, size, seed, emit, finish, custom_specs: bool, address: str | None) -> None:
    """Run the measurements as Ray tasks (local ``ray.init()`` unless an address is given)."""
    try:
        import ray
    except ImportError as exc:  # pragma: no cover - ray is a declared optional dependency
        raise ValueError("--backend ray needs the 'ray' package (pip install 'expressivity[ray]')") from exc
    started = not ray.is_initialized()
    if started:
        kw = {"address": address} if address else {"num_cpus": 2, "include_dashboard": False}
        ray.init(ignore_reinit_error=True, log_to_driver=False, **kw)
    try:
        if custom_specs:  # injected specs are not in the workers' registry: ship the spec itself
            task = ray.remote(lambda spec, size, seed: evaluate(spec, Context(size=size, seed=seed)))
            refs = {task.remote(s, size, seed): s for s in todo}
        else:
            task = ray.remote(_evaluate_by_id)
            refs = {task.remote(s.id, size, seed): s for s in todo}
        for s in todo:
            emit(Event("start", s))
        pending = list(refs)
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            spec = refs[ready[0]]
            claim, fig = ray.get(ready[0])
            finish(spec, claim, fig)
    finally:
        if started:
            ray.shutdown()
