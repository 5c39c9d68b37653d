"""Time a few work units of the split claims at a budget and project the whole claim.

    PYTHONPATH=src python bench/units_bench.py --budget standard [--per-model 1] [--workers 2]

For each claim with ``ClaimSpec.units`` it runs the first ``--per-model`` unit(s) of every
model (in parallel on the local driver, one torch thread each), then prints seconds per unit
and the projection ``mean seconds of the model's measured units × its units``, summed per
claim and divided by the cores. Units of one model differ in seed (same sizes) or in n
(dyck2-ce: the largest n is measured, so the projection is an upper bound). Nothing is
stored; use it to set ``budget_s`` and to plan a ``--standard``/``--full`` run.
"""

from __future__ import annotations

import argparse
from collections import defaultdict

from expressivity.report import all_specs
from expressivity.report.claims import SIZES, Context
from expressivity.runs import run_units


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", default="standard", choices=SIZES)
    ap.add_argument("--per-model", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--cores", type=int, default=2, help="cores of the machine the projection is for")
    args = ap.parse_args()
    ctx = Context(size=args.budget)
    chosen, counts = [], {}
    for spec in all_specs():
        if spec.units is None:
            continue
        units = spec.units(ctx)
        by_model = defaultdict(list)
        for u in units:
            by_model[u.key.split("/")[0]].append(u)
        for model, us in by_model.items():
            counts[(spec.id, model)] = len(us)
            picked = us[-args.per_model:]  # the last: the largest n for dyck2-ce
            chosen += [type(u)(f"{spec.id}::{u.key}", u.fn, u.args, u.kwargs) for u in picked]
    outcomes = run_units(chosen, workers=args.workers, start="spawn")
    secs = defaultdict(list)
    print(f"| unit ({args.budget}) | status | seconds |\n|---|---|---|")
    for o in sorted(outcomes, key=lambda o: o.unit.key):
        claim, key = o.unit.key.split("::")
        secs[(claim, key.split("/")[0])].append(o.seconds)
        print(f"| {o.unit.key} | {o.status} | {o.seconds:.1f} |")
    print("\n| claim | model | units | s/unit | projected unit-s |\n|---|---|---|---|---|")
    total = 0.0
    for (claim, model), n in sorted(counts.items()):
        per = sum(secs[(claim, model)]) / len(secs[(claim, model)])
        total += per * n
        print(f"| {claim} | {model} | {n} | {per:.1f} | {per * n:.0f} |")
    print(f"\ntotal {total:.0f} unit-seconds → {total / args.cores / 60:.1f} min on {args.cores} cores "
          "(training claims only; measured with the other units of this table running alongside)")


if __name__ == "__main__":
    main()
