"""The limits analyses as tables (``expressivity sensitivity | restrict | dyck-ce``).

* Lemma 5: per length n and layer, the measured max_{j≠i}‖Δy_j‖ after one flip, its bound,
  n·Δ, and the change at the readout, the flipped position and the output;
* Theorem 1: free inputs the output depends on under random restrictions, and the
  constructive depth reduction per layer (free inputs after each stage; ρ, the dependency
  and a PARITY counterexample below it);
* Dyck-2: the excess cross-entropy (bits/symbol) beside the bound P_0·(1 − p).
"""

from __future__ import annotations

from ..listing import Listing


def _sci(x) -> str:
    return "n/a" if x is None else f"{x:.3e}"


def sensitivity_listing(rep, model: str) -> Listing:
    """Lemma 5 on ``model``: one row per (n, layer) of a :class:`~.sensitivity.SensitivityReport`."""
    return Listing(("n", "layer", "max_j≠i ‖Δy_j‖", "bound", "n·Δ", "Δ at readout", "Δ flipped", "Δ output"),
                   tuple((str(r.n), str(r.layer), f"{r.measured_other:.3e}", _sci(r.bound_other),
                          f"{r.n * r.measured_other:.3g}", f"{r.measured_readout:.3e}", f"{r.measured_flipped:.3g}",
                          "" if r.output_change is None else f"{r.output_change:.3e}") for r in rep.rows),
                   title=f"Lemma 5 on {model} ({rep.attention})")


def dependence_listing(rows, free_fraction: float) -> Listing:
    """Random restrictions: free inputs and how many of them the output depends on, per n."""
    return Listing(("n", "function", "free", "dependent (mean)", "max"),
                   tuple((str(r.n), r.reference, str(r.free), f"{r.dependent:.2f}", str(r.dependent_max))
                         for r in rows),
                   title=f"free inputs the output depends on (C = {free_fraction})", text=("function",))


def reduction_listing(res) -> Listing:
    """The constructive depth reduction: one row per layer; ρ, the dependency and any PARITY
    counterexample as notes."""
    rho = "".join("*" if v < 0 else str(v) for v in res.rho)
    notes = [f"ρ = {rho}   free = {res.n_free}   output depends on {len(res.dependency)} of them: "
             f"{list(res.dependency)}   verified on {res.n_checked} completions: {res.verified}"]
    if res.counterexample:
        cx = res.counterexample
        notes.append(f"PARITY counterexample: x = {''.join(map(str, cx['x']))} (parity {cx['parity']}), "
                     f"x' = {''.join(map(str, cx['x_prime']))} (parity {cx['parity_prime']}), same output "
                     f"{cx['output']}")
    return Listing(("layer", "c in", "free", "after stage 1", "after stage 2", "after stage 3", "resamples", "c out"),
                   tuple((str(lg.layer), str(lg.c), str(lg.free_start), str(lg.free_after_stage1),
                          str(lg.free_after_stage2), str(lg.free_after_stage3), str(lg.resamples), str(lg.c_after))
                         for lg in res.layers),
                   title=f"depth reduction, n = {res.n}", notes=tuple(notes))


def dyck_ce_listing(rows) -> Listing:
    """Dyck-2 next-symbol cross-entropy per (model, n) beside the bound P_0·(1 − p)."""
    return Listing(("model", "n", "CE", "optimal", "excess", "P_0·(1−p)", "P_0", "p", "accuracy"),
                   tuple((r.model, str(r.n), f"{r.ce_bits:.3f}", f"{r.optimal_bits:.3f}", f"{r.excess_bits:.3f}",
                          f"{r.bound_bits:.3f}", f"{r.P0:.3f}", f"{r.p:.2f}", f"{r.accuracy:.3f}") for r in rows),
                   title="Dyck-2 next-symbol cross-entropy (bits/symbol)", text=("model",))
