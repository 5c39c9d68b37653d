"""`expressivity constructions` and `expressivity construct`: hand-built transformers from the shell.

``constructions`` lists the registry (name, parameters with defaults, one line on the idea).
``construct NAME --param k=2 --lengths 10,100,1000`` builds one construction and measures it
on sampled strings per length n: accuracy (z > 0 vs exact membership), cross-entropy in bits
CE = mean −log2 P(y | s) with P(1 | s) = σ(z) (the formula of ``Construction.cross_entropy_bits``,
applied to the same logits), and the model size (:mod:`expressivity.constructions.measure`).
"""

from __future__ import annotations

import inspect

import typer
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..rules import check_int, parse_params
from . import app
from ._common import console, user_errors
from .options import Lengths, Param, Seed
from .output import progress as make_progress
from .output import table


@app.command("constructions")
def constructions_cmd() -> None:
    """List the hand-built transformers: name, parameters (defaults) and the idea."""
    from ..constructions.measure import registry_rows

    out = table("name", "parameters (defaults)", "description", text=("name", "parameters (defaults)", "description"),
                show_lines=True)
    out.columns[0].no_wrap = True
    for name, defaults, description in registry_rows():
        params = ", ".join(f"{k}={v!r}" if v is not inspect.Parameter.empty else k for k, v in defaults.items())
        out.add_row(name, params or "—", description)
    console.print(out)


@app.command("construct")
def construct_cmd(
    name: str = typer.Argument(..., help="construction name (see `expressivity constructions`)"),
    param: Param = (),
    lengths: Lengths = "10,100,1000",
    samples: int = typer.Option(200, help="strings per length (half members when both exist)"),
    seed: Seed = 0,
) -> None:
    """Build a construction and measure accuracy and cross-entropy (bits) per length."""
    from ..constructions import get
    from ..constructions.measure import measure_by_length

    with user_errors():
        check_int(samples, "--samples", min=1)
        check_int(seed, "--seed", min=0)
        c = get(name, **parse_params(param))  # the library validates and types each parameter
        ns = c.check_lengths(lengths, samples, "--lengths")
        with make_progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                           TimeElapsedColumn(), transient=True) as progress:
            task = progress.add_task(c.name, total=len(ns))
            rows = measure_by_length(c, ns, samples, seed, progress=lambda: progress.advance(task))
    s = c.summary()
    console.print(f"[bold]{name}[/] {c.params}: {c.description}")
    console.print(f"{c.attention} attention, d_model = {s['d_model']}, d_mlp = {s['d_mlp']}, "
                  f"layer norm = {s['layer_norm']}, nonzero params = {s['n_params_nonzero']}")
    out = Table("n", "members", "non-members", "accuracy", "CE (bits)", "layers", "heads", "params")  # 80 columns
    for r in rows:
        out.add_row(str(r["n"]), str(r["members"]), str(r["non_members"]), f"{r['accuracy']:.4f}",
                      f"{r['ce_bits']:.6f}", str(r["layers"]), str(r["heads"]), str(r["params"]))
    console.print(out)
