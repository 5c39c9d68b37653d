"""CLI of the report area: ``expressivity reproduce``."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape
from rich.progress import BarColumn, TextColumn, TimeElapsedColumn

from ..runs.store import DEFAULT_DB
from . import app
from ._common import console, fail, output_path, user_errors
from .options import Address, Backend, Db, Device, NoGroup, ResetDb, SizeName, Timeout, Workers
from .output import progress as make_progress
from .output import table

_STYLE = {"holds": "green", "violated": "bold red", "not applicable": "yellow", "incomplete": "bold yellow"}


def _eta(seconds: float | None) -> str:
    if seconds is None:
        return "ETA —"
    m, s = divmod(int(round(seconds)), 60)
    h, m = divmod(m, 60)
    return f"ETA {h}:{m:02d}:{s:02d}" if h else f"ETA {m}:{s:02d}"


def _list_claims(specs) -> None:
    listing = table("claim", "source", "title", text=("claim", "source", "title"), show_lines=True)
    listing.columns[0].no_wrap = True
    for s in specs:
        listing.add_row(s.id, s.source, s.title)
    console.print(listing, highlight=False)




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

    if quick + standard + full > 1:
        fail("--quick, --standard and --full are mutually exclusive")
    chosen = size or ("full" if full else "standard" if standard else "quick")
    ids = [s.strip() for s in only.split(",") if s.strip()] if only else None
    address = address or ray_address
    with user_errors():
        specs = select(ids)
        from ..report.reproduce import check_options

        check_options(size=chosen, backend=backend, address=address, timeout=timeout, workers=workers,
                      device=device, prefix="--", ray=not list_claims)
        if list_claims:  # every option given is checked above, then the list needs none of them
            _list_claims(specs)
            return
    output_path(out, "--out", kind="dir")
    output_path(db, "--db")
    with user_errors():
        _open_store(db, reset_db)
        progress, on_event = _claim_progress(specs)
        try:
            with progress:
                result = run_reproduce(out, size=chosen, backend=backend, db=db, only=ids,
                                       reuse=not no_reuse, on_event=on_event, address=address,
                                       timeout=timeout, workers=workers, device=device, group=not no_group)
        except KeyboardInterrupt:
            console.print(f"[yellow]interrupted[/]: finished units and claims are stored in {db}; "
                          "run the same command again to resume.", highlight=False)
            raise typer.Exit(code=130) from None
    _print_claims(result, chosen, db)
    if strict and any(c.status in ("violated", "incomplete") for c in result.claims):
        raise typer.Exit(code=1)


def _open_store(db: Path, reset_db: bool) -> None:
    """Fail early on a store that is not ours or of another version (--reset-db: set it aside)."""
    from ..report import Store

    first = Store(db, reset=reset_db)
    first.close()
    if first.set_aside is not None:
        console.print(f"{db} held results of another code version: moved to {first.set_aside}", highlight=False)


def _claim_progress(specs):
    """A bar per claim and one for all of them (its ETA), and the reproduce event handler
    that moves them."""
    progress = make_progress(TextColumn("{task.description:<30}"), BarColumn(), TextColumn("{task.fields[units]}"),
                             TextColumn("{task.fields[status]}"), TimeElapsedColumn(), transient=False)
    overall = progress.add_task("all claims", total=len(specs), status=_eta(None), units="", start=True)
    tasks = {s.id: progress.add_task(s.id, total=1.0, status="pending", units="", start=False) for s in specs}

    def on_event(ev) -> None:
        tid = tasks[ev.spec.id]
        units = f"{ev.units_done}/{ev.units_total} units" if ev.units_total > 1 else ""
        progress.update(overall, status=_eta(ev.eta_s))
        if ev.kind == "start":
            progress.start_task(tid)
            progress.update(tid, status="running", units=units)
        elif ev.kind == "progress":
            progress.update(tid, completed=min(max(ev.fraction, 0.0), 0.999), units=units)
        else:
            st = ev.claim.status + (" (reused)" if ev.claim.reused else "")
            progress.start_task(tid)
            progress.update(tid, completed=1.0, status=f"[{_STYLE[ev.claim.status]}]{st}[/]", units=units)
            progress.stop_task(tid)
            progress.advance(overall)

    return progress, on_event


def _print_claims(result, chosen: str, db) -> None:
    claims = table("claim", "measured", "status", "s", title=f"claims (budget: {chosen})",
                   text=("claim", "measured", "status"), show_lines=True)
    claims.columns[0].no_wrap = True
    for c in result.claims:
        status = c.status if c.status == "holds" else f"{c.status}: {c.reason}"
        claims.add_row(c.id, escape(c.measured), f"[{_STYLE[c.status]}]{escape(status)}[/]",
                       "reused" if c.reused else f"{c.seconds:.1f}")
    console.print(claims)
    console.print(
        f"{len(result.computed)} measured, {len(result.reused)} reused from {db}; "
        f"total {result.seconds:.1f} s → {result.index}",
        highlight=False, soft_wrap=True,  # a path is never broken
    )
