"""Many runs at once: train_many (R runs as one batched model) vs the one-at-a-time loop of
train_run, same runs, same process, per model kind.

    OMP_NUM_THREADS=1 python bench/many_bench.py [--runs 1,8,32] [--steps 20] [--size quick|full]
        [--models transformer,lstm,...] [--device cpu] [--baseline-runs 2]

Rates are runs × steps per second of training (the evaluation after training is not timed):
the clock runs from the first optimiser step to the last (``on_step``), in process CPU time
with one torch thread on the CPU (so other load on a shared machine does not distort the
ratio; wall time on an accelerator). The loop's rate comes from ``--baseline-runs`` runs
trained one after another (every run of a group has the same shape, so its rate per run is
the rate of R runs in a row). Sizes: ``small`` — the quick preset at d_model 16, batch 8
(where one run's step is mostly per-call overhead); ``quick`` — the quick preset (lengths
2–12, batch 64) at d_model 64; ``full`` — the Chomsky sweep's sizes (examples/sweeps/chomsky.yaml: lengths
1–40, batch 128; transformer 5 blocks d_model 64, 8 heads; recurrent d_model 256).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

import torch

from expressivity.train import RunConfig, preset, train_run
from expressivity.train.config import MODELS
from expressivity.train.many import train_many


def sized(model: str, size: str, steps: int, device: str) -> RunConfig:
    if size == "small":
        return preset("quick", "parity", model=model, d_model=16, batch_size=8, steps=steps, test_lengths=(14,),
                      eval_batch=4, device=device)
    if size == "quick":
        return preset("quick", "parity", model=model, d_model=64, steps=steps, test_lengths=(14,), eval_batch=4,
                      device=device)
    fields = dict(layers=5, d_model=64, heads=8) if model == "transformer" else dict(layers=1, d_model=256)
    return preset("deletang", "parity_check", model=model, steps=steps, test_lengths=(41,), eval_batch=4,
                  device=device, **fields)


def _clock(device: str):
    return time.process_time if device == "cpu" else time.perf_counter


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def rate_many(cfgs: list[RunConfig], device: str) -> float:
    """Run-steps per second of train_many(cfgs), from its first step to its last."""
    clock, marks = _clock(device), []

    def on_step(cfg, step, loss):
        if step == 1 and not marks:
            _sync(device)
            marks.append(clock())
        marks.append(clock())

    train_many(cfgs, on_step=on_step)
    first_round = len(cfgs)  # the first step of every run is the warm-up round
    steps = sum(c.steps for c in cfgs) - first_round
    return steps / max(marks[-1] - marks[first_round], 1e-9)


def rate_loop(cfgs: list[RunConfig], device: str) -> float:
    """Run-steps per second of train_run over cfgs one after another (first step of each excluded)."""
    clock, total, steps = _clock(device), 0.0, 0
    for cfg in cfgs:
        marks: list[float] = []
        train_run(cfg, on_step=lambda s, loss, marks=marks: marks.append(clock()))
        total += marks[-1] - marks[0]
        steps += cfg.steps - 1
    return steps / max(total, 1e-9)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", default="1,8,32", help="R values, comma-separated")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--size", default="quick", choices=("small", "quick", "full"))
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--baseline-runs", type=int, default=2)
    args = ap.parse_args()
    if args.device == "cpu":
        torch.set_num_threads(1)
    runs = [int(r) for r in args.runs.split(",")]
    print(f"size {args.size}, {args.steps} steps, device {args.device}, torch {torch.__version__}")
    print(f"{'model':<12} {'R':>3} {'loop run-steps/s':>17} {'many run-steps/s':>17} {'ratio':>6}")
    for model in args.models.split(","):
        base = sized(model, args.size, args.steps, args.device)
        loop = rate_loop([replace(base, seed=100 + s) for s in range(args.baseline_runs)], args.device)
        for R in runs:
            many = rate_many([replace(base, seed=s) for s in range(R)], args.device)
            print(f"{model:<12} {R:>3} {loop:>17.1f} {many:>17.1f} {many / loop:>6.2f}", flush=True)


if __name__ == "__main__":
    main()
