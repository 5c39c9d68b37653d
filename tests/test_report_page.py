"""The report page itself (report/html.py, templates/): version and machine, contents and
anchors, collapsed checks, formulas and links, self-contained, legends off the data.
Fast: claims are written by hand here; tests/test_report_e2e.py renders the real registry in
headless Chromium."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from expressivity.cli import app
from expressivity.report import all_specs
from expressivity.report import html as page
from expressivity.report.claims import Claim
from expressivity.runs import build_info, code_version, machine_info

ROOT = Path(__file__).resolve().parents[1]


def _check(i: int, ok: bool = True) -> dict:
    return {"what": f"check {i}", "measured": 1.0 if ok else 3.0, "relation": "<=", "bound": 2.0,
            "tol": 0.0, "ok": ok}


def _claim(cid: str, checks: tuple = (), status: str = "holds", **kw) -> Claim:
    base = dict(id=cid, claim=r"Regions grow like $q^L$", source="Gu et al. 2026, Thm 4.4; arXiv 2207.02098",
                bound=r"$N(F) \ge C\, q^{\lfloor D/3 \rfloor - 1}$ for $D < 3$ & more", bound_value=None,
                measured="counted = $q^L$", numbers={}, checks=checks, status=status,
                reason="" if status == "holds" else "FAILED check 0", figure=None,
                command=f"expressivity reproduce --size test --only {cid} --out report", size="test",
                seconds=1.5, code="expressivity/report/regions_claims.py:21")
    return Claim(**{**base, **kw})


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    out = tmp_path_factory.mktemp("page")
    claims = [_claim("a.few", tuple(_check(i) for i in range(3))),
              _claim("a.many", tuple(_check(i, ok=i != 4) for i in range(20)), status="violated"),
              _claim("a.none", (), status="not applicable", reason="ImportError: no such area")]
    index = page.write(out, claims, {}, "test", 12.5)
    return out, index.read_text(encoding="utf-8"), claims


def test_page_and_json_state_version_commit_code_version_budget_and_machine(written):
    out, html, _ = written
    build, machine = build_info(), machine_info()
    assert build["code_version"] == code_version() and build["version"] in build["code_version"]
    doc = json.loads((out / "claims.json").read_text())
    assert doc["build"] == build and doc["machine"] == machine and doc["budget"] == "test"
    about = html.split('<section id="about">', 1)[1].split("</section>", 1)[0]
    for text in (build["version"], build["code_version"], build["commit"] or "unknown", "--size test",
                 machine["host"], machine["python"], str(machine["cpus"])):
        assert text in about, text


def test_every_internal_link_resolves_and_every_claim_is_in_the_contents(written):
    _, html, claims = written
    ids = set(re.findall(r'\bid="([^"]+)"', html))
    targets = re.findall(r'href="#([^"]*)"', html)
    assert targets and set(targets) <= ids, set(targets) - ids
    contents = html.split('<nav id="contents"', 1)[1].split("</nav>", 1)[0]
    assert all(f'href="#{c.id}"' in contents for c in claims) and 'href="#about"' in contents
    for c in claims:  # each section links back to the contents and the table
        section = html.split(f'<section id="{c.id}" class="claim">', 1)[1].split("</section>", 1)[0]
        assert 'href="#contents"' in section and 'href="#claims"' in section


def test_many_checks_are_collapsed_and_failed_ones_stay_visible(written):
    _, html, _ = written
    few = html.split('<section id="a.few" class="claim">', 1)[1].split("</section>", 1)[0]
    many = html.split('<section id="a.many" class="claim">', 1)[1].split("</section>", 1)[0]
    assert "<details>" not in few and few.count("<li") == 3
    shown, hidden = many.split("<details>", 1)
    assert shown.count('<li class="failed">') == 1 and "✘ FAILED" in shown and "check 4" in shown
    assert hidden.count("<li") == 20 and "All 20 checks (1 failed, listed above)" in hidden


def test_formulas_become_tex_spans_citations_become_links_the_rest_is_escaped():
    out = str(page.rich(r"bound $a < b^{2}$ & Hahn 2020, Lemma 5; arXiv 2207.02098 <b>"))
    assert '<span class="tex">a &lt; b^{2}</span>' in out and "$" not in out
    assert '<a href="https://arxiv.org/abs/1906.06755">Hahn 2020</a>' in out
    assert '<a href="https://arxiv.org/abs/2207.02098">arXiv 2207.02098</a>' in out
    assert "&amp;" in out and "&lt;b&gt;" in out and "<b>" not in out
    assert "<a " not in str(page.rich("Hahn 2020 $x$", links=False))


def test_the_page_is_self_contained(written):
    _, html, _ = written
    assert "katex.render" in html and "url(fonts/" not in html and "data:font/woff2;base64," in html
    markup = re.sub(r"<(script|style)>.*?</\1>", "", html, flags=re.S)
    assert "<script src" not in markup and "<link" not in markup
    for tag, _attr, url in re.findall(r'<(\w+)[^>]*?\b(src|href)="([^"#][^"]*)"', markup):
        if tag == "img":
            assert url.startswith("data:image/png;base64,"), url
        else:  # the only URLs are links a reader may follow: the papers, the measuring code
            assert tag == "a" and url.startswith(("https://arxiv.org/abs/", "file://")), (tag, url)


def test_claim_texts_are_tex_that_renders_in_markdown_tables_too():
    for s in all_specs():
        for text in (s.title, s.bound, s.how_to_read):
            assert text.count("$") % 2 == 0, (s.id, text)
            for math in re.findall(r"\$([^$]+)\$", text):
                assert "|" not in math, (s.id, math)  # \lvert … \rvert: a | would split a table cell
                assert math.count("{") == math.count("}"), (s.id, math)
    bounds = " ".join(s.bound for s in all_specs())
    assert r"\lfloor" in bounds and r"\binom" in bounds and "^(" not in bounds  # no carets left


def test_templates_and_katex_are_package_data():
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"][
        "expressivity.report"]
    pkg = ROOT / "src" / "expressivity" / "report"
    shipped = {p for g in globs for p in pkg.glob(g) if p.is_file()}
    needed = {p for d in ("templates", "assets") for p in (pkg / d).rglob("*") if p.is_file()}
    assert needed and needed <= shipped, needed - shipped
    assert (pkg / "assets" / "katex" / "VERSION").read_text().startswith("0.19")
    assert len(list((pkg / "assets" / "katex" / "fonts").glob("*.woff2"))) >= 20


def test_version_option_prints_version_commit_and_code_version():
    r = CliRunner().invoke(app, ["--version"])
    b = build_info()
    assert r.exit_code == 0 and b["version"] in r.output and b["code_version"] in r.output
    assert (b["commit"] or "unknown") in r.output


def test_legends_are_moved_off_the_data():
    import numpy as np

    from expressivity.report import figures

    fig, (ax1, ax2) = figures.new(2)
    x = np.linspace(0, 1, 50)
    for ax in (ax1, ax2):
        ax.plot(x, x, label="a")
        ax.plot(x, 1 - x, label="b")
    ax1.legend(loc="center")  # on the data
    figures.legend(ax2)
    figures.legends_off_the_data(fig)
    assert not figures._overlaps(ax1) and not figures._overlaps(ax2)
    assert figures.png(fig)[:8] == b"\x89PNG\r\n\x1a\n"
