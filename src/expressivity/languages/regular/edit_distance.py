"""Edit distance from a string to a regular language: d(s, L) = min_{w ∈ L} Lev(s, w).

Levenshtein distance counts insertions, deletions and substitutions at cost 1 each. Over a
DFA it is a shortest path (Wagner 1974; FLaRe computes it in the tropical semiring, Butoi et
al. 2025 §3): let D_i[q] be the fewest edits that turn s₁…s_i into some w with δ(q₀, w) = q.
Then

    D_0[q]     = G[q₀, q]                                  (insert the symbols of a path),
    D'_i[q']   = min( D_{i−1}[q'] + 1,                       delete s_i;
                      min_{q, a : δ(q, a) = q'} D_{i−1}[q] + [a ≠ s_i] ),  keep or substitute,
    D_i[q]     = min_p D'_i[p] + G[p, q]                     insert after s_i,

with G[p, q] the fewest symbols from p to q (:meth:`DFA.gaps`), and d(s, L) = min_{q ∈ F} D_n[q].
Vectorised over strings: (count, |Q|) per position plus a (count, |Q|, |Q|) min for the
insertions. ``edit_distance(dfa, ids)`` → (count,) int64 (0 for members; a large sentinel,
≥ 2⁶⁰, only if L is empty).
"""

from __future__ import annotations

import numpy as np

from ...memory import check_memory
from .automaton import DFA


def edit_distance(dfa: DFA, ids: np.ndarray) -> np.ndarray:
    """d(s, L(dfa)) for each row of ids (count, n): (count,) int64."""
    ids = np.asarray(ids)
    if ids.ndim != 2:
        raise ValueError(f"edit_distance: ids must have shape (count, n), got {ids.shape}")
    count, n = ids.shape
    Q, K = dfa.delta.shape
    check_memory(3 * 8.0 * count * Q * Q, f"edit distances of {count} strings over {Q} states",
                        hint="pass fewer strings at a time")
    G = dfa.gaps()
    inf = G.max()
    D = np.broadcast_to(G[dfa.start], (count, Q)).copy()
    rows = np.arange(count)[:, None]
    for i in range(n):  # sequential in the position, vectorised over strings
        nxt = D + 1  # delete s_i: stay in q
        for a in range(K):
            cand = D + (ids[:, i] != a)[:, None]  # keep (cost 0) or substitute a (cost 1)
            np.minimum.at(nxt, (rows, dfa.delta[None, :, a]), cand)
        D = np.minimum((nxt[:, :, None] + G[None]).min(axis=1), inf)  # then insert any path
    return D[:, dfa.accepting].min(axis=1) if dfa.accepting.any() else np.full(count, inf)
