"""Every tolerance of the region counters and the compiler is a named constant of one module
(``regions/tolerances.py``, ``compile/bounds.py``): no small float literal elsewhere there."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "expressivity"
HOMES = {"regions/tolerances.py", "compile/bounds.py"}


def _small_floats(path: Path) -> list[tuple[int, float]]:
    return [(node.lineno, node.value) for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Constant) and isinstance(node.value, float) and 0 < abs(node.value) < 1e-3]


def test_no_tolerance_literal_outside_its_home():
    found = {}
    for pkg in ("regions", "compile"):
        for path in sorted((SRC / pkg).rglob("*.py")):
            rel = path.relative_to(SRC).as_posix()
            if rel not in HOMES and _small_floats(path):
                found[rel] = _small_floats(path)
    assert found == {}


def test_the_compile_domain_slack_is_one_value():
    from expressivity.compile.bounds import DOMAIN_SLACK
    from expressivity.regions.tolerances import COMPILE_DOMAIN_SLACK

    assert COMPILE_DOMAIN_SLACK == DOMAIN_SLACK
