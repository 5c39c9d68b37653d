"""All claims of the report, in the order the page shows them.

Each claim group lives in its own module (``compile_claims``, ``regions_claims``,
``limits_claims``, ``training_claims``, ``chomsky_claims``, ``flare_claims``) exposing
``SPECS: list[ClaimSpec]``; :data:`GROUPS` names them, and one entry there is a group's one
registration line. An entry without a dot is a module of this package; a dotted one
(``"mypkg.my_claims"``) is an importable module anywhere, so a group can live outside the
tree. Group modules import their area lazily inside the measurement, so a missing area turns
into a "not applicable" row rather than an import error here.
"""

from __future__ import annotations

import importlib

from .claims import ClaimSpec

GROUPS: tuple[str, ...] = ("compile_claims", "regions_claims", "limits_claims", "training_claims", "chomsky_claims",
                          "flare_claims")


def module_of(group: str) -> str:
    """The module a :data:`GROUPS` entry names: ``expressivity.report.<group>`` for a plain
    name, the dotted name itself otherwise."""
    if not isinstance(group, str) or not group or any(not part.isidentifier() for part in group.split(".")):
        raise ValueError(f"claim group {group!r} is not a module name (e.g. 'toy_claims' or 'mypkg.my_claims')")
    return group if "." in group else f"{__package__}.{group}"


def specs_of(group: str) -> list[ClaimSpec]:
    """The ``SPECS`` of one group's module (a one-line ValueError if it has none)."""
    name = module_of(group)
    specs = getattr(importlib.import_module(name), "SPECS", None)
    if not isinstance(specs, (list, tuple)) or not all(isinstance(s, ClaimSpec) for s in specs):
        raise ValueError(f"claim group {group!r}: module {name} has no SPECS list of ClaimSpec")
    return list(specs)


def all_specs() -> list[ClaimSpec]:
    """Every registered claim, group by group in :data:`GROUPS` order (ids unique)."""
    specs = [s for g in GROUPS for s in specs_of(g)]
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


def group_of(claim_id: str) -> str:
    """The :data:`GROUPS` entry whose module holds the claim ``claim_id``."""
    for g in GROUPS:
        if any(s.id == claim_id for s in specs_of(g)):
            return g
    raise KeyError(f"unknown claim id {claim_id!r}")


def ref(claim_id: str) -> str:
    """``"<group>:<claim id>"``: what :func:`by_id` finds in a process that does not share
    this one's :data:`GROUPS` (a unit's child process, a group registered at run time)."""
    return f"{group_of(claim_id)}:{claim_id}"


def by_id(claim_id: str) -> ClaimSpec:
    """The registered claim ``claim_id``, or of a :func:`ref` ``"<group>:<claim id>"`` (looked
    up in that group's module alone)."""
    group, sep, cid = claim_id.rpartition(":")
    for s in specs_of(group) if sep else all_specs():
        if s.id == cid:
            return s
    raise KeyError(f"unknown claim id {cid!r}" + (f" in claim group {group!r}" if sep else ""))
