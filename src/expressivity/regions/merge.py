"""Merging pieces: face adjacency, connected components, and linear regions of a plane.

Linear regions are the connected components of the graph whose edges join adjacent faces with
the same affine map (gradients within LINEAR_RTOL of :func:`.tolerances.gradient_scale`; continuity gives
equal offsets), or faces of one activation region (they share its map by definition).
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from .tolerances import LINEAR_RTOL, gradient_scale


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


def face_gradients(p: dict) -> np.ndarray:
    """Gradient of every output on every face w.r.t. (α, β): (F, out, 2), from the fan triangle
    of largest area (exact: the output is affine on the face)."""
    faces, X, out = p["faces"], p["vertices"], p["out"]
    F, K = faces.shape
    n = (faces >= 0).sum(1)
    j = np.arange(1, K - 1)[None, :]
    ok = j + 1 < n[:, None]
    v0 = faces[:, 0]
    vj = np.where(ok, faces[:, 1:K - 1], v0[:, None])
    vk = np.where(ok, faces[:, 2:K], v0[:, None])
    d1 = X[vj] - X[v0][:, None]
    d2 = X[vk] - X[v0][:, None]
    area = np.abs(d1[..., 0] * d2[..., 1] - d1[..., 1] * d2[..., 0])
    best = np.argmax(area, axis=1)
    r = np.arange(F)
    a, b = vj[r, best], vk[r, best]
    M = np.stack([X[a] - X[v0], X[b] - X[v0]], axis=1)  # (F, 2, 2)
    rhs = np.stack([out[a] - out[v0], out[b] - out[v0]], axis=1)  # (F, 2, out)
    return np.linalg.solve(M, rhs).transpose(0, 2, 1)  # (F, out, 2)


def linear_labels_plane(p: dict) -> np.ndarray:
    grads = face_gradients(p)
    X = p["vertices"]
    G = gradient_scale(grads, p["out"], float(np.ptp(X, axis=0).max()) if len(X) else 0.0)
    pairs = adjacent_faces(p["faces"])
    same = np.all(np.abs(grads[pairs[:, 0]] - grads[pairs[:, 1]]) <= LINEAR_RTOL * G, axis=(1, 2))
    # two faces with the same activation region share its affine map
    return components(len(p["faces"]), pairs[same | (p["region"][pairs[:, 0]] == p["region"][pairs[:, 1]])])
