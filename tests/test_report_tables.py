"""Claims tables in Markdown come from claims.json (report.tables), never pasted by hand."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from _bad_input import Case, api_rejects, cli_rejects
from typer.testing import CliRunner

from expressivity.cli import app
from expressivity.report.tables import load_doc, render, summary_line, table, update_file

ROOT = Path(__file__).resolve().parents[1]
DOC = {"size": "quick", "total_seconds": 61.4, "claims": [
    {"id": "a.one", "claim": "A holds", "source": "X 2020", "bound": "e ≤ 1", "measured": "e = 0.5 | tight",
     "status": "holds", "reason": "", "seconds": 1.25},
    {"id": "b.two", "claim": "B", "source": "Y", "bound": "≥ 2", "measured": "1", "status": "violated",
     "reason": "FAILED: 1 ≥ 2", "seconds": 3.0},
]}


def test_table_styles():
    readme = table(DOC, "readme")
    assert readme.splitlines()[2] == "| A holds (`a.one`) | X 2020 | e ≤ 1 | e = 0.5 \\| tight | **holds** |"
    assert "**violated**: FAILED: 1 ≥ 2" in readme
    assert readme.rstrip().endswith("1 of 2 claims hold (budget `--quick`), 1 violated; the run took 61 s.")
    detail = table(DOC, "detail")
    assert "| `b.two` | 1 | violated: FAILED: 1 ≥ 2 | quick | 3.0 s |" in detail  # the budget of each number
    assert summary_line({**DOC, "total_seconds": 0}) == "1 of 2 claims hold (budget `--quick`), 1 violated."


def test_render_replaces_only_the_blocks():
    text = ("intro\n<!-- claims-table:start readme -->\nold numbers\n<!-- claims-table:end -->\nmiddle\n"
            "<!-- claims-table:start detail -->\n<!-- claims-table:end -->\nend\n")
    out = render(text, DOC)
    assert out.startswith("intro\n<!-- claims-table:start readme -->\n| claim |") and "old numbers" not in out
    assert "\nmiddle\n" in out and out.endswith("<!-- claims-table:end -->\nend\n")
    assert render(out, DOC) == out  # idempotent
    api_rejects(render, "no block here", DOC, mentions="claims-table")
    api_rejects(table, DOC, "fancy", mentions=("style", "readme"))


def test_a_block_can_name_its_own_run(tmp_path):
    other = {**DOC, "size": "standard", "claims": DOC["claims"][:1]}
    (tmp_path / "std.json").write_text(json.dumps(other))
    md = tmp_path / "x.md"
    md.write_text("<!-- claims-table:start detail -->\n<!-- claims-table:end -->\n"
                  "<!-- claims-table:start detail std.json -->\n<!-- claims-table:end -->\n")
    assert update_file(md, DOC)
    first, second = md.read_text().split("<!-- claims-table:start detail std.json -->")
    assert "b.two" in first and "budget `--quick`" in first
    assert "b.two" not in second and "budget `--standard`" in second
    assert not update_file(md, DOC, check=True)
    api_rejects(render, "<!-- claims-table:start detail std.json -->\n<!-- claims-table:end -->\n", DOC,
                mentions="std.json")
    md.write_text("<!-- claims-table:start detail missing.json -->\n<!-- claims-table:end -->\n")
    api_rejects(update_file, md, DOC, mentions="missing.json")


def test_update_file_and_check(tmp_path):
    md = tmp_path / "x.md"
    md.write_text("<!-- claims-table:start detail -->\n<!-- claims-table:end -->\n")
    assert update_file(md, DOC, check=True) and "b.two" not in md.read_text()
    assert update_file(md, DOC) and "b.two" in md.read_text()
    assert not update_file(md, DOC, check=True)


def test_docs_tables_match_the_committed_run():
    """README and docs/report.md show exactly what docs/claims.json (the last run) says."""
    doc = load_doc(ROOT / "docs" / "claims.json")
    for name in ("README.md", "docs/report.md"):
        text = (ROOT / name).read_text()
        assert "<!-- claims-table:start" in text, name
        assert render(text, doc, name, base=(ROOT / name).parent) == text, f"{name} is stale: run 'make tables'"


def test_cli_check_and_update(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.json").write_text(json.dumps(DOC))
    (tmp_path / "r.md").write_text("<!-- claims-table:start readme -->\n<!-- claims-table:end -->\n")
    res = CliRunner().invoke(app, ["claims-table", "c.json", "r.md", "--check"])
    assert res.exit_code == 2 and "stale: r.md" in res.stdout
    res = CliRunner().invoke(app, ["claims-table", "c.json", "r.md"])
    assert res.exit_code == 0 and "a.one" in (tmp_path / "r.md").read_text()
    assert CliRunner().invoke(app, ["claims-table", "c.json", "r.md", "--check"]).exit_code == 0


def _write(name, content):
    def setup(tmp):
        (tmp / name).write_bytes(content) if isinstance(content, bytes) else (tmp / name).write_text(content)
    return setup


CASES = [
    Case("claims.json missing", ["claims-table", "none.json", "README.md"], ("claims.json", "does not exist")),
    Case("claims.json not JSON", ["claims-table", "c.json", "r.md"], ("claims.json", "not valid json"),
         _write("c.json", "{nope")),
    Case("claims.json binary", ["claims-table", "c.json", "r.md"], ("claims.json", "utf-8"),
         _write("c.json", b"\xff\xfe\x00")),
    Case("claims.json of another kind", ["claims-table", "c.json", "r.md"], ("claims.json", "size"),
         _write("c.json", "[1, 2]")),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_claims_table_bad_input(case, tmp_path, monkeypatch):
    cli_rejects(case, tmp_path, monkeypatch)


# --------------------------------------------------------------------------- how to read each claim

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from expressivity.report import ClaimSpec, all_specs  # noqa: E402
from expressivity.report.tables import HOW_END, HOW_START, WIDTH, how_to_read  # noqa: E402


def _spec(cid: str, prose: str) -> ClaimSpec:
    return ClaimSpec(id=cid, title="t", source="s", bound="b", bound_value=None, run=lambda ctx: None,
                     how_to_read=prose)


def _block(text: str) -> str:
    return text.split(HOW_START + "\n", 1)[1].split(HOW_END, 1)[0]


def test_every_registered_claim_has_how_to_read_prose():
    """Every claim (the FLaRe and Chomsky levels included) gets a bullet in the generated list."""
    specs = all_specs()
    assert all(" ".join(s.how_to_read.split()) for s in specs), [s.id for s in specs if not s.how_to_read.strip()]
    listed = how_to_read()
    for s in specs:
        assert f"{s.id}**" in listed or f"{s.id} /" in listed, s.id
    assert {"flare.regular", "flare.dcf", "flare.cf", "flare.cs"} <= {s.id for s in specs}


def test_how_to_read_groups_shared_prose_and_refuses_empty():
    out = how_to_read([_spec("a.x", "Read  it\nso."), _spec("a.y", "Read it so."), _spec("b.z", "Other.")])
    assert out == "- **a.x / a.y** — Read it so.\n- **b.z** — Other.\n"
    api_rejects(how_to_read, [_spec("a.x", "fine"), _spec("b.empty", "  ")], mentions=("b.empty", "how_to_read"))


_WORD = st.one_of(st.text(st.sampled_from("abcxyz0123456789−≈(),.|"), min_size=1, max_size=12),
                  st.sampled_from(["-", "+", "*", ">", "#", "##x", "1.", "12)", "$a", "b$", "$x + y$", "$\\sum_i"]))


@given(st.lists(_WORD, min_size=1, max_size=80))
def test_how_to_read_wraps_without_losing_words_or_making_markup(words):
    prose = " ".join(words)
    out = how_to_read([_spec("c.one", prose)])
    lines = out.rstrip("\n").split("\n")
    assert lines[0].startswith("- **c.one** — ")
    assert all(ln.startswith("  ") and ln[2] != " " for ln in lines[1:])
    # the words come back in order, and no continuation line starts like a list item or heading
    assert " ".join(" ".join(ln.split()) for ln in lines)[len("- **c.one** — "):] == " ".join(prose.split())
    for ln in lines[1:]:
        assert not _starts_markup(ln.split()[0]), ln
    # no break inside TeX: before every line break the $ signs pair up
    assert all("".join(lines[:n + 1]).count("$") % 2 == 0 for n in range(len(lines) - 1))
    # a line over WIDTH is one unbreakable piece (a long word, or TeX between $…$)
    for n, ln in enumerate(lines):
        body = ln[len("- **c.one** — "):] if n == 0 else ln[2:]
        if len(ln) > WIDTH:
            assert not _breakable(body), ln


def test_how_to_read_keeps_a_piece_too_long_for_a_line_beside_its_head():
    """Found by the property above: TeX left open makes the rest one unbreakable piece; it must
    follow the head (overflowing), not leave the head alone on its line."""
    out = how_to_read([_spec("c.one", "$a " + " ".join(["0" * 11] * 12))])
    assert out.startswith("- **c.one** — $a 000") and out.count("\n") == 1


def _starts_markup(word: str) -> bool:
    return word in ("-", "+", "*", ">") or word.startswith("#") or re.fullmatch(r"\d+[.)]", word) is not None


def _breakable(body: str) -> bool:
    """Whether a line's text has a space where a line could break (outside TeX, not before markup)."""
    words = body.split(" ")
    return any(" ".join(words[:k]).count("$") % 2 == 0 and not _starts_markup(words[k]) for k in range(1, len(words)))


def test_docs_how_to_read_match_the_claims():
    """README and docs/report.md show exactly the claims' how_to_read (so neither can drift)."""
    expected = how_to_read()
    for name in ("README.md", "docs/report.md"):
        text = (ROOT / name).read_text()
        assert HOW_START in text and HOW_END in text, name
        assert _block(text) == expected, f"{name}: the how-to-read list is stale: run 'make tables'"


def test_render_and_cli_check_the_how_to_read_block(tmp_path, monkeypatch):
    text = f"# x\n{HOW_START}\n- hand-written\n{HOW_END}\nrest\n"
    out = render(text, DOC)
    assert _block(out) == how_to_read() and out.endswith(f"{HOW_END}\nrest\n") and render(out, DOC) == out
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.json").write_text(json.dumps(DOC))
    (tmp_path / "h.md").write_text(text)  # no claims table: a how-to-read block alone is enough
    res = CliRunner().invoke(app, ["claims-table", "c.json", "h.md", "--check"])
    assert res.exit_code == 2 and "stale: h.md" in res.stdout
    assert CliRunner().invoke(app, ["claims-table", "c.json", "h.md"]).exit_code == 0
    assert CliRunner().invoke(app, ["claims-table", "c.json", "h.md", "--check"]).exit_code == 0
