"""Compiler benchmark: compile time, FLOP ratio and measured evaluation-time ratio.

For each random maxout network: compile it (hardmax), evaluate compiled transformer and the
native MaxoutNetwork on the same batch of 4096 points, and print
    time ratio = t(transformer) / t(maxout),   FLOP ratio = FLOPs(transformer) / FLOPs(maxout),
and their quotient (target ≤ 1.5: the implementation adds little beyond the construction's
inherent cost). The transformer is timed through `CompiledModel.evaluate`
(input preparation, cache-sized chunks, read-out included). Run:  OMP_NUM_THREADS=1 python bench/compile_bench.py [--quick]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from expressivity.compile import compile_maxout, complexity_report
from expressivity.cpwl import MaxoutNetwork

SIZES = [  # (in_dim, width, depth, rank)
    (4, 16, 2, 2),
    (8, 32, 4, 4),
    (8, 64, 4, 8),
    (16, 128, 6, 6),
    (16, 256, 8, 8),
]


def best_of(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def run(sizes, batch: int, repeats: int) -> list[dict]:
    rows = []
    for d, m, depth, p in sizes:
        net = MaxoutNetwork.random(d, [m] * depth, p, seed=0)
        t0 = time.perf_counter()
        cm = compile_maxout(net, domain=(-1.0, 1.0))
        t_compile = time.perf_counter() - t0
        x = np.random.default_rng(0).uniform(-1, 1, (batch, d))
        cm.evaluate(x)  # warm-up
        t_tf = best_of(lambda cm=cm, x=x: cm.evaluate(x), repeats)
        net(x)
        t_net = best_of(lambda net=net, x=x: net(x), repeats)
        err = float(np.abs(cm.evaluate(x) - net(x)).max())
        rep = complexity_report(net, cm)
        rows.append(dict(size=f"d{d} {m}×{depth} rank {p}", compile_s=t_compile, blocks=cm.n_blocks,
                         flop_ratio=rep.flop_ratio, t_tf=t_tf, t_net=t_net, time_ratio=t_tf / t_net,
                         nz_ratio=rep.param_ratio_nonzero, err=err))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="skip the two largest networks")
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    sizes = SIZES[:3] if args.quick else SIZES
    rows = run(sizes, args.batch, args.repeats)
    print(f"torch threads: {torch.get_num_threads()}, batch {args.batch}, best of {args.repeats}")
    print("| network | compile (s) | blocks | non-zero param ratio | FLOP ratio | t transformer (s) "
          "| t maxout (s) | time ratio | time ratio / FLOP ratio | max error |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['size']} | {r['compile_s']:.3f} | {r['blocks']} | {r['nz_ratio']:.2f} | {r['flop_ratio']:.1f} "
              f"| {r['t_tf']:.4f} | {r['t_net']:.4f} | {r['time_ratio']:.1f} | "
              f"{r['time_ratio'] / r['flop_ratio']:.2f} | {r['err']:.1e} |")


if __name__ == "__main__":
    main()
