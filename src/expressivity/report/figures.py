"""Figure helpers: matplotlib (Agg, no display) → PNG bytes, one house style."""

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


def png(fig) -> bytes:
    """Render and close the figure; PNG bytes at 110 dpi."""
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return buf.getvalue()


def status_title(ax, text: str, ok: bool) -> None:
    ax.set_title(text + ("" if ok else "  [VIOLATED]"), fontsize=10, color="black" if ok else "red")
