"""The command line stays thin (issue 24): it parses, calls the library and prints, so no
CLI function grows past 60 lines (decorators included) and cli/ stays small."""

from __future__ import annotations

import ast
from pathlib import Path

CLI = Path(__file__).resolve().parents[1] / "src" / "expressivity" / "cli"
MAX_FUNCTION_LINES = 60


def _function_lengths(path: Path) -> dict[str, int]:
    out = {}
    for f in ast.walk(ast.parse(path.read_text())):
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)):
            start = min([d.lineno for d in f.decorator_list] + [f.lineno])
            out[f"{path.name}:{f.name}"] = f.end_lineno - start + 1
    return out


def test_no_cli_function_over_60_lines():
    lengths = {k: v for p in sorted(CLI.glob("*.py")) for k, v in _function_lengths(p).items()}
    assert lengths, "no function found in cli/"
    long = {k: v for k, v in lengths.items() if v > MAX_FUNCTION_LINES}
    assert not long, f"CLI functions over {MAX_FUNCTION_LINES} lines (move the logic into the library): {long}"


def test_the_counter_sees_a_long_function(tmp_path):
    """The length rule must be able to fail: a decorated 62-line function counts 62."""
    body = "\n".join(f"    x{i} = {i}" for i in range(60))
    (tmp_path / "fake.py").write_text(f"@decorator\ndef f():\n{body}\n")
    assert _function_lengths(tmp_path / "fake.py") == {"fake.py:f": 62}


# issue 24 asks for cli/ under 900 lines (1 647 before its moves; 1 230 after the first; 995 once
# each command's options became data in the library; then the log lines went to logs.py and the
# remaining checks into the library): lower it whenever logic moves into the library, never raise it
MAX_CLI_LINES = 899


def test_cli_stays_small():
    total = sum(len(p.read_text().splitlines()) for p in CLI.glob("*.py"))
    assert total <= MAX_CLI_LINES, (f"cli/ has {total} lines, over {MAX_CLI_LINES}: move checks, tables and "
                                    "file writing into the library (it builds a Listing, cli/output.show draws it)")
