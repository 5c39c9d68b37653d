"""Shared CLI helpers: one-line errors with exit code 2, output paths checked up front.

Every user error, wherever it is raised, ends the same way: ``error: <one line>`` on stderr
and exit code 2 (see :class:`OneLineErrors`, the app's command class). Anything else is a
bug: one line naming it and exit code 1; ``EXPRESSIVITY_DEBUG=1`` shows the traceback.
"""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path

import typer
import typer.core
from rich.console import Console
from rich.markup import escape

from ..fileio import check_output_path
from ..rules import USER_ERRORS, describe_error

click = typer.core._click  # typer bundles its own Click: its exceptions are these

console = Console()
err_console = Console(stderr=True)

def fail(message: str, code: int = 2) -> None:
    """Print ``error: message`` on stderr and exit with ``code`` (2: bad input; 1: a check
    that failed)."""
    _print_error(message)
    raise typer.Exit(code=code)


def output_path(path, option: str, *, kind: str = "file") -> Path | None:
    """Check an output path before any work starts (``None`` passes through). The library's
    errors need no wrapping: :class:`OneLineErrors` turns them into one line, wherever raised."""
    return None if path is None else check_output_path(path, option, kind=kind)


class OneLineErrors(typer.core.TyperGroup):
    """The app's group: usage errors, user errors and bugs each end in one line."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        from .output import reset

        reset()  # INFO lines on stderr unless this invocation says --quiet / --verbose
        _add_verbosity(self)
        try:
            rv = super().main(args=args, prog_name=prog_name, complete_var=complete_var,
                              standalone_mode=False, **extra)
        except click.exceptions.NoArgsIsHelpError as exc:
            click.echo(exc.ctx.get_help() if exc.ctx else str(exc))
            rv = 0
        except click.exceptions.UsageError as exc:
            msg = exc.format_message().rstrip(".").replace("Value error, ", "")  # typer's Literal check
            cmd = exc.ctx.command_path if exc.ctx else "expressivity"
            _print_error(f"{msg[:1].lower() + msg[1:]} (see '{cmd} --help')")
            rv = 2
        except click.exceptions.ClickException as exc:
            _print_error(exc.format_message())
            rv = exc.exit_code
        except typer.Abort:
            _print_error("aborted")
            rv = 130
        except USER_ERRORS as exc:
            if isinstance(exc, OSError) and exc.errno == errno.EPIPE:
                rv = 1
            else:
                _print_error(describe_error(exc))
                rv = 2
        except Exception as exc:  # a bug: say so in one line, the traceback on request
            if os.environ.get("EXPRESSIVITY_DEBUG"):
                raise
            _print_error(f"internal error ({type(exc).__name__}: {describe_error(exc)}); "
                         "rerun with EXPRESSIVITY_DEBUG=1 for the traceback and please report it")
            rv = 1
        if not standalone_mode:
            return rv
        sys.exit(rv if isinstance(rv, int) else 0)


def _verbosity(ctx, param, value: bool) -> None:
    """``--quiet`` / ``--verbose`` of any command (or of ``expressivity`` itself)."""
    if not value or ctx.resilient_parsing:
        return
    given = ctx.meta.setdefault("expressivity.verbosity", set())
    given.add(param.name)
    if given == {"quiet", "verbose"}:
        raise typer.BadParameter("--quiet and --verbose exclude each other: give one", ctx=ctx, param=param)
    from .output import set_verbosity

    set_verbosity(quiet=param.name == "quiet", verbose=param.name == "verbose")


def _add_verbosity(group) -> None:
    """Give the group and every command ``--quiet/-q`` and ``--verbose/-v`` (declared once in
    :func:`.options.verbosity_params`)."""
    from .options import verbosity_params

    for cmd in [group, *group.commands.values()]:
        if not any(p.name == "quiet" for p in cmd.params):
            help_at = next((i for i, p in enumerate(cmd.params) if p.name == "help"), len(cmd.params))
            cmd.params[help_at:help_at] = verbosity_params(_verbosity)


def _print_error(message: str) -> None:
    err_console.print(f"[bold red]error:[/] {escape(' '.join(str(message).split()))}", highlight=False,
                      soft_wrap=True)
