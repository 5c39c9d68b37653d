"""Settle the region counts where the peers disagree with ours (issue 22).

The nets: ``torch.manual_seed(S)``, torch's default ``nn.Linear`` init, a ReLU after every layer
(the last too); counted on [−1, 1]^d. For each net this prints our count and how its cells were
certified (:func:`expressivity.regions.certify.certify_regions`: float bound / exact / LP), the
peers' counts when they are at hand — Berzins' edge subdivision (``--berzins PATH``, default
/work/helpers/relu_edge_subdivision if present; d-D nets; float32, CPU) and regioncam (pip
``regioncam`` if installed; 2-D nets) — and every cell where the pattern sets differ: our
cells a peer lacks (our proved interior point, its Chebyshev inradius) and a peer's patterns we
lack (:func:`refute_pattern`: Farkas-refuted, or a point, which would make our count wrong).

Each tool runs in a child process with its address space capped (``--mem-gib``, default 4); a
tool that runs out of it (or past ``--timeout``) is reported as skipped. Our count reports its
peak resident memory; ``--peers none`` counts and certifies ours only.

    .venv/bin/python bench/regions_settle.py [--nets 3d,2d] [--berzins PATH] [--mem-gib 4] [--peers all]
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import multiprocessing as mp
import os
import sys

import numpy as np
import torch

NETS = {"3d": ([3, 48, 48, 48, 48], 7102, {"berzins": 105_281}),
        "2d": ([2] + [256] * 6, 9901, {"regioncam": 205_157}),
        "2d-wide": ([2, 512, 512, 512], 9901, {"regioncam": 384_600}),
        "2d-small": ([2, 64, 64, 64], 5, {})}  # equal counts, one face mislabelled by regioncam
BERZINS = "/work/helpers/relu_edge_subdivision"


def relu_net(widths, seed):
    torch.manual_seed(seed)
    mods = []
    for a, b in itertools.pairwise(widths):
        mods += [torch.nn.Linear(a, b), torch.nn.ReLU()]
    return torch.nn.Sequential(*mods)


def domain_of(widths):
    from expressivity.regions import Box, Plane

    return Plane.square(1.0) if widths[0] == 2 else Box(-1.0, 1.0)


def ours(widths, seed, _path):
    """(count, certificate summary, packed patterns, proved points)."""
    import resource

    from expressivity.regions import count_regions
    from expressivity.regions.certify import certify_regions

    os.environ["EXPRESSIVITY_CHECK"] = "0"
    net, dom = relu_net(widths, seed), domain_of(widths)
    regions = count_regions(net, dom)
    cert = certify_regions(net, dom, regions)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB → GiB (Linux)
    summary = dict(cert.summary(), seconds_count=round(regions.seconds, 2), peak_gib=round(peak, 2))
    return regions.activation_regions, summary, cert.patterns, cert.points


def regioncam_patterns(widths, seed, _path):
    """regioncam's faces on [−1, 1]², their patterns (a neuron is on where its column of the
    face's post-ReLU affine map is nonzero) and centroids."""
    import regioncam

    net = relu_net(widths, seed)
    rc = regioncam.Regioncam(size=1.0)
    for lin in net[::2]:
        rc.linear(lin.weight.detach().numpy().T.copy(), lin.bias.detach().numpy().copy())
        rc.relu()
    bits = [np.any(np.asarray(rc.face_activations(layer)) != 0, axis=1) for layer in range(2, rc.num_layers, 2)]
    X = np.asarray(rc.vertex_inputs, dtype=np.float64)
    centroids = np.array([X[np.asarray(face.vertex_ids)].mean(axis=0) for face in rc.faces])
    return rc.num_faces, {}, np.packbits(np.concatenate(bits, axis=1), axis=1), centroids


def berzins_patterns(widths, seed, path):
    """Edge subdivision's vertices → its cells: every sign choice of a vertex's neuron zeros
    (general position; box zeros → inside), as in bench/regions_bench.py; a cell's point is the
    mean of the vertices that give it."""
    sys.path.insert(0, path)
    from edge_subdivision import skeletal_subdivision
    from NN import Net

    torch.set_num_threads(1)
    torch.manual_seed(seed)
    f = Net(ks=list(widths))
    with torch.no_grad():
        vs, _, v_sv = skeletal_subdivision(f, bbox=(-1, 1), device="cpu", verbose=False)
    vs, sv = vs.numpy().astype(np.float64), v_sv.numpy()[:, 2 * widths[0]:]
    where: dict[bytes, list] = {}
    for v, row in zip(vs, sv):
        z = np.nonzero(row == 0)[0]
        for choice in itertools.product((True, False), repeat=len(z)):
            bits = row > 0
            bits[z] = choice
            where.setdefault(np.packbits(bits).tobytes(), []).append(v)
    keys = list(where)
    packed = np.frombuffer(b"".join(keys), np.uint8).reshape(len(keys), -1)
    return len(keys), {}, packed, np.array([np.mean(where[k], axis=0) for k in keys])


