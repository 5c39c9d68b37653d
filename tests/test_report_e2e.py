"""Every registered claim at size "test": a valid page, claims.json, and a real-browser check.

The browser test renders index.html in headless Chromium (Debian's ``chromium``) at 1280 px
with a small script appended that records each image's naturalWidth, the claims table's
visibility, the page's scroll width (no horizontal scroll), every ``href="#x"`` without an
``id="x"`` (none), and the formulas KaTeX typeset (all, no errors) in a ``<pre id="check">``,
read back with ``--dump-dom``; then it takes a screenshot. In CI (CI=true) a missing Chromium is
a failure; locally it is a skip.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from html import unescape

import pytest
from report_html_check import parse_report

from expressivity.report import reproduce


@pytest.fixture(scope="module")
def report(tmp_path_factory, fork_server):
    """The whole registry at size "test", its units forked from the session's warm fork server
    (conftest.py) rather than each started fresh; the CLI and test_chomsky_claims.py run real
    claims through spawn."""
    out = tmp_path_factory.mktemp("report")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EXPRESSIVITY_MP_START", fork_server)
        res = reproduce(out, size="test", db=out / "report.sqlite")
    return out, res


def test_page_is_valid_and_complete(report):
    out, res = report
    page = parse_report(out / "index.html")
    assert len(page.rows) == len(res.claims) >= 3
    assert [r["id"] for r in page.rows] == [c.id for c in res.claims]
    assert page.sections == {c.id for c in res.claims}
    with_fig = [c for c in res.claims if c.figure]
    assert len(page.images) == len(with_fig)
    for img in page.images:
        assert img["width"] > 0 and img["height"] > 0
    for c in with_fig:  # the same PNG also sits beside the page
        assert (out / c.figure).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_claims_json_every_claim_holds_or_has_a_reason(report):
    out, res = report
    doc = json.loads((out / "claims.json").read_text())
    assert [c["id"] for c in doc["claims"]] == [c.id for c in res.claims]
    for c in doc["claims"]:
        assert c["status"] in ("holds", "violated", "not applicable")
        assert c["status"] == "holds" or len(c["reason"]) > 10, c
        if c["status"] != "not applicable":
            assert c["checks"] and c["figure"], c["id"]
    # the claims whose code is in the tree must hold at the test size
    by_id = {c["id"]: c for c in doc["claims"]}
    for cid in ("compile.hardmax-exact", "compile.softmax-rate", "compile.complexity"):
        assert by_id[cid]["status"] == "holds", by_id[cid]["reason"]
    assert sum(doc["counts"].values()) == len(doc["claims"])


def test_second_run_reuses_everything_judged(report):
    out, res = report
    judged = {c.id for c in res.claims if c.status != "not applicable"}
    again = reproduce(out, size="test", db=out / "report.sqlite")
    assert set(again.reused) == judged
    assert set(again.computed) == {c.id for c in res.claims} - judged


_CHECK_JS = """<script>
window.addEventListener('load', () => {
  const imgs = Array.from(document.images).map(i => [i.complete, i.naturalWidth, i.naturalHeight]);
  const t = document.getElementById('claims');
  const r = t.getBoundingClientRect();
  const style = getComputedStyle(t);
  const pre = document.createElement('pre');
  pre.id = 'check';
  const de = document.documentElement;
  const hrefs = Array.from(document.querySelectorAll('a[href^="#"]')).map(a => a.getAttribute('href').slice(1));
  const tex = document.querySelectorAll('span.tex');
  pre.textContent = JSON.stringify({imgs, table: [r.width, r.height, style.display, style.visibility],
                                    rows: t.tBodies[0].rows.length,
                                    scroll: [de.scrollWidth, de.clientWidth, window.innerWidth],
                                    hrefs: hrefs.length, unresolved: hrefs.filter(h => !document.getElementById(h)),
                                    tex: tex.length, katex: document.querySelectorAll('span.tex > .katex').length,
                                    katex_errors: document.querySelectorAll('.katex-error').length,
                                    details: document.querySelectorAll('details').length});
  document.body.appendChild(pre);
});
</script>"""


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name) or (f"/usr/bin/{name}" if os.path.exists(f"/usr/bin/{name}") else None)
        if path:
            return path
    return None


@pytest.mark.browser
def test_report_renders_in_headless_chromium(report, tmp_path):
    exe = _chromium()
    if exe is None:
        msg = "chromium not found (/usr/bin/chromium): install Debian's 'chromium' package (.ci/run does)"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(msg)
        pytest.skip(msg)
    out, res = report
    html = (out / "index.html").read_text(encoding="utf-8")
    probe = tmp_path / "probe.html"
    probe.write_text(html.replace("</body>", _CHECK_JS + "</body>"), encoding="utf-8")
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=5000",
           "--window-size=1280,900"]
    proc = subprocess.run([*cmd, "--dump-dom", probe.as_uri()], capture_output=True, text=True, timeout=120,
                          check=False)
    m = re.search(r'<pre id="check">(.*?)</pre>', proc.stdout, re.DOTALL)
    assert m, f"no check output from chromium (rc {proc.returncode}): {proc.stderr[-2000:]}"
    check = json.loads(unescape(m.group(1)))
    n_fig = sum(1 for c in res.claims if c.figure)
    assert len(check["imgs"]) == n_fig > 0
    for complete, w, h in check["imgs"]:
        assert complete and w > 0 and h > 0, check["imgs"]
    width, height, display, visibility = check["table"]
    assert width > 0 and height > 0 and display != "none" and visibility == "visible"
    assert check["rows"] == len(res.claims)
    scroll_width, client_width, inner = check["scroll"]
    assert inner == 1280 and scroll_width <= client_width, check["scroll"]  # no horizontal scroll
    assert check["hrefs"] > 3 * len(res.claims) and not check["unresolved"], check["unresolved"]
    assert check["tex"] >= 2 * len(res.claims) and check["katex"] == check["tex"], check  # every formula typeset
    assert check["katex_errors"] == 0
    assert check["details"] >= 1  # regions.depth's many checks are collapsed
    shot = tmp_path / "report.png"  # a screenshot, as a reader sees the top of the page
    subprocess.run([*cmd, f"--screenshot={shot}", (out / "index.html").as_uri()], capture_output=True,
                   timeout=120, check=False)
    from PIL import Image

    img = Image.open(shot).convert("L")
    assert img.size == (1280, 900) and img.getextrema()[0] < 100  # drawn, not a blank page
