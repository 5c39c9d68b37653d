"""Options declared as data in the library (``Opt``, issue 24): the CLI builds its typer
parameters from them, reads them at start-up without torch, and the lazy packages that hold
them behave as their eager ``__init__`` did."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from expressivity.cli.options import with_options
from expressivity.train.options import FIELDS, TRAIN, Opt


def test_the_cli_starts_without_torch_or_matplotlib():
    code = ("import sys, typer; from expressivity.cli import app; typer.main.get_command(app); "
            "print(sorted(m for m in ('torch', 'matplotlib', 'numba') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["[]"]


def _app(opts):
    app = typer.Typer(add_completion=False)
    seen = {}

    @app.command()
    @with_options(opts)
    def cmd(**given) -> None:
        seen.update(given)

    @app.command()
    def other() -> None:  # a second command keeps `cmd` a subcommand
        """(unused)"""

    return app, seen


OPTS = (Opt("name", str, "who", default=...), Opt("count", int, "how many", default=3, flag=("--count", "-c")),
        Opt("mode", "ModelName", "which model"), Opt("loud", bool, "shout", default=False, flag="--loud/--soft"),
        Opt("tags", list[str], "labels", default=()), Opt("seed", default=0, shared=True),
        Opt("where", Path, "a file", argument=True))


def test_with_options_builds_flags_types_defaults_and_choices():
    app, seen = _app(OPTS)
    res = CliRunner().invoke(app, ["cmd", "f.txt", "--name", "x", "-c", "5", "--mode", "lstm", "--soft", "--tags", "a",
                                   "--tags", "b"])
    assert res.exit_code == 0, res.output
    assert seen == {"name": "x", "count": 5, "mode": "lstm", "loud": False, "tags": ["a", "b"], "seed": 0,
                    "where": Path("f.txt")}
    params = {p.name: p for p in typer.main.get_command(app).commands["cmd"].params}
    assert params["count"].opts == ["--count", "-c"] and params["count"].help == "how many"
    assert params["loud"].opts == ["--loud"] and params["loud"].secondary_opts == ["--soft"]
    assert params["seed"].help.startswith("random seed") and params["name"].required
    assert list(params) == [o.name for o in OPTS]  # in the specs' order


@pytest.mark.parametrize("args, word", [(["cmd", "--count", "2"], "--name"),
                                        (["cmd", "--name", "x", "--mode", "gru"], "gru"),
                                        (["cmd", "--name", "x", "--count", "two"], "--count")])
def test_with_options_lets_the_parser_refuse_bad_input(args, word):
    app, seen = _app(OPTS)
    res = CliRunner().invoke(app, args, env={"COLUMNS": "300"})  # rich's error box wide enough for the value
    assert res.exit_code == 2 and word in res.output and not seen


@pytest.mark.parametrize("opt, word", [(Opt("dbb", default=None, shared=True), "shared option 'dbb'"),
                                       (Opt("mode", "Modelname"), "choice type 'Modelname'"),
                                       (Opt("mode", "Path"), "choice type 'Path'")])
def test_an_option_naming_nothing_declared_is_refused(opt, word):
    with pytest.raises(ValueError, match=word):
        with_options((opt,))(lambda **given: None)


def test_train_fields_are_runconfig_fields():
    from dataclasses import fields

    from expressivity.train import RunConfig

    names = {f.name for f in fields(RunConfig)}
    assert FIELDS and set(FIELDS) <= names
    # the other RunConfig fields train sets are parsed (lengths) or placed (device) by run_config_from_options
    assert {o.name for o in TRAIN if not o.field} & names == {"task", "train_lengths", "test_lengths", "device"}


def test_a_public_name_wins_over_its_submodule():
    import expressivity.limits as limits
    import expressivity.limits.depth_reduction  # noqa: F401  (binds the submodule on an eager package)

    assert callable(limits.depth_reduction) and limits.depth_reduction.__name__ == "depth_reduction"
    assert limits.restriction.__name__ == "expressivity.limits.restriction"  # a submodule on first use
    assert "flip_sensitivity" in dir(limits)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        limits.nope  # noqa: B018
