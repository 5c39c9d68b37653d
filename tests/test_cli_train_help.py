"""The `train` / `results` help texts name every registered choice, so they cannot go stale
when a task, model, encoding, preset, kind or construction is added."""

from __future__ import annotations

import re

import typer

from expressivity import constructions
from expressivity.cli import app
from expressivity.cli.options import choices_of
from expressivity.languages import KINDS, REGISTRY
from expressivity.train.config import MODELS
from expressivity.train.protocols import PROTOCOLS
from expressivity.train.published import COMPARISONS
from expressivity.transformer.positions import POSITIONALS


def _helps(command: str) -> dict[str, str]:
    cmd = typer.main.get_command(app).commands[command]
    return {p.name: " ".join([p.help or "", *choices_of(p.type_descriptor.annotation)]) for p in cmd.params}


def _names(text: str) -> set[str]:
    return set(re.findall(r"[A-Za-z0-9_:-]+", text))


def test_train_help_lists_every_choice():
    h = _helps("train")
    for option, choices in (("model", MODELS), ("positional", POSITIONALS), ("preset", PROTOCOLS), ("kind", KINDS),
                            ("init", constructions.REGISTRY)):
        missing = set(choices) - _names(h[option])
        assert not missing, f"--{option} help does not name {sorted(missing)}: {h[option]!r}"
    examples = {w for w in _names(h["task"].split("e.g.")[1].split("(")[0])}
    assert examples and examples <= set(REGISTRY), examples - set(REGISTRY)
    assert "REGISTRY" in h["task"] and "docs/languages.md" in h["task"]


def test_results_help_lists_every_comparison():
    assert set(COMPARISONS) <= _names(_helps("results")["compare"])
