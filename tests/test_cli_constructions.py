"""`expressivity constructions` / `construct`: listing, measured rows vs closed forms, one-line errors."""

from __future__ import annotations

import math
import re

import pytest
from typer.testing import CliRunner

from expressivity import constructions
from expressivity.cli import app

runner = CliRunner()


def rows(output: str) -> dict[int, list[str]]:
    """Table body rows keyed by n: the cells after n."""
    out = {}
    for line in output.splitlines():
        cells = [x.strip() for x in line.strip().strip("│").split("│")]
        if len(cells) == 8 and re.fullmatch(r"\d+", cells[0]):
            out[int(cells[0])] = cells[1:]
    return out


def test_list_shows_every_construction_and_its_parameters():
    res = runner.invoke(app, ["constructions"], terminal_width=200)
    assert res.exit_code == 0, res.output
    for name in constructions.REGISTRY:
        assert name in res.output
        for p in constructions.allowed_params(name):
            assert p in res.output
    assert "method='depth-lookup'" in res.output and "yao" in res.output


def test_construct_dyck_yao_rows_match_closed_form():
    scale = 10.0
    res = runner.invoke(app, ["construct", "dyck", "--param", "k=2", "--param", "max_depth=3", "--param",
                              "method=yao", "--param", f"scale={scale}", "--lengths", "6,7,40",
                              "--samples", "12", "--seed", "3"], terminal_width=200)
    assert res.exit_code == 0, res.output
    table = rows(res.output)
    assert sorted(table) == [6, 7, 40]
    ce = math.log2(1.0 + math.exp(-scale))  # every logit is ±scale on the right side
    c = constructions.get("dyck", k=2, max_depth=3, method="yao")
    for n, (members, non_members, acc, ce_bits, layers, heads, params) in table.items():
        assert int(members) + int(non_members) == 12
        assert int(members) == (0 if n % 2 else 6)  # odd-length Dyck words do not exist
        assert float(acc) == 1.0
        assert float(ce_bits) == pytest.approx(ce, abs=1e-6)
        assert (int(layers), int(heads)) == (4, 2)  # D + 1 layers
        assert int(params) == c.transformer.n_params()


def test_construct_parity_with_and_without_layer_norm():
    res = runner.invoke(app, ["construct", "parity", "-p", "layer_norm=true", "--lengths", "10,50",
                              "--samples", "20"], terminal_width=200)
    assert res.exit_code == 0, res.output
    for cells in rows(res.output).values():  # LN with ε = 0: log2(1 + e^(−√10)), length-independent
        assert float(cells[3]) == pytest.approx(math.log2(1 + math.exp(-math.sqrt(10))), abs=1e-6)
    res = runner.invoke(app, ["construct", "parity", "-p", "layer_norm=false", "--lengths", "10",
                              "--samples", "20"], terminal_width=200)
    assert res.exit_code == 0, res.output
    cells = rows(res.output)[10]  # no LN: z = ±1/(2(n+1)²)
    assert float(cells[2]) == 1.0
    assert float(cells[3]) == pytest.approx(math.log2(1 + math.exp(-1 / (2 * 11**2))), abs=1e-6)


@pytest.mark.parametrize("args, message", [
    (["construct", "nope"], "unknown construction"),
    (["construct", "dyck", "--param", "depth=2"], "allowed parameters"),
    (["construct", "dyck", "--param", "k=two"], "must be an integer"),
    (["construct", "dyck", "--param", "k"], "KEY=VALUE"),
    (["construct", "dyck", "--param", "method=cancel"], "method"),
    (["construct", "parity", "--param", "layer_norm=maybe"], "true or false"),
    (["construct", "dyck", "--lengths", "a,b"], "--lengths"),
    (["construct", "dyck", "--samples", "0"], "--samples"),
    (["construct", "parity-compiled", "--lengths", "20", "--samples", "4"], "max_length"),
])
def test_bad_input_is_one_line_exit_2(args, message):
    res = runner.invoke(app, args, terminal_width=200)
    assert res.exit_code == 2, res.output
    lines = [x for x in res.output.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and message in lines[0], res.output
