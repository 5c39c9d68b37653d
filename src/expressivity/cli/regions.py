"""`expressivity regions`: exact linear/activation region counts on a segment, plane or box
(the inputs it takes: :mod:`expressivity.interop.region_inputs`)."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.progress import BarColumn, SpinnerColumn, TextColumn, TimeElapsedColumn

from . import app
from ._common import console, output_path
from .options import ColorBy, Layers, Plot
from .output import progress


@app.command("regions")
def regions_cmd(
    model: Path = typer.Argument(..., help="a .safetensors transformer, a JSON network spec, or a torch "
                                 "nn.Sequential's state dict (.pt / .safetensors) with --layers"),
    layers: Layers = None,
    segment: tuple[str, str] | None = typer.Option(None, "--segment", help="A B: the segment from A to B"),
    plane: tuple[str, str, str] | None = typer.Option(None, "--plane", help="O U V: origin + αU + βV"),
    through: tuple[Path, Path, Path] | None = typer.Option(
        None, "--through", help="A.npy B.npy C.npy: the plane through three inputs (any shape, e.g. C,H,W)"),
    bounds: str | None = typer.Option(None, "--bounds", help="α_lo,α_hi,β_lo,β_hi for --plane (default -1,1,-1,1)"),
    box: bool = typer.Option(False, "--box", help="the whole box [--lo, --hi]^d (d ≤ 6; subdivision counter)"),
    domain: str | None = typer.Option(None, "--domain", help='any registered domain as JSON, e.g. '
                                      '\'{"type": "segment", "a": [0, 0], "b": [1, 1]}\' (see docs/extending.md)'),
    lo: float | None = typer.Option(None, "--lo", help="box lower bound (every coordinate; default -1)"),
    hi: float | None = typer.Option(None, "--hi", help="box upper bound (every coordinate; default 1)"),
    compile_it: bool = typer.Option(False, "--compile", help="compile a JSON network to a hardmax transformer first"),
    n_tokens: int | None = typer.Option(None, "--n-tokens", help="tokens for a plain transformer (default n_ctx)"),
    plot: Plot = None,
    color_by: ColorBy | None = typer.Option(None, "--color-by", help="colour --plot by linear or activation "
                                            "region (default linear)"),
    as_json: bool = typer.Option(False, "--json", help="print the result as JSON"),
) -> None:
    """Count activation and linear regions exactly (1-D, 2-D or small d-D)."""
    from ..interop.region_inputs import region_job

    output_path(plot, "--plot")
    m, dom, counter, kw, color_by = region_job(model, layers, compile_it, segment=segment, plane=plane, through=through,
                                               bounds=bounds, box=box, domain=domain, lo=lo, hi=hi, n_tokens=n_tokens,
                                               plot=plot, color_by=color_by)
    summary = _count(m, dom, counter, kw, plot=plot, color_by=color_by, quiet=as_json).summary()
    if as_json:
        console.print_json(json.dumps(summary))
        return
    console.print(f"{summary['activation_regions']} activation regions, {summary['linear_regions']} linear "
                  f"regions ({summary['pieces']} pieces, {summary['kind']}, {summary['seconds']:.3f} s)")
    if plot is not None:
        console.print(f"wrote {plot}")


def _count(m, dom, counter, kw: dict, *, plot, color_by: str, quiet: bool):
    """count_regions under a progress bar in the counter's registered style (pieces done, or a
    fraction), then the --plot picture."""
    from ..regions import count_regions
    from ..regions.plot import plot_domain

    with progress(SpinnerColumn(), TextColumn("[progress.description]{task.description}"), BarColumn(),
                  TimeElapsedColumn(), transient=True, disable=quiet) as prog:
        by_pieces = counter.progress == "pieces"
        task = prog.add_task("counting regions", total=None if by_pieces else 1.0)

        def tick(*args):
            if by_pieces:
                prog.update(task, advance=args[0], description=f"counting regions ({args[0]} pieces)")
            else:
                prog.update(task, completed=float(args[0]))

        res = count_regions(m, dom, progress=tick, **kw)
        if plot is not None:
            prog.update(task, description="drawing")
            plot_domain(m, dom, plot, color_by, res, **kw)
    return res
