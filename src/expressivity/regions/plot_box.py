"""Pictures of a d-D count (d ≥ 3): region-coloured 2-D slices through the box (matplotlib Agg).

Slice s is the plane {x : x_3 = c_s} (the other coordinates beyond the first two at the box
centre), c_s spread evenly inside [lo_3, hi_3]. Every pixel gets the colour of the counted
region containing it — found by its activation pattern (``ir.outputs_and_patterns``), matched with the
patterns at the regions' interior points — so one colour is one d-D region in every panel.
Pixels where neighbours differ are drawn dark (the region boundaries).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .count import count_regions
from .domains import Box
from .ir import outputs_and_patterns
from .lower import lower
from .result import Regions


def plot_box_slices(model, box: Box, path, color_by: str = "linear", regions: Regions | None = None,
                    n_slices: int = 3, resolution: int = 240, dpi: int = 120, **lower_kw) -> Regions:
    """Count ``model``'s regions in ``box`` (d ≥ 3) and write ``n_slices`` coloured slices to a PNG.

    ``color_by``: "linear" or "activation". Returns the :class:`Regions` it drew.
    """
    if color_by not in ("linear", "activation"):
        raise ValueError(f"color_by must be 'linear' or 'activation', got {color_by!r}")
    if not isinstance(box, Box):
        raise ValueError("plot_box_slices draws a Box; got " + type(box).__name__)
    if not (1 <= int(n_slices) <= 9):
        raise ValueError(f"n_slices must be 1 … 9, got {n_slices}")
    prog = lower(model, **lower_kw)
    box = box.with_dim(prog.in_dim)
    if box.dim < 3:
        raise ValueError(f"plot_box_slices needs a box of dimension ≥ 3 (got {box.dim}); use plot_regions")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    r = regions if regions is not None else count_regions(prog, box, **lower_kw)
    lab = r.linear_labels if color_by == "linear" else r.pieces.region
    _, code = outputs_and_patterns(prog, r.interior_points())
    table = dict(zip(code.tolist(), lab.tolist()))
    palette = np.random.default_rng(0).uniform(0.35, 0.95, size=(int(lab.max()) + 2, 3))
    palette[-1] = 0.0  # unmatched pixels (ties on a boundary): dark
    lo, hi = box.lo, box.hi
    a = np.linspace(lo[0], hi[0], resolution)
    b = np.linspace(lo[1], hi[1], resolution)
    A, B = np.meshgrid(a, b)
    levels = lo[2] + (hi[2] - lo[2]) * (np.arange(n_slices) + 0.5) / n_slices
    fig, axes = plt.subplots(1, n_slices, figsize=(3.6 * n_slices, 3.9), dpi=dpi, squeeze=False)
    for ax, c in zip(axes[0], levels):
        x = np.tile((lo + hi) / 2, (A.size, 1))
        x[:, 0], x[:, 1], x[:, 2] = A.ravel(), B.ravel(), c
        _, h = outputs_and_patterns(prog, x)
        idx = np.array([table.get(k, -1) for k in h.tolist()]).reshape(A.shape)
        img = palette[idx]
        edge = np.zeros(A.shape, bool)
        edge[1:] |= idx[1:] != idx[:-1]
        edge[:, 1:] |= idx[:, 1:] != idx[:, :-1]
        img[edge] *= 0.25
        ax.imshow(img, origin="lower", extent=(lo[0], hi[0], lo[1], hi[1]), interpolation="nearest")
        ax.set_title(f"x3 = {c:.3g}", fontsize=9)
        ax.set_xlabel("x1")
        ax.set_ylabel("x2")
    kind = "linear" if color_by == "linear" else "activation"
    fig.suptitle(f"{r.linear_regions} linear / {r.activation_regions} activation regions in the box; "
                 f"colour = {kind} region", fontsize=9)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return r


__all__ = ["plot_box_slices"]
