"""The report page: one self-contained, offline HTML file plus claims.json.

The page is a Jinja2 template (``templates/index.html.j2``, with ``report.css`` and
``render-math.js``, shipped as package data): a header (budget, date, totals, version), a table
of contents, the claims table (claim, source, bound/prediction, measured, status with reason),
"About this run" (package version, git commit, code version, budget, machine), then one
section per claim — its figure (PNG embedded as base64; the same PNG is also written to
``figures/``), the checks made (collapsed in a ``<details>`` when there are many; failed ones
always shown), how to read it, the code that measures it and the command that regenerates it —
each with back-links to the contents and the table.

Formulas in a claim's text are TeX between ``$…$``; KaTeX 0.19 (``assets/katex/``, vendored
from the npm registry by ``make katex``: JS, CSS and woff2 fonts, inlined into the page as data
URIs) typesets them in the browser, with no network. arXiv ids and the papers' short
citations become links.
"""

from __future__ import annotations

import base64
import json
import re
import time
from functools import cache
from html import escape
from importlib import resources
from pathlib import Path

from markupsafe import Markup

from ..fileio import make_dir, write_bytes_atomic
from ..runs.version import build_info, machine_info
from .claims import FLAGS, STATUSES, Claim, fmt

_CLASS = {"holds": "holds", "violated": "violated", "not applicable": "na", "incomplete": "incomplete"}
COLLAPSE_AFTER = 6  # a claim with more checks shows them in a <details> (failed ones stay visible)
# the papers' short citations as the claims give them → arXiv id
PAPERS = {
    "Gu et al. 2026": "2603.03084",
    "Hahn 2020": "1906.06755",
    "Chiang & Cholak 2022": "2202.12172",
    "Serra, Tjandraatmadja, Ramalingam 2018": "1711.02114",
    "Delétang et al. 2023": "2207.02098",
}
_LINKS = re.compile("(arXiv[ :]?\\d{4}\\.\\d{4,5}|" + "|".join(re.escape(k) for k in PAPERS) + ")")
_MATH = re.compile(r"\$([^$]+)\$")
_PKG = Path(__file__).resolve().parents[1]  # …/expressivity


def arxiv(aid: str, text: str | None = None) -> Markup:
    return Markup(f'<a href="https://arxiv.org/abs/{escape(aid)}">{escape(text or "arXiv " + aid)}</a>')


def _linked(text: str, links: bool = True) -> str:
    if not links:
        return escape(text)
    out = []
    for i, piece in enumerate(_LINKS.split(text)):
        if i % 2 == 0:
            out.append(escape(piece))
        elif piece in PAPERS:
            out.append(arxiv(PAPERS[piece], piece))
        else:
            out.append(arxiv(re.sub(r"^arXiv[ :]?", "", piece), piece))
    return "".join(out)


def rich(text, links: bool = True) -> Markup:
    """Text → HTML: ``$…$`` becomes a ``<span class="tex">`` that KaTeX typesets (its TeX
    source stays visible without JavaScript), citations and arXiv ids become links (unless
    ``links`` is false: text that is itself a link), the rest is escaped."""
    text = str(text)
    out, at = [], 0
    for m in _MATH.finditer(text):
        out += [_linked(text[at:m.start()], links), f'<span class="tex">{escape(m.group(1))}</span>']
        at = m.end()
    out.append(_linked(text[at:], links))
    return Markup("".join(out))


def number(x) -> str:
    """A check's number as the tables show it (4 significant digits)."""
    return fmt(_num(x))


def source_href(code: str) -> str:
    """``expressivity/report/x.py:123`` → a file: URI of that line's file, where it is."""
    path = _PKG.parent / code.rsplit(":", 1)[0]
    return path.as_uri() if path.is_absolute() else code


@cache
def _environment():
    from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

    env = Environment(loader=PackageLoader("expressivity.report", "templates"),
                      autoescape=select_autoescape(["html", "j2"]), undefined=StrictUndefined,
                      keep_trailing_newline=True)
    env.filters.update(rich=rich, number=number, sym=_sym)
    env.globals.update(arxiv=arxiv, source_href=source_href)
    return env


