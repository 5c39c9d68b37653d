"""`python -m expressivity` is the `expressivity` command line (src/expressivity/__main__.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def test_python_dash_m_runs_the_cli_and_its_errors():
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    ok = subprocess.run([sys.executable, "-m", "expressivity", "--help"], capture_output=True, text=True, env=env)
    assert ok.returncode == 0 and "train" in ok.stdout and "reproduce" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "expressivity", "train", "--task", "nope"], capture_output=True,
                         text=True, env=env)
    assert bad.returncode == 2 and bad.stderr.startswith("error: unknown language or task 'nope'")
