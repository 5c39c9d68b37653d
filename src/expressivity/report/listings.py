"""The report's text on the command line (``expressivity reproduce``): the claims it can
measure, the verdict per claim, and the time left as ``ETA m:ss``."""

from __future__ import annotations

from ..listing import Listing

STATUS_STYLE = {"holds": "green", "violated": "bold red", "not applicable": "yellow", "incomplete": "bold yellow"}


def eta_text(seconds: float | None) -> str:
    """``ETA h:mm:ss`` (``ETA m:ss`` under an hour); ``ETA —`` when unknown."""
    if seconds is None:
        return "ETA —"
    m, s = divmod(int(round(seconds)), 60)
    h, m = divmod(m, 60)
    return f"ETA {h}:{m:02d}:{s:02d}" if h else f"ETA {m}:{s:02d}"


def claims_listing(specs) -> Listing:
    """``--list``: id, source and title of each claim."""
    return Listing(("claim", "source", "title"), tuple((s.id, s.source, s.title) for s in specs),
                   text=("claim", "source", "title"), no_wrap=(0,), show_lines=True)


def verdicts_listing(result, size: str, db) -> Listing:
    """Each judged claim: what was measured, its status (with the reason unless it holds) and
    its seconds (or ``reused``); below, the counts and where the report is."""
    rows = tuple((c.id, c.measured, c.status if c.status == "holds" else f"{c.status}: {c.reason}",
                  "reused" if c.reused else f"{c.seconds:.1f}") for c in result.claims)
    note = (f"{len(result.computed)} measured, {len(result.reused)} reused from {db}; "
            f"total {result.seconds:.1f} s → {result.index}")
    return Listing(("claim", "measured", "status", "s"), rows, title=f"claims (budget: {size})",
                   text=("claim", "measured", "status"), no_wrap=(0,), show_lines=True, notes=(note,),
                   styles=tuple((i, 2, STATUS_STYLE[c.status]) for i, c in enumerate(result.claims)))
