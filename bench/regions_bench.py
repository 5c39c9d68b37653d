"""Benchmark: exact region counting, ours (float64, numpy) vs regioncam (Rust, float32).

Same random ReLU nets for both (weights N(0, 1/fan_in), biases N(0, 0.5²), drawn once in
float32 and given to both tools). 2-D: the square [−1, 1]² (``regioncam.Regioncam(size=1)``
vs ``Plane.square(1)``); 1-D: the segment [−1, 1] (``regioncam.Regioncam1D((−1, 1))`` vs
``Segment(−1, 1)``). Reported: activation regions found by each, seconds (best of ``--repeat``),
regions/s and the ratio ours/regioncam of regions/s. Times include lowering the torch model (ours) and the
``linear``/``relu`` calls (regioncam); one warm-up run of each tool is excluded.

Run single-threaded for fairness (regioncam is single-threaded):
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 .venv/bin/python bench/regions_bench.py

d-D rows (``--dd``): ``count_regions(net, Box(−1, 1))`` (float64, the subdivision counter) vs
Berzins' edge subdivision (``skeletal_subdivision`` from a checkout given by ``--berzins PATH``,
torch on CPU, its default float32, one thread; the column is left out without the path). Its
region count is derived from its vertex sign vectors (every region is one perturbation of the
zeros of a vertex; general position). Each tool runs in a fresh child process per row: best of
``--repeat`` times (≤ 3), each after one warm-up count on a d-4 net, and the peak resident memory
the first timed count added: its peak resident set minus the resident set at its start (Linux: the
peak is reset through /proc/self/clear_refs; elsewhere ru_maxrss after − before). Later runs reuse
memory the first one freed, so they would read lower. ``--dd --stream ROWS`` (0: the default
limit) compares our full count with our streamed count-only one (``stream=True``,
``stream_rows=ROWS``), also in fresh children; ``--stream-only`` runs the streamed one alone;
``--nets 6-24-24-24,6-32-32`` picks the nets.

Conv rows (``--conv``): a random CNN (Conv2d + ReLU layers, then Linear) counted on the plane
through three random inputs (``Plane.through``), traced by ``regions.lower_torch`` vs the same net
written out as an ``nn.Sequential`` of dense Linear/ReLU layers (every conv as its dense matrix);
both times include lowering. The counts must agree.

Torch-init rows (``--torch-2d``, ``--torch-dd``, issue 22): see bench/regions_torch.py. Every
d-D and torch row runs each tool in a child under ``--mem-gib`` (default 8) and ``--timeout``.
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
NETS_DD = ([3, 16, 16, 16], [3, 32, 32, 32], [3, 64, 64], [4, 32, 32], [5, 16, 16, 16], [6, 16, 16])


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


def _status_kib(field: str) -> int | None:
    """``VmRSS`` / ``VmHWM`` of /proc/self/status in KiB (None off Linux)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _peak_kib() -> int:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _start_peak() -> tuple[int, bool]:
    """Before one run: (the resident set now, True) with the peak reset to it (Linux,
    /proc/self/clear_refs "5"), else (ru_maxrss, False) — the peak so far, so that an earlier
    high-water mark (imports, a warm-up) hides what the run needs below it."""
    import gc

    gc.collect()
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        rss = _status_kib("VmRSS")
        if rss is not None:
            return rss, True
    except OSError:
        pass
    return _peak_kib(), False


def _run_peak(base: tuple[int, bool]) -> int:
    """KiB added by the run since :func:`_start_peak`."""
    hwm = _status_kib("VmHWM") if base[1] else None
    return (hwm if hwm is not None else _peak_kib()) - base[0]


