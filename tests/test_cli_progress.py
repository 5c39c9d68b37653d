"""Progress on the command line when nobody watches a terminal: one timestamped log line per
finished unit, run or claim, on stderr, as it happens (not only a table at the end);
``--quiet`` keeps results and drops them, ``--verbose`` adds debug lines."""

from __future__ import annotations

import logging
import re

import pytest
import yaml
from typer.testing import CliRunner

from expressivity.cli import app

STAMP = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"
SWEEP = {
    "base": {"task": "parity", "layers": 1, "heads": 1, "d_model": 8, "train_lengths": "2-6",
             "test_lengths": "8,10", "steps": 4, "batch_size": 4, "eval_batch": 4},
    "grid": {"model": ["transformer", "lstm"], "seed": [0]},
}


def _lines(text: str, level: str, what: str) -> list[str]:
    return [ln for ln in text.splitlines() if re.match(rf"{STAMP} {level} {what}", ln)]


def _reproduce(tmp_path, *extra):
    return CliRunner().invoke(app, ["reproduce", "--size", "test", "--db", str(tmp_path / "r.sqlite"),
                                    "--out", str(tmp_path / "report"), *extra])


def test_reproduce_logs_one_line_per_unit_as_it_finishes(tmp_path, unit_server):
    res = _reproduce(tmp_path, "--only", "limits.dyck2-ce")
    assert res.exit_code == 0, res.output
    units = _lines(res.stderr, "INFO", r"unit limits\.dyck2-ce/\w+/n\d+ done in [\d.]+ s")
    assert len(units) == 4, res.stderr  # transformer and lstm at n = 8, 16 (the test budget)
    assert len({u.split(" unit ")[1].split()[0] for u in units}) == 4
    assert "units to go" in units[0] and "to go" not in units[-1]
    claim = _lines(res.stderr, "(INFO|WARNING)", r"claim limits\.dyck2-ce (holds|violated) in [\d.]+ s: ")
    assert len(claim) == 1, res.stderr
    # the log lines come before the claim line; results (the table) stay on stdout
    assert res.stderr.index(units[-1]) < res.stderr.index(claim[0])
    assert "limits.dyck2-ce" in res.stdout and " INFO " not in res.stdout
    # as they happen: in the combined stream every unit's line comes before the final table
    assert res.output.index(units[-1]) < res.output.index("claims (budget: test)")
    # a rerun reuses the stored claim and says so
    again = _reproduce(tmp_path, "--only", "limits.dyck2-ce")
    assert _lines(again.stderr, "INFO", r"claim limits\.dyck2-ce \w+ \(reused from ")
    assert not _lines(again.stderr, "INFO", "unit ")


def test_quiet_keeps_the_results_and_drops_the_progress(tmp_path, unit_server):
    res = _reproduce(tmp_path, "--only", "compile.complexity", "--quiet")
    assert res.exit_code == 0, res.output
    assert res.stderr == ""
    assert "compile.complexity" in res.stdout and "holds" in res.stdout


def test_verbose_adds_debug_lines_and_excludes_quiet(tmp_path, unit_server):
    res = _reproduce(tmp_path, "--only", "compile.complexity", "-v")
    assert res.exit_code == 0, res.output
    assert _lines(res.stderr, "DEBUG", r"unit compile\.complexity\|test\|seed=0\|claim started")
    assert _lines(res.stderr, "INFO", r"unit compile\.complexity done")
    both = CliRunner().invoke(app, ["-q", "constructions", "-v"])
    assert both.exit_code == 2 and "--quiet and --verbose exclude each other" in both.stderr
    # the level of one invocation does not leak into the next
    assert CliRunner().invoke(app, ["constructions"]).exit_code == 0
    assert logging.getLogger("expressivity").level == logging.INFO


def test_sweep_logs_one_line_per_run(tmp_path):
    cfg = tmp_path / "sweep.yaml"
    cfg.write_text(yaml.safe_dump(SWEEP))
    db = tmp_path / "r.sqlite"
    res = CliRunner().invoke(app, ["sweep", str(cfg), "--db", str(db), "--workers", "2"])
    assert res.exit_code == 0, res.output
    runs = _lines(res.stderr, "INFO", r"run parity/recognition/(transformer|lstm) .* done in [\d.]+ s \(score ")
    assert len(runs) == 2, res.stderr
    again = CliRunner().invoke(app, ["sweep", str(cfg), "--db", str(db)])
    assert _lines(again.stderr, "INFO", r"2 of 2 runs already in .*: skipped")


@pytest.mark.parametrize("command", ["train", "sweep", "reproduce", "results", "regions", "compile", "export",
                                     "sensitivity", "construct", "claims-table"])
def test_every_command_takes_quiet_and_verbose(command):
    res = CliRunner().invoke(app, [command, "--help"])
    assert res.exit_code == 0
    assert "-q, --quiet" in res.stdout and "-v, --verbose" in res.stdout


def test_plain_lines_off_a_terminal_rich_on_one(monkeypatch):
    from rich.logging import RichHandler

    from expressivity import logs
    from expressivity.cli import _common, output

    output.reset()
    assert not isinstance(logs.handler(), RichHandler)
    monkeypatch.setattr(_common.err_console, "_force_terminal", True)
    output.reset()
    try:
        assert isinstance(logs.handler(), RichHandler)
    finally:
        monkeypatch.undo()
        output.reset()
