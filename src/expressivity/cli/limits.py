"""CLI commands of the limits area: ``sensitivity`` (Lemma 5), ``restrict`` (Theorem 1), ``dyck-ce``."""

from __future__ import annotations

from types import SimpleNamespace

from ..limits.options import DYCK_CE, RESTRICT, SENSITIVITY
from . import app
from ._common import console
from .options import with_options
from .output import progress_bar, show


@app.command()
@with_options(SENSITIVITY)
def sensitivity(**given) -> None:
    """Flip one input, measure max_{j≠i}‖Δy_j^(k)‖ per layer, and compare with Hahn's Lemma 5 bound."""
    from ..limits import flip_sensitivity
    from ..limits.inputs import sensitivity_inputs
    from ..limits.listings import sensitivity_listing

    o = SimpleNamespace(**given)
    job = sensitivity_inputs(o)
    rep = _with_bar("flip sensitivity", len(job.lengths), lambda step: flip_sensitivity(
        job.model, job.language, job.lengths, n_strings=o.strings, seed=o.seed, progress=step))
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
    from ..limits import dependence_under_restriction, depth_reduction
    from ..limits.inputs import restrict_inputs
    from ..limits.listings import dependence_listing, reduction_listing

    o = SimpleNamespace(**given)
    job = restrict_inputs(o)
    rows = _with_bar("random restrictions", len(job.lengths), lambda step: dependence_under_restriction(
        job.model, job.lengths, C=o.free_fraction, n_restrictions=o.restrictions, n_completions=o.completions,
        seed=o.seed, as_hardmax=o.as_hardmax, progress=step))
    show(dependence_listing(rows, o.free_fraction))
    if o.plot is not None:
        from ..limits.plots import plot_dependence

        console.print(f"wrote {plot_dependence(rows, o.plot)}")
    if o.constructive:
        res = depth_reduction(job.model, o.n, job.reduction, seed=o.seed, as_hardmax=o.as_hardmax)
        show(reduction_listing(res), fold_notes=True)
        if res.note:
            console.print(f"[yellow]note:[/] {res.note}", highlight=False)


@app.command("dyck-ce")
@with_options(DYCK_CE)
def dyck_ce_cmd(**given) -> None:
    """Dyck-2 next-symbol prediction: excess cross-entropy vs n next to P_0·(1 − p)."""
    from ..limits.dyck_ce import config_from_options, dyck_ce
    from ..limits.listings import dyck_ce_listing

    cfg = config_from_options(**{k: given[k] for k in ("quick", "lengths", "steps", "models", "seed", "plot")})
    rows = _with_bar("training", len(cfg.lengths) * len(cfg.models), lambda step: dyck_ce(cfg, progress=step))
    show(dyck_ce_listing(rows))
    if given["plot"] is not None:
        from ..limits.plots import plot_dyck_ce

        console.print(f"wrote {plot_dyck_ce(rows, given['plot'])}")


def _with_bar(label: str, total: int, measure):
    """``measure(step)`` under a progress bar of ``total`` steps; ``step(*_)`` advances it."""
    with progress_bar() as prog:
        task = prog.add_task(label, total=total)
        return measure(lambda *_: prog.advance(task))
