"""The sweep cost estimate (``train/budget.py``) against measured training steps.

    PYTHONPATH=src python bench/budget_bench.py [--steps 20] [--sizes quick,full] [--models rnn,lstm,...]

For every model at the sizes of ``examples/sweeps/chomsky-quick.yaml`` (``quick``) and
``chomsky.yaml`` (``full``: recurrent width 256, Transformer 5 blocks × 8 heads × 64, batch
128; Stack-RNN / Tape-RNN with 501 cells on Reverse String, as there), it times
``train_run`` with S and 2S steps on one torch thread and prints the seconds per training step
— (t(2S) − t(S)) / S, so construction and evaluation cancel — beside the estimate's, computed
the same way from ``estimate_seconds``, and their ratio. Nothing is stored. Use it to
calibrate ``budget.py`` on the machine a sweep will run on.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

import torch

from expressivity.train import preset, train_run
from expressivity.train.budget import estimate_seconds

MODELS = ("rnn", "lstm", "stack_rnn", "tape_rnn", "transformer")
SIZES = {  # (recurrent d_model, batch, transformer (layers, heads, d_model), memory cells above regular)
    "quick": (32, 32, (2, 2, 32), 0),
    "full": (256, 128, (5, 8, 64), 501),
}


def config(model: str, size: str, task: str, steps: int):
    d, batch, (layers, heads, d_t), cells = SIZES[size]
    shape = ({"layers": layers, "heads": heads, "d_model": d_t} if model == "transformer"
             else {"layers": 1, "d_model": d})
    memory = {"memory_size": cells} if cells and model in ("stack_rnn", "tape_rnn") and task != "parity_check" else {}
    return preset("deletang", task, model=model, steps=steps, batch_size=batch, eval_batch=2, test_lengths=(41,),
                  **shape, **memory)


def per_step(cfg, steps: int) -> tuple[float, float]:
    """(measured, estimated) seconds per training step."""
    times = []
    for s in (steps, 2 * steps):
        c = replace(cfg, steps=s)
        t0 = time.perf_counter()
        train_run(c)
        times.append(time.perf_counter() - t0)
    est = (estimate_seconds(replace(cfg, steps=2 * steps)) - estimate_seconds(replace(cfg, steps=steps))) / steps
    return (times[1] - times[0]) / steps, est


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--sizes", default="quick,full")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--tasks", default="parity_check,reverse_string")
    args = ap.parse_args()
    torch.set_num_threads(1)
    train_run(config("lstm", "quick", "parity_check", 5))  # first-use costs (optimiser, torch._dynamo) paid here
    print(f"{'model':<12} {'size':<6} {'task':<15} {'measured s/step':>16} {'estimate':>10} {'ratio':>7}")
    for size in args.sizes.split(","):
        for model in args.models.split(","):
            for task in args.tasks.split(","):
                m, e = per_step(config(model, size, task, args.steps), args.steps)
                print(f"{model:<12} {size:<6} {task:<15} {m:16.4f} {e:10.4f} {m / e:7.2f}", flush=True)


if __name__ == "__main__":
    main()
