"""`expressivity regions`: exact linear/activation region counts on a segment, plane or box
(the inputs it takes: :mod:`expressivity.interop.region_inputs`)."""

from __future__ import annotations

import json

from rich.progress import BarColumn, SpinnerColumn, TextColumn, TimeElapsedColumn

from ..interop.options import REGIONS
from . import app
from ._common import console
from .options import with_options
from .output import progress


@app.command("regions")
@with_options(REGIONS)
def regions_cmd(**given) -> None:
    """Count activation and linear regions exactly (1-D, 2-D or small d-D)."""
    from ..interop.region_inputs import region_job

    plot, as_json = given["plot"], given["as_json"]
    m, dom, counter, kw, color_by = region_job(given["model"], given["layers"], given["compile_it"],
                                               **{k: given[k] for k in _REGION_INPUTS})
    res = _count(m, dom, counter, kw, plot=plot, color_by=color_by, quiet=as_json, stream=given["stream"])
    if as_json:
        console.print_json(json.dumps(res.summary()))
        return
    console.print(res.headline())
    if plot is not None:
        console.print(f"wrote {plot}")


_REGION_INPUTS = ("segment", "plane", "through", "bounds", "box", "domain", "lo", "hi", "n_tokens", "plot", "color_by",
                  "stream")


def _count(m, dom, counter, kw: dict, *, plot, color_by: str, quiet: bool, stream: bool = False):
    """count_regions under a progress bar in the counter's registered style (pieces done, or a
    fraction), then the --plot picture; ``stream``: the count only (``count_regions(stream=True)``)."""
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

        res = count_regions(m, dom, progress=tick, stream=stream, **kw)
        if plot is not None:
            prog.update(task, description="drawing")
            plot_domain(m, dom, plot, color_by, res, **kw)
    return res
