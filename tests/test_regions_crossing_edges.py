"""The d-D counter's crossing-edge search (complex_kernels._crossing_edges) against its
definition: for any split of a cell's vertices into two sides, the pairs (a, b) across it that
are edges of the cell, by the double-description test (no other vertex r of the cell has
Z(r) ⊇ Z(a) ∩ Z(b)) run on every pair. Both ways of finding the simple pairs (popcounts
against every b at once, and (k − 1)-subset hashing) and the degenerate fallback are checked,
on cells of finished complexes in general position, in degenerate position, and with zero
sets of more than one word."""

from __future__ import annotations

import numpy as np
import pytest
from test_regions_segment import _random_layers, _seq

from expressivity.regions import Box, count_regions
from expressivity.regions import complex_kernels as ck

NEVER, ALWAYS = 10**9, 0  # hash_pairs: popcounts only, hashing whenever there are simple pairs


def _degenerate_3d():
    """Six planes through the origin (several through one line): vertices on > 3 planes."""
    W = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1], [1, 1, 1], [1, -1, 0]], float)
    import torch

    lin = torch.nn.Linear(3, 6).double()
    with torch.no_grad():
        lin.weight.copy_(torch.from_numpy(W))
        lin.bias.zero_()
    return torch.nn.Sequential(lin, torch.nn.ReLU())


def _crossing(p, c, side, hash_pairs):
    """_crossing_edges on cell c of the count's pieces, split by the boolean array ``side``."""
    Z = np.ascontiguousarray(p.Z)
    k = p.vertices.shape[1]
    pool = p.cverts.astype(np.int32)
    lo, hi = p.cstart[c], p.cstart[c + 1]
    verts = pool[lo:hi].astype(np.int64)
    pos, neg = verts[side], verts[~side]
    pc = np.array([sum(bin(int(w)).count("1") for w in row) for row in Z], np.int64)
    n = len(verts)
    ea, eb = np.empty(max(1, len(pos) * len(neg)), np.int64), np.empty(max(1, len(pos) * len(neg)), np.int64)
    m = ck._crossing_edges(Z, pc, pool, lo, n, pos, len(pos), neg, len(neg), k, np.empty(Z.shape[1], np.uint64),
                           ea, eb, np.empty(n * Z.shape[1], np.uint64), np.empty(n, np.int64),
                           np.empty(8 * ((n + 7) // 8), np.uint8), np.empty(n, np.int64), hash_pairs)
    return sorted(zip(ea[:m].tolist(), eb[:m].tolist())), (Z, pool, lo, hi, pos, neg, k)


def _by_definition(Z, pool, lo, hi, pos, neg, k):
    common = np.empty(Z.shape[1], np.uint64)
    return sorted((int(a), int(b)) for a in pos for b in neg if ck._adjacent(Z, pool, lo, hi, a, b, common, k))


@pytest.mark.parametrize("net, words, degenerate", [
    (_seq(_random_layers([4, 10, 10], 0)), 1, False),  # general position, one word
    (_seq(_random_layers([5, 8, 8], 1)), 1, False),
    (_seq(_random_layers([3, 30, 30], 2)), 2, False),  # 66 hyperplanes: two words per zero set
    (_degenerate_3d(), 1, True),
])
def test_crossing_edges_are_the_cells_edges_across_the_split(net, words, degenerate):
    p = count_regions(net, Box(-1.0, 1.0)).pieces
    k = p.vertices.shape[1]
    n_zeros = np.array([sum(bin(int(w)).count("1") for w in row) for row in p.Z])
    assert p.Z.shape[1] == words and (n_zeros > k).any() == degenerate
    rng = np.random.default_rng(0)
    sizes = np.diff(p.cstart)
    cells = np.argsort(-sizes)[:12]  # the largest cells: the most pairs
    for c in cells:
        for _ in range(3):
            side = rng.random(sizes[c]) < 0.5
            if side.all() or not side.any():
                continue
            got, args = _crossing(p, c, side, NEVER)
            want = _by_definition(*args)
            assert got == want
            assert _crossing(p, c, side, ALWAYS)[0] == want
