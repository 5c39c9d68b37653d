"""CLI of the report area: ``expressivity reproduce``."""

from __future__ import annotations

from types import SimpleNamespace

import typer
from rich.progress import BarColumn, TextColumn, TimeElapsedColumn

from ..report.options import REPRODUCE
from . import app
from ._common import console
from .options import with_options
from .output import progress as make_progress
from .output import show


@app.command()
@with_options(REPRODUCE)
def reproduce(**given) -> None:
    """Measure every claim of both papers and write the reproduction report (HTML + JSON)."""
    from ..report import reproduce as run_reproduce
    from ..report import select
    from ..report.listings import claims_listing, verdicts_listing
    from ..report.reproduce import check_options, size_of

    o = SimpleNamespace(**given)
    chosen = size_of(o.quick, o.standard, o.full, o.size)
    ids = [s.strip() for s in o.only.split(",") if s.strip()] if o.only else None
    address = o.address or o.ray_address
    specs = select(ids)
    if o.list_claims:  # every option given is checked, then the list needs none of them
        check_options(size=chosen, backend=o.backend, address=address, timeout=o.timeout, workers=o.workers,
                      device=o.device, prefix="--", ray=False)
        show(claims_listing(specs), highlight=False)
        return
    progress, on_event = _claim_progress(specs)
    try:
        with progress:  # reproduce checks the options (named --size, --backend …) before the store is opened
            result = run_reproduce(o.out, size=chosen, backend=o.backend, db=o.db, only=ids, reuse=not o.no_reuse,
                                   on_event=on_event, address=address, timeout=o.timeout, workers=o.workers,
                                   device=o.device, group=not o.no_group, reset_db=o.reset_db, prefix="--")
    except KeyboardInterrupt:
        console.print(f"[yellow]interrupted[/]: finished units and claims are stored in {o.db}; "
                      "run the same command again to resume.", highlight=False)
        raise typer.Exit(code=130) from None
    if result.set_aside is not None:
        console.print(f"{o.db} held results of another code version: moved to {result.set_aside}", highlight=False)
    show(verdicts_listing(result, chosen, o.db))
    if o.strict and any(c.status in ("violated", "incomplete") for c in result.claims):
        raise typer.Exit(code=1)


def _claim_progress(specs):
    """A bar per claim and one for all of them (its ETA), and the reproduce event handler
    that moves them."""
    from ..report.listings import STATUS_STYLE, eta_text

    progress = make_progress(TextColumn("{task.description:<30}"), BarColumn(), TextColumn("{task.fields[units]}"),
                             TextColumn("{task.fields[status]}"), TimeElapsedColumn(), transient=False)
    overall = progress.add_task("all claims", total=len(specs), status=eta_text(None), units="", start=True)
    tasks = {s.id: progress.add_task(s.id, total=1.0, status="pending", units="", start=False) for s in specs}

    def on_event(ev) -> None:
        tid = tasks[ev.spec.id]
        units = f"{ev.units_done}/{ev.units_total} units" if ev.units_total > 1 else ""
        progress.update(overall, status=eta_text(ev.eta_s))
        if ev.kind == "start":
            progress.start_task(tid)
            progress.update(tid, status="running", units=units)
        elif ev.kind == "progress":
            progress.update(tid, completed=min(max(ev.fraction, 0.0), 0.999), units=units)
        else:
            st = ev.claim.status + (" (reused)" if ev.claim.reused else "")
            progress.start_task(tid)
            progress.update(tid, completed=1.0, status=f"[{STATUS_STYLE[ev.claim.status]}]{st}[/]", units=units)
            progress.stop_task(tid)
            progress.advance(overall)

    return progress, on_event
