"""``expressivity verify``: a compiled model measured against its source network.

On ``points`` seeded random points of the domain box (its corners added, :func:`sample_box`)
the error is max |F(x) − f(x)|; it passes when that is ≤ output_error + 2·roundoff_error —
the σ_λ bound (0 for hardmax) plus the float64 round-off bound of the compiled model, twice
because the reference f(x) is computed in float64 too (a relative tolerance, as it scales
with the values). The source network is the one saved in the model by ``compile`` unless a
spec (or torch weights with their layer shapes) is given.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..memory import check_memory
from ..rules import check_int


@dataclass(frozen=True)
class Verification:
    """The measured error, whether it is within the bound, and the table's rows
    (quantity, maxout net, transformer)."""

    error: float
    ok: bool
    rows: tuple[tuple[str, str, str], ...]


def verify_compiled(model: Path, spec: Path | None = None, layers: Path | None = None, *, points: int = 10_000,
                    seed: int = 0) -> Verification:
    """Measure the compiled ``model`` against ``spec`` (default: its saved source network)."""
    from ..compile import complexity_report, load_compiled
    from ..cpwl.maxout import sample_box
    from .torch_in import load_source

    if points < 1:
        raise ValueError(f"--points must be >= 1, got {points}")
    check_int(seed, "--seed", min=0)
    if spec is None and layers is not None:
        raise ValueError("--layers describes torch weights given as SPEC; give SPEC too (or leave --layers out)")
    cm = load_compiled(model)
    if spec is None and cm.net is None:
        raise ValueError(f"{model} holds no source network (written before `expressivity compile` saved it); "
                         "give the SPEC it was compiled from: expressivity verify MODEL SPEC")
    net = cm.net if spec is None else load_source(spec, layers)[0]
    if cm.in_dim != net.in_dim or cm.transformer.cfg.d_out != net.out_dim:
        raise ValueError(f"{model} has input/output sizes ({cm.in_dim}, {cm.transformer.cfg.d_out}) "
                         f"but the network of the spec {spec} has ({net.in_dim}, {net.out_dim})")
    # the points, both outputs and the source net's widest activations (the compiled model batches itself)
    per_point = 8 * (net.in_dim + 2 * net.out_dim + sum(l.width for l in net.layers)
                     + max(l.width * l.rank for l in net.layers))
    check_memory(points * per_point, f"verify --points {points}", hint="use fewer --points")
    x = sample_box(cm.lo, cm.hi, points, seed)
    err = float(np.abs(cm.evaluate(x) - net(x)).max())
    rows = [("max |error| (measured)", f"{err:.3e}", ""), ("error bound", f"{cm.error_bound():.3e}",
            "exact (hardmax)" if cm.attention == "hardmax" else f"σ_λ, λ = {cm.lam:g}")]
    return Verification(err, err <= cm.output_error + 2 * cm.roundoff_error,
                        tuple(rows + list(complexity_report(net, cm).rows())))
