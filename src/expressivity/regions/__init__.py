"""Linear regions of piecewise-linear models: exact counts in 1-D, 2-D and small d-D.

model → :func:`lower` → :class:`~.ir.Program` → :func:`count_regions` (Segment | Plane | Box)
→ :class:`Regions` (activation regions, linear regions, the pieces) → :func:`plot_regions`;
:func:`certify_regions` proves a ReLU net's counted cells nonempty and distinct, and
:func:`refute_pattern` proves a pattern's cell empty (exact Farkas certificate).
Theorem 4.4 of paper 1, measured: :mod:`expressivity.report.theorem44`.
"""

from .certify import certify_regions, refute_pattern
from .count import count_regions, domain_from_spec, register_domain
from .domains import Box, Plane, Segment, Slice
from .ir import CompileDomain, Program
from .lower import lower
from .plot import plot_regions
from .result import Regions

__all__ = ["Box", "CompileDomain", "Plane", "Program", "Regions", "Segment", "Slice", "certify_regions", "count_regions", "domain_from_spec", "lower",
           "plot_regions", "refute_pattern", "register_domain"]
