"""`expressivity constructions` and `expressivity construct`: hand-built transformers from the shell.

``constructions`` lists the registry (name, parameters with defaults, one line on the idea).
``construct NAME --param k=2 --lengths 10,100,1000`` builds one construction and measures it
on sampled strings per length n: accuracy (z > 0 vs exact membership), cross-entropy in bits
CE = mean −log2 P(y | s) with P(1 | s) = σ(z) (the formula of ``Construction.cross_entropy_bits``,
applied to the same logits), and the model size.
"""

from __future__ import annotations

import inspect

import numpy as np
import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..checks import check_int, parse_params
from . import app
from ._common import console, user_errors


def _defaults(name: str) -> dict:
    """Parameter name -> default of construction ``name`` (inspect.Parameter.empty if none)."""
    from ..constructions import REGISTRY

    return {p.name: p.default for p in inspect.signature(REGISTRY[name]).parameters.values()}


def _description(name: str) -> str:
    from ..constructions import REGISTRY

    doc = inspect.getdoc(REGISTRY[name]) or ""
    return doc.splitlines()[0] if doc else ""


def sample_strings(language, rng: np.random.Generator, count: int, n: int) -> list[str]:
    """⌈count/2⌉ members and the rest non-members of length n (one class if the other is empty)."""
    has_pos, has_neg = language.supports(n, True), language.supports(n, False)
    n_pos = (count + 1) // 2 if has_neg else count
    n_pos = n_pos if has_pos else 0
    out = language.sample(rng, n_pos, n, positive=True) if n_pos else []
    if count - n_pos:
        out += language.sample(rng, count - n_pos, n, positive=False)
    return out


def evaluate(c, lengths, samples: int, seed: int, progress: Progress | None = None) -> list[dict]:
    """One row per length: accuracy, CE (bits), member/non-member counts, model size."""
    from ..constructions import ce_bits_from_logits

    rng = np.random.default_rng(seed)
    cfg = c.transformer.cfg
    size = {"layers": cfg.n_layers, "heads": cfg.n_heads, "params": c.transformer.n_params()}
    task = progress.add_task(c.name, total=len(lengths)) if progress else None
    rows = []
    for n in lengths:
        strings = sample_strings(c.language, rng, samples, n)
        labels = c.language.accepts_batch(strings) if strings else np.zeros(0, dtype=bool)
        z = c.logits(strings)  # one forward pass feeds both numbers
        rows.append({"n": n, "members": int(labels.sum()), "non_members": int((~labels).sum()),
                     "accuracy": float(np.mean((z > 0) == labels)),
                     "ce_bits": ce_bits_from_logits(z, labels), **size})
        if progress:
            progress.advance(task)
    return rows


@app.command("constructions")
def constructions_cmd() -> None:
    """List the hand-built transformers: name, parameters (defaults) and the idea."""
    from ..constructions import REGISTRY

    table = Table("name", "parameters (defaults)", "description")
    for name in REGISTRY:
        params = ", ".join(f"{k}={v!r}" if v is not inspect.Parameter.empty else k
                           for k, v in _defaults(name).items())
        table.add_row(name, params or "—", _description(name))
    console.print(table)


@app.command("construct")
def construct_cmd(
    name: str = typer.Argument(..., help="construction name (see `expressivity constructions`)"),
    param: list[str] = typer.Option([], "--param", "-p", help="KEY=VALUE, repeatable (e.g. k=2)"),  # noqa: B008
    lengths: str = typer.Option("10,100,1000", help="string lengths n: 10,100,1000 or a range 8-16"),
    samples: int = typer.Option(200, help="strings per length (half members when both exist)"),
    seed: int = typer.Option(0, help="seed of the string sampler"),
) -> None:
    """Build a construction and measure accuracy and cross-entropy (bits) per length."""
    from ..constructions import get

    with user_errors():
        check_int(samples, "--samples", min=1)
        check_int(seed, "--seed", min=0)
        c = get(name, **parse_params(param))  # the library validates and types each parameter
        ns = c.check_lengths(lengths, samples, "--lengths")
        with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), console=console, transient=True) as progress:
            rows = evaluate(c, ns, samples, seed, progress)
    s = c.summary()
    console.print(f"[bold]{name}[/] {c.params}: {c.description}")
    console.print(f"{c.attention} attention, d_model = {s['d_model']}, d_mlp = {s['d_mlp']}, "
                  f"layer norm = {s['layer_norm']}, nonzero params = {s['n_params_nonzero']}")
    table = Table("n", "members", "non-members", "accuracy", "CE (bits)", "layers", "heads", "params")
    for r in rows:
        table.add_row(str(r["n"]), str(r["members"]), str(r["non_members"]), f"{r['accuracy']:.4f}",
                      f"{r['ce_bits']:.6f}", str(r["layers"]), str(r["heads"]), str(r["params"]))
    console.print(table)
