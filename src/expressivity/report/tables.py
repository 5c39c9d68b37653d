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

The "How to read each claim" prose is generated the same way, from the claims themselves
(``ClaimSpec.how_to_read``, the text the HTML report shows under each figure), in a block

    <!-- how-to-read:start -->
    ...generated...
    <!-- how-to-read:end -->

one bullet per claim (claims with the same prose share a bullet); :func:`update_file` rewrites
these blocks too, so ``claims-table --check`` fails when the prose of a claim changed.
"""

from __future__ import annotations

import re
from pathlib import Path

START = "<!-- claims-table:start"
END = "<!-- claims-table:end -->"
STYLES = ("readme", "detail")
HOW_START = "<!-- how-to-read:start -->"
HOW_END = "<!-- how-to-read:end -->"
_HOW = re.compile(r"(<!-- how-to-read:start -->\n)(.*?)(<!-- how-to-read:end -->)", re.S)
WIDTH = 95  # the width the generated prose is wrapped to
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


def _words(text: str) -> list[str]:
    """``text`` split at spaces, never inside ``$…$`` (TeX stays on one line), and never so
    that a line would start like a Markdown list item, heading or quote."""
    words: list[str] = []
    for w in text.split():
        inside_math = bool(words) and words[-1].count("$") % 2 == 1
        looks_like_markup = w in ("-", "+", "*", ">") or w.startswith("#") or re.fullmatch(r"\d+[.)]", w)
        if words and (inside_math or looks_like_markup):
            words[-1] += " " + w
        else:
            words.append(w)
    return words


def _bullet(head: str, text: str, width: int = WIDTH) -> str:
    """One bullet wrapped at ``width``; the first piece always follows the head on its line (a
    piece too long for any line, e.g. TeX left open, overflows rather than leave the head alone)."""
    lines, line = [], f"- {head} —"
    first = True
    for w in _words(text):
        if len(line) + 1 + len(w) > width and not first:
            lines.append(line)
            line = "  " + w
        else:
            line += " " + w
        first = False
    return "\n".join([*lines, line])


def how_to_read(specs=None) -> str:
    """The "How to read each claim" list: one Markdown bullet per claim (``**id** — prose``,
    from ``ClaimSpec.how_to_read``; consecutive claims with the same prose share one bullet),
    wrapped at :data:`WIDTH` columns. ``specs`` defaults to every registered claim."""
    if specs is None:
        from .registry import all_specs

        specs = all_specs()
    groups: list[tuple[list[str], str]] = []
    for s in specs:
        prose = " ".join(s.how_to_read.split())
        if not prose:
            raise ValueError(f"claim {s.id!r} has no how_to_read: give its ClaimSpec the prose on how to read its figure")
        if groups and groups[-1][1] == prose:
            groups[-1][0].append(s.id)
        else:
            groups.append(([s.id], prose))
    return "\n".join(_bullet(f"**{' / '.join(ids)}**", prose) for ids, prose in groups) + "\n"


def render(text: str, doc: dict, where: str = "text", base: str | Path | None = None) -> str:
    """``text`` with every claims-table block regenerated from ``doc`` (or from the
    claims.json a block names, relative to ``base``, the Markdown file's folder), and every
    how-to-read block from the registered claims (:func:`how_to_read`)."""
    if START not in text and HOW_START not in text:
        raise ValueError(f"{where} has no '{START} STYLE -->' … '{END}' block "
                         f"(nor a '{HOW_START}' … '{HOW_END}' block)")

    def block(m: re.Match) -> str:
        own = doc
        if m.group(3):
            if base is None:
                raise ValueError(f"{where}: a block names {m.group(3)!r}, which needs the file's folder")
            own = load_doc(Path(base) / m.group(3))
        return m.group(1) + table(own, m.group(2)) + m.group(5)

    text = _BLOCK.sub(block, text)
    if HOW_START in text:
        prose = how_to_read()
        text = _HOW.sub(lambda m: m.group(1) + prose + m.group(3), text)
    return text


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
