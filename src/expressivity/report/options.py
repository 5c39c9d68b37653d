"""The options of ``expressivity reproduce`` and ``claims-table`` as data (an
:class:`~expressivity.train.options.Opt` each: name, type, default, help), declared once beside
:func:`.reproduce.reproduce` and :mod:`.tables`, which they configure; the command line builds its
parameters from them. Imports nothing that imports torch."""

from __future__ import annotations

from pathlib import Path

from ..runs.store import DEFAULT_DB
from ..train.options import Opt

REPRODUCE: tuple[Opt, ...] = (
    Opt("quick", bool, "Budget: minutes on 2 cores (the default; `make demo`).", default=False),
    Opt("standard", bool, "Budget: about half an hour on 2 cores.", default=False),
    Opt("full", bool, "Budget: the papers' scale (use --backend ray on a cluster).", default=False),
    Opt("size", "SizeName", "The budget by name (overrides the flags)."),
    Opt("out", Path, "Directory for index.html, claims.json, figures/.", default="report"),
    Opt("backend", default="local", shared=True),
    Opt("address", shared=True),
    Opt("ray_address", str, hidden=True),
    Opt("workers", shared=True),
    Opt("db", default=DEFAULT_DB, shared=True),
    Opt("reset_db", default=False, shared=True),
    Opt("only", str, "Comma-separated claim ids or groups (e.g. compile)."),
    Opt("no_reuse", bool, "Re-judge claims even if the store has a result.", default=False),
    Opt("strict", bool, "Exit with code 1 if any claim is violated or incomplete.", default=False),
    Opt("timeout", shared=True),
    Opt("list_claims", bool, "List the claim ids and exit.", default=False, flag="--list"),
    Opt("device", shared=True),
    Opt("no_group", default=False, shared=True),
)

CLAIMS_TABLE: tuple[Opt, ...] = (
    Opt("claims_json", Path, "claims.json of a reproduce run (e.g. docs/claims.json).", default=..., argument=True),
    Opt("files", list[Path], "Markdown files with claims-table or how-to-read blocks (README.md, docs/report.md).",
        default=..., argument=True),
    Opt("check", bool, "Write nothing; exit 2 if a file is stale.", default=False),
)
