"""Command-line conventions: shell completion, typed choices that agree with the library,
every default shown in --help, shared options declared once, tables that fit 80 columns."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer._click import Context
from typer.testing import CliRunner

from expressivity.cli import app, options
from expressivity.cli.options import choices_of

SRC = Path(__file__).resolve().parents[1] / "src" / "expressivity" / "cli"


def _commands():
    group = typer.main.get_command(app)
    return group, group.commands


def test_the_choice_types_are_the_librarys():
    from expressivity.languages import KINDS
    from expressivity.report.claims import SIZES
    from expressivity.runs import BACKENDS
    from expressivity.train.config import MODELS
    from expressivity.train.protocols import PROTOCOLS
    from expressivity.transformer.config import LayerNormPlacement
    from expressivity.transformer.positions import POSITIONALS

    assert set(choices_of(options.BackendName)) == set(BACKENDS)
    assert set(choices_of(options.SizeName)) == set(SIZES)
    assert set(choices_of(options.ModelName)) == set(MODELS)
    assert set(choices_of(options.KindName)) == set(KINDS)
    assert set(choices_of(options.PositionalName)) == set(POSITIONALS)
    assert set(choices_of(options.PresetName)) == set(PROTOCOLS)
    assert set(choices_of(options.LayerNormName)) == set(choices_of(LayerNormPlacement))


def test_help_lists_choices_and_a_wrong_choice_is_refused_by_the_parser():
    res = CliRunner().invoke(app, ["sweep", "--help"])
    assert "--backend <local|ray>" in res.stdout
    bad = CliRunner().invoke(app, ["reproduce", "--size", "huge"])
    assert bad.exit_code == 2
    assert bad.stderr.startswith("error: invalid value for '--size': 'huge' is not one of 'test', 'quick'")
    assert "Value error" not in bad.stderr


def test_every_default_is_shown():
    _, commands = _commands()
    for name, cmd in commands.items():
        ctx = Context(cmd, info_name=name, show_default=True)
        for p in cmd.params:
            if p.param_type_name != "option" or p.hidden or p.default in (None, False, (), []):
                continue
            record = p.get_help_record(ctx)
            assert record and "[default: " in record[1], f"{name} {p.opts}: default {p.default!r} not shown"


def test_shell_completion_is_on(monkeypatch):
    res = CliRunner().invoke(app, ["--help"])
    assert "--install-completion" in res.stdout and "--show-completion" in res.stdout
    # typer's switch: --show-completion takes the shell's name instead of detecting the shell
    # (detection needs a shell among this process's parents)
    monkeypatch.setenv("_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION", "1")
    script = CliRunner().invoke(app, ["--show-completion", "bash"])
    assert script.exit_code == 0 and "_EXPRESSIVITY_COMPLETE=complete_bash" in script.stdout, \
        (script.output, script.exception)
    env = {**os.environ, "_EXPRESSIVITY_COMPLETE": "complete_bash", "COMP_WORDS": "expressivity reproduce --backend ",
           "COMP_CWORD": "3"}
    script = Path(sys.executable).with_name("expressivity")  # the installed command (completion is keyed by its name)
    if not script.exists():
        pytest.skip(f"no installed expressivity script beside {sys.executable}")
    out = subprocess.run([str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["local", "ray"], out.stderr


def test_shared_options_are_declared_once():
    """An option of options.py is not declared again in a command module (``typer.Option(...,
    "--db"`` and the like); the commands use the alias."""
    shared = ["--db", "--reset-db", "--backend", "--address", "--workers", "--timeout", "--log", "--seed", "--plot",
              "--layers", "--device", "--dtype", "--no-group"]
    for path in SRC.glob("*.py"):
        if path.name == "options.py":
            continue
        text = path.read_text()
        for opt in shared:
            assert not re.search(rf'typer\.Option\([^)]*"{opt}"', text), f"{path.name} declares {opt} again"
    assert "--version" in CliRunner().invoke(app, ["--help"]).stdout  # the root's own option stays


@pytest.mark.parametrize("args", [
    ["constructions"],
    ["sensitivity", "--lengths", "8,16", "--strings", "1"],
    ["restrict", "--lengths", "8", "--n", "8", "--restrictions", "1", "--completions", "2"],
])
def test_tables_fit_80_columns_and_never_cut_a_number(args):
    res = CliRunner().invoke(app, args)  # not a terminal: rich draws 80 columns wide
    assert res.exit_code == 0, res.output
    long = [ln for ln in res.stdout.splitlines() if len(ln) > 80]
    assert not long, long
    assert "…" not in res.stdout, res.stdout
