"""`expressivity compile` and `expressivity verify`: paper 1's compiler from the shell."""

from __future__ import annotations

import typer

from ..fileio import make_dir
from ..interop.options import COMPILE, VERIFY
from ..listing import Listing
from . import app
from ._common import console, output_path
from .options import with_options
from .output import show


@app.command("compile")
@with_options(COMPILE)
def compile_cmd(**given) -> None:
    """Compile a Maxout/ReLU network into a transformer and save it (weights + channel map +
    the source network, so `verify MODEL` and `export MODEL --transformer-lens DIR --lam LAM`
    need no spec)."""
    from ..compile import compile_maxout, complexity_report
    from ..interop.torch_in import load_source

    out, attention = given["out"], given["attention"]
    output_path(out, "--out")
    if out.suffix != ".safetensors":  # export, verify and regions read models by this suffix
        raise ValueError(f"--out {out}: a compiled model is a .safetensors file; give a path ending in .safetensors")
    net, domain = load_source(given["spec"], given["layers"], need_domain=True)
    cm = compile_maxout(net, domain=domain, attention=attention, lam=given["lam"])
    make_dir(out.parent, "--out")
    cm.save(out)
    console.print(f"wrote {out}: {cm.n_blocks} blocks, {cm.n_tokens} tokens, "
                  f"error bound {cm.error_bound():.3g} ({attention})")
    _print_table(complexity_report(net, cm).rows())
    if given["show_channels"]:
        console.print(str(cm.channels))


@app.command("verify")
@with_options(VERIFY)
def verify_cmd(**given) -> None:
    """Measure the compiled model against its source network: error, bound, sizes.

    Passes when max |F(x) − f(x)| ≤ output_error + 2·roundoff_error (the σ_λ bound plus twice
    the float64 round-off bound: a relative tolerance; see expressivity.interop.verification).
    """
    from ..interop.verification import verify_compiled

    result = verify_compiled(given["model"], given["spec"], given["layers"], points=given["points"], seed=given["seed"])
    _print_table(result.rows)
    console.print("[green]verified[/]: measured error within the bound" if result.ok
                  else "[red]FAILED[/]: measured error exceeds the bound")
    raise typer.Exit(code=0 if result.ok else 1)


def _print_table(rows) -> None:
    show(Listing(("quantity", "maxout net", "transformer"), tuple(rows), framed=True))
