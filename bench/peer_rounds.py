"""One run against Delétang et al.'s JAX code, in interleaved rounds: theirs, then ours at an
earlier checkout (``--before``), then ours at this one, model by model, ``--rounds`` times.

    OMP_NUM_THREADS=1 python bench/peer_rounds.py [--rounds 3] [--steps 200] [--models ...]
        [--chomsky CHECKOUT --jax-python PATH/TO/JAX/python] [--before OTHER_CHECKOUT]

On a shared machine one model's rate moves by tens of percent between runs minutes apart, as
much as a change moves it; interleaving puts the three columns of a round seconds apart, and the
best of the rounds drops the worst slow-downs. Every column is steps per second of one run at
many_bench's ``peer_config`` (their task parity_check, lengths 2–12, batch 64, d_model 64; rnn
/ lstm with one layer), process CPU time on one thread: theirs by bench/chomsky_peer.py, ours
by ``train_run`` of the checkout's package in a child python (``PYTHONPATH=CHECKOUT/src``),
from its second step to its last. A column without its checkout is skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

from many_bench import MODELS, peer_checkout, peer_config, peer_rate

HERE = Path(__file__).resolve().parents[1]
# the child: a RunConfig's fields → train_run's steps/s, with the package it finds on PYTHONPATH
CHILD = """
import json, sys, time, torch
torch.set_num_threads(1)
from expressivity.train import RunConfig, train_run
fields = json.loads(sys.argv[1])
known = set(RunConfig.__dataclass_fields__)
cfg = RunConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in fields.items() if k in known})
marks = []
train_run(cfg, on_step=lambda s, loss: marks.append(time.process_time()))
print(json.dumps((cfg.steps - 1) / max(marks[-1] - marks[0], 1e-9)))
"""


def ours_rate(checkout: Path, fields: dict) -> float:
    """Steps/s of ``train_run`` with ``checkout``'s package, in a child python on one thread."""
    env = dict(os.environ, PYTHONPATH=str(checkout / "src"), OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(fields)], capture_output=True, text=True,
                          env=env)
    if done.returncode != 0:
        raise RuntimeError(f"ours at {checkout} failed: {done.stderr.strip().splitlines()[-1:]}")
    return float(done.stdout.strip().splitlines()[-1])


def before_checkout(before: str | None) -> Path | None:
    """The earlier checkout (its ``src/expressivity`` must exist), or None when not given."""
    if before is None:
        return None
    if not (Path(before) / "src" / "expressivity").is_dir():
        raise ValueError(f"--before {before!r} is not a checkout of expressivity (no src/expressivity)")
    return Path(before)


def best_table(rows: list[dict], columns: list[str]) -> list[str]:
    """The best of the rounds per model and column, and the ratios of the columns to the first."""
    lines = [f"{'model':<12}" + "".join(f"{c:>10}" for c in columns)
             + "".join(f"{c + '/' + columns[0]:>16}" for c in columns[1:])]
    for model in dict.fromkeys(r["model"] for r in rows):
        best = {c: max(r[c] for r in rows if r["model"] == model) for c in columns}
        lines.append(f"{model:<12}" + "".join(f"{best[c]:>10.1f}" for c in columns)
                     + "".join(f"{best[c] / best[columns[0]]:>16.2f}" for c in columns[1:]))
    return lines


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--chomsky", help="a neural_networks_chomsky_hierarchy checkout (their column)")
    ap.add_argument("--jax-python", default=sys.executable, help="the python (with jax) that runs their code")
    ap.add_argument("--before", help="an earlier checkout of this project (the 'before' column)")
    args = ap.parse_args(argv)
    models = args.models.split(",")
    try:
        if args.rounds < 1 or args.steps < 3:
            raise ValueError(f"--rounds must be ≥ 1 and --steps ≥ 3, got {args.rounds} and {args.steps}")
        if unknown := [m for m in models if m not in MODELS]:
            raise ValueError(f"--models: unknown {unknown}; known: {', '.join(MODELS)}")
        theirs, before = peer_checkout(args.chomsky, args.jax_python), before_checkout(args.before)
    except ValueError as e:
        ap.error(str(e))
    columns = ["theirs"] * (theirs is not None) + ["before"] * (before is not None) + ["ours"]
    rows = []
    print(f"{'round':<6}{'model':<12}" + "".join(f"{c:>10}" for c in columns), flush=True)
    for rnd in range(args.rounds):
        for model in models:
            cfg = peer_config(model, "quick", args.steps, "cpu")
            fields = asdict(cfg)
            row = {"model": model}
            if theirs is not None:
                row["theirs"] = peer_rate(theirs, args.jax_python, cfg)["steps_per_s"]
            if before is not None:
                row["before"] = ours_rate(before, fields)
            row["ours"] = ours_rate(HERE, fields)
            rows.append(row)
            print(f"{rnd:<6}{model:<12}" + "".join(f"{row[c]:>10.1f}" for c in columns), flush=True)
    print(f"best of {args.rounds} rounds, steps/s of one run:")
    print("\n".join(best_table(rows, columns)))


if __name__ == "__main__":
    main()
