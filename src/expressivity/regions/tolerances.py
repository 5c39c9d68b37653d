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
"""Tie policy of the IR (``ir.tied``): values within TIE_RTOL·max|value| (over the values compared,
e.g. the pieces of one maxout unit) of the maximum are tied (maxout argmax, hardmax selection).
Relative, so a positive rescaling of a layer never changes an argmax."""

MAP_RTOL = 1e-9
"""Linear merge (:mod:`.maps`): adjacent pieces have the same affine map when, for every output
and direction, their exact gradients (masked weight products, no bias) differ by ≤
MAP_RTOL·S, S the larger of the two gradients' magnitudes (the same products of |weights|: the
sum of |terms| the gradient is summed from). Rounding is ≈ L·n·2⁻⁵³·S (≤ 1e-12·S for L·n ≤
10⁴), three orders below. Invariant under f + c (no bias enters), f·a, rescaled or permuted
hidden units and affine changes of the input coordinates; never relative to output values."""

JUMP_RTOL = 1e-6
"""1-D linear merge of programs with hardmax: the output is continuous at a breakpoint when the
difference of the two pieces' maps there, Δ (propagated as a difference, so the output bias
cancels), is ≤ JUMP_RTOL·SΔ (its magnitude). Looser than MAP_RTOL: the breakpoint itself is a
computed root (a crossing of two scores), so Δ carries its position's rounding too."""

QUERY_CONST_RTOL = 1e-9
"""2-D and d-D hardmax: queries count as constant on the domain when their spread over the
vertices is ≤ QUERY_CONST_RTOL·max(|y|·|W_Q| + |b_Q|) (the magnitude q is summed from, so the
test is relative; otherwise the boundaries are conics)."""

BOX_QUERY_RTOL = 1e-12
"""LP box counter: the queries' x-coefficients must be ≤ BOX_QUERY_RTOL·(their magnitude: the
same products with |weights|) (exact affine maps, no interpolation error; relative)."""

VALUE_SPREAD_RTOL = 1e-6
"""2-D and d-D hardmax: the values of tied keys may differ by ≤ VALUE_SPREAD_RTOL·max|v|
(the selected value is continuous); otherwise the output jumps and only a Segment is exact."""

RADIUS_RTOL = 1e-9
"""LP box counter: a facet (or region) whose Chebyshev radius is ≤ RADIUS_RTOL is not counted,
in the box's own coordinates u ∈ [−1, 1]^d (x = centre + half-width·u: relative to the box, so
shifting or scaling the input changes nothing; the LP's feasibility tolerance is ≈ 1e-9)."""

LP_ROW_RTOL = 1e-11
"""LP box counter: a constraint row (an x-coefficient vector) with norm ≤ LP_ROW_RTOL·(the norm
of its magnitude, the same products with |weights|) is 0 up to rounding and dropped."""

LP_PARALLEL_TOL = 1e-9
"""LP box counter: unit rows with |cos| > 1 − LP_PARALLEL_TOL are parallel to a facet."""

LP_INSIDE_RTOL = 1e-12
"""LP box counter: a point after a step within a facet stays in the region when every other row is
≥ −LP_INSIDE_RTOL·(box diagonal), in u."""

LP_STEP = 1e-7
"""LP box counter: the step across a facet, relative to the box's side (in u: 2·LP_STEP)."""

CHECK_RTOL = 1e-6
"""Mesh invariant checks (``EXPRESSIVITY_CHECK=1``, :mod:`.invariants`): a carried value of a cut
function g may differ from the reference interpreter's by ≤ CHECK_RTOL·max|g| (interpolated
states accumulate ≈ 1e-13 over many cuts), and a vertex on a cut has |g| ≤ CHECK_RTOL·max|g|."""

COMPILE_DOMAIN_SLACK = 1e-9
"""A counting domain may leave a compiled model's compile domain by COMPILE_DOMAIN_SLACK·(1 +
|bound|): the value of ``compile.bounds.DOMAIN_SLACK`` (``CompiledModel.evaluate``; regions may
not import compile, a test keeps the two equal)."""

SCALE_FLOOR = 1e-300
"""Not a tolerance: added to (or the least value of) a scale max|·| so that an all-zero array
gives a positive scale — a relative tolerance times it is then ≈ 0, never a division by 0."""

DEGENERATE_RTOL = 1e-12
"""Domains: a segment (‖b − a‖ ≤ DEGENERATE_RTOL·(1 + max|a|)), plane (σ_min of (u, v) ≤
DEGENERATE_RTOL·σ_max; two of ``Plane.through``'s points ≤ DEGENERATE_RTOL·max|x| apart) or
slice basis (σ_min ≤ DEGENERATE_RTOL·σ_max) is degenerate; a polygon turning by a cross product
≥ −DEGENERATE_RTOL·max|vertex|² at every vertex is convex. ≈ 10^4 above float64 rounding."""

COLLINEAR_RTOL = 1e-9
"""``Plane.through``: the third point is on the line of the first two when its distance from it
is ≤ COLLINEAR_RTOL·max(‖x2 − x1‖, ‖x3 − x1‖) (the residual of a projection: looser than
DEGENERATE_RTOL)."""

AREA_RTOL = 1e-14
"""``Plane.bounds``: a polygon has positive area when |area| > AREA_RTOL·(1 + max|vertex|)²."""

EDGE_RADIUS = 1e-12
"""Grid estimate (:mod:`.estimate`): a grid point within EDGE_RADIUS of the polygon's boundary
(in plane coordinates α, β) counts as inside, so the corners of a box-shaped polygon are sampled."""

CHECK_GEOM_RTOL = 1e-9
"""Mesh invariant checks of a planar mesh of extent ``ext``: a face turning by a cross product
< −CHECK_GEOM_RTOL·ext² is not convex; a vertex within CHECK_GEOM_RTOL·ext of the domain's
boundary lies on it; a face's singular values above CHECK_GEOM_RTOL·ext count to its dimension."""

CHECK_PROBE = 1e-4
"""Mesh invariant checks with hardmax (where f may jump at a switch): the reference reads each
piece's ends CHECK_PROBE of the piece's length inside it."""


def reported(zero_rtol: float) -> dict:
    """The tolerances a result reports (``Regions.summary()["tolerances"]``)."""
    return {"zero_rtol": zero_rtol, "map_rtol": MAP_RTOL}

STRICT_FLOOR = 1e-300
"""Certificates (:mod:`.certify`, :mod:`.relu_chain`): a positive floor far below any float64
quantity they bound, so a strict float test (``<``) stays strict where its error bound is 0,
and a Chebyshev search radius never shrinks to 0. Proofs never rest on it alone."""

FARKAS_LP_TOL = 1e-9
"""Certificates: a Farkas LP optimum ≤ FARKAS_LP_TOL (of the normalised constraints) makes a
candidate refutation, which is then checked exactly in rationals; it only filters, the exact
check decides."""
