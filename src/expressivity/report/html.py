"""The report page: one self-contained, offline HTML file plus claims.json.

Layout: a header (size, date, totals), the claims table (claim, source, bound/prediction,
measured, status with reason), then one section per claim with its figure (PNG embedded as
base64 — the page needs nothing else; the same PNG is also written to ``figures/``), the
checks made, how to read it, and the exact command that regenerates it.
"""

from __future__ import annotations

import base64
import json
import platform
import time
from html import escape
from pathlib import Path

from ..checks import make_dir, write_bytes_atomic
from .claims import FLAGS, STATUSES, Claim, fmt

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1100px;margin:2em auto;
padding:0 1em;color:#222;line-height:1.45}
h1{font-size:1.6em;margin-bottom:.2em} h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;width:100%;font-size:.9em} th,td{border:1px solid #ccc;padding:.35em .5em;
vertical-align:top;text-align:left} th{background:#f3f3f3}
.holds{background:#e3f6e3;color:#135e13;font-weight:600}
.violated{background:#fde2e2;color:#a00;font-weight:700}
.na{background:#f4f0dc;color:#6b5a00;font-weight:600}
.incomplete{background:#fff0d0;color:#8a4b00;font-weight:700}
.reason{font-weight:normal;font-size:.85em;display:block;color:#444}
code,pre{background:#f6f6f6;padding:.15em .35em;border-radius:3px;font-size:.9em}
pre{padding:.6em;overflow-x:auto} img{max-width:100%;border:1px solid #eee}
.meta{color:#666;font-size:.9em}
"""
_CLASS = {"holds": "holds", "violated": "violated", "not applicable": "na", "incomplete": "incomplete"}


def _status_cell(c: Claim) -> str:
    reason = f'<span class="reason">{escape(c.reason)}</span>' if c.status != "holds" else ""
    return f'<td class="status {_CLASS[c.status]}">{escape(c.status)}{reason}</td>'


def render(claims: list[Claim], figures: dict[str, bytes], size: str, total_s: float) -> str:
    """The whole page as a string. ``figures`` maps claim id → PNG bytes."""
    counts = _counts(claims)
    rows = []
    for c in claims:
        rows.append(
            f'<tr data-claim="{escape(c.id)}" data-status="{escape(c.status)}">'
            f'<td><a href="#{escape(c.id)}">{escape(c.claim)}</a><br><code>{escape(c.id)}</code></td>'
            f"<td>{escape(c.source)}</td><td>{escape(c.bound)}</td><td>{escape(c.measured)}</td>"
            f"{_status_cell(c)}</tr>"
        )
    sections = []
    for c in claims:
        fig = figures.get(c.id)
        img = (
            f'<img alt="figure for {escape(c.id)}" src="data:image/png;base64,'
            f'{base64.b64encode(fig).decode()}">'
            if fig
            else "<p><em>No figure: the measurement did not run.</em></p>"
        )
        checks = "".join(
            f"<li>{'✔' if k['ok'] else '✘ FAILED'} {'requirement: ' if k.get('requires') else ''}"
            f"{escape(str(k['what']))}: "
            f"{escape(fmt(_num(k['measured'])))} {escape(_sym(k['relation']))} "
            f"{escape(fmt(_num(k['bound'])))}"
            f"{' (tol ' + escape(fmt(k['tol'])) + ')' if k['tol'] else ''}</li>"
            for k in c.checks
        )
        sections.append(
            f'<section id="{escape(c.id)}"><h2>{escape(c.claim)}</h2>'
            f'<p class="meta">{escape(c.source)} · <code>{escape(c.id)}</code> · '
            f"budget <code>{escape(c.size)}</code> · "
            + (f"{c.units['done']}/{c.units['total']} units · " if c.units else "")
            + f"{c.seconds:.1f} s{' (reused from the database)' if c.reused else ''}</p>"
            f"<table><tr><th>Bound / prediction</th><td>{escape(c.bound)}</td></tr>"
            f"<tr><th>Measured</th><td>{escape(c.measured)}</td></tr>"
            f"<tr><th>Status</th>{_status_cell(c)}</tr></table>"
            f"{img}"
            + (f"<ul>{checks}</ul>" if checks else "")
            + (f"<p><strong>How to read it.</strong> {escape(c.how_to_read)}</p>" if c.how_to_read else "")
            + (f"<p><strong>Notes.</strong> {escape(c.notes)}</p>" if c.notes else "")
            + f"<p>Regenerate: <code>{escape(c.command)}</code></p></section>"
        )
    when = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<title>expressivity — reproduction report</title>"
        f"<style>{_CSS}</style></head><body>"
        "<h1>Reproduction report</h1>"
        f'<p class="meta">budget <code>{escape(size)}</code> (<code>{escape(FLAGS.get(size, size))}</code>; '
        "every number below comes from it) · "
        f"{escape(when)} · "
        f"{escape(platform.node())} ({escape(platform.machine())}, Python "
        f"{escape(platform.python_version())}) · total {total_s:.1f} s · "
        f"{counts['holds']} hold, {counts['violated']} violated, "
        f"{counts['not applicable']} not applicable"
        + (f", {counts['incomplete']} incomplete" if counts["incomplete"] else "") + "</p>"
        "<p>Each row sets a claim of Gu et al. (2026, Transformers express Maxout networks) or "
        "Hahn (2020, Theoretical limitations of self-attention) next to the bound the theory "
        "gives and what was measured on this machine. A measurement that breaks its bound is "
        "shown as <em>violated</em>; one that could not be made says why; one whose work units "
        "did not all finish (a timeout) is <em>incomplete</em>, never counted as holding.</p>"
        '<table id="claims"><thead><tr><th>Claim</th><th>Source</th><th>Bound / prediction</th>'
        "<th>Measured</th><th>Status</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
        + "".join(sections)
        + "</body></html>\n"
    )


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
    ``WriteError`` naming the path); index.html goes last."""
    out = Path(out)
    make_dir(out / "figures", "--out")
    for cid, data in figures.items():
        if data:
            write_bytes_atomic(out / "figures" / f"{cid}.png", data)
    doc = {
        "size": size,
        "budget": size,
        "total_seconds": round(total_s, 3),
        "counts": _counts(claims),
        "claims": [c.to_json() for c in claims],
    }
    write_bytes_atomic(out / "claims.json", (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    index = out / "index.html"
    write_bytes_atomic(index, render(claims, figures, size, total_s).encode("utf-8"))
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
