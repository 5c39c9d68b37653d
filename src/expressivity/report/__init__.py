"""The reproduction report: every claim of both papers, its bound, our measurement, a verdict.

``reproduce(out, size="quick", backend="local", db="runs/results.sqlite")`` measures each
claim (``registry``) as work units on the shared driver (local processes or Ray), judges it
(``claims.status_of``: holds / violated / not applicable / incomplete, with the reason),
stores units and judged claims in the one results store (:class:`expressivity.runs.Store`) so an interrupted run
resumes, and writes ``out/index.html`` (self-contained, figures embedded) and ``out/claims.json`` (``html``).
"""

from ..lazy import lazy_names
from ..runs.store import DEFAULT_DB, Store  # the one results store (no torch): eager

_WHERE = {  # each public name -> its submodule, imported on first use (lazy_names): reading .options
    # (the command line's option specs, at its start-up) imports no torch
    **dict.fromkeys(("Check", "Claim", "ClaimSpec", "Context", "Measurement", "measure_and_judge", "status_of"),
                    "claims"),
    "markdown_table": "html", "all_specs": "registry", "select": "registry",
    **dict.fromkeys(("Event", "ReproduceResult", "reproduce"), "reproduce"),
}

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

__getattr__, __dir__ = lazy_names(__name__, _WHERE)
