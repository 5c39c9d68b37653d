"""A table as text, built by the library and printed by the command line.

A :class:`Listing` is what a command shows: an optional line above the table (``heading``),
the table itself (``columns``, ``rows`` of strings; ``None`` is a section break), and lines
below it (``notes``). The library decides every word; the CLI only draws it (``cli/output.py``).
A bottom leaf: it imports nothing of ours.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Listing:
    """``text``: the columns that are words, not numbers (left-aligned); ``no_wrap``: indices
    of columns never broken; ``styles``: (row, column, colour) of cells to colour;
    ``framed``: a boxed table (else a rule under the header only); ``show_lines``: a rule
    between rows."""

    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...] | None, ...]
    title: str | None = None
    heading: str | None = None
    notes: tuple[str, ...] = ()
    text: tuple[str, ...] = ()
    no_wrap: tuple[int, ...] = ()
    styles: tuple[tuple[int, int, str], ...] = ()
    framed: bool = False
    show_lines: bool = False


def num(x: float | None, digits: int = 4) -> str:
    """A metric for a table cell; a missing value (None) is ``nan``."""
    return "nan" if x is None else f"{x:.{digits}f}"
