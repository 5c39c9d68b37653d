"""Benchmark: exact region counting, ours (float64, numpy) vs regioncam (Rust, float32).

Same random ReLU nets for both (weights N(0, 1/fan_in), biases N(0, 0.5²), drawn once in
float32 and given to both tools). 2-D: the square [−1, 1]² (``regioncam.Regioncam(size=1)``
vs ``Plane.square(1)``); 1-D: the segment [−1, 1] (``regioncam.Regioncam1D((−1, 1))`` vs
``Segment(−1, 1)``). Reported: activation regions found by each, seconds (best of ``--repeat``),
regions/s and the ratio ours/regioncam of regions/s. Times include lowering the torch model (ours) and the
``linear``/``relu`` calls (regioncam); one warm-up run of each tool is excluded.

Run single-threaded for fairness (regioncam is single-threaded):
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 .venv/bin/python bench/regions_bench.py
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
import torch

from expressivity.regions import Plane, Segment, count_regions

NETS_2D = ([2, 64, 64, 64], [2, 128, 128, 128], [2, 256, 256, 256], [2, 1024])
NETS_1D = ([1, 1024], [1, 256, 256, 256, 256], [1, 1024, 1024, 1024])


def random_layers(widths, seed):
    rng = np.random.default_rng(seed)
    out = []
    for a, b in itertools.pairwise(widths):
        W = (rng.normal(size=(a, b)) / np.sqrt(a)).astype(np.float32)
        bias = (0.5 * rng.normal(size=b)).astype(np.float32)
        out.append((W, bias))
    return out


def as_sequential(layers):
    mods = []
    for W, b in layers:
        lin = torch.nn.Linear(*W.shape).double()
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(W.T.astype(np.float64)))
            lin.bias.copy_(torch.from_numpy(b.astype(np.float64)))
        mods += [lin, torch.nn.ReLU()]
    return torch.nn.Sequential(*mods)


def run_regioncam(layers, dim):
    import regioncam

    t = time.perf_counter()
    rc = regioncam.Regioncam(size=1.0) if dim == 2 else regioncam.Regioncam1D((-1.0, 1.0))
    for W, b in layers:
        rc.linear(W, b)
        rc.relu()
    n = rc.num_faces if dim == 2 else rc.num_edges
    return n, time.perf_counter() - t


def run_ours(layers, dim):
    net = as_sequential(layers)
    dom = Plane.square(1.0) if dim == 2 else Segment([-1.0], [1.0])
    t = time.perf_counter()
    r = count_regions(net, dom)
    return r.activation_regions, time.perf_counter() - t


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=5, help="best of N runs (rows under 10 s)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="only the two smallest 2-D nets and the first 1-D net")
    args = ap.parse_args(argv)
    rows = []
    nets = [(w, 2) for w in NETS_2D] + [(w, 1) for w in NETS_1D]
    if args.quick:
        nets = [(NETS_2D[0], 2), (NETS_2D[1], 2), (NETS_1D[0], 1)]
    print(f"{'net':<26}{'dim':>4}{'ours n':>10}{'rc n':>10}{'ours s':>10}{'rc s':>10}"
          f"{'ours reg/s':>13}{'rc reg/s':>12}{'ratio':>8}", flush=True)
    warm = random_layers([2, 8, 8], 99)  # one-time import/first-call costs of both tools
    run_ours(warm, 2), run_regioncam(warm, 2), run_ours(random_layers([1, 8], 99), 1)
    for widths, dim in nets:
        layers = random_layers(widths, args.seed)
        best_o, best_r = np.inf, np.inf
        for _k in range(args.repeat):
            n_o, t_o = run_ours(layers, dim)
            n_r, t_r = run_regioncam(layers, dim)
            best_o, best_r = min(best_o, t_o), min(best_r, t_r)
            if t_o + t_r > 10.0:
                break  # long rows: one run is stable enough
        ro, rr = n_o / best_o, n_r / best_r
        name = "-".join(map(str, widths))
        rows.append((name, dim, n_o, n_r, best_o, best_r, ro, rr, ro / rr))
        print(f"{name:<26}{dim:>4}{n_o:>10}{n_r:>10}{best_o:>10.3f}{best_r:>10.3f}"
              f"{ro:>13.0f}{rr:>12.0f}{ro / rr:>8.2f}", flush=True)
    return rows


if __name__ == "__main__":
    main()
