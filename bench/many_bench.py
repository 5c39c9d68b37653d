"""Many runs at once: train_many (R runs as one batched model) vs the one-at-a-time loop of
train_run, same runs, same process, per model kind.

    OMP_NUM_THREADS=1 python bench/many_bench.py [--runs 1,8,32] [--steps 20] [--size quick|full]
        [--models transformer,lstm,...] [--device cpu] [--baseline-runs 2] [--flops] [--phases]
        [--chomsky CHECKOUT --jax-python PATH/TO/JAX/python]

Rates are runs × steps per second of training (the evaluation after training is not timed):
the clock runs from the first optimiser step to the last (``on_step``), in process CPU time
with one torch thread on the CPU (so other load on a shared machine does not distort the
ratio; wall time on an accelerator). The loop's rate comes from ``--baseline-runs`` runs
trained one after another (every run of a group has the same shape, so its rate per run is
the rate of R runs in a row). Sizes: ``small`` — the quick preset at d_model 16, batch 8
(where one run's step is mostly per-call overhead); ``quick`` — the quick preset (lengths
2–12, batch 64) at d_model 64; ``full`` — the Chomsky sweep's sizes (examples/sweeps/chomsky.yaml: lengths
1–40, batch 128; transformer 5 blocks d_model 64, 8 heads; recurrent d_model 256).

``--flops``: FLOPs of one run's step (:func:`step_flops`, the matrix products) and the FLOP/s the
loop and R at once reach, against a 1024² matmul on the same thread. ``--chomsky CHECKOUT``: the
same models, batch and lengths trained by Delétang et al.'s JAX code (bench/chomsky_peer.py, run
under ``--jax-python``, one XLA thread), steps/s of one run against ours one at a time and R at
once (their task, parity_check, for ours too; rnn / lstm with one layer there: their models
have one core). Without a checkout that
column is skipped. ``--phases``: where one run's step goes (:func:`step_phases`), at the peer's
config.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

from expressivity.train import RunConfig, preset, recognizers, train_run
from expressivity.train.config import MODELS
from expressivity.train.devices import to_device
from expressivity.train.loop import draw_length, loss_and_gradients, make_optimizer, optimizer_step
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


PEER = Path(__file__).resolve().parent / "chomsky_peer.py"


def parse_runs(text: str) -> list[int]:
    """``"1,8,32"`` → [1, 8, 32]; every R a positive integer."""
    parts = [p.strip() for p in text.split(",")]
    if not all(p.isdigit() and int(p) >= 1 for p in parts):
        raise ValueError(f"--runs must be positive integers separated by commas, got {text!r}")
    return [int(p) for p in parts]


def peer_checkout(chomsky: str | None, jax_python: str) -> str | None:
    """The peer checkout to time against, or None (the column is skipped) when none is given or
    ``chomsky`` is not a directory; a directory that is not their checkout, or a ``jax_python``
    that is not a file, is an error."""
    if not chomsky or not Path(chomsky).is_dir():
        print(f"many_bench: no neural_networks_chomsky_hierarchy checkout at {chomsky!r} "
              "(--chomsky PATH); the JAX column is skipped", file=sys.stderr)
        return None
    if not (Path(chomsky) / "experiments" / "training.py").is_file():
        raise ValueError(f"--chomsky {chomsky!r} is not a neural_networks_chomsky_hierarchy checkout "
                         "(no experiments/training.py)")
    if not Path(jax_python).is_file():
        raise ValueError(f"--jax-python must be a python with jax, dm-haiku and optax, got {jax_python!r} (no such file)")
    return chomsky


def peer_config(model: str, size: str, steps: int, device: str) -> RunConfig:
    """sized() on their task, parity_check (uniform bit strings, the class their parity: our
    ParityCheck, where the quick sizes train the language PARITY, whose balanced batches and
    near-miss negatives cost more to draw), with one recurrent layer for rnn / lstm: their RNN
    and LSTM have one core."""
    cfg = sized(model, size, steps, device)
    if cfg.task != "parity_check":
        cfg = replace(cfg, task="parity_check", kind="classification")
    return replace(cfg, layers=1) if model in ("rnn", "lstm") else cfg


def peer_rate(checkout: str, jax_python: str, cfg: RunConfig, timeout: float = 480) -> dict:
    """Their steps/s of one run of ``cfg``'s sizes (bench/chomsky_peer.py under ``jax_python``)."""
    lo, hi = cfg.train_lengths
    cmd = [jax_python, str(PEER), checkout, "--models", cfg.model, "--steps", str(cfg.steps), "--d-model",
           str(cfg.d_model), "--layers", str(cfg.layers), "--heads", str(cfg.heads), "--batch",
           str(cfg.batch_size), "--lengths", f"{lo}-{hi}", "--lr", str(cfg.lr)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"chomsky_peer.py failed: {done.stderr.strip().splitlines()[-1:]}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    return out["models"][cfg.model] | {"jax": out["jax"]}


def step_flops(cfg: RunConfig) -> tuple[float, int]:
    """(FLOPs of one training step of one run, weights): 6·N·B·E[T] for the N weights of the
    matrices applied at each of the B·T tokens (forward 2·N per token, backward twice that;
    embeddings are a lookup and not counted), plus 12·d·B·E[T²] per transformer block for the
    attention scores and their mix; T = the model's sequence length, averaged over the training
    lengths. Elementwise work (activations, stack and tape updates, Adam) is not counted."""
    task = cfg.make_task()
    model = recognizers.build(cfg, task)
    lookup = {id(m.weight) for m in model.modules() if isinstance(m, torch.nn.Embedding)}
    dense = sum(p.numel() for name, p in model.named_parameters() if p.dim() >= 2 and id(p) not in lookup
                and name != "W_E" and not name.rsplit(".", 1)[-1].startswith(("b_", "bias")))  # (h, d_head) biases
    rng = np.random.default_rng(0)
    lengths = task.valid_lengths(range(cfg.train_lengths[0], cfg.train_lengths[1] + 1))
    ts = np.array([task.sample_batch(rng, 1, n)["input"].shape[1] for n in lengths], dtype=float)
    attention = 12 * cfg.layers * cfg.d_model * np.mean(ts ** 2) if cfg.model == "transformer" else 0.0
    n_params = sum(p.numel() for p in model.parameters())
    return float(cfg.batch_size * (6 * dense * ts.mean() + attention)), n_params


def matmul_peak(n: int = 1024, reps: int = 5) -> float:
    """FLOP/s of an n×n float32 matrix product on this thread (best of ``reps``): the core's
    practical peak, 2n³ per product."""
    a, b = torch.randn(n, n), torch.randn(n, n)
    best = float("inf")
    for _ in range(reps):
        t0 = time.process_time()
        a @ b
        best = min(best, time.process_time() - t0)
    return 2 * n ** 3 / max(best, 1e-9)


def step_phases(cfg: RunConfig, steps: int = 60, warm: int = 10) -> dict[str, float]:
    """Milliseconds per step of one run (train_run's step, phase by phase, CPU time, the mean
    over ``steps − warm`` steps): sampling the batch, the loss and its gradient (forward and
    backward: the rnn computes both in one call), clip and Adam."""
    task, clock = cfg.make_task(), time.process_time
    model = recognizers.build(cfg, task)
    opt = make_optimizer(model, cfg.lr, torch.device("cpu"))
    params = list(model.parameters())
    rng = np.random.default_rng(cfg.seed)
    lengths = task.valid_lengths(range(cfg.train_lengths[0], cfg.train_lengths[1] + 1))
    total = np.zeros(3)
    for step in range(steps):
        t0 = clock()
        batch = to_device(task.sample_batch(rng, cfg.batch_size, draw_length(rng, lengths)), torch.device("cpu"))
        t1 = clock()
        opt.zero_grad(set_to_none=True)
        loss_and_gradients(cfg, task, model, batch, torch.device("cpu"))
        t2 = clock()
        optimizer_step(params, opt, cfg.grad_clip)
        if step >= warm:
            total += [t1 - t0, t2 - t1, clock() - t2]
    return dict(zip(("data", "loss+grad", "clip+adam"), (total * 1e3 / (steps - warm)).tolist()))


def _options() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", default="1,8,32", help="R values, comma-separated")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--size", default="quick", choices=("small", "quick", "full"))
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--baseline-runs", type=int, default=2)
    ap.add_argument("--chomsky", help="a neural_networks_chomsky_hierarchy checkout: time their JAX step too")
    ap.add_argument("--jax-python", default=sys.executable, help="the python (with jax) that runs their code")
    ap.add_argument("--flops", action="store_true", help="FLOPs per step and FLOP/s reached, against a matmul's")
    ap.add_argument("--phases", action="store_true", help="one run's step in ms, phase by phase (the loop's config)")
    return ap


