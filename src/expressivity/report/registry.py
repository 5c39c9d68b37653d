"""All claims of the report, in the order the page shows them.

Each claim group lives in its own module (``compile_claims``, ``regions_claims``,
``limits_claims``, ``training_claims``, ``chomsky_claims``, ``flare_claims``) exposing ``SPECS: list[ClaimSpec]``. Group modules
import their area lazily inside the measurement, so a missing area turns into a
"not applicable" row rather than an import error here.
"""

from __future__ import annotations

import importlib

from .claims import ClaimSpec

GROUPS: tuple[str, ...] = ("compile_claims", "regions_claims", "limits_claims", "training_claims", "chomsky_claims",
                          "flare_claims")


def all_specs() -> list[ClaimSpec]:
    specs: list[ClaimSpec] = []
    for g in GROUPS:
        mod = importlib.import_module(f"{__package__}.{g}")
        specs.extend(mod.SPECS)
    ids = [s.id for s in specs]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise ValueError(f"duplicate claim ids: {sorted(dup)}")
    return specs


def select(only: list[str] | tuple[str, ...] | None = None) -> list[ClaimSpec]:
    """The specs whose id equals, or starts with ``<prefix>.``, one of ``only`` (all if None)."""
    specs = all_specs()
    if not only:
        return specs
    known = [s.id for s in specs]
    chosen = []
    for s in specs:
        if any(s.id == o or s.id.startswith(o.rstrip(".") + ".") for o in only):
            chosen.append(s)
    unknown = [o for o in only if not any(i == o or i.startswith(o.rstrip(".") + ".") for i in known)]
    if unknown:
        raise ValueError(f"only (--only): unknown claim id(s) {unknown}; known: {', '.join(known)}")
    return chosen


def by_id(claim_id: str) -> ClaimSpec:
    for s in all_specs():
        if s.id == claim_id:
            return s
    raise KeyError(f"unknown claim id {claim_id!r}")
