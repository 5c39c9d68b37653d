"""`expressivity claims-table`: regenerate the claims tables of Markdown files from claims.json."""

from __future__ import annotations

from ..report.options import CLAIMS_TABLE
from . import app
from ._common import console, fail
from .options import with_options


@app.command("claims-table")
@with_options(CLAIMS_TABLE)
def claims_table_cmd(claims_json, files, check) -> None:
    """Rewrite every ``<!-- claims-table:start STYLE -->`` block from the run's claims.json,
    and every ``<!-- how-to-read:start -->`` block from the claims' how_to_read."""
    from ..report.tables import load_doc, update_file

    doc = load_doc(claims_json)
    stale = [f for f in files if update_file(f, doc, check=check)]
    for f in stale:
        console.print(f"{'stale' if check else 'updated'}: {f}", highlight=False)
    if check and stale:
        fail(f"{len(stale)} file(s) do not match {claims_json} and the claims' how_to_read: "
             "run 'make tables' (or without --check)")
