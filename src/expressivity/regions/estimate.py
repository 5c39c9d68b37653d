"""A documented estimate for planes where exact counting is refused (hardmax attention whose
queries and keys both depend on x: region boundaries are conics).

The slice is sampled on a resolution × resolution grid; every point gets its activation pattern
(ReLU signs, argmaxes, hardmax selections, via the reference evaluator ``ir.outputs_and_patterns``). Two
numbers come back:

* ``patterns`` — distinct patterns seen: never more than the true number of activation
  regions (a region not hit by the grid is missed), usually equal at moderate resolution;
* ``components`` — 4-connected components of grid cells with equal pattern: counts a pattern
  seen in several disconnected places several times (with quadratic boundaries one pattern
  can own several regions), but also counts a sliver thinner than the grid spacing once per
  isolated sample, so it over-counts at any finite resolution.

Use ``patterns`` as the estimate (a lower bound) and ``components`` as a rough upper figure.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from .domains import Plane
from .ir import outputs_and_patterns
from .lower import lower
from .tolerances import EDGE_RADIUS


def sampled_regions(model, plane: Plane, resolution: int = 400, **lower_kw) -> dict:
    """{"components", "patterns", "resolution", "inside"}: grid estimate of activation regions."""
    if not isinstance(plane, Plane):
        raise ValueError(f"sampled_regions needs a Plane, got {type(plane).__name__}")
    if not (isinstance(resolution, int) and 8 <= resolution <= 4000):
        raise ValueError(f"resolution must be an int in [8, 4000], got {resolution!r}")
    prog = lower(model, **lower_kw)
    from .count import check_compile_domain

    check_compile_domain(prog, plane)
    if plane.dim != prog.in_dim:
        raise ValueError(f"plane lies in dimension {plane.dim} but the model's input dimension is {prog.in_dim}")
    poly = plane.polygon
    a = np.linspace(poly[:, 0].min(), poly[:, 0].max(), resolution)
    b = np.linspace(poly[:, 1].min(), poly[:, 1].max(), resolution)
    ab = np.stack(np.meshgrid(a, b, indexing="ij"), -1).reshape(-1, 2)
    from matplotlib.path import Path

    inside = Path(poly).contains_points(ab, radius=EDGE_RADIUS)
    code = np.zeros(len(ab), np.uint64)
    idx = np.nonzero(inside)[0]
    for lo in range(0, len(idx), 65536):
        sl = idx[lo:lo + 65536]
        code[sl] = outputs_and_patterns(prog, plane.points(ab[sl]))[1]
    grid = np.arange(len(ab)).reshape(resolution, resolution)
    pairs = np.concatenate([np.stack([grid[:-1].ravel(), grid[1:].ravel()], 1),
                            np.stack([grid[:, :-1].ravel(), grid[:, 1:].ravel()], 1)])
    keep = inside[pairs[:, 0]] & inside[pairs[:, 1]] & (code[pairs[:, 0]] == code[pairs[:, 1]])
    p = pairs[keep]
    g = coo_matrix((np.ones(len(p)), (p[:, 0], p[:, 1])), shape=(len(ab), len(ab)))
    _, labels = connected_components(g, directed=False)
    n_comp = len(np.unique(labels[inside]))
    return {"components": int(n_comp), "patterns": len(np.unique(code[inside])),
            "resolution": resolution, "inside": int(inside.sum())}