def _check(args) -> list[int]:
    runs = parse_runs(args.runs)
    unknown = sorted(set(args.models.split(",")) - set(MODELS))
    if unknown or args.steps < 3 or args.baseline_runs < 1:
        raise ValueError(f"--models must be among {list(MODELS)} (got {unknown}), --steps >= 3 and "
                         f"--baseline-runs >= 1 (got {args.steps}, {args.baseline_runs})")
    return runs


def print_peer(models: list[str], checkout: str, args, runs: list[int], rates: dict) -> None:
    """Their steps/s of one run against ours, one at a time and R at once (the largest R); ours
    from ``rates`` (the table above) where the config is the same."""
    R = max(runs)
    print(f"JAX peer (their code, one XLA thread), R = {R} at once for ours:")
    print(f"{'model':<12} {'theirs steps/s':>15} {'ours loop':>10} {'ours/theirs':>12} {'ours many':>10} "
          f"{'many/theirs':>12} {'params theirs/ours':>19} {'compile s':>10}")
    for model in models:
        cfg = peer_config(model, args.size, args.steps, args.device)
        theirs = peer_rate(checkout, args.jax_python, cfg)
        if cfg == sized(model, args.size, args.steps, args.device):
            loop, many = rates[model][R]
        else:
            loop = rate_loop([replace(cfg, seed=100 + s) for s in range(args.baseline_runs)], args.device)
            many = rate_many([replace(cfg, seed=s) for s in range(R)], args.device)
        rate = theirs["steps_per_s"]
        print(f"{model:<12} {rate:>15.1f} {loop:>10.1f} {loop / rate:>12.2f} {many:>10.1f} {many / rate:>12.2f} "
              f"{theirs['params']:>9}/{step_flops(cfg)[1]:<9} {theirs['compile_s']:>10.1f}", flush=True)
    print(f"jax {theirs['jax']}")