def _dd_measure(layers, job, path):
    """One row of one tool (``job`` = (tool, repeat) or ("ours", repeat, stream_rows): the
    streamed count, ``stream_rows`` 0 for its default), run in a fresh capped child by
    :func:`regions_settle.run_capped`: (regions, best seconds, peak KiB added), streamed also
    (groups, the largest group's vertex rows)."""
    tool, repeat, rows = (*job, None)[:3]
    torch.set_num_threads(1)
    widths = [layers[0][0].shape[0]] + [W.shape[1] for W, _ in layers]
    if tool == "ours":
        from expressivity.regions import Box

        net = as_sequential(layers)
        count_regions(as_sequential(random_layers([widths[0], 4], 99)), Box(-1.0, 1.0))  # load kernels
        kw = {} if rows is None else {"stream": True, "stream_rows": rows or None}
        last = []

        def run():
            r = count_regions(net, Box(-1.0, 1.0), **kw)
            last[:] = [r]
            return r.activation_regions
    else:
        import sys

        sys.path.insert(0, path)
        from edge_subdivision import skeletal_subdivision
        from NN import Net

        def berzins_net(widths, layers):
            f = Net(ks=list(widths))
            with torch.no_grad():
                for lin, (W, b) in zip(f.fcs, layers):
                    lin.weight.copy_(torch.from_numpy(W.T.copy()))
                    lin.bias.copy_(torch.from_numpy(b))
            return f

        f = berzins_net(widths, layers)
        with torch.no_grad():  # warm-up, as ours: torch's first-call costs
            skeletal_subdivision(berzins_net([widths[0], 4], random_layers([widths[0], 4], 99)), bbox=(-1, 1),
                                 device="cpu", verbose=False)

        def run():
            with torch.no_grad():
                _, _, v_sv = skeletal_subdivision(f, bbox=(-1, 1), device="cpu", verbose=False)
            return v_sv

    best, out, peak = np.inf, None, 0
    for i in range(repeat):
        base = _start_peak()
        t = time.perf_counter()
        out = run()
        best = min(best, time.perf_counter() - t)
        if i == 0:  # memory of the first run after the warm-up (later ones reuse what it freed)
            peak = _run_peak(base)
    if tool != "ours":
        out = _berzins_regions(out.numpy(), widths[0])
    if rows is not None:
        return int(out), best, peak, last[0].pieces.groups, last[0].pieces.largest_rows
    return int(out), best, peak


def _berzins_regions(v_sv: np.ndarray, d: int) -> int:
    """Regions from vertex sign vectors (V, 2d + N) int8 (box entries: 1 inside, 0 on a facet;
    neurons ±1, 0 on): in general position the regions at a vertex are all sign choices of its
    neuron zeros (box zeros → inside); every region has a vertex. Distinct rows counted."""
    seen = set()
    nb = 2 * d
    for chunk in range(0, len(v_sv), 4096):
        sv = v_sv[chunk:chunk + 4096].copy()
        sv[:, :nb][sv[:, :nb] == 0] = 1
        zi = [np.nonzero(r == 0)[0] for r in sv]
        for r, z in zip(sv, zi):
            for bits in itertools.product((1, -1), repeat=len(z)):
                r[z] = bits
                seen.add(r.tobytes())
    return len(seen)


def run_dd(layers, repeat, berzins=None, mem_gib=8.0, timeout=900.0):
    """Each tool on one net in its own child under the address-space cap: tool → (regions,
    seconds, peak KiB) or the reason it was skipped (a string)."""
    from regions_settle import run_capped

    res = {}
    for tool in ("ours", "berzins") if berzins else ("ours",):
        status, out = run_capped(_dd_measure, layers, (tool, repeat), berzins, mem_gib, timeout)
        res[tool] = out if status == "ok" else str(out)
    return res


def dd_row(name, res):
    """The printed row and the table tuple of one d-D net; a skipped tool reads "> cap"."""
    none = (0, np.nan, 0)
    n_o, t_o, m_o = none if isinstance(res["ours"], str) else res["ours"]
    n_p, t_p, m_p = none if isinstance(res.get("berzins", ""), str) else res["berzins"]
    ro, rp = n_o / t_o, n_p / t_p
    row = (name, n_o, n_p, t_o, t_p, ro, rp, ro / rp, m_o / 1024, m_p / 1024)
    text = (f"{name:<22}{n_o:>9}{n_p:>9}{t_o:>9.3f}{t_p:>9.3f}{ro:>12.0f}{rp:>12.0f}{ro / rp:>7.2f}"
            f"{m_o / 1024:>10.1f}{m_p / 1024:>10.1f}")
    skipped = [f"{tool}: > cap ({why})" for tool, why in res.items() if isinstance(why, str)]
    return row, text + ("  " + "; ".join(skipped) if skipped else "")


