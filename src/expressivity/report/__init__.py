"""The reproduction report: every claim of both papers, its bound, our measurement, a verdict.

``reproduce(out, size="quick", backend="local", db="runs/report.sqlite")`` measures each
claim (``registry``), judges it (``claims.status_of``: holds / violated / not applicable with
the reason), stores finished results in SQLite (``store``) so an interrupted run resumes, and
writes ``out/index.html`` (self-contained, figures embedded) and ``out/claims.json`` (``html``).
"""

from .claims import Check, Claim, ClaimSpec, Context, Measurement, evaluate, status_of
from .html import markdown_table
from .registry import all_specs, select
from .reproduce import DEFAULT_DB, Event, ReproduceResult, reproduce
from .store import Store

__all__ = [
    "DEFAULT_DB",
    "Check",
    "Claim",
    "ClaimSpec",
    "Context",
    "Event",
    "Measurement",
    "ReproduceResult",
    "Store",
    "all_specs",
    "evaluate",
    "markdown_table",
    "reproduce",
    "select",
    "status_of",
]
