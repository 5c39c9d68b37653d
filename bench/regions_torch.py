"""Region-count rows on nets of torch's default init (issue 22), for bench/regions_bench.py.

``--torch-2d``: the issue's nets 2-256×6 and 2-512-512-512 (``torch.manual_seed(9901)``) on
[−1, 1]², and a 784-1024-1024 MLP (seed 0) on ``Plane.through(x1, x2, x3)`` of three random
inputs in [0, 1]^784 (``np.random.default_rng(0)``); ``nn.Linear`` default init, a ReLU after
every layer (the last too). Ours (``count_regions``, float64) vs regioncam (float32) given
the same weights; on the plane regioncam gets the net with its first layer composed with the
plane's affine map (α, β) ↦ origin + α u + β v, rescaled so that its square [−1, 1]² is our
plane's rectangle (its ``through_points`` picks its own frame and bounds, so the domains would
differ). Each tool runs once in a fresh child process under ``--mem-gib``; a tool that exceeds
it (or ``--timeout``) is reported as "> cap". Times exclude imports and a warm-up count.

``--torch-dd``: 3-32-32-32, 4-32-32, 5-16-16-16, 6-16-16 of torch's default init
(``torch.manual_seed(0)``) and one trained net (:func:`trained_3d`), as the ``--dd`` rows.
"""

from __future__ import annotations

import time

import numpy as np
import torch

TORCH_2D = (([2] + [256] * 6, 9901, False), ([2, 512, 512, 512], 9901, False), ([784, 1024, 1024], 0, True))
TORCH_DD = ([3, 32, 32, 32], [4, 32, 32], [5, 16, 16, 16], [6, 16, 16])


def torch_layers(widths, seed):
    """[(W (in, out), b)] float32 of ``nn.Linear`` default init after ``torch.manual_seed(seed)``."""
    from regions_settle import relu_net

    net = relu_net(widths, seed)
    return [(lin.weight.detach().numpy().T.copy(), lin.bias.detach().numpy().copy()) for lin in net[::2]]


def plane_of(in_dim, seed):
    """``Plane.through`` three uniform [0, 1]^in_dim inputs of ``default_rng(seed)``."""
    from expressivity.regions import Plane

    return Plane.through(*np.random.default_rng(seed).uniform(0, 1, size=(3, in_dim)))


def composed_first(layers, plane):
    """The first layer composed with x = origin + α u + β v, where α = cα + hα s, β = cβ + hβ t
    map regioncam's square (s, t) ∈ [−1, 1]² onto the plane's bounding rectangle."""
    lo, hi = plane.polygon.min(0), plane.polygon.max(0)
    c, h = (lo + hi) / 2, (hi - lo) / 2
    W0 = np.stack([h[0] * plane.u, h[1] * plane.v])  # (2, in)
    b0 = plane.origin + c[0] * plane.u + c[1] * plane.v
    W, b = (a.astype(np.float64) for a in layers[0])
    return [((W0 @ W).astype(np.float32), (b0 @ W + b).astype(np.float32))] + list(layers[1:])


def trained_3d(seed=0, steps=300):
    """A 3-32-32 ReLU body (+ a Linear head, not counted: it is affine on every region) trained
    full-batch with Adam (lr 1e-2) on y = sin(πx₀)·cos(πx₁) + x₂², 2 000 uniform points of
    [−1, 1]³, after ``torch.manual_seed(seed)``; returns the body's layers and the final MSE."""
    torch.manual_seed(seed)
    X = 2 * torch.rand(2000, 3) - 1
    y = torch.sin(np.pi * X[:, 0]) * torch.cos(np.pi * X[:, 1]) + X[:, 2] ** 2
    net = torch.nn.Sequential(torch.nn.Linear(3, 32), torch.nn.ReLU(), torch.nn.Linear(32, 32),
                              torch.nn.ReLU(), torch.nn.Linear(32, 1))
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    for _ in range(steps):
        opt.zero_grad()
        loss = ((net(X)[:, 0] - y) ** 2).mean()
        loss.backward()
        opt.step()
    layers = [(lin.weight.detach().numpy().T.copy(), lin.bias.detach().numpy().copy()) for lin in (net[0], net[2])]
    return layers, loss.item()


def _measure_2d(layers, plane_seed, tool):
    """One tool on one net in a capped child: (regions, seconds, peak GiB of the process)."""
    import resource

    from regions_bench import as_sequential, random_layers, run_ours, run_regioncam

    torch.set_num_threads(1)
    warm = random_layers([2, 8, 8], 99)
    if tool == "ours":
        from expressivity.regions import Plane, count_regions

        run_ours(warm, 2)
        dom = plane_of(layers[0][0].shape[0], plane_seed) if plane_seed is not None else Plane.square(1.0)
        net = as_sequential(layers)
        t = time.perf_counter()
        n = count_regions(net, dom).activation_regions
        dt = time.perf_counter() - t
    else:
        run_regioncam(warm, 2)
        if plane_seed is not None:
            layers = composed_first(layers, plane_of(layers[0][0].shape[0], plane_seed))
        n, dt = run_regioncam(layers, 2)
    return int(n), dt, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def main_torch_2d(args):
    from regions_settle import run_capped

    print(f"{'net':<30}{'ours n':>9}{'rc n':>9}{'ours s':>9}{'rc s':>9}{'ours reg/s':>12}{'rc reg/s':>11}"
          f"{'ratio':>7}{'ours GiB':>9}{'rc GiB':>8}", flush=True)
    rows = []
    for widths, seed, on_plane in TORCH_2D:
        layers = torch_layers(widths, seed)
        plane_seed = args.seed if on_plane else None
        res = {tool: run_capped(_measure_2d, layers, plane_seed, tool, args.mem_gib, args.timeout)
               for tool in ("ours", "regioncam")}
        got = {k: v if s == "ok" else (0, np.nan, np.nan) for k, (s, v) in res.items()}
        (n_o, t_o, m_o), (n_r, t_r, m_r) = got["ours"], got["regioncam"]
        name = "-".join(map(str, widths)) + f" S={seed}" + (" plane" if on_plane else "")
        ro, rr = n_o / t_o, n_r / t_r
        rows.append((name, n_o, n_r, t_o, t_r, ro, rr, ro / rr, m_o, m_r))
        skipped = "; ".join(f"{k}: > cap ({v})" for k, (s, v) in res.items() if s != "ok")
        print(f"{name:<30}{n_o:>9}{n_r:>9}{t_o:>9.2f}{t_r:>9.2f}{ro:>12.0f}{rr:>11.0f}{ro / rr:>7.2f}"
              f"{m_o:>9.2f}{m_r:>8.2f}  {skipped}", flush=True)
    return rows


def main_torch_dd(args):
    from regions_bench import main_dd

    nets = [("-".join(map(str, w)) + " torch", torch_layers(w, args.seed)) for w in TORCH_DD]
    layers, mse = trained_3d(args.seed)
    print(f"trained 3-32-32: final MSE {mse:.4f}", flush=True)
    return main_dd(args, nets + [("3-32-32 trained", layers)])
