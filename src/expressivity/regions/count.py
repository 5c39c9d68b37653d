"""count_regions(model, domain) → Regions: lower the model, dispatch on the domain."""

from __future__ import annotations

import time

from .domains import Box, Plane, Segment
from .lower import lower
from .result import Regions, runs


def count_regions(model, domain, progress=None, **lower_kw) -> Regions:
    """Exact partition of ``model`` (anything :func:`~expressivity.regions.lower.lower`
    accepts) over ``domain`` (:class:`Segment`, :class:`Plane` or :class:`Box`).

    ``progress`` (optional) is called with the number of pieces finished so far (segment) or
    with the fraction of work done (plane, box).
    """
    prog = lower(model, **lower_kw)
    start = time.perf_counter()
    if isinstance(domain, Segment):
        from .segment import partition_segment

        p = partition_segment(prog, domain, progress)
        region = runs(p["code"])
        pieces = {"t0": p["t0"], "t1": p["t1"], "out_L": p["L"], "out_R": p["R"], "region": region}
        n_act = int(region[-1]) + 1
        return Regions("segment", domain, n_act, len(region), pieces, time.perf_counter() - start)
    if isinstance(domain, Plane):
        from .plane import partition_plane

        pieces = partition_plane(prog, domain, progress)
        return Regions("plane", domain, pieces["n_regions"], len(pieces["faces"]), pieces,
                       time.perf_counter() - start)
    if isinstance(domain, Box):
        from .box import partition_box

        pieces = partition_box(prog, domain.with_dim(prog.in_dim), progress)
        return Regions("box", domain, len(pieces["A"]), len(pieces["A"]), pieces,
                       time.perf_counter() - start)
    raise ValueError(f"domain must be a Segment, Plane or Box, got {type(domain).__name__}")
