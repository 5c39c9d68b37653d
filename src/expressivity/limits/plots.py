"""Figures for the limits area (matplotlib, Agg backend): each returns the saved path."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from ..fileio import check_output_path


def plot_sensitivity(report, path: str | Path, title: str = "") -> Path:
    """n·max_{j≠i}‖Δy_j^(k)‖ vs n per layer k (flat = O(1/n)), with n·bound dashed when it applies."""
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    layers = sorted({r.layer for r in report.rows})
    for k in layers:
        rows = [r for r in report.rows if r.layer == k]
        n = np.array([r.n for r in rows], dtype=float)
        line, = ax.plot(n, n * np.array([r.measured_other for r in rows]), "o-", label=f"layer {k} measured")
        if report.applicable:
            ax.plot(n, n * np.array([r.bound_other for r in rows]), "--", color=line.get_color(),
                    label=f"layer {k} Lemma 5 bound")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("n")
    ax.set_ylabel("n · max‖Δy_j‖ (j ≠ i)")
    ax.set_title(title or ("Lemma 5 applies" if report.applicable else "Lemma 5 does not apply"), fontsize=9)
    ax.legend(fontsize=7)
    return _save(fig, path)


def plot_dependence(rows, path: str | Path) -> Path:
    """Free inputs the output depends on vs n, for the model and the PARITY/2DYCK references."""
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    for ref, style in (("model", "o-"), ("parity", "s--"), ("dyck2", "^--")):
        sel = [r for r in rows if r.reference == ref]
        if sel:
            ax.plot([r.n for r in sel], [r.dependent for r in sel], style, label=ref)
    sel = [r for r in rows if r.reference == "model"]
    if sel:
        ax.plot([r.n for r in sel], [r.free for r in sel], ":", color="gray", label="free inputs")
    ax.set_xlabel("n")
    ax.set_ylabel("# free inputs the output depends on")
    ax.legend(fontsize=7)
    return _save(fig, path)


def plot_dyck_ce(rows, path: str | Path) -> Path:
    """Excess cross-entropy (bits/symbol) vs n per model, next to P_0·(1 − p)."""
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    for model in sorted({r.model for r in rows}):
        sel = [r for r in rows if r.model == model]
        ax.plot([r.n for r in sel], [r.excess_bits for r in sel], "o-", label=f"{model} excess CE")
    sel = [r for r in rows if r.model == rows[0].model]
    ax.plot([r.n for r in sel], [r.bound_bits for r in sel], "k--", label="P_0·(1 − p) (asymptotic bound)")
    ax.set_xscale("log")
    ax.set_xlabel("n")
    ax.set_ylabel("excess CE (bits / symbol)")
    ax.legend(fontsize=7)
    return _save(fig, path)


def check_plot_path(path, name: str = "--plot") -> None:
    """A figure's path checked before any work (``None`` passes): a writable file with an image
    suffix matplotlib can write."""
    if path is not None:
        plot_format(check_output_path(path, name), name)


def plot_format(path, name: str = "path") -> str:
    """The image format of ``path``: its suffix (png, pdf, svg, …), or png when it has none.
    ValueError naming ``name`` for a suffix matplotlib cannot write (checked before any work)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fmt = Path(path).suffix[1:].lower() or "png"
    supported = FigureCanvasAgg.get_supported_filetypes()
    if fmt not in supported:
        raise ValueError(f"{name} {path}: cannot write a .{fmt} figure; use one of "
                         f"{', '.join('.' + f for f in sorted(supported))}")
    return fmt


def _save(fig, path) -> Path:
    path = Path(path)
    fmt = plot_format(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=120, format=fmt)  # exactly ``path``: no suffix is appended
    plt.close(fig)
    return path