def main_dd_stream(args, nets):
    """``--dd --stream ROWS``: our full count vs our streamed count (``stream_rows=ROWS``, 0: the
    default) of every net, each in its own capped child (``--stream-only``: the streamed one only)."""
    from regions_settle import run_capped

    print(f"{'net':<22}{'full n':>9}{'stream n':>9}{'full s':>9}{'stream s':>9}{'full MiB':>10}"
          f"{'stream MiB':>11}{'groups':>8}{'rows':>10}", flush=True)
    rows = []
    for name, layers in nets:
        res = {}
        for label, job in (("full", ("ours", min(args.repeat, 3))), ("stream", ("ours", min(args.repeat, 3), args.stream))):
            if label == "full" and args.stream_only:
                res[label] = "not run (--stream-only)"
                continue
            status, out = run_capped(_dd_measure, layers, job, None, args.mem_gib, args.timeout)
            res[label] = out if status == "ok" else str(out)
        f = (0, np.nan, 0) if isinstance(res["full"], str) else res["full"]
        s = (0, np.nan, 0, 0, 0) if isinstance(res["stream"], str) else res["stream"]
        rows.append((name, f[0], s[0], f[1], s[1], f[2] / 1024, s[2] / 1024, s[3], s[4]))
        skipped = [f"{k}: {why}" for k, why in res.items() if isinstance(why, str)]
        print(f"{name:<22}{f[0]:>9}{s[0]:>9}{f[1]:>9.3f}{s[1]:>9.3f}{f[2] / 1024:>10.1f}{s[2] / 1024:>11.1f}"
              f"{s[3]:>8}{s[4]:>10}" + ("  " + "; ".join(skipped) if skipped else ""), flush=True)
    return rows


def main_dd(args, nets=None):
    """``nets``: (name, layers) pairs; default the random NETS_DD nets, or ``--nets``."""
    if nets is None:
        widths = NETS_DD if args.nets is None else [[int(w) for w in n.split("-")] for n in args.nets.split(",")]
        nets = [("-".join(map(str, w)), random_layers(w, args.seed)) for w in widths]
    if args.stream is not None:
        return main_dd_stream(args, nets)
    print(f"{'net':<22}{'ours n':>9}{'peer n':>9}{'ours s':>9}{'peer s':>9}{'ours reg/s':>12}"
          f"{'peer reg/s':>12}{'ratio':>7}{'ours MiB':>10}{'peer MiB':>10}", flush=True)
    rows = []
    for name, layers in nets:
        row, text = dd_row(name, run_dd(layers, min(args.repeat, 3), args.berzins, args.mem_gib, args.timeout))
        rows.append(row)
        print(text, flush=True)
    return rows


NETS_CONV = (((1, 8, 8), [4, 4]), ((1, 8, 8), [8, 8]), ((1, 12, 12), [4, 4]), ((3, 8, 8), [8, 8, 8]))


def random_cnn(shape, channels, seed):
    """Conv2d(3×3, padding 1) + ReLU per entry of ``channels``, then Linear to 10 (float64)."""
    torch.manual_seed(seed)
    mods, c = [], shape[0]
    for k in channels:
        mods += [torch.nn.Conv2d(c, k, 3, padding=1), torch.nn.ReLU()]
        c = k
    mods += [torch.nn.Flatten(), torch.nn.Linear(c * shape[1] * shape[2], 10)]
    return torch.nn.Sequential(*mods).double().eval()


def dense_of(cnn, shape):
    """The same net as an nn.Sequential of Linear/ReLU: each conv's dense matrix (its images
    of the unit basis), the final Flatten + Linear as one Linear."""
    mods, cur, pending = [], shape, []
    n = int(np.prod(shape))
    for m in list(cnn) + [None]:
        if m is None or isinstance(m, torch.nn.ReLU):
            f = torch.nn.Sequential(*pending)
            with torch.no_grad():
                b = f(torch.zeros(1, *cur, dtype=torch.float64)).reshape(-1)
                W = f(torch.eye(n, dtype=torch.float64).reshape(n, *cur)).reshape(n, -1) - b
                out = f(torch.zeros(1, *cur, dtype=torch.float64)).shape[1:]
            lin = torch.nn.Linear(n, W.shape[1]).double()
            with torch.no_grad():
                lin.weight.copy_(W.T)
                lin.bias.copy_(b)
            mods.append(lin)
            if m is not None:
                mods.append(torch.nn.ReLU())
            cur, n, pending = tuple(out), int(np.prod(out)), []
        else:
            pending.append(m)
    return torch.nn.Sequential(*mods)


