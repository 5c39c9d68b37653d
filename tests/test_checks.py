"""The shared input rules, file and memory checks (expressivity.rules, .fileio, .memory) and the
CLI's one-line error contract."""

from __future__ import annotations

import numpy as np
import pytest
from _bad_input import Case, api_rejects, cli_rejects

from expressivity.fileio import check_output_path, read_text_file
from expressivity.memory import check_memory, chunk_rows, memory_budget
from expressivity.rules import (
    as_real_array,
    check_choice,
    check_float,
    check_int,
    parse_length_range,
    parse_lengths,
    parse_params,
)


@pytest.mark.parametrize("value, want", [
    (32, (32,)), ("32", (32,)), ("41-45", (41, 42, 43, 44, 45)), ("8,16,32", (8, 16, 32)),
    ("51-52,101-102", (51, 52, 101, 102)), ([8, 16], (8, 16)), (("8", "10-11"), (8, 10, 11)),
    (np.array([3, 4]), (3, 4)), (8.0, (8,)), (" 2 - 3 ", (2, 3)),
])
def test_parse_lengths_accepts(value, want):
    assert parse_lengths(value) == want


@pytest.mark.parametrize("value, words", [
    (8.5, ("lengths", "8.5")), ("8.5", ("lengths", "8.5")), (-1, ("lengths",)), ("5-3", ("empty",)),
    ("", ("lengths",)), ("a-b", ("lengths", "a-b")), (True, ("lengths",)), (None, ("lengths",)),
    ([], ("no lengths",)), ("1-", ("lengths",)), ({"a": 1}, ("lengths",)), (float("nan"), ("lengths",)),
])
def test_parse_lengths_refuses(value, words):
    api_rejects(parse_lengths, value, mentions=words)


def test_parse_lengths_names_the_parameter():
    api_rejects(parse_lengths, "x", "test_lengths", mentions="test_lengths")


@pytest.mark.parametrize("value, want", [("1-40", (1, 40)), ((1, 40), (1, 40)), (12, (12, 12)),
                                         ("12", (12, 12)), ("3,4,5", (3, 5))])
def test_parse_length_range(value, want):
    assert parse_length_range(value) == want


@pytest.mark.parametrize("value", ["1,5", (5, 1), "2.5-4", [1, 2, 3, 7]])
def test_parse_length_range_refuses(value):
    api_rejects(parse_length_range, value, mentions="train_lengths")


def test_parse_params():
    assert parse_params(["k=2", "p_open=0.4", "flag=true", "name=abc"]) == \
        {"k": 2, "p_open": 0.4, "flag": True, "name": "abc"}
    assert parse_params(["eps=1e-5", "lam=2E3", "x=-1.5e+2"]) == {"eps": 1e-5, "lam": 2000.0, "x": -150.0}
    for bad, word in ((["k"], "KEY=VALUE"), (["k=1", "k=2"], "twice"), (["=3"], "bad key"),
                      (["k=[1, 2]"], "scalar"), (["k=: :"], "k")):
        api_rejects(parse_params, bad, mentions=word)


@pytest.mark.parametrize("fn, value, kw, word", [
    (check_int, 2.9, {}, "integer"), (check_int, True, {}, "integer"),
    (check_int, "3", {}, "integer"), (check_int, float("nan"), {}, "integer"),
    (check_int, 0, {"min": 1}, ">= 1"), (check_int, 9, {"max": 8}, "<= 8"),
    (check_float, float("nan"), {}, "finite"), (check_float, float("inf"), {}, "finite"),
    (check_float, 0.0, {"min": 0, "min_open": True}, "> 0"), (check_float, "1", {}, "real"),
    (check_float, -1.0, {"min": 0}, ">= 0"),
])
def test_scalars_refuse(fn, value, kw, word):
    api_rejects(fn, value, "param", mentions=("param", word), **kw)


def test_scalars_accept():
    assert check_int(3.0, "q") == 3 and isinstance(check_int(np.int64(4), "q"), int)
    assert check_float(1e300, "lam", min=0, min_open=True) == 1e300
    assert check_float(float("inf"), "x", finite=False) == float("inf")


def test_check_choice_lists_the_names():
    msg = api_rejects(check_choice, "nope", "task", ["parity", "first"], mentions=("task", "nope"))
    assert "parity, first" in msg


