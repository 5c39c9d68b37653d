"""`expressivity compile` and `expressivity verify`: paper 1's compiler from the shell."""

from __future__ import annotations

from pathlib import Path

import typer

from ..fileio import make_dir
from ..listing import Listing
from . import app
from ._common import console, output_path
from .options import AttentionName, Layers, Seed
from .output import show


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

    Passes when max |F(x) − f(x)| ≤ output_error + 2·roundoff_error (the σ_λ bound plus twice
    the float64 round-off bound: a relative tolerance; see expressivity.interop.verification).
    """
    from ..interop.verification import verify_compiled

    result = verify_compiled(model, spec, layers, points=points, seed=seed)
    _print_table(result.rows)
    console.print("[green]verified[/]: measured error within the bound" if result.ok
                  else "[red]FAILED[/]: measured error exceeds the bound")
    raise typer.Exit(code=0 if result.ok else 1)


def _print_table(rows) -> None:
    show(Listing(("quantity", "maxout net", "transformer"), tuple(rows), framed=True))