@cache
def katex_assets() -> tuple[str, str]:
    """(CSS with the woff2 fonts inlined as data URIs, JS) of the vendored KaTeX."""
    root = resources.files("expressivity.report") / "assets" / "katex"
    css = (root / "katex.min.css").read_text(encoding="utf-8")

    def font(m: re.Match) -> str:
        data = (root / "fonts" / m.group(1)).read_bytes()
        return f"url(data:font/woff2;base64,{base64.b64encode(data).decode()}) format(\"woff2\")"

    css = re.sub(r',url\(fonts/[^)]+\.(?:woff|ttf)\) format\("(?:woff|truetype)"\)', "", css)
    css = re.sub(r'url\(fonts/([^)]+\.woff2)\) format\("woff2"\)', font, css)
    return css, (root / "katex.min.js").read_text(encoding="utf-8")


def render(claims: list[Claim], figures: dict[str, bytes], size: str, total_s: float,
           build: dict | None = None, machine: dict | None = None, generated: str | None = None) -> str:
    """The whole page as a string. ``figures`` maps claim id → PNG bytes."""
    css, js = katex_assets()
    return _environment().get_template("index.html.j2").render(
        claims=claims, size=size, flag=FLAGS.get(size, size), total_s=total_s, counts=_counts(claims),
        figures={cid: base64.b64encode(f).decode() for cid, f in figures.items() if f},
        build=build or build_info(), machine=machine or machine_info(),
        generated=generated or time.strftime("%Y-%m-%d %H:%M:%S %Z"), css=_CLASS,
        collapse_after=COLLAPSE_AFTER, katex_css=css, katex_js=js)


def _counts(claims: list[Claim]) -> dict[str, int]:
    return {s: sum(c.status == s for c in claims) for s in STATUSES}


def _num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return x


def _sym(rel: str) -> str:
    return {"<=": "≤", ">=": "≥", "==": "=", "~": "≈"}.get(rel, rel)


def write(out: str | Path, claims: list[Claim], figures: dict[str, bytes], size: str,
          total_s: float) -> Path:
    """Write index.html, claims.json and figures/<id>.png under ``out``; returns index path.
    Each file is written atomically (a full disk leaves the old file, or none, and one
    ``WriteError`` naming the path); index.html goes last. Both files state the package
    version, git commit, code version, budget and machine."""
    out = Path(out)
    make_dir(out / "figures", "--out")
    for cid, data in figures.items():
        if data:
            write_bytes_atomic(out / "figures" / f"{cid}.png", data)
    build, machine = build_info(), machine_info()
    generated = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    doc = {
        "size": size,
        "budget": size,
        "total_seconds": round(total_s, 3),
        "counts": _counts(claims),
        "build": build,
        "machine": machine,
        "generated": generated,
        "claims": [c.to_json() for c in claims],
    }
    write_bytes_atomic(out / "claims.json", (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    index = out / "index.html"
    write_bytes_atomic(index, render(claims, figures, size, total_s, build, machine, generated).encode("utf-8"))
    return index


def markdown_table(claims: list[Claim], timings: bool = True) -> str:
    """The claims table as Markdown (for the README)."""
    head = "| Claim | Source | Bound / prediction | Measured | Status |" + (" Time |" if timings else "")
    sep = "|---|---|---|---|---|" + ("---|" if timings else "")
    lines = [head, sep]
    for c in claims:
        status = c.status if c.status == "holds" else f"{c.status}: {c.reason}"
        cells = [c.claim, c.source, c.bound, c.measured, status]
        cells = [s.replace("|", "\\|").replace("\n", " ") for s in cells]
        lines.append("| " + " | ".join(cells) + " |" + (f" {c.seconds:.1f} s |" if timings else ""))
    return "\n".join(lines) + "\n"
