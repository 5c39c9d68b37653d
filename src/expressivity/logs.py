"""The package's log lines, for the command line and for scripts alike.

The library logs with :mod:`logging` under the logger ``expressivity`` (one INFO line per
finished unit, run or claim; DEBUG for details). :func:`setup_logging` installs its one
handler on stderr: through rich when that console is a terminal, else plain timestamped lines
(``2026-12-03 06:10:02 INFO unit … done in 12.3 s``), so a log file shows the work as it
happens. A script calling ``reproduce`` or ``train_run`` gets the command line's lines with
``expressivity.logs.setup_logging()``. Levels: INFO by default, WARNING when quiet, DEBUG when
verbose (:func:`set_verbosity`); :func:`quiet` tells whether progress bars should be drawn.
"""

from __future__ import annotations

import logging
import sys

LOGGER = "expressivity"
PLAIN_FORMAT = "%(asctime)s %(levelname)s %(message)s"
DATE_FORMAT = "%Y-%m-%d %H:%M:%S"

_state: dict = {"level": logging.INFO, "handler": None, "console": None}


class _StderrHandler(logging.StreamHandler):
    """Plain lines to whatever ``sys.stderr`` is when a record is emitted (a test runner swaps it)."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, _value) -> None:  # StreamHandler.__init__ assigns it
        pass


def _make_handler(console) -> logging.Handler:
    if console is not None and console.is_terminal:
        from rich.logging import RichHandler

        h: logging.Handler = RichHandler(console=console, show_path=False, markup=False,
                                         rich_tracebacks=False, log_time_format="[%X]")
        h.setFormatter(logging.Formatter("%(message)s"))
    else:
        h = _StderrHandler()
        h.setFormatter(logging.Formatter(PLAIN_FORMAT, DATE_FORMAT))
    return h


def setup_logging(level: int | None = None, console=None) -> logging.Handler:
    """(Re)install the one handler of the ``expressivity`` logger at ``level`` (default: the
    level last chosen, INFO at first), drawn by the rich ``console`` (a stderr Console) when it
    is a terminal, else plain lines on stderr; returns the handler."""
    if level is not None:
        _state["level"] = level
    if console is not None:
        _state["console"] = console
    log = logging.getLogger(LOGGER)
    if _state["handler"] is not None:
        log.removeHandler(_state["handler"])
    _state["handler"] = _make_handler(_state["console"])
    log.addHandler(_state["handler"])
    log.setLevel(_state["level"])
    log.propagate = False  # a root handler configured elsewhere must not print each line twice
    return _state["handler"]


def handler() -> logging.Handler | None:
    """The handler :func:`setup_logging` installed last (None before the first call)."""
    return _state["handler"]


def reset() -> None:
    """Back to the default level (each invocation of the command line starts here)."""
    setup_logging(logging.INFO)


def set_verbosity(quiet: bool = False, verbose: bool = False) -> None:
    """Quiet: WARNING; verbose: DEBUG (the command line refuses both at once where it parses them)."""
    if quiet:
        setup_logging(logging.WARNING)
    elif verbose:
        setup_logging(logging.DEBUG)


def quiet() -> bool:
    """Whether the level is above INFO (then no progress bars are drawn)."""
    return _state["level"] > logging.INFO
