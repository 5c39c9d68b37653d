"""Merging pieces: face adjacency, connected components, and linear regions of a plane.

Linear regions are the connected components of the graph whose edges join adjacent pieces with
the same affine map (the exact gradients of their activation patterns agree, :mod:`.maps`;
continuity gives equal offsets), or pieces of one activation region (they share its map by
definition). :func:`merge_linear` is that rule for every counter.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from .maps import same_maps


def adjacent_faces(faces: np.ndarray) -> np.ndarray:
    """Pairs of faces sharing an edge: (n, 2)."""
    F, K = faces.shape
    valid = faces >= 0
    n = valid.sum(1)
    jn = np.arange(1, K + 1)[None, :]
    jn = np.where(jn < n[:, None], jn, 0)
    nxt = faces[np.arange(F)[:, None], jn]
    a, b = faces[valid], nxt[valid]
    fid = np.repeat(np.arange(F), n)
    Vt = np.int64(max(faces.max(), 0) + 1)
    key = np.minimum(a, b) * Vt + np.maximum(a, b)
    order = np.argsort(key, kind="stable")
    key, fid = key[order], fid[order]
    same = key[1:] == key[:-1]
    return np.stack([fid[:-1][same], fid[1:][same]], axis=1)


def components(n: int, pairs: np.ndarray) -> np.ndarray:
    g = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    _, labels = connected_components(g, directed=False)
    # relabel in order of first appearance
    _, first = np.unique(labels, return_index=True)
    order = np.argsort(first)
    remap = np.empty(len(order), np.int64)
    remap[order] = np.arange(len(order))
    return remap[labels]


def merge_linear(prog, points: np.ndarray, basis: np.ndarray, pairs: np.ndarray, region: np.ndarray,
                 continuous: np.ndarray | None = None) -> np.ndarray:
    """Linear-region id per piece: components of "adjacent (``pairs``) and the same affine map"
    (exact gradients w.r.t. the domain parameters, ``basis`` rows = ∂x/∂α_i, read at one interior
    point per piece; :func:`.maps.same_maps`; and, if given, ``continuous`` per pair) or "the same
    activation region"."""
    n = len(points)
    if n == 0:
        return np.zeros(0, np.int64)
    pairs = np.asarray(pairs, np.int64).reshape(-1, 2)
    same = region[pairs[:, 0]] == region[pairs[:, 1]]
    todo = ~same
    if todo.any():
        ok = same_maps(prog, points, basis, pairs[todo])
        if continuous is not None:
            ok &= continuous[todo]
        same[todo] = ok
    return components(n, pairs[same])


def face_centroids(faces: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Mean of each face's vertices (inside it: faces are convex): (F, 2)."""
    valid = faces >= 0
    return np.where(valid[..., None], X[np.maximum(faces, 0)], 0.0).sum(1) / valid.sum(1)[:, None]


def linear_labels_plane(p) -> np.ndarray:
    """Linear-region id per face of a :class:`~.result.PlanePieces`."""
    plane = p.plane
    pts = plane.points(face_centroids(p.faces, p.vertices))
    return merge_linear(p.program, pts, np.stack([plane.u, plane.v]), adjacent_faces(p.faces), p.region)