def print_flops(models: list[str], args, rates: dict) -> None:
    """FLOPs per run-step (step_flops) and the FLOP/s the loop and R at once reach."""
    peak = matmul_peak()
    print(f"FLOPs (matmuls only; 1024² float32 matmul on this thread: {peak / 1e9:.1f} GFLOP/s):")
    print(f"{'model':<12} {'MFLOP/run-step':>15} {'weights':>8} {'R':>3} {'loop GFLOP/s':>13} {'many GFLOP/s':>13} "
          f"{'many/peak':>10}")
    for model in models:
        flops, n = step_flops(sized(model, args.size, args.steps, args.device))
        for R, (loop, many) in rates[model].items():
            print(f"{model:<12} {flops / 1e6:>15.2f} {n:>8} {R:>3} {flops * loop / 1e9:>13.2f} "
                  f"{flops * many / 1e9:>13.2f} {flops * many / peak:>10.2f}", flush=True)


def main(argv: list[str] | None = None) -> None:
    ap = _options()
    args = ap.parse_args(argv)
    try:
        runs = _check(args)
        checkout = peer_checkout(args.chomsky, args.jax_python)
    except ValueError as e:
        ap.error(str(e))
    if args.device == "cpu":
        torch.set_num_threads(1)
    models = args.models.split(",")
    print(f"size {args.size}, {args.steps} steps, device {args.device}, torch {torch.__version__}")
    print(f"{'model':<12} {'R':>3} {'loop run-steps/s':>17} {'many run-steps/s':>17} {'ratio':>6}")
    rates: dict = {}
    for model in models:
        base = sized(model, args.size, args.steps, args.device)
        loop = rate_loop([replace(base, seed=100 + s) for s in range(args.baseline_runs)], args.device)
        for R in runs:
            many = rate_many([replace(base, seed=s) for s in range(R)], args.device)
            rates.setdefault(model, {})[R] = (loop, many)
            print(f"{model:<12} {R:>3} {loop:>17.1f} {many:>17.1f} {many / loop:>6.2f}", flush=True)
    if args.flops:
        print_flops(models, args, rates)
    if args.phases:
        for model in models:
            ms = step_phases(peer_config(model, args.size, args.steps, args.device))
            print(f"{model:<12} ms per step: " + ", ".join(f"{k} {v:.2f}" for k, v in ms.items())
                  + f", total {sum(ms.values()):.2f}", flush=True)
    if checkout is not None:
        print_peer(models, checkout, args, runs, rates)


if __name__ == "__main__":
    main()
