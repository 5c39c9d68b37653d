"""Pictures of a planar slice: faces coloured by region, boundaries drawn (matplotlib Agg)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .count import count_regions, counter_for, drawn_domains
from .domains import Plane
from .result import Regions


def plot_regions(model, plane: Plane, path, color_by: str = "linear", regions: Regions | None = None,
                 title: str | None = None, dpi: int = 150, mark_labels=None, **lower_kw) -> Regions:
    """Count ``model``'s regions on ``plane`` and write a PNG to ``path``.

    ``color_by``: "linear" (merged linear regions; activation-region edges inside one linear
    region drawn thin) or "activation". Returns the :class:`Regions` it drew.
    """
    if color_by not in ("linear", "activation"):
        raise ValueError(f"color_by must be 'linear' or 'activation', got {color_by!r}")
    if not isinstance(plane, Plane):
        raise ValueError("plot_regions draws a Plane slice; got " + type(plane).__name__)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.collections import LineCollection, PolyCollection

    r = regions if regions is not None else count_regions(model, plane, **lower_kw)
    faces, X = r.pieces.faces, r.pieces.vertices
    act = r.pieces.region
    lab = r.linear_labels if color_by == "linear" else act
    polys = [X[f[f >= 0]] for f in faces]
    rng = np.random.default_rng(0)
    palette = rng.uniform(0.35, 0.95, size=(int(lab.max()) + 1, 3))
    fig, ax = plt.subplots(figsize=(6, 6), dpi=dpi)
    ax.add_collection(PolyCollection(polys, facecolors=palette[lab], edgecolors="none"))
    # edges: thick between different colours, thin between activation regions of one colour
    F, K = faces.shape
    n = (faces >= 0).sum(1)
    jn = np.where(np.arange(1, K + 1)[None] < n[:, None], np.arange(1, K + 1)[None], 0)
    nxt = faces[np.arange(F)[:, None], jn]
    valid = faces >= 0
    a, b = faces[valid], nxt[valid]
    fid = np.repeat(np.arange(F), n)
    key = np.minimum(a, b) * (len(X) + 1) + np.maximum(a, b)
    order = np.argsort(key, kind="stable")
    key, fid, a, b = key[order], fid[order], a[order], b[order]
    pair = np.zeros(len(key), bool)
    pair[1:] = key[1:] == key[:-1]
    i2 = np.nonzero(pair)[0]
    f1, f2 = fid[i2 - 1], fid[i2]
    seg = np.stack([X[a[i2]], X[b[i2]]], 1)
    thick = lab[f1] != lab[f2]
    thin = (act[f1] != act[f2]) & ~thick
    ax.add_collection(LineCollection(seg[thick], colors="k", linewidths=0.6))
    ax.add_collection(LineCollection(seg[thin], colors="k", linewidths=0.15, alpha=0.5))
    poly = plane.polygon
    ax.add_collection(LineCollection([np.vstack([poly, poly[:1]])], colors="k", linewidths=1.0))
    if plane.marks is not None:  # Plane.through: the inputs it passes through
        mk = np.asarray(plane.marks)
        ax.scatter(mk[:, 0], mk[:, 1], s=36, c="white", edgecolors="k", linewidths=1.0, zorder=3)
        labels = list(mark_labels) if mark_labels is not None else [f"x{i}" for i in range(1, len(mk) + 1)]
        if len(labels) != len(mk):
            raise ValueError(f"mark_labels: {len(mk)} labels needed, got {len(labels)}")
        for text, (a, b) in zip(labels, mk):
            ax.annotate(str(text), (a, b), xytext=(6, 6), textcoords="offset points", fontsize=10, zorder=4,
                        fontweight="bold", bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "k", "lw": 0.5})
    ax.set_xlim(poly[:, 0].min(), poly[:, 0].max())
    ax.set_ylim(poly[:, 1].min(), poly[:, 1].max())
    ax.set_aspect("equal")
    ax.set_xlabel("α")
    ax.set_ylabel("β")
    ax.set_title(title or f"{r.linear_regions} linear / {r.activation_regions} activation regions", fontsize=9)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return r


def plot_box(model, box, path, color_by: str = "linear", regions: Regions | None = None, **lower_kw) -> Regions:
    """A :class:`~.domains.Box`'s picture: a 2-D box — its faces (:func:`plot_regions` on the
    plane spanned by its two axes, re-counted as a plane); d ≥ 3 — coloured slices
    (:func:`~.plot_box.plot_box_slices`, reusing ``regions``)."""
    if box.dim == 2:
        plane = Plane([0.0, 0.0], [1.0, 0.0], [0.0, 1.0], (box.lo[0], box.hi[0], box.lo[1], box.hi[1]))
        return plot_regions(model, plane, path, color_by=color_by, **lower_kw)
    from .plot_box import plot_box_slices

    return plot_box_slices(model, box, path, color_by=color_by, regions=regions, **lower_kw)


def plot_domain(model, domain, path, color_by: str = "linear", regions: Regions | None = None,
                **lower_kw) -> Regions:
    """The picture registered with ``domain``'s type (``register_domain(..., plot=...)``: a
    :class:`Plane` — :func:`plot_regions`; a :class:`Box` — :func:`plot_box`). ``regions``: the
    count of ``model`` on ``domain`` if already done."""
    if regions is not None and regions.streamed:
        raise ValueError("plot_domain: a streamed count (stream=True) keeps no cells to draw; count without "
                         "stream=True for the picture")
    plot = counter_for(domain).plot
    if plot is None:
        raise ValueError(f"plot_domain: no picture is registered for a {type(domain).__name__} domain "
                         f"(domains with one: {', '.join(drawn_domains())})")
    return plot(model, domain, path, color_by, regions, **lower_kw)