def _child(fn, widths, seed, path, mem_gb, queue):
    import resource

    cap = int(mem_gb * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    try:
        queue.put(("ok", fn(widths, seed, path)))
    except MemoryError:
        queue.put(("skipped", f"needs more than {mem_gb} GiB"))
    except Exception as exc:  # a peer's failure is reported, not raised
        queue.put(("skipped", f"{type(exc).__name__}: {exc}"[:200]))


def run_capped(fn, widths, seed, path, mem_gb, timeout):
    """fn(widths, seed, path) in a spawned child under an address-space cap: ("ok", result) or
    ("skipped", why)."""
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=(fn, widths, seed, path, mem_gb, q))
    p.start()
    out, waited = None, 0.0
    while out is None:
        try:
            out = q.get(timeout=1.0)
        except Exception:  # queue.Empty: still running, or died without a word (an abort on allocation)
            waited += 1.0
            if not p.is_alive() and q.empty():
                out = ("skipped", f"the child died (exit code {p.exitcode}): it needs more than {mem_gb} GiB")
            elif waited > timeout:
                out = ("skipped", f"ran past {timeout} s")
    p.join(5)
    if p.is_alive():
        p.kill()
        p.join()
    return out


def differ(widths, seed, mine, theirs, name):
    """Print our cells the peer lacks and the peer's patterns we lack (each refuted or not)."""
    from expressivity.regions import lower
    from expressivity.regions.certify import _chebyshev, refute_pattern
    from expressivity.regions.relu_chain import cell_rows, chain

    net, dom = relu_net(widths, seed), domain_of(widths)
    ch = chain(lower(net), dom)
    n = ch.n_neurons
    ours_set = {r.tobytes(): i for i, r in enumerate(mine[2])}
    theirs_set: dict[bytes, int] = {}
    for j, r in enumerate(theirs[2]):
        if r.tobytes() in theirs_set:  # one cell counted twice (convex cells: one pattern, one cell)
            i = ours_set.get(r.tobytes())
            at = f" (our cell {i} at {np.round(mine[3][i], 4).tolist()})" if i is not None else ""
            where = f" at {np.round(theirs[3][theirs_set[r.tobytes()]], 4).tolist()} and {np.round(theirs[3][j], 4).tolist()}" \
                if theirs[3] is not None else ""
            print(f"  {name} counts one pattern twice: its cells {theirs_set[r.tobytes()]} and {j}{where}{at}")
        theirs_set.setdefault(r.tobytes(), j)
    for key in sorted(set(ours_set) - set(theirs_set), key=ours_set.get):
        i = ours_set[key]
        sigma = np.unpackbits(mine[2][i])[:n].astype(bool)
        M, q = cell_rows(ch, sigma)
        found = _chebyshev(M, q, mine[3][i], 1e-3)
        radius = found[1] if found else float("nan")
        print(f"  {name} lacks our cell {i}: proved point {mine[3][i].tolist()}, inradius ≈ {radius:.2g}")
    for key in sorted(set(theirs_set) - set(ours_set), key=theirs_set.get):
        j = theirs_set[key]
        sigma = np.unpackbits(theirs[2][j])[:n].astype(bool)
        ref = refute_pattern(net, dom, sigma)
        verdict = {True: "empty (exact Farkas certificate)", False: f"NONEMPTY: point {ref.point}",
                   None: "undecided"}[ref.empty]
        near = np.unpackbits(np.bitwise_xor(mine[2], theirs[2][j]), axis=1)[:, :n]
        i = int(np.argmin(near.sum(1)))  # our cell with the closest pattern (Hamming)
        where = f" (closest: our cell {i} at {np.round(mine[3][i], 4).tolist()}, neurons {np.nonzero(near[i])[0].tolist()} flipped)"
        if theirs[3] is not None:
            where = f" near {np.round(theirs[3][j], 4).tolist()}" + where
        print(f"  pattern {j} of {name}{where}: {verdict}")


def reported(issue: dict, peer: str) -> str:
    return f" (the issue reports {issue[peer]})" if peer in issue else ""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nets", default="3d,2d", help=f"comma-separated, of {', '.join(NETS)}")
    ap.add_argument("--berzins", default=BERZINS if os.path.isdir(BERZINS) else None)
    ap.add_argument("--mem-gib", "--mem-gb", dest="mem_gb", type=float, default=4.0,
                    help="address-space cap of each child, GiB")
    ap.add_argument("--peers", default="all", help="comma-separated, of berzins, regioncam; all or none")
    ap.add_argument("--timeout", type=float, default=900.0)
    args = ap.parse_args(argv)
    peers = {"berzins": (berzins_patterns, args.berzins, lambda w: w[0] > 2 and args.berzins),
             "regioncam": (regioncam_patterns, None, lambda w: w[0] == 2 and importlib.util.find_spec("regioncam"))}
    wanted = set(peers) if args.peers == "all" else set() if args.peers == "none" else set(args.peers.split(","))
    if wanted - set(peers) or not set(args.nets.split(",")) <= set(NETS):
        ap.error(f"--peers: of {', '.join(peers)}, all or none; --nets: of {', '.join(NETS)}")
    for name in args.nets.split(","):
        widths, seed, issue = NETS[name]
        status, mine = run_capped(ours, widths, seed, None, args.mem_gb, args.timeout)
        if status != "ok":
            print(f"{name}: ours skipped ({mine})")
            continue
        print(f"{name} {'-'.join(map(str, widths))} seed {seed}: ours {mine[0]}, certified {mine[1]}")
        for peer, (fn, path, applies) in peers.items():
            if peer not in wanted or not applies(widths):
                continue
            status, theirs = run_capped(fn, widths, seed, path, args.mem_gb, args.timeout)
            if status != "ok":
                print(f"  {peer}: skipped ({theirs}){reported(issue, peer)}")
                continue
            print(f"  {peer}: {theirs[0]}{reported(issue, peer)}")
            differ(widths, seed, mine, theirs, peer)


if __name__ == "__main__":
    main()
