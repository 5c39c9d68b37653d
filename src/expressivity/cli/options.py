"""Options that several commands share: one declaration and one help text each.

A command takes them as typed parameters, e.g. ``seed: Seed = 0`` or ``db: Db = DEFAULT_DB``
(the default stays in the command's signature, since it differs between commands). Choices
are ``Literal`` types, so ``--help`` lists them and a wrong value is refused by the parser.
The choice lists mirror the library's (``tests/test_cli_options.py`` checks that they agree;
the CLI does not import the library at start-up, which would import torch).

A command whose options the library declares as data (:mod:`expressivity.train.options`)
takes them all as ``**given``: :func:`with_options` builds its typed parameters from them.

``--quiet`` / ``--verbose`` are not declared per command: :func:`verbosity_params` builds them
once and the app's group adds them to every command (and to ``expressivity`` itself).
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Annotated, Literal, get_args, get_origin

import typer

from ..choices import Attention as AttentionName  # noqa: F401 — one definition each (choices.py)
from ..choices import LayerNormPlacement as LayerNormName  # noqa: F401
from ..choices import Positional as PositionalName  # noqa: F401

# ---------------------------------------------------------------------------------- choices
BackendName = Literal["local", "ray"]
SizeName = Literal["test", "quick", "standard", "full"]
ModelName = Literal["transformer", "rnn", "lstm", "stack_rnn", "stack_lstm", "tape_rnn"]
KindName = Literal["recognition", "next_symbol", "classification", "transduction"]
PresetName = Literal["deletang", "bhattamishra", "yao", "flare", "quick"]
ColorBy = Literal["linear", "activation"]
CHOICES = {name: t for name, t in list(globals().items()) if get_origin(t) is Literal}  # what an Opt's type may name



def choices_of(annotation) -> tuple[str, ...]:
    """The values of a ``Literal`` choice type (also inside ``X | None`` and ``Annotated``)."""
    if get_origin(annotation) is Literal:
        return tuple(get_args(annotation))
    return tuple(c for a in get_args(annotation) for c in choices_of(a))


# ---------------------------------------------------------------------------------- the store
Db = Annotated[Path, typer.Option("--db", help="the SQLite results store (training runs and their per-length "
                                  "results, report units and claims); finished work in it is not redone")]
ResetDb = Annotated[bool, typer.Option("--reset-db", help="if --db holds results of another code version, set it "
                                       "aside (renamed with that version) and start a fresh one")]

# ---------------------------------------------------------------------------------- running many units
Backend = Annotated[BackendName, typer.Option("--backend", help="where the units run: a local process pool or "
                                              "Ray tasks")]
Address = Annotated[str | None, typer.Option("--address", help="Ray cluster: 'auto' or the head's host:port "
                                             "(default: a private local Ray instance; needs --backend ray)")]
Workers = Annotated[int | None, typer.Option("--workers", help="units run at once (default: the number of CPUs)")]
Timeout = Annotated[float | None, typer.Option("--timeout", help="stop a unit after this many seconds (both "
                                               "backends); it is recorded as timed out (a report's unit is measured again "
                                               "next time, a sweep's run with --retry-errors)")]
Log = Annotated[list[str], typer.Option("--log", help="also log the training loss and the per-length metrics to "
                                        "tensorboard:DIR (one subdirectory per run; extra 'tensorboard') or wandb "
                                        "/ wandb:PROJECT (extra 'wandb'; WANDB_MODE=offline works); repeatable")]
Device = Annotated[str | None, typer.Option("--device", help="where training runs (model, batches, evaluation): "
                                           "auto (cuda, else mps, else cpu; the default) | cpu | cuda | cuda:N | mps; "
                                           "not part of the run id, so a run resumes on any device")]
Dtype = Annotated[str | None, typer.Option("--dtype", help="float32 (default) | bfloat16: transformer runs under "
                                           "autocast (an accelerator or a CPU with native bfloat16); bfloat16 is part "
                                           "of the run id")]
NoGroup = Annotated[bool, typer.Option("--no-group", help="one process per run: do not train runs that differ only "
                                       "in seed / lr / grad_clip / steps as one batched model")]

# ---------------------------------------------------------------------------------- measuring
Seed = Annotated[int, typer.Option("--seed", help="random seed (model init, sampled strings and points)")]
Param = Annotated[list[str], typer.Option("--param", "-p", help="construction parameter KEY=VALUE, e.g. k=2 "
                                          "(repeatable)")]
Lengths = Annotated[str, typer.Option("--lengths", help="lengths n: a list 8,16,32 or a range 8-12")]
Plot = Annotated[Path | None, typer.Option("--plot", help="also draw the command's figure into this PNG file")]
Layers = Annotated[Path | None, typer.Option("--layers", help="layer shapes JSON of torch weights (default: beside "
                                             "them, net.pt -> net.json)")]

# ---------------------------------------------------------------------------------- results out
Output = Annotated[Path | None, typer.Option("--output", "-o", help="write --json / --csv to this file instead "
                                             "of stdout")]


# ---------------------------------------------------------------------------------- options as data
SHARED = {"db": Db, "reset_db": ResetDb, "backend": Backend, "address": Address, "workers": Workers,
          "timeout": Timeout, "log": Log, "device": Device, "dtype": Dtype, "no_group": NoGroup, "plot": Plot,
          "output": Output, "param": Param, "lengths": Lengths, "seed": Seed, "layers": Layers}  # Opt.shared


def with_options(opts):
    """Give a command ``fn(**given)`` (or one naming each option) the typer parameters of the
    library's option specs ``opts`` (:class:`expressivity.train.options.Opt`), in their order:
    typer reads ``fn.__signature__``."""
    def put(fn):
        fn.__signature__ = inspect.Signature([_parameter(o) for o in opts])
        return fn

    return put


def _parameter(opt) -> inspect.Parameter:
    """One Opt as a typed parameter: ``Annotated[type, typer.Option(flag, help=…)] = default``."""
    default = inspect.Parameter.empty if opt.default is ... else opt.default
    named, key = (SHARED, opt.name) if opt.shared else (CHOICES, opt.type)
    if isinstance(key, str) and key not in named:
        raise ValueError(f"option {opt.name!r}: cli/options.py declares no {'shared option' if opt.shared else 'choice type'} "
                         f"{key!r}")
    if opt.shared:
        annotation = SHARED[opt.name]
    else:
        kind = CHOICES[opt.type] if isinstance(opt.type, str) else opt.type
        kind = kind | None if opt.default is None else kind
        flags = opt.flag if isinstance(opt.flag, tuple) else (opt.flag or "--" + opt.name.replace("_", "-"),)
        info = typer.Argument(help=opt.help) if opt.argument else typer.Option(*flags, help=opt.help, hidden=opt.hidden)
        annotation = Annotated[kind, info]
    return inspect.Parameter(opt.name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default)


# ---------------------------------------------------------------------------------- every command
QUIET_HELP = "print only results, warnings and errors: no progress bars, no per-unit lines"
VERBOSE_HELP = "also print debug lines (each unit started, training loss, each test length)"


def verbosity_params(callback) -> list:
    """``--quiet/-q`` and ``--verbose/-v`` as click parameters of typer's own kind, for the app's
    group to add to every command. ``callback(ctx, param, value)`` receives each flag; they do
    not reach the command's function."""
    probe = typer.Typer(add_completion=False)

    @probe.command()
    def _flags(quiet: Annotated[bool, typer.Option("--quiet", "-q", help=QUIET_HELP)] = False,
               verbose: Annotated[bool, typer.Option("--verbose", "-v", help=VERBOSE_HELP)] = False) -> None:
        """(never called: it only declares the two flags)"""

    params = typer.main.get_command(probe).params
    for p in params:
        p.expose_value = False
        p.callback = callback
    return params
