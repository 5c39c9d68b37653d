"""The reproduction report: every claim of both papers, its bound, our measurement, a verdict.

``reproduce(out, size="quick", backend="local", db="runs/results.sqlite")`` measures each
claim (``registry``) as work units on the shared driver (local processes or Ray), judges it
(``claims.status_of``: holds / violated / not applicable / incomplete, with the reason),
stores units and judged claims in the one results store (:class:`expressivity.runs.Store`) so an interrupted run
resumes, and writes ``out/index.html`` (self-contained, figures embedded) and ``out/claims.json`` (``html``).
"""

from ..runs.store import DEFAULT_DB, Store
from .claims import Check, Claim, ClaimSpec, Context, Measurement, measure_and_judge, status_of
from .html import markdown_table
from .registry import all_specs, select
from .reproduce import Event, ReproduceResult, reproduce

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
    "markdown_table",
    "measure_and_judge",
    "reproduce",
    "select",
    "status_of",
]
