"""Every zero / merge / snap tolerance of the region counters, in one place (float64).

Each is relative: a quantity counts as 0 when its magnitude is at most the tolerance times
the scale named below. Values are chosen a few orders of magnitude above float64 rounding
(≈ 1e-16 relative) of the quantity they test, and far below any geometric feature the
counters should resolve.
"""

from __future__ import annotations

ZERO_RTOL = 1e-9
"""1-D and 2-D counters (segment, segment_vertex, plane): a pre-activation g counts as 0 when
|g| ≤ ZERO_RTOL·max|g| over the pieces / vertices processed together (per channel). States
there are computed by several interpolations and products, so rounding accumulates to
≈ 1e-13; 1e-9 leaves a wide margin while keeping breakpoints closer than 1e-9 apart distinct."""

SUBDIVIDE_ZERO_RTOL = 1e-12
"""d-D subdivision counter: a vertex with |g| ≤ SUBDIVIDE_ZERO_RTOL·max|g| (over the vertices
at the layer's start) lies on the cut. Vertices are interpolated from the box corners, so their
rounding error is ≈ 1e-16 of the box scale; 1e-9 would snap true vertices 0.3 from a hyperplane
onto it in a box of half-width 1e8 (the nested-box test); 1e-12 leaves ≈ 10^4 over rounding."""

MERGE_S = 1e-12
"""1-D counters: breakpoints closer than MERGE_S in a piece's local parameter s ∈ [0, 1]
coincide (one vertex, not a sliver piece); also the margin keeping hardmax roots inside (0, 1)."""

ROOT_SIGN_DS = 1e-7
"""1-D hardmax: a root s of a score difference is a breakpoint only if the difference changes
sign between s ± ROOT_SIGN_DS (tangencies are not switches)."""

ROOT_TOP_RTOL = 1e-7
"""1-D hardmax: both scores of a root must be within ROOT_TOP_RTOL·(|top| + scale) of the top
score there (the switch is on the upper envelope), scale = size of the score coefficients."""

TIE_RTOL = 1e-9
"""Tie policy of the IR (``ir.tied``): values within TIE_RTOL·(1 + |max|) of the maximum are
tied (maxout argmax, hardmax selection)."""

LINEAR_RTOL = 1e-6
"""Linear merge: adjacent pieces have the same affine map when, for every output, gradients
differ by ≤ LINEAR_RTOL·(G + V/D) (:func:`gradient_scale`) and (1-D) values at the shared point
by ≤ LINEAR_RTOL·(V + G), with G the largest gradient, V the largest |value| over the domain
and D its extent. Maps are read off vertex values (differences of interpolated states), hence
looser than the zero tests; V/D is the scale of their rounding (≈ 1e-16·V/D), which is what
remains when every gradient is 0 (a constant network: G alone would make the test exact)."""

QUERY_CONST_RTOL = 1e-9
"""2-D and d-D hardmax: queries count as constant on the domain when their spread over the
vertices is ≤ QUERY_CONST_RTOL·(1 + max|q|) (otherwise the boundaries are conics)."""

BOX_QUERY_RTOL = 1e-12
"""LP box counter: the queries' x-coefficients must be ≤ BOX_QUERY_RTOL·(1 + max|q|) (exact
affine maps, no interpolation error)."""

VALUE_SPREAD_RTOL = 1e-6
"""2-D and d-D hardmax: the values of tied keys may differ by ≤ VALUE_SPREAD_RTOL·max|v|
(the selected value is continuous); otherwise the output jumps and only a Segment is exact."""

RADIUS_TOL = 1e-9
"""LP box counter: a facet (or region) whose Chebyshev radius is ≤ RADIUS_TOL is not counted
(absolute, in input units: the LP's own feasibility tolerance is ≈ 1e-9)."""

LP_ROW_RTOL = 1e-12
"""LP box counter: constraint rows with norm ≤ LP_ROW_RTOL·(1 + max norm) are dropped as zero."""

LP_PARALLEL_TOL = 1e-9
"""LP box counter: unit rows with |cos| > 1 − LP_PARALLEL_TOL are parallel to a facet."""

LP_INSIDE_RTOL = 1e-12
"""LP box counter: a point after a step within a facet stays in the region when every other row is
≥ −LP_INSIDE_RTOL·(box diagonal)."""

LP_STEP = 1e-7
"""LP box counter: the step across a facet, relative to the box's largest side."""

COMPILE_DOMAIN_SLACK = 1e-9
"""A counting domain may leave a compiled model's compile domain by COMPILE_DOMAIN_SLACK·(1 +
|bound|) (same slack as ``CompiledModel.evaluate``)."""


def gradient_scale(grads, values, extent) -> float:
    """G + V/D: the scale of the linear-merge gradient test (see :data:`LINEAR_RTOL`) from the
    pieces' gradients, the outputs at their vertices and the domain's extent D (> 0)."""
    import numpy as np

    G = float(np.abs(grads).max()) if np.size(grads) else 0.0
    V = float(np.abs(values).max()) if np.size(values) else 0.0
    return G + (V / extent if extent > 0 else 0.0)


def reported(zero_rtol: float) -> dict:
    """The tolerances a result reports (``Regions.summary()["tolerances"]``)."""
    return {"zero_rtol": zero_rtol, "linear_rtol": LINEAR_RTOL}
