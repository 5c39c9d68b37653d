"""Claims tables in the README and docs, generated from a ``reproduce`` run's claims.json.

Numbers are never pasted by hand: a Markdown file holds a block

    <!-- claims-table:start STYLE -->
    ...generated...
    <!-- claims-table:end -->

and :func:`update_file` rewrites what lies between the markers from a claims.json document
(``docs/claims.json`` keeps the run the docs show; ``make tables`` refreshes it from
``report/claims.json``). A block may name its own run, ``<!-- claims-table:start detail
claims-standard.json -->`` (a path relative to the Markdown file): docs/report.md shows the
``--standard`` run beside the quick one that way. Styles: ``readme`` (claim, source, bound, measured, status) and
``detail`` (claim id, measured, status, budget, time). Both state the budget (``--quick``,
``--standard``, ``--full``) that produced the numbers. A test checks that every block equals what
the committed claims.json generates.
"""

from __future__ import annotations

import re
from pathlib import Path

START = "<!-- claims-table:start"
END = "<!-- claims-table:end -->"
STYLES = ("readme", "detail")
_BLOCK = re.compile(r"(<!-- claims-table:start (\w+)(?: (\S+))? -->\n)(.*?)(<!-- claims-table:end -->)", re.S)


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def load_doc(path) -> dict:
    """A claims.json document, checked for the fields the tables use."""
    from ..fileio import read_json

    doc = read_json(path, "claims.json")
    if not isinstance(doc, dict) or not isinstance(doc.get("claims"), list) or "size" not in doc:
        raise ValueError(f"claims.json {path}: not a reproduce report (needs 'size' and 'claims')")
    return doc


def summary_line(doc: dict) -> str:
    """"12 of 12 claims hold (budget `--quick`); the run took 122 s." (plus the other statuses)."""
    from .claims import FLAGS, STATUSES

    claims = doc["claims"]
    counts = {s: sum(c["status"] == s for c in claims) for s in STATUSES}
    rest = "".join(f", {n} {s}" for s, n in counts.items() if s != "holds" and n)
    flag = FLAGS.get(doc["size"], doc["size"])
    took = f"; the run took {doc['total_seconds']:.0f} s" if doc.get("total_seconds") else ""
    return f"{counts['holds']} of {len(claims)} claims hold (budget `{flag}`){rest}{took}."


def table(doc: dict, style: str = "readme") -> str:
    """The Markdown table plus the summary line, in ``style``."""
    if style not in STYLES:
        raise ValueError(f"unknown table style {style!r}; choose one of: {', '.join(STYLES)}")
    if style == "readme":
        lines = ["| claim | source | bound / prediction | measured | status |", "|---|---|---|---|---|"]
        for c in doc["claims"]:
            status = f"**{c['status']}**" + (f": {c['reason']}" if c["status"] != "holds" else "")
            lines.append(f"| {_cell(c['claim'])} (`{c['id']}`) | {_cell(c['source'])} | {_cell(c['bound'])} | "
                         f"{_cell(c['measured'])} | {_cell(status)} |")
    else:
        lines = ["| claim id | measured | status | budget | time |", "|---|---|---|---|---|"]
        for c in doc["claims"]:
            status = c["status"] + (f": {c['reason']}" if c["status"] != "holds" else "")
            budget = c.get("size", doc["size"])
            lines.append(f"| `{c['id']}` | {_cell(c['measured'])} | {_cell(status)} | {budget} | "
                         f"{c['seconds']:.1f} s |")
    return "\n".join(lines) + "\n\n" + summary_line(doc) + "\n"


def render(text: str, doc: dict, where: str = "text", base: str | Path | None = None) -> str:
    """``text`` with every claims-table block regenerated from ``doc`` (or from the
    claims.json a block names, relative to ``base``, the Markdown file's folder)."""
    if START not in text:
        raise ValueError(f"{where} has no '{START} STYLE -->' … '{END}' block")

    def block(m: re.Match) -> str:
        own = doc
        if m.group(3):
            if base is None:
                raise ValueError(f"{where}: a block names {m.group(3)!r}, which needs the file's folder")
            own = load_doc(Path(base) / m.group(3))
        return m.group(1) + table(own, m.group(2)) + m.group(5)

    return _BLOCK.sub(block, text)


def update_file(path, doc: dict, *, check: bool = False) -> bool:
    """Rewrite the blocks of ``path`` from ``doc``; returns True if the file changed (with
    ``check=True`` nothing is written: True means the file is stale)."""
    from ..fileio import read_text_file

    p = Path(path)
    old = read_text_file(p, "file")
    new = render(old, doc, str(p), base=p.parent)
    if new != old and not check:
        p.write_text(new, encoding="utf-8")
    return new != old
