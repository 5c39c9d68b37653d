"""CLI commands of the limits area: ``sensitivity`` (Lemma 5), ``restrict`` (Theorem 1), ``dyck-ce``."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from ..rules import check_int, parse_lengths, parse_params
from . import app
from ._common import console, output_path
from .options import AttentionName, LayerNormName, Lengths, Param, Plot, Seed
from .output import progress_bar, show


def _plot_path(plot: Path | None) -> None:
    """--plot checked before any work: a writable file path with an image suffix."""
    if plot is not None:
        from ..limits.plots import plot_format

        plot_format(output_path(plot, "--plot"), "--plot")


@app.command()
def sensitivity(
    model: str = typer.Option("parity", help="random | a construction (parity, first, dyck, ...) | a .safetensors file"),
    param: Param = (),
    language: str | None = typer.Option(None, help="language of the strings (default: the construction's; "
                                                      "uniform random strings for other models)"),
    lengths: Lengths = "8,16,32,64,128",
    strings: int = typer.Option(4, help="strings per length (all their n flips are batched)"),
    seed: Seed = 0,
    attention: AttentionName | None = typer.Option(None, help="random model: the attention (default softmax)"),
    layer_norm: LayerNormName | None = typer.Option(None, help="random model: the layer norm (default none)"),
    eps: float | None = typer.Option(None, help="random model: layer-norm eps (default 1e-5)"),
    lam: float | None = typer.Option(None, help="random model: λ (default 0.1)"),
    causal: bool | None = typer.Option(None, "--causal/--no-causal", help="random model: causal attention"),
    plot: Plot = None,
    json_out: Path | None = typer.Option(None, "--json", help="write the rows as JSON"),
) -> None:
    """Flip one input, measure max_{j≠i}‖Δy_j^(k)‖ per layer, and compare with Hahn's Lemma 5 bound."""
    from .. import languages
    from ..limits import flip_sensitivity
    from ..limits.listings import sensitivity_listing
    from ..limits.models import resolve_with_options

    _plot_path(plot)
    output_path(json_out, "--json")
    ns = parse_lengths(lengths, "--lengths")
    check_int(strings, "--strings", min=1)
    m = resolve_with_options(model, parse_params(param), seed=seed, attention=attention, layer_norm=layer_norm,
                             eps=eps, lam=lam, causal=causal, n_ctx=max(ns) + 1, vocab=2)
    lang = languages.get_language(language) if language else None
    with progress_bar() as prog:
        task = prog.add_task("flip sensitivity", total=len(ns))
        rep = flip_sensitivity(m, lang, ns, n_strings=strings, seed=seed, progress=lambda n: prog.advance(task))
    show(sensitivity_listing(rep, model))
    if rep.applicable:
        console.print(f"Lemma 5 applies; measured ≤ bound on every layer: {'yes' if rep.within_bound() else 'NO'}")
    else:
        console.print(f"[yellow]bound not applicable:[/] {rep.reason}", highlight=False)
    if plot is not None:
        from ..limits.plots import plot_sensitivity

        console.print(f"wrote {plot_sensitivity(rep, plot, title=f'{model}: n·Δ vs n')}")
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(rep.as_dict(), indent=1))
        console.print(f"wrote {json_out}")


@app.command()
def restrict(
    model: str = typer.Option("random", help="random (hardmax) | a construction | a .safetensors file"),
    param: Param = (),
    n: int = typer.Option(24, help="input length for the constructive depth reduction"),
    lengths: Lengths = "8,16,32,64",
    free_fraction: float = typer.Option(0.5, "--C", help="fraction C of free inputs (empirical)"),
    restrictions: int = typer.Option(4, help="random restrictions per length"),
    completions: int = typer.Option(8, help="random completions per restriction"),
    k: int = typer.Option(4, help="Stage 2/3: top-k key items per event"),
    q: float = typer.Option(0.4, help="Stage 3: probability of fixing a free input"),
    seed: Seed = 0,
    as_hardmax: bool = typer.Option(False, help="evaluate a softmax model with hardmax"),
    constructive: bool = typer.Option(True, help="also run the depth reduction (binary alphabets)"),
    plot: Plot = None,
) -> None:
    """Theorem 1: random restrictions (dependency count vs n) and the constructive depth reduction."""
    from ..limits import (
        ReductionConfig,
        TokenEncoder,
        dependence_under_restriction,
        depth_reduction,
    )
    from ..limits.depth_reduction import reduction_setup
    from ..limits.listings import dependence_listing, reduction_listing
    from ..limits.models import resolve_model

    _plot_path(plot)
    ns = parse_lengths(lengths, "--lengths")
    check_int(n, "--n", min=2)
    check_int(restrictions, "--restrictions", min=1)
    check_int(completions, "--completions", min=1)
    m = resolve_model(model, parse_params(param), seed=seed, attention="hardmax", n_ctx=max([*ns, n]) + 1, vocab=3)
    if model == "random":  # strings over {0, 1} read at a CLS token 2 after them
        m = TokenEncoder(m, symbols=(0, 1), suffix=(2,), readout=-1)
    red_cfg = ReductionConfig(k=k, q=q)
    if constructive:  # refuse a model or size the depth reduction cannot take before any work
        reduction_setup(m, n, red_cfg, as_hardmax)
    with progress_bar() as prog:
        task = prog.add_task("random restrictions", total=len(ns))
        rows = dependence_under_restriction(m, ns, C=free_fraction, n_restrictions=restrictions,
                                            n_completions=completions, seed=seed, as_hardmax=as_hardmax,
                                            progress=lambda _n: prog.advance(task))
    show(dependence_listing(rows, free_fraction))
    if plot is not None:
        from ..limits.plots import plot_dependence

        console.print(f"wrote {plot_dependence(rows, plot)}")
    if constructive:
        res = depth_reduction(m, n, red_cfg, seed=seed, as_hardmax=as_hardmax)
        show(reduction_listing(res), fold_notes=True)
        if res.note:
            console.print(f"[yellow]note:[/] {res.note}", highlight=False)


@app.command("dyck-ce")
def dyck_ce_cmd(
    quick: bool = typer.Option(True, help="the ~1-minute setting (n = 8, 16, 32; 150 steps)"),
    lengths: str | None = typer.Option(None, help="even lengths n, e.g. 8,16,32 (overrides the preset)"),
    steps: int | None = typer.Option(None, help="optimiser steps per (model, n)"),
    models: str = typer.Option("transformer,lstm", help="comma-separated: transformer, lstm"),
    seed: Seed = 0,
    plot: Plot = None,
) -> None:
    """Dyck-2 next-symbol prediction: excess cross-entropy vs n next to P_0·(1 − p)."""
    from ..limits.dyck_ce import config_from_options, dyck_ce
    from ..limits.listings import dyck_ce_listing

    _plot_path(plot)
    cfg = config_from_options(quick, lengths, steps, models, seed)
    with progress_bar() as prog:
        task = prog.add_task("training", total=len(cfg.lengths) * len(cfg.models))
        rows = dyck_ce(cfg, progress=lambda *_: prog.advance(task))
    show(dyck_ce_listing(rows))
    if plot is not None:
        from ..limits.plots import plot_dyck_ce

        console.print(f"wrote {plot_dyck_ce(rows, plot)}")
