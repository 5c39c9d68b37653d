"""What the command line prints while it works: log lines, progress bars and the library's tables.

The library logs with :mod:`logging` (one INFO line per finished unit, run or claim; DEBUG
for details); the package's records (logger ``expressivity``) go to stderr: through rich on a
terminal, else as plain timestamped lines (``2026-12-03 06:10:02 INFO unit … done in 12.3 s``),
so a log file shows the work as it happens. ``--quiet``: warnings and errors only, no bars;
``--verbose``: DEBUG lines too. Bars are drawn on a terminal only. :func:`show` draws a
:class:`~expressivity.listing.Listing`.
"""

from __future__ import annotations

import logging
import sys

from rich.progress import Progress

from ._common import console, err_console

LOGGER = "expressivity"
PLAIN_FORMAT = "%(asctime)s %(levelname)s %(message)s"
DATE_FORMAT = "%Y-%m-%d %H:%M:%S"

_state = {"level": logging.INFO}
_handler: logging.Handler | None = None


class _StderrHandler(logging.StreamHandler):
    """Plain lines to whatever ``sys.stderr`` is when a record is emitted (a test runner swaps it)."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, _value) -> None:  # StreamHandler.__init__ assigns it
        pass


def _make_handler() -> logging.Handler:
    if err_console.is_terminal:
        from rich.logging import RichHandler

        h: logging.Handler = RichHandler(console=err_console, show_path=False, markup=False,
                                         rich_tracebacks=False, log_time_format="[%X]")
        h.setFormatter(logging.Formatter("%(message)s"))
    else:
        h = _StderrHandler()
        h.setFormatter(logging.Formatter(PLAIN_FORMAT, DATE_FORMAT))
    return h


def setup_logging(level: int | None = None) -> None:
    """(Re)install the one handler of the ``expressivity`` logger at ``level`` (default: the
    level chosen by --quiet / --verbose, INFO without them)."""
    global _handler
    if level is not None:
        _state["level"] = level
    log = logging.getLogger(LOGGER)
    if _handler is not None:
        log.removeHandler(_handler)
    _handler = _make_handler()
    log.addHandler(_handler)
    log.setLevel(_state["level"])
    log.propagate = False  # a root handler configured elsewhere must not print each line twice


def reset() -> None:
    """Back to the default level (each invocation of the app starts here)."""
    setup_logging(logging.INFO)


def set_verbosity(quiet: bool = False, verbose: bool = False) -> None:
    """--quiet: WARNING; --verbose: DEBUG (the flags' exclusion is checked where they are parsed)."""
    if quiet:
        setup_logging(logging.WARNING)
    elif verbose:
        setup_logging(logging.DEBUG)


def quiet() -> bool:
    return _state["level"] > logging.INFO


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
