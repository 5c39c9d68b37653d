"""`expressivity compile` and `expressivity verify`: paper 1's compiler from the shell."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import typer
from rich.table import Table

from ..cpwl.maxout import sample_box
from ..fileio import make_dir
from ..memory import check_memory
from ..rules import check_int
from . import app
from ._common import console, output_path, user_errors
from .options import AttentionName, Layers, Seed


@app.command("compile")
def compile_cmd(
    spec: Path = typer.Argument(..., help="JSON network spec (maxout | relu | random; see docs/compile.md), "
                                "or a torch nn.Sequential's state dict (.pt / .safetensors) with --layers"),
    out: Path = typer.Option(..., "--out", "-o", help="where to write the .safetensors model"),
    layers: Layers = None,
    attention: AttentionName = typer.Option("hardmax", help="hardmax (exact) or softmax (σ_λ)"),
    lam: float | None = typer.Option(None, "--lam", help="λ for softmax attention"),
    show_channels: bool = typer.Option(False, "--channels", help="print the residual channel map"),
) -> None:
    """Compile a Maxout/ReLU network into a transformer and save it (weights + channel map +
    the source network, so `verify MODEL` and `export MODEL --transformer-lens DIR --lam LAM`
    need no spec)."""
    from ..compile import compile_maxout, complexity_report
    from ..interop.torch_in import load_source

    output_path(out, "--out")
    with user_errors():
        if out.suffix != ".safetensors":  # export, verify and regions read models by this suffix
            raise ValueError(f"--out {out}: a compiled model is a .safetensors file; give a path ending in .safetensors")
        net, domain = load_source(spec, layers, need_domain=True)
        cm = compile_maxout(net, domain=domain, attention=attention, lam=lam)
        make_dir(out.parent, "--out")
        cm.save(out)
    console.print(f"wrote {out}: {cm.n_blocks} blocks, {cm.n_tokens} tokens, "
                  f"error bound {cm.error_bound():.3g} ({attention})")
    _print_table(complexity_report(net, cm).rows())
    if show_channels:
        console.print(str(cm.channels))


@app.command("verify")
def verify_cmd(
    model: Path = typer.Argument(..., help="a model written by `expressivity compile`"),
    spec: Path | None = typer.Argument(None, help="the JSON spec (or torch weights) it was compiled from (default: "
                                       "the source network saved in MODEL by `expressivity compile`)"),
    layers: Layers = None,
    points: int = typer.Option(10_000, help="random points in the domain (corners are added)"),
    seed: Seed = 0,
) -> None:
    """Measure the compiled model against its source network: error, bound, sizes.

    Passes when max |F(x) − f(x)| ≤ output_error + 2·roundoff_error: the σ_λ bound (0 for
    hardmax) plus the float64 round-off bound of the compiled model, counted twice because the
    reference f(x) is computed in float64 too. The round-off term scales with the magnitude of
    the values (see ``compile_maxout``), so the tolerance is relative, not an absolute 1e-9.
    """
    from ..compile import complexity_report, load_compiled
    from ..interop.torch_in import load_source

    with user_errors():
        if points < 1:
            raise ValueError(f"--points must be >= 1, got {points}")
        check_int(seed, "--seed", min=0)
        if spec is None and layers is not None:
            raise ValueError("--layers describes torch weights given as SPEC; give SPEC too (or leave --layers out)")
        cm = load_compiled(model)
        if spec is None and cm.net is None:
            raise ValueError(f"{model} holds no source network (written before `expressivity compile` saved it); "
                             "give the SPEC it was compiled from: expressivity verify MODEL SPEC")
        net = cm.net if spec is None else load_source(spec, layers)[0]
        if cm.in_dim != net.in_dim or cm.transformer.cfg.d_out != net.out_dim:
            raise ValueError(f"{model} has input/output sizes ({cm.in_dim}, {cm.transformer.cfg.d_out}) "
                             f"but the network of the spec {spec} has ({net.in_dim}, {net.out_dim})")
        # the points, both outputs and the source net's widest activations (the compiled model batches itself)
        per_point = 8 * (net.in_dim + 2 * net.out_dim + sum(l.width for l in net.layers)
                         + max(l.width * l.rank for l in net.layers))
        check_memory(points * per_point, f"verify --points {points}", hint="use fewer --points")
        x = sample_box(cm.lo, cm.hi, points, seed)
        err = float(np.abs(cm.evaluate(x) - net(x)).max())
    bound = cm.error_bound()
    ok = err <= cm.output_error + 2 * cm.roundoff_error
    rows = [("max |error| (measured)", f"{err:.3e}", ""), ("error bound", f"{bound:.3e}",
            "exact (hardmax)" if cm.attention == "hardmax" else f"σ_λ, λ = {cm.lam:g}")]
    rows += complexity_report(net, cm).rows()
    _print_table(rows)
    console.print("[green]verified[/]: measured error within the bound" if ok
                  else "[red]FAILED[/]: measured error exceeds the bound")
    raise typer.Exit(code=0 if ok else 1)


def _print_table(rows) -> None:
    table = Table("quantity", "maxout net", "transformer")
    for row in rows:
        table.add_row(*row)
    console.print(table)
