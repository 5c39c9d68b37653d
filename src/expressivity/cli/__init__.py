"""The `expressivity` command line: a thin typer app.

Each area registers its commands from its own module (``cli/<area>.py``); a command parses
options, builds a config, calls the library and prints. Errors in the user's input exit
with code 2 and a one-line message (``_common.OneLineErrors``), wherever they are raised.
"""

from __future__ import annotations

import typer

from ._common import OneLineErrors

app = typer.Typer(
    cls=OneLineErrors,
    name="expressivity",
    help="What transformers can and cannot compute, made executable.",
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion (bash, zsh, fish, PowerShell)
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # click's plain help: wraps to the terminal, readable in 80 columns
    context_settings={"show_default": True},
)


def _version(value: bool) -> None:
    if value:
        from ..runs.version import version_text

        typer.echo(version_text())
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", is_eager=True, callback=_version,
                                       help="Print the package version, git commit and code version, and exit.")) -> None:
    """What transformers can and cannot compute, made executable."""


from . import compile as _compile  # noqa: E402,F401  (registers `compile`, `verify`)
from . import constructions as _constructions  # noqa: E402,F401
from . import export as _export  # noqa: E402,F401  (registers `export`)
from . import limits as _limits  # noqa: E402,F401
from . import regions as _regions  # noqa: E402,F401
from . import report as _report  # noqa: E402,F401
from . import tables as _tables  # noqa: E402,F401  (registers `claims-table`)
from . import train as _train  # noqa: E402,F401


def main() -> None:
    app()
