"""What the command line prints while it works: log lines, progress bars and the library's tables.

The log lines are :mod:`expressivity.logs`' (one handler on stderr, rich on a terminal, else
plain timestamped lines), installed on the command line's stderr console. ``--quiet``: warnings
and errors only, no bars; ``--verbose``: DEBUG lines too. Bars are drawn on a terminal only.
:func:`show` draws a :class:`~expressivity.listing.Listing`.
"""

from __future__ import annotations

import logging

from rich.progress import Progress

from .. import logs
from ..logs import quiet, set_verbosity  # noqa: F401 — the flags' effect (cli/_common.py)
from ._common import console, err_console


def reset() -> None:
    """Back to INFO, the one log handler on the command line's stderr console (each invocation)."""
    logs.setup_logging(logging.INFO, err_console)


def progress(*columns, **kwargs) -> Progress:
    """A rich progress bar on the command line's console: drawn on a terminal unless --quiet."""
    kwargs.setdefault("console", console)
    disable = kwargs.pop("disable", False) or quiet() or not kwargs["console"].is_terminal
    return Progress(*columns, disable=disable, **kwargs)


def progress_bar(*, status: bool = False, remaining: bool = False, **kwargs) -> Progress:
    """The bar of a command that counts its steps: description, bar, done/total, the
    ``status`` field (when asked), elapsed and (when asked) remaining time."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = [TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn()]
    columns += [TextColumn("{task.fields[status]}")] if status else []
    columns += [TimeElapsedColumn()] + ([TimeRemainingColumn()] if remaining else [])
    return progress(*columns, **kwargs)


def show(listing, *, fold_notes: bool = False, **print_kw) -> None:
    """Print a library :class:`~expressivity.listing.Listing`: heading, table, notes (cells
    are plain text; the listing's ``styles`` colour some). A note is one unbroken line unless
    ``fold_notes`` (then wrapped to the terminal)."""
    from rich.markup import escape
    from rich.table import Table

    if listing.heading:
        console.print(listing.heading, highlight=False, soft_wrap=True)
    out = (Table(*listing.columns, title=listing.title) if listing.framed else
           table(*listing.columns, title=listing.title, text=listing.text, show_lines=listing.show_lines))
    for i in listing.no_wrap:
        out.columns[i].no_wrap = True
    marks = {(r, c): style for r, c, style in listing.styles}
    for i, row in enumerate(listing.rows):
        if row is None:
            out.add_section()
            continue
        out.add_row(*(f"[{marks[i, j]}]{escape(v)}[/]" if (i, j) in marks else escape(v) for j, v in enumerate(row)))
    console.print(out, **print_kw)
    for note in listing.notes:
        console.print(note, highlight=False, soft_wrap=not fold_notes)


def table(*columns: str, title: str | None = None, text: tuple[str, ...] = (), **kwargs):
    """A results table that fits 80 columns: a rule under the header and no vertical lines;
    ``text`` columns are left-aligned and fold long words, the others are numbers, right-aligned
    and folded rather than cut (a value is never shown as ``1.23e-…``)."""
    from rich import box
    from rich.table import Table

    t = Table(title=title, box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, **kwargs)
    for c in columns:
        t.add_column(c, justify="left" if c in text else "right", overflow="fold")
    return t