def main_conv(args):
    from expressivity.regions.count import _load_kernels

    _load_kernels()
    print(f"{'net':<24}{'regions':>9}{'linear':>8}{'traced s':>10}{'dense s':>10}{'ratio':>8}", flush=True)
    rows = []
    for shape, channels in NETS_CONV:
        cnn = random_cnn(shape, channels, args.seed)
        dense = dense_of(cnn, shape)
        rng = np.random.default_rng(args.seed)
        plane = Plane.through(*rng.uniform(0, 1, size=(3, *shape)))
        best = {"traced": np.inf, "dense": np.inf}
        counts = {}
        for _k in range(min(args.repeat, 3)):
            for name, model in (("traced", cnn), ("dense", dense)):
                t = time.perf_counter()
                r = count_regions(model, plane)
                best[name] = min(best[name], time.perf_counter() - t)
                counts[name] = (r.activation_regions, r.linear_regions)
        if counts["traced"] != counts["dense"]:
            raise SystemExit(f"counts disagree for {shape} {channels}: {counts}")
        name = "x".join(map(str, shape)) + " c" + "-".join(map(str, channels))
        ratio = best["traced"] / best["dense"]
        rows.append((name, *counts["traced"], best["traced"], best["dense"], ratio))
        print(f"{name:<24}{counts['traced'][0]:>9}{counts['traced'][1]:>8}{best['traced']:>10.3f}"
              f"{best['dense']:>10.3f}{ratio:>8.2f}", flush=True)
    return rows


def check_args(ap, args):
    """One mode at a time, a positive cap and timeout, a --berzins path that exists."""
    import os

    modes = [m for m in ("dd", "conv", "torch_2d", "torch_dd") if getattr(args, m)]
    if len(modes) > 1:
        ap.error(f"give one of --dd, --conv, --torch-2d, --torch-dd, got {', '.join(modes)}")
    if not (args.mem_gib > 0 and args.timeout > 0):
        ap.error(f"--mem-gib and --timeout must be > 0, got {args.mem_gib} and {args.timeout}")
    if args.berzins is not None and not os.path.isdir(args.berzins):
        ap.error(f"--berzins: no such directory: {args.berzins}")
    if (args.stream is not None or args.stream_only or args.nets is not None) and not args.dd:
        ap.error("--stream, --stream-only and --nets apply to --dd")
    if args.stream_only and args.stream is None:
        ap.error("--stream-only needs --stream ROWS")
    if args.stream is not None and args.stream < 0:
        ap.error(f"--stream ROWS must be ≥ 0 (0: the default limit), got {args.stream}")
    if args.nets is not None and not all(p.isdigit() for n in args.nets.split(",") for p in n.split("-")):
        ap.error(f"--nets: expected widths like 6-24-24-24,6-32-32, got {args.nets!r}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=5, help="best of N runs (rows under 10 s)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="only the two smallest 2-D nets and the first 1-D net")
    ap.add_argument("--dd", action="store_true", help="the d-D box rows (subdivision counter)")
    ap.add_argument("--berzins", default=None, help="path to a checkout of relu_edge_subdivision (d-D rows)")
    ap.add_argument("--conv", action="store_true", help="CNN rows: traced conv net vs the same net as dense layers")
    ap.add_argument("--torch-2d", action="store_true", help="the issue's torch-init 2-D nets and a 784-1024-1024 plane")
    ap.add_argument("--torch-dd", action="store_true", help="d-D rows on torch-init nets and one trained net")
    ap.add_argument("--stream", type=int, default=None, metavar="ROWS",
                    help="--dd: also the streamed count (stream_rows=ROWS, 0: its default), beside the full one")
    ap.add_argument("--stream-only", action="store_true", help="--dd --stream: the streamed count only")
    ap.add_argument("--nets", default=None, help="--dd: these nets instead of the table's, e.g. 6-24-24-24,6-32-32")
    ap.add_argument("--mem-gib", type=float, default=8.0, help="address-space cap of each tool's child, GiB")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds before a tool's child is skipped")
    args = ap.parse_args(argv)
    check_args(ap, args)
    if args.torch_2d or args.torch_dd:
        import regions_torch

        return regions_torch.main_torch_2d(args) if args.torch_2d else regions_torch.main_torch_dd(args)
    if args.conv:
        return main_conv(args)
    if args.dd:
        return main_dd(args)
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
