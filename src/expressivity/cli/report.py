"""CLI of the report area: ``expressivity reproduce``."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.progress import BarColumn, TextColumn, TimeElapsedColumn

from ..runs.store import DEFAULT_DB
from . import app
from ._common import console, fail, output_path
from .options import Address, Backend, Db, Device, NoGroup, ResetDb, SizeName, Timeout, Workers
from .output import progress as make_progress
from .output import show


@app.command()
def reproduce(
    quick: bool = typer.Option(False, "--quick", help="Budget: minutes on 2 cores (the default; `make demo`)."),
    standard: bool = typer.Option(False, "--standard", help="Budget: about half an hour on 2 cores."),
    full: bool = typer.Option(False, "--full", help="Budget: the papers' scale (use --backend ray on a cluster)."),
    size: SizeName | None = typer.Option(None, "--size", help="The budget by name (overrides the flags)."),
    out: Path = typer.Option("report", "--out", help="Directory for index.html, claims.json, figures/."),  # noqa: B008
    backend: Backend = "local",
    address: Address = None,
    ray_address: str | None = typer.Option(None, "--ray-address", hidden=True),
    workers: Workers = None,
    db: Db = DEFAULT_DB,
    reset_db: ResetDb = False,
    only: str | None = typer.Option(None, "--only", help="Comma-separated claim ids or groups (e.g. compile)."),
    no_reuse: bool = typer.Option(False, "--no-reuse", help="Re-judge claims even if the store has a result."),
    strict: bool = typer.Option(False, "--strict", help="Exit with code 1 if any claim is violated or incomplete."),
    timeout: Timeout = None,
    list_claims: bool = typer.Option(False, "--list", help="List the claim ids and exit."),
    device: Device = None,
    no_group: NoGroup = False,
) -> None:
    """Measure every claim of both papers and write the reproduction report (HTML + JSON)."""
    from ..report import reproduce as run_reproduce
    from ..report import select
    from ..report.listings import claims_listing, verdicts_listing
    from ..report.reproduce import check_options

    if quick + standard + full > 1:
        fail("--quick, --standard and --full are mutually exclusive")
    chosen = size or ("full" if full else "standard" if standard else "quick")
    ids = [s.strip() for s in only.split(",") if s.strip()] if only else None
    address = address or ray_address
    specs = select(ids)
    if list_claims:  # every option given is checked, then the list needs none of them
        check_options(size=chosen, backend=backend, address=address, timeout=timeout, workers=workers,
                      device=device, prefix="--", ray=False)
        show(claims_listing(specs), highlight=False)
        return
    output_path(out, "--out", kind="dir")
    output_path(db, "--db")
    progress, on_event = _claim_progress(specs)
    try:
        with progress:  # reproduce checks the options (named --size, --backend …) before the store is opened
            result = run_reproduce(out, size=chosen, backend=backend, db=db, only=ids, reuse=not no_reuse,
                                   on_event=on_event, address=address, timeout=timeout, workers=workers,
                                   device=device, group=not no_group, reset_db=reset_db, prefix="--")
    except KeyboardInterrupt:
        console.print(f"[yellow]interrupted[/]: finished units and claims are stored in {db}; "
                      "run the same command again to resume.", highlight=False)
        raise typer.Exit(code=130) from None
    if result.set_aside is not None:
        console.print(f"{db} held results of another code version: moved to {result.set_aside}", highlight=False)
    show(verdicts_listing(result, chosen, db))
    if strict and any(c.status in ("violated", "incomplete") for c in result.claims):
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
