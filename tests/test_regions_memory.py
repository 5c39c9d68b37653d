"""Counting refuses, with the estimate, a segment whose vertex store outgrows the memory budget
(regression: count_regions(sawtooth_maxout(3, 40), Segment) ran the machine out of memory)."""

from __future__ import annotations

from _bad_input import api_rejects

from expressivity.cpwl import sawtooth_maxout
from expressivity.regions import Segment, count_regions


def test_segment_vertex_store_is_checked_against_the_budget(monkeypatch):
    monkeypatch.setenv("EXPRESSIVITY_MEMORY_BUDGET", "4M")
    api_rejects(count_regions, sawtooth_maxout(3, 40), Segment([0.0], [1.0]),
                mentions=("domain", "vertices", "memory budget"))
    assert count_regions(sawtooth_maxout(3, 4), Segment([0.0], [1.0])).linear_regions == 81  # fits
