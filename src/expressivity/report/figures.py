"""Figure helpers: matplotlib (Agg, no display) → PNG bytes, one house style.

Legends sit off the data: :func:`legend` puts one to the right of its axes, and :func:`png`
moves any legend that still overlaps its axes there before saving (the saved image grows to
hold it).
"""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def new(ncols: int = 1, width: float = 5.2, height: float = 3.6):
    """A figure with ``ncols`` side-by-side axes; returns (fig, axes list)."""
    fig, axes = plt.subplots(1, ncols, figsize=(width * ncols, height), squeeze=False)
    for ax in axes[0]:
        ax.grid(True, alpha=0.3, which="both")
    return fig, list(axes[0])


def legend(ax, **kw):
    """The house legend: outside the axes, to the right of the plot, top-aligned."""
    kw.setdefault("fontsize", 7)
    return ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, **kw)


def _overlaps(ax) -> bool:
    leg = ax.get_legend()
    if leg is None:
        return False
    renderer = ax.figure.canvas.get_renderer()
    return leg.get_window_extent(renderer).overlaps(ax.get_window_extent(renderer))


def legends_off_the_data(fig) -> None:
    """Move every legend that overlaps its axes to the right of them (as :func:`legend`)."""
    fig.canvas.draw()
    for ax in fig.axes:
        if _overlaps(ax):
            leg = ax.get_legend()
            title = leg.get_title().get_text()
            size = leg.get_texts()[0].get_fontsize() if leg.get_texts() else 7
            legend(ax, fontsize=size, **({"title": title, "title_fontsize": size} if title else {}))


def png(fig) -> bytes:
    """Render and close the figure; PNG bytes at 110 dpi, legends off the data."""
    buf = io.BytesIO()
    legends_off_the_data(fig)
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight", pad_inches=0.08)
    plt.close(fig)
    return buf.getvalue()


def status_title(ax, text: str, ok: bool) -> None:
    ax.set_title(text + ("" if ok else "  [VIOLATED]"), fontsize=10, color="black" if ok else "red")
