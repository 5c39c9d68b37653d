"""The structure of a d-D complex from :mod:`.subdivide`, derived on demand.

Cells are given by their vertex sets and the vertices' zero sets Z(v) (bitsets over the
hyperplanes). From those alone (combinatorially):

* edges: (a, b) is an edge iff it is one of some cell P, i.e. no other vertex r of P has
  Z(r) ⊇ Z(a) ∩ Z(b);
* facets of P: the inclusion-maximal sets S_h = {v ∈ P : h ∈ Z(v)} ≠ P; two cells are
  adjacent iff they have a facet with the same vertex set (the complex is face-to-face);
* affine maps: least squares of the output over each cell's vertices (exact: affine there);
* linear regions: connected components of "adjacent and the same map" (the exact gradients of
  the cells' activation patterns, :func:`.merge.merge_linear`) or "the same activation region".

:class:`~.result.CellPieces` (the ``Regions.pieces`` of a box/slice count) computes its
``edges``, ``facets``, ``adjacent``, ``linear``, ``A``/``b`` with these on first access.
"""

from __future__ import annotations

import numpy as np

from . import complex_kernels as ck
from .merge import merge_linear


def edges(p) -> np.ndarray:
    """The 1-skeleton: (E, 2) vertex pairs, a < b, each edge once."""
    k = p.vertices.shape[1]
    e = ck.cell_edges(p.Z, p.cstart, p.cverts, k)
    return np.unique(e, axis=0) if len(e) else e.reshape(0, 2)


def vertex_keys(n: int) -> np.ndarray:
    """Random 64-bit words, one per vertex: a facet's key is the (wrapping) sum over its vertices."""
    return np.random.default_rng(2023).integers(1, 2**63, size=n, dtype=np.uint64)


def facets(p) -> tuple[np.ndarray, np.ndarray]:
    """((F,) facet keys, (F,) cell): every facet of every cell (interior facets appear twice)."""
    vkey = vertex_keys(len(p.vertices))
    return ck.cell_facets(p.Z, p.cstart, p.cverts, vkey)[:2]


def adjacent_cells(p) -> np.ndarray:
    """Pairs of cells sharing a facet: (n, 2)."""
    keys, cells = p.facets
    order = np.argsort(keys, kind="stable")
    keys, cells = keys[order], cells[order]
    same = keys[1:] == keys[:-1]
    return np.stack([cells[:-1][same], cells[1:][same]], axis=1)


def linear_labels(p) -> np.ndarray:
    return merge_linear(p.program, p.points, p.domain.basis, p.adjacent, p.region)


def h_representations(p) -> tuple[list, list]:
    """A, b with {α : A α ≤ b} ⊇ the cell (the constraints of its activation pattern, in the
    domain's parameters α), one pair per cell (via the LP counter's affine pass)."""
    from .box import _affine_pass, _clean

    prog, dom = p.program, p.domain
    B, o = dom.basis, dom.origin
    A_list, b_list = [], []
    for x in p.points:
        _, _, _, G, h, Ga = _affine_pass(prog, x)
        G, h = _clean(G @ B.T, h + G @ o, Ga @ np.abs(B).T) if len(G) else (G[:, : B.shape[0]], h)
        A_list.append(-G)
        b_list.append(h)
    return A_list, b_list


__all__ = ["adjacent_cells", "edges", "facets", "h_representations", "linear_labels", "vertex_keys"]
