"""`expressivity constructions` and `expressivity construct`: hand-built transformers from the shell.

``constructions`` lists the registry (name, parameters with defaults, one line on the idea).
``construct NAME --param k=2 --lengths 10,100,1000`` builds one construction and measures it
on sampled strings per length n: accuracy (z > 0 vs exact membership), cross-entropy in bits
CE = mean −log2 P(y | s) with P(1 | s) = σ(z) (the formula of ``Construction.cross_entropy_bits``,
applied to the same logits), and the model size (:mod:`expressivity.constructions.measure`).
"""

from __future__ import annotations

import typer

from ..rules import check_int, parse_params
from . import app
from .options import Lengths, Param, Seed
from .output import progress_bar, show


@app.command("constructions")
def constructions_cmd() -> None:
    """List the hand-built transformers: name, parameters (defaults) and the idea."""
    from ..constructions.measure import registry_listing

    show(registry_listing())


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
    from ..constructions.measure import measure_by_length, measures_listing

    check_int(samples, "--samples", min=1)
    check_int(seed, "--seed", min=0)
    c = get(name, **parse_params(param))  # the library validates and types each parameter
    ns = c.check_lengths(lengths, samples, "--lengths")
    with progress_bar(transient=True) as progress:
        task = progress.add_task(c.name, total=len(ns))
        rows = measure_by_length(c, ns, samples, seed, progress=lambda: progress.advance(task))
    show(measures_listing(c, rows))
