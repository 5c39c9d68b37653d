"""Shared CLI helpers: one-line errors with exit code 2."""

from __future__ import annotations

from contextlib import contextmanager

import typer
from rich.console import Console

console = Console()
err_console = Console(stderr=True)


def fail(message: str) -> None:
    """Print ``error: message`` on stderr and exit with code 2."""
    err_console.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(code=2)


@contextmanager
def user_errors():
    """Turn ValueError / FileNotFoundError / KeyError from the library into `fail`."""
    try:
        yield
    except (ValueError, FileNotFoundError, KeyError) as exc:
        msg = exc.args[0] if exc.args else str(exc)
        fail(str(msg))
