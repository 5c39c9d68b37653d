"""Linear regions of piecewise-linear models: exact counts in 1-D, 2-D and small d-D.

model → :func:`lower` → :class:`~.ir.Program` → :func:`count_regions` (Segment | Plane | Box)
→ :class:`Regions` (activation regions, linear regions, the pieces) → :func:`plot_regions`.
Theorem 4.4 of paper 1, measured: :mod:`expressivity.report.theorem44`.
"""

from .count import count_regions, domain_from_spec, register_domain
from .domains import Box, Plane, Segment, Slice
from .ir import CompileDomain, Program
from .lower import lower
from .plot import plot_regions
from .result import Regions

__all__ = ["Box", "CompileDomain", "Plane", "Program", "Regions", "Segment", "Slice", "count_regions", "domain_from_spec", "lower",
           "plot_regions", "register_domain"]