@pytest.mark.parametrize("value, kw, word", [
    (np.array([1 + 2j]), {}, "complex"), ([[1.0, 2.0], [3.0]], {}, "rectangular"),
    (np.array([np.nan]), {}, "NaN"), (np.array(["a"]), {}, "numeric"), (np.zeros((2, 3)), {"ndim": 3}, "3 dimension"),
    (np.zeros((2, 3)), {"shape": (None, 4)}, "shape (·, 4)"), ([1j, 2], {}, "complex"),
])
def test_as_real_array_refuses(value, kw, word):
    api_rejects(as_real_array, value, "W", mentions=("W", word), **kw)


def test_as_real_array_accepts_ints_and_tensors():
    import torch

    assert as_real_array([1, 2], "x").dtype == np.float64
    assert as_real_array(torch.ones(2, 3), "x", shape=(2, 3)).shape == (2, 3)
    with pytest.raises(ValueError, match="complex"):
        as_real_array(torch.ones(2, dtype=torch.complex64), "x")


def test_check_output_path(tmp_path):
    (tmp_path / "f").write_text("x")
    api_rejects(check_output_path, tmp_path, "--out", mentions=("--out", "directory"))
    api_rejects(check_output_path, tmp_path / "f" / "g.json", "--json", mentions=("--json", "is a file"))
    api_rejects(check_output_path, tmp_path / "f", "--out", kind="dir", mentions=("--out", "is a file"))
    api_rejects(check_output_path, "/proc/expressivity-test/x.db", "--db", mentions=("--db", "cannot write"))
    assert check_output_path(tmp_path / "new" / "deeper" / "a.png", "--plot").name == "a.png"
    assert not (tmp_path / "new").exists()  # nothing created
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f"]


def test_read_text_file(tmp_path):
    (tmp_path / "bin").write_bytes(b"\xff\xfe\x00\x81")
    api_rejects(read_text_file, tmp_path / "bin", "SPEC", mentions=("SPEC", "UTF-8"))
    api_rejects(read_text_file, tmp_path / "none.json", "SPEC", mentions=("SPEC", "does not exist"))
    api_rejects(read_text_file, tmp_path, "SPEC", mentions=("SPEC", "directory"))


def test_memory(monkeypatch):
    monkeypatch.setenv("EXPRESSIVITY_MEMORY_BUDGET", "1G")
    assert memory_budget() == 2**30
    check_memory(2**29, "x")
    msg = api_rejects(check_memory, 3 * 2**30, "the vertex store", hint="use --points",
                      mentions=("vertex store", "3.0 GiB", "1.0 GiB", "--points"))
    assert "EXPRESSIVITY_MEMORY_BUDGET" in msg
    api_rejects(check_memory, float("inf"), "x", mentions="unbounded")
    monkeypatch.setenv("EXPRESSIVITY_MEMORY_BUDGET", "lots")
    api_rejects(memory_budget, mentions="EXPRESSIVITY_MEMORY_BUDGET")
    assert chunk_rows(1024, budget=10 * 1024) == 10
    assert chunk_rows(1024, budget=10 * 1024, total=3) == 3
    assert chunk_rows(1e12) == 1


CLI_CASES = [
    Case("missing required option", ["train"], "--task"),
    Case("not an integer", ["train", "--task", "parity", "--steps", "x"], "--steps"),
    Case("unknown command", ["no-such-command"], "no-such-command"),
    Case("unknown option", ["train", "--task", "parity", "--nope"], "--nope"),
    Case("option without its value", ["reproduce", "--out"], "--out"),
]


@pytest.mark.parametrize("case", CLI_CASES, ids=lambda c: c.name)
def test_cli_usage_errors_are_one_line(case, tmp_path, monkeypatch):
    cli_rejects(case, tmp_path, monkeypatch)


def test_cli_bug_is_one_line_exit_1(monkeypatch):
    """An unexpected exception is named in one line with exit code 1 (not 2: it is our bug)."""
    from typer.testing import CliRunner

    from expressivity.cli import app
    from expressivity.constructions import measure as cmod

    def boom(*a, **k):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(cmod, "registry_rows", boom)
    monkeypatch.delenv("EXPRESSIVITY_DEBUG", raising=False)
    result = CliRunner().invoke(app, ["constructions"])
    assert result.exit_code == 1
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "internal error (ZeroDivisionError: boom)" in lines[0]


def test_parse_lengths_max_count_refuses_before_expanding():
    assert parse_lengths("1-5", max_count=5) == (1, 2, 3, 4, 5)
    api_rejects(parse_lengths, "1-100000000000", "test_lengths", max_count=1000,
                mentions=("test_lengths", "over the limit of 1,000"))
    api_rejects(parse_lengths, [1, 2, 3], max_count=2, mentions="over the limit")
    assert parse_length_range("1-100000000000") == (1, 100000000000)  # a range is not expanded
