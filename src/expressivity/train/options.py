"""The options of ``expressivity train``, ``sweep`` and ``results`` as data, declared once
beside what they configure; the command line builds its parameters from them
(:func:`expressivity.cli.options.with_options`).

An :class:`Opt` is plain data: its name (the parameter's; the flag is ``--name`` with dashes
unless ``flag`` says otherwise, e.g. ``("--out", "-o")``), its type (a Python type, or the name of a choice type of
``cli/options.py`` such as ``"ModelName"``), its default (``...``: required; ``None``: "not
given", so the preset or RunConfig decides) and its help text. ``field``: the option sets the
RunConfig field of its name. ``shared``: an option several commands share, whose type and help
``cli/options.py`` declares once (only its default is given here); ``argument``: positional;
``hidden``: left out of ``--help``. This module imports nothing
that imports torch: the command line reads it at start-up.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..runs.store import DEFAULT_DB


@dataclass(frozen=True)
class Opt:
    """One command-line parameter: name, type, default, help (see the module docstring)."""

    name: str
    type: Any = None
    help: str | None = None
    default: Any = None
    flag: str | tuple[str, ...] | None = None
    field: bool = False
    shared: bool = False
    argument: bool = False
    hidden: bool = False


def _field(name: str, type_: Any, help_: str | None = None, flag: str | None = None) -> Opt:
    """An option that sets the RunConfig field ``name``; not given (None): the preset's or RunConfig's."""
    return Opt(name, type_, help_, flag=flag, field=True)


TRAIN: tuple[Opt, ...] = (
    Opt("task", str, default=..., help=(
        "a language or function task of expressivity.languages.REGISTRY, e.g. parity, dyck, tomita3, anbncn, "
        "reverse_string, binary_addition (all of them: docs/languages.md; an unknown name lists them)")),
    _field("kind", "KindName", (
        "recognition | next_symbol (languages; default recognition, next_symbol under --preset bhattamishra "
        "or yao) | classification | transduction (a function task's own kind, the default)")),
    Opt("param", list[str], default=(), help=(
        "task parameter KEY=VALUE, e.g. k=2, max_depth=4 (dyck), vocab_size=3 (reverse_string)")),
    _field("model", "ModelName", "the model (default: the preset's, else transformer)"),
    _field("layers", int, "transformer blocks / RNN or LSTM layers"),
    _field("heads", int, "attention heads"),
    _field("d_model", int, "residual width / hidden size of the recurrent models"),
    Opt("train_lengths", str, "e.g. 1-40"),
    Opt("test_lengths", str, "e.g. 41-500 or 51-100,101-150"),
    _field("steps", int, "optimiser steps"),
    _field("batch_size", int),
    _field("lr", float, "Adam learning rate"),
    _field("seed", int, "seed of init and data"),
    _field("positional", "PositionalName", "transformer position encoding (default sinusoidal)"),
    _field("layer_norm", "LayerNormName", "transformer layer norm"),
    _field("ln_eps", float),
    _field("log_length_scaling", bool, flag="--log-length-scaling/--no-log-length-scaling"),
    _field("eval_batch", int, "strings per test length"),
    _field("memory_size", int, (
        "cells of the stack / tape of stack_rnn, stack_lstm, tape_rnn (default: 30 / 40, Delétang et al.'s "
        "code)")),
    _field("eval_memory_size", int, "cells of that stack / tape when evaluated (default: --memory-size's)"),
    Opt("preset", "PresetName", "protocol preset: a paper's lengths, sizes and steps"),
    _field("aux", str, (
        "auxiliary losses of a recognizer (FLaRe): lm, next_symbol or lm,next_symbol (needs a recurrent model"
        " or a causal transformer)")),
    _field("causal", bool, "transformer: causal attention for a recognizer too (default under --preset flare)",
           flag="--causal/--no-causal"),
    _field("init", str, (
        "random (default) | construction:NAME (parity, first, dyck, parity-compiled): fine-tune from a "
        "hand-built transformer")),
    Opt("init_param", list[str], "construction parameter KEY=VALUE, e.g. layer_norm=true", default=()),
    _field("perturb", float, (
        "σ of the Gaussian noise added to every weight of the construction (with --init construction:NAME)")),
    Opt("device", default="auto", shared=True),
    Opt("dtype", field=True, shared=True),
    Opt("db", default=DEFAULT_DB, shared=True),
    Opt("out", Path, "checkpoint directory (default runs/<run_id>)"),
    Opt("restart", bool, "discard this run's checkpoint in --out (e.g. a corrupt one) and train from scratch",
        default=False),
    Opt("reset_db", default=False, shared=True),
    Opt("log", default=(), shared=True),
)

FIELDS: tuple[str, ...] = tuple(o.name for o in TRAIN if o.field)  # the RunConfig fields `train` sets

SWEEP: tuple[Opt, ...] = (
    Opt("config", Path, "sweep YAML (preset / base / grid / runs)", default=..., argument=True),
    Opt("db", default=DEFAULT_DB, shared=True),
    Opt("backend", default="local", shared=True),
    Opt("address", shared=True),
    Opt("timeout", shared=True),
    Opt("reset_db", default=False, shared=True),
    Opt("workers", shared=True),
    Opt("out", Path, (
        "checkpoint root, one directory per run (default: checkpoints/ next to --db; interrupted runs resume "
        "from there)")),
    Opt("retry_errors", bool, "re-run runs that failed before", default=False),
    Opt("restart", bool, (
        "runs started now discard their checkpoints and train from scratch (with --retry-errors: redo runs "
        "whose checkpoint was corrupt)"), default=False),
    Opt("only", list[str], (
        "run only the runs whose RunConfig field KEY takes one of the VALUEs, e.g. --only "
        "task=parity_check,reverse_string --only seed=0 (repeatable: every KEY must match)"), default=()),
    Opt("shard", str, (
        "I/N: run shard I of N (a fixed split by the hash of the run id; N machines with 1/N … N/N run every "
        "run exactly once)")),
    Opt("dry_run", bool, (
        "print the selected runs' count and estimated cost (train/budget.py) on --workers cores, and grouped "
        "on one GPU; train nothing"), default=False),
    Opt("device", default="auto", shared=True),
    Opt("dtype", shared=True),
    Opt("no_group", default=False, shared=True),
    Opt("max_group", int, "most runs trained as one batched model", default=32),
    Opt("gpu_bench", Path, (
        "with --dry-run: run-steps/s measured by bench/gpu_bench.py --json FILE, instead of the assumed GPU "
        "throughput")),
    Opt("log", default=(), shared=True),
)

RESULTS: tuple[Opt, ...] = (
    Opt("db", default=DEFAULT_DB, shared=True),
    Opt("plot", shared=True),
    Opt("compare", str, (
        "print (and with --plot, plot) our best score per task × model beside a published table: deletang, "
        "flare, or the path of a table file in the same layout (.json, e.g. with more cells filled)")),
    Opt("show_all", bool, (
        "with --compare: every cell of the published table, also those we have no run for (default: only the "
        "measured ones)"), default=False, flag="--all"),
    Opt("as_json", bool, "write the table as JSON records instead (one per run; with --compare one per cell)",
        default=False, flag="--json"),
    Opt("as_csv", bool, "write the table as CSV instead (the same records as --json)", default=False,
        flag="--csv"),
    Opt("output", shared=True),
)
