"""One GPU: runs × steps per second per model kind at the Chomsky sweep's full size, one run
and R runs at once (train_many), and the projected wall time of examples/sweeps/chomsky.yaml.

    python bench/gpu_bench.py [--device cuda] [--steps 12] [--big 32] [--models ...] [--json FILE]
    python bench/gpu_bench.py --device cpu --steps 3 --big 4 --models rnn,transformer   # smoke check

Meant to finish in under 5 minutes on one GPU. Rates are wall-clock (CUDA synchronised) from
the second optimiser step to the last: the first is the warm-up (kernel selection, caches).
``eval_length_s`` is the wall time of one test length of one run (a forward pass of
eval_batch strings at length 100). ``--json FILE`` writes ``{"device", "runs",
"run_steps_per_s": {model: rate at R = --big}, "eval_length_s"}``, which
``expressivity sweep FILE.yaml --dry-run --gpu-bench FILE`` reads instead of its assumed GPU
throughput (train/budget.py ``GPU_RUN_STEPS_PER_S``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from many_bench import rate_many, sized  # noqa: E402

from expressivity.train import evaluate_lengths, load_sweep  # noqa: E402
from expressivity.train.budget import gpu_estimate  # noqa: E402
from expressivity.train.config import MODELS  # noqa: E402
from expressivity.train.devices import resolve_device  # noqa: E402
from expressivity.train.recognizers import build  # noqa: E402

SWEEP = Path(__file__).resolve().parents[1] / "examples" / "sweeps" / "chomsky.yaml"


def eval_length_s(device: str) -> float:
    cfg = replace(sized("transformer", "full", 1, device), test_lengths=(100,), eval_batch=32)
    task = cfg.make_task()
    model = build(cfg, task).to(resolve_device(device))
    evaluate_lengths(model, cfg, task)  # warm-up
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    evaluate_lengths(model, cfg, task)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--big", type=int, default=32, help="R of the batched row")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    where = resolve_device(args.device)  # one line if absent
    name = torch.cuda.get_device_name(where) if where.type == "cuda" else str(where)
    print(f"device {name}, full size, {args.steps} steps, torch {torch.__version__}")
    print(f"{'model':<12} {'R=1 run-steps/s':>16} {f'R={args.big} run-steps/s':>17} {'gain':>6}")
    rates: dict[str, float] = {}
    for model in args.models.split(","):
        base = sized(model, "full", args.steps, args.device)
        one = rate_many([base], args.device)
        many = rate_many([replace(base, seed=s) for s in range(args.big)], args.device)
        rates[model] = many
        print(f"{model:<12} {one:>16.1f} {many:>17.1f} {many / one:>6.1f}", flush=True)
    ev = eval_length_s(args.device)
    bench = {"device": name, "runs": args.big, "run_steps_per_s": rates, "eval_length_s": ev}
    est = gpu_estimate(load_sweep(SWEEP), args.big, bench)
    print(f"one test length of one run: {ev * 1e3:.1f} ms")
    print(f"examples/sweeps/chomsky.yaml on this device, grouped ({est['groups']} groups): "
          f"{est['gpu_hours']:.1f} h projected (kinds not measured here use the assumed rates)")
    if args.json is not None:
        args.json.write_text(json.dumps(bench, indent=1))
        print(f"written {args.json} (sweep --dry-run --gpu-bench {args.json})")


if __name__ == "__main__":
    main()
