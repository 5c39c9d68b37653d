"""CLI of the report area: ``expressivity reproduce``."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from . import app
from ._common import console, fail, output_path, user_errors

_STYLE = {"holds": "green", "violated": "bold red", "not applicable": "yellow"}


@app.command()
def reproduce(
    quick: bool = typer.Option(False, "--quick", help="Small sweeps: ≤ 10 min on 2 cores (default)."),
    full: bool = typer.Option(False, "--full", help="The larger sweeps (use with --backend ray)."),
    size: str | None = typer.Option(None, "--size", help="test | quick | full (overrides the flags)."),
    out: Path = typer.Option("report", "--out", help="Directory for index.html, claims.json, figures/."),  # noqa: B008
    backend: str = typer.Option("local", "--backend", help="local | ray"),
    db: Path = typer.Option("runs/report.sqlite", "--db", help="SQLite store of finished claims."),  # noqa: B008
    only: str | None = typer.Option(None, "--only", help="Comma-separated claim ids or groups (e.g. compile)."),
    no_reuse: bool = typer.Option(False, "--no-reuse", help="Re-measure even if the database has a result."),
    ray_address: str | None = typer.Option(None, "--ray-address", help="Ray cluster address (default: local)."),
    strict: bool = typer.Option(False, "--strict", help="Exit with code 1 if any claim is violated."),
    timeout: float | None = typer.Option(
        None, "--timeout", help="Stop a claim after this many seconds (local backend; each claim "
        "then runs in its own process; a stopped claim is reported, not stored)."),
    list_claims: bool = typer.Option(False, "--list", help="List the claim ids and exit."),
) -> None:
    """Measure every claim of both papers and write the reproduction report (HTML + JSON)."""
    from ..report import reproduce as run_reproduce
    from ..report import select

    if quick and full:
        fail("--quick and --full are mutually exclusive")
    chosen = size or ("full" if full else "quick")
    ids = [s.strip() for s in only.split(",") if s.strip()] if only else None
    with user_errors():
        specs = select(ids)
        if list_claims:
            for s in specs:
                console.print(f"{s.id:32s} {s.source:40s} {s.title}", highlight=False)
            return
        from ..checks import check_choice, check_float
        from ..report.claims import SIZES

        check_choice(chosen, "--size", SIZES)
        check_choice(backend, "--backend", ("local", "ray"))
        if timeout is not None:
            check_float(timeout, "--timeout (seconds)", min=0, min_open=True)
            if backend != "local":
                raise ValueError("--timeout works with the local backend only (Ray tasks are not stopped per claim)")
    output_path(out, "--out", kind="dir")
    output_path(db, "--db")
    with user_errors():
        progress = Progress(
            TextColumn("{task.description:<30}"),
            BarColumn(),
            TextColumn("{task.fields[status]}"),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        )
        tasks = {s.id: progress.add_task(s.id, total=1.0, status="pending", start=False) for s in specs}

        def on_event(ev) -> None:
            tid = tasks[ev.spec.id]
            if ev.kind == "start":
                progress.start_task(tid)
                progress.update(tid, status="running")
            elif ev.kind == "progress":
                progress.update(tid, completed=min(max(ev.fraction, 0.0), 0.999))
            else:
                st = ev.claim.status + (" (reused)" if ev.claim.reused else "")
                progress.start_task(tid)
                progress.update(tid, completed=1.0, status=f"[{_STYLE[ev.claim.status]}]{st}[/]")
                progress.stop_task(tid)

        try:
            with progress:
                result = run_reproduce(out, size=chosen, backend=backend, db=db, only=ids,
                                       reuse=not no_reuse, on_event=on_event, ray_address=ray_address,
                                       timeout=timeout)
        except KeyboardInterrupt:
            console.print(f"[yellow]interrupted[/]: finished claims are stored in {db}; "
                          "run the same command again to resume.", highlight=False)
            raise typer.Exit(code=130) from None
    table = Table(title=f"claims ({chosen})", show_lines=False)
    for col in ("claim", "measured", "status", "s"):
        table.add_column(col, overflow="fold")
    for c in result.claims:
        status = c.status if c.status == "holds" else f"{c.status}: {c.reason}"
        table.add_row(c.id, c.measured, f"[{_STYLE[c.status]}]{status}[/]",
                      "reused" if c.reused else f"{c.seconds:.1f}")
    console.print(table)
    console.print(
        f"{len(result.computed)} measured, {len(result.reused)} reused from {db}; "
        f"total {result.seconds:.1f} s → {result.index}",
        highlight=False,
    )
    if strict and any(c.status == "violated" for c in result.claims):
        raise typer.Exit(code=1)
