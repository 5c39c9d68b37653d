"""CLI commands of the limits area: ``sensitivity`` (Lemma 5), ``restrict`` (Theorem 1), ``dyck-ce``."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..memory import check_memory
from ..rules import check_int, parse_lengths, parse_params
from . import app
from ._common import console, output_path, user_errors
from .options import AttentionName, LayerNormName, Lengths, Param, Plot, Seed
from .output import progress, table


def _plot_path(plot: Path | None) -> None:
    """--plot checked before any work: a writable file path with an image suffix."""
    if plot is not None:
        output_path(plot, "--plot")
        from ..limits.plots import plot_format

        with user_errors():
            plot_format(plot, "--plot")


def _progress() -> Progress:
    return progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn())


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
    from ..limits.models import resolve_model

    _plot_path(plot)
    output_path(json_out, "--json")
    with user_errors():
        ns = parse_lengths(lengths, "--lengths")
        check_int(strings, "--strings", min=1)
        random_opts = {"--attention": attention, "--layer-norm": layer_norm, "--eps": eps, "--lam": lam,
                       "--causal": causal}
        given = [k for k, v in random_opts.items() if v is not None]
        if model != "random" and given:
            raise ValueError(f"{', '.join(given)}: option(s) of --model random only; {model} has its own "
                             "architecture (use --param for a construction's parameters)")
        m = resolve_model(model, parse_params(param), seed=seed, attention=attention or "softmax",
                          layer_norm=layer_norm or "none", eps=1e-5 if eps is None else eps,
                          lam=lam, causal=bool(causal), n_ctx=max(ns) + 1, vocab=2)
        lang = languages.get_language(language) if language else None
        with _progress() as prog:
            task = prog.add_task("flip sensitivity", total=len(ns))
            rep = flip_sensitivity(m, lang, ns, n_strings=strings, seed=seed,
                                   progress=lambda n: prog.advance(task))
    out = table("n", "layer", "max_j≠i ‖Δy_j‖", "bound", "n·Δ", "Δ at readout", "Δ flipped", "Δ output",
                title=f"Lemma 5 on {model} ({rep.attention})")
    for r in rep.rows:
        out.add_row(str(r.n), str(r.layer), f"{r.measured_other:.3e}", _fmt(r.bound_other),
                      f"{r.n * r.measured_other:.3g}", f"{r.measured_readout:.3e}", f"{r.measured_flipped:.3g}",
                      "" if r.output_change is None else f"{r.output_change:.3e}")
    console.print(out)
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


def _fmt(x) -> str:
    return "n/a" if x is None else f"{x:.3e}"


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
    from ..limits.models import resolve_model

    _plot_path(plot)
    with user_errors():
        ns = parse_lengths(lengths, "--lengths")
        check_int(n, "--n", min=2)
        check_int(restrictions, "--restrictions", min=1)
        check_int(completions, "--completions", min=1)
        m = resolve_model(model, parse_params(param), seed=seed, attention="hardmax",
                          n_ctx=max([*ns, n]) + 1, vocab=3)
        if model == "random":  # strings over {0, 1} read at a CLS token 2 after them
            m = TokenEncoder(m, symbols=(0, 1), suffix=(2,), readout=-1)
        red_cfg = ReductionConfig(k=k, q=q)
        if constructive:  # refuse a model or size the depth reduction cannot take before any work
            reduction_setup(m, n, red_cfg, as_hardmax)
        with _progress() as prog:
            task = prog.add_task("random restrictions", total=len(ns))
            rows = dependence_under_restriction(m, ns, C=free_fraction, n_restrictions=restrictions,
                                                n_completions=completions, seed=seed, as_hardmax=as_hardmax,
                                                progress=lambda _n: prog.advance(task))
        out = table("n", "function", "free", "dependent (mean)", "max",
                    title=f"free inputs the output depends on (C = {free_fraction})", text=("function",))
        for r in rows:
            out.add_row(str(r.n), r.reference, str(r.free), f"{r.dependent:.2f}", str(r.dependent_max))
        console.print(out)
        if plot is not None:
            from ..limits.plots import plot_dependence

            console.print(f"wrote {plot_dependence(rows, plot)}")
        if constructive:
            res = depth_reduction(m, n, red_cfg, seed=seed, as_hardmax=as_hardmax)
            _print_reduction(res)


def _print_reduction(res) -> None:
    out = table("layer", "c in", "free", "after stage 1", "after stage 2", "after stage 3", "resamples", "c out",
                title=f"depth reduction, n = {res.n}")
    for lg in res.layers:
        out.add_row(str(lg.layer), str(lg.c), str(lg.free_start), str(lg.free_after_stage1),
                      str(lg.free_after_stage2), str(lg.free_after_stage3), str(lg.resamples), str(lg.c_after))
    console.print(out)
    rho = "".join("*" if v < 0 else str(v) for v in res.rho)
    console.print(f"ρ = {rho}   free = {res.n_free}   output depends on {len(res.dependency)} of them: "
                  f"{list(res.dependency)}   verified on {res.n_checked} completions: {res.verified}",
                  highlight=False)
    if res.counterexample:
        cx = res.counterexample
        console.print(f"PARITY counterexample: x = {''.join(map(str, cx['x']))} (parity {cx['parity']}), "
                      f"x' = {''.join(map(str, cx['x_prime']))} (parity {cx['parity_prime']}), same output "
                      f"{cx['output']}", highlight=False)
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
    from dataclasses import replace

    from ..limits.dyck_ce import QUICK, DyckCEConfig, dyck_ce

    _plot_path(plot)
    with user_errors():
        cfg = QUICK if quick else DyckCEConfig()
        over: dict = {"seed": seed, "models": models}
        if lengths:
            over["lengths"] = parse_lengths(lengths, "--lengths")
        if steps is not None:
            over["steps"] = steps
        cfg = replace(cfg, **over)
        for n in cfg.lengths:  # before the first model trains
            check_memory(cfg.bytes_needed(n), f"dyck-ce at n = {n}", hint="use smaller --lengths")
        with _progress() as prog:
            task = prog.add_task("training", total=len(cfg.lengths) * len(cfg.models))
            rows = dyck_ce(cfg, progress=lambda *_: prog.advance(task))
    out = table("model", "n", "CE", "optimal", "excess", "P_0·(1−p)", "P_0", "p", "accuracy",
                title="Dyck-2 next-symbol cross-entropy (bits/symbol)", text=("model",))
    for r in rows:
        out.add_row(r.model, str(r.n), f"{r.ce_bits:.3f}", f"{r.optimal_bits:.3f}", f"{r.excess_bits:.3f}",
                      f"{r.bound_bits:.3f}", f"{r.P0:.3f}", f"{r.p:.2f}", f"{r.accuracy:.3f}")
    console.print(out)
    if plot is not None:
        from ..limits.plots import plot_dyck_ce

        console.print(f"wrote {plot_dyck_ce(rows, plot)}")
