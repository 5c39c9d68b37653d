"""CLI commands of the limits area: ``sensitivity`` (Lemma 5), ``restrict`` (Theorem 1), ``dyck-ce``."""

from __future__ import annotations

from types import SimpleNamespace

from ..limits.options import DYCK_CE, RESTRICT, SENSITIVITY
from ..rules import check_int, parse_lengths, parse_params
from . import app
from ._common import console, output_path
from .options import with_options
from .output import progress_bar, show


@app.command()
@with_options(SENSITIVITY)
def sensitivity(**given) -> None:
    """Flip one input, measure max_{j≠i}‖Δy_j^(k)‖ per layer, and compare with Hahn's Lemma 5 bound."""
    from .. import languages
    from ..limits import flip_sensitivity
    from ..limits.listings import sensitivity_listing
    from ..limits.models import resolve_with_options
    from ..limits.plots import check_plot_path

    o = SimpleNamespace(**given)
    check_plot_path(o.plot)
    output_path(o.json_out, "--json")
    ns = parse_lengths(o.lengths, "--lengths")
    check_int(o.strings, "--strings", min=1)
    m = resolve_with_options(o.model, parse_params(o.param), seed=o.seed, attention=o.attention,
                             layer_norm=o.layer_norm, eps=o.eps, lam=o.lam, causal=o.causal, n_ctx=max(ns) + 1, vocab=2)
    lang = languages.get_language(o.language) if o.language else None
    with progress_bar() as prog:
        task = prog.add_task("flip sensitivity", total=len(ns))
        rep = flip_sensitivity(m, lang, ns, n_strings=o.strings, seed=o.seed, progress=lambda n: prog.advance(task))
    show(sensitivity_listing(rep, o.model))
    if rep.applicable:
        console.print(f"Lemma 5 applies; measured ≤ bound on every layer: {'yes' if rep.within_bound() else 'NO'}")
    else:
        console.print(f"[yellow]bound not applicable:[/] {rep.reason}", highlight=False)
    if o.plot is not None:
        from ..limits.plots import plot_sensitivity

        console.print(f"wrote {plot_sensitivity(rep, o.plot, title=f'{o.model}: n·Δ vs n')}")
    if o.json_out is not None:
        rep.write_json(o.json_out)
        console.print(f"wrote {o.json_out}")


@app.command()
@with_options(RESTRICT)
def restrict(**given) -> None:
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
    from ..limits.plots import check_plot_path

    o = SimpleNamespace(**given)
    check_plot_path(o.plot)
    ns = parse_lengths(o.lengths, "--lengths")
    check_int(o.n, "--n", min=2)
    check_int(o.restrictions, "--restrictions", min=1)
    check_int(o.completions, "--completions", min=1)
    m = resolve_model(o.model, parse_params(o.param), seed=o.seed, attention="hardmax", n_ctx=max([*ns, o.n]) + 1,
                      vocab=3)
    if o.model == "random":  # strings over {0, 1} read at a CLS token 2 after them
        m = TokenEncoder(m, symbols=(0, 1), suffix=(2,), readout=-1)
    red_cfg = ReductionConfig(k=o.k, q=o.q)
    if o.constructive:  # refuse a model or size the depth reduction cannot take before any work
        reduction_setup(m, o.n, red_cfg, o.as_hardmax)
    with progress_bar() as prog:
        task = prog.add_task("random restrictions", total=len(ns))
        rows = dependence_under_restriction(m, ns, C=o.free_fraction, n_restrictions=o.restrictions,
                                            n_completions=o.completions, seed=o.seed, as_hardmax=o.as_hardmax,
                                            progress=lambda _n: prog.advance(task))
    show(dependence_listing(rows, o.free_fraction))
    if o.plot is not None:
        from ..limits.plots import plot_dependence

        console.print(f"wrote {plot_dependence(rows, o.plot)}")
    if o.constructive:
        res = depth_reduction(m, o.n, red_cfg, seed=o.seed, as_hardmax=o.as_hardmax)
        show(reduction_listing(res), fold_notes=True)
        if res.note:
            console.print(f"[yellow]note:[/] {res.note}", highlight=False)


@app.command("dyck-ce")
@with_options(DYCK_CE)
def dyck_ce_cmd(**given) -> None:
    """Dyck-2 next-symbol prediction: excess cross-entropy vs n next to P_0·(1 − p)."""
    from ..limits.dyck_ce import config_from_options, dyck_ce
    from ..limits.listings import dyck_ce_listing
    from ..limits.plots import check_plot_path

    check_plot_path(given["plot"])
    cfg = config_from_options(given["quick"], given["lengths"], given["steps"], given["models"], given["seed"])
    with progress_bar() as prog:
        task = prog.add_task("training", total=len(cfg.lengths) * len(cfg.models))
        rows = dyck_ce(cfg, progress=lambda *_: prog.advance(task))
    show(dyck_ce_listing(rows))
    if given["plot"] is not None:
        from ..limits.plots import plot_dyck_ce

        console.print(f"wrote {plot_dyck_ce(rows, given['plot'])}")
