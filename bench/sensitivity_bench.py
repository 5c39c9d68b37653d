"""Benchmark: batched flip sensitivity vs a per-position loop on the same model.

Both compute, for B strings of length n and every position i, max_{j≠i}‖Δy_j^(k)‖ per layer k
(float64). The loop runs one forward pass per flipped position (the base pass is shared);
the batched version builds all flipped copies as one batch (chunked only by the memory budget)
and computes block 1 of every copy by exact rank-one softmax updates; blocks 2..L need full
passes (Θ(n·T²) work for n copies, the same as the loop), so the gain shrinks with depth.

    OMP_NUM_THREADS=1 .venv/bin/python bench/sensitivity_bench.py [--lengths 256,1024] [--strings 1]
"""

from __future__ import annotations

import argparse
import copy
import time

import numpy as np
import torch

from expressivity.limits import measure_flips
from expressivity.limits.models import random_transformer
from expressivity.transformer import Transformer


@torch.no_grad()
def loop_flips(model: Transformer, ids: np.ndarray) -> np.ndarray:
    """Reference: one forward pass per flipped position. Returns max_{i,j≠i}‖Δy_j^(k)‖ (L,)."""
    m64 = copy.deepcopy(model).to(torch.float64).eval()
    x = torch.as_tensor(ids)
    base = m64.residuals(x)[1:]  # (L, B, T, d)
    K = model.cfg.d_vocab
    other = torch.zeros(model.cfg.n_layers, dtype=torch.float64)
    for i in range(ids.shape[1]):  # the per-position loop being measured
        xf = x.clone()
        xf[:, i] = (xf[:, i] + 1) % K
        d = torch.linalg.vector_norm(m64.residuals(xf)[1:] - base, dim=-1)  # (L, B, T)
        d[:, :, i] = 0
        other = torch.maximum(other, d.amax(dim=(1, 2)))
    return other.numpy()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lengths", default="256,1024")
    ap.add_argument("--strings", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--layers", default="1,2")
    args = ap.parse_args()
    torch.set_num_threads(1)
    rows = []
    for L, n in [(int(a), int(b)) for a in args.layers.split(",") for b in args.lengths.split(",")]:
        model = random_transformer(0, n_layers=L, n_ctx=n, lam=0.1)
        ids = np.random.default_rng(0).integers(0, 2, size=(args.strings, n))
        t_b = t_l = float("inf")
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            meas = measure_flips(model, ids)
            t_b = min(t_b, time.perf_counter() - t0)
            t0 = time.perf_counter()
            ref = loop_flips(model, ids)
            t_l = min(t_l, time.perf_counter() - t0)
        assert np.allclose(meas.other, ref, rtol=1e-9, atol=1e-12), (meas.other, ref)
        rows.append((L, n, args.strings, meas.n_passes, t_b, t_l, t_l / t_b))
    print(f"{'layers':>6} {'n':>6} {'strings':>7} {'passes':>6} {'batched s':>10} {'loop s':>10} {'loop/batched':>12}")
    for L, n, b, p, tb, tl, r in rows:
        print(f"{L:>6} {n:>6} {b:>7} {p:>6} {tb:>10.3f} {tl:>10.3f} {r:>11.2f}x")


if __name__ == "__main__":
    main()
