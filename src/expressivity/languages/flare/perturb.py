"""FLaRe's perturbed negatives (Butoi et al. 2025, §3): random edits of a positive string.

Their process, per proposal (``sample_dataset.py`` of their code, in words): draw the number
of edits k ~ Geometric(½) (k ≥ 1), draw a positive s of the split's range [lo, hi], then
apply k edits one after the other, each chosen uniformly among those allowed at the current
length ℓ — *insert* a uniform symbol at a uniform position of ℓ + 1 (if ℓ < hi), *replace* a
uniform position by a uniformly chosen *other* symbol (if ℓ > 0 and |Σ| > 1), *delete* a
uniform position (if ℓ > lo). A proposal that is still in L is rejected (the number of edits
k is what their files record; it bounds the edit distance to L from above).

Two forms:

- :func:`random_edits`: that process on one string (lists; the dataset generator
  :mod:`.dataset` follows their splits with it, one example at a time);
- :func:`fixed_length_plans` + :func:`apply_edits`: the same process *conditioned on the
  final length n*, vectorised over a batch (the training batches here hold one length each).
  Since their positive's length is uniform over the range's valid lengths, conditioning on
  the final length fixes the start length n₀ = n − (#insert − #delete) and leaves the edit
  types as drawn: so k and the types are drawn as in their process and kept when n₀ is a
  valid positive length (and no replace or delete falls on an empty string); then the edits
  are applied to a positive of length n₀. This is exact away from the range's bounds; at a
  bound their process re-draws among the allowed edits where this one rejects, and it has no
  upper bound hi (a batch of length n may start from a positive longer than n).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

INSERT, REPLACE, DELETE = 0, 1, 2
EDITS = ("insert", "replace", "delete")
MAX_EDITS = 64  # longest edit plan drawn (P(k > 64) = 2⁻⁶⁴)


def random_edits(rng: np.random.Generator, s: list[int], k: int, lo: int, hi: int, n_symbols: int) -> list[int]:
    """Their process: k edits of ``s`` (a list of symbol indices), each uniform among the edits
    allowed at the current length within [lo, hi]."""
    r = list(s)
    for _ in range(k):
        allowed = ([INSERT] if len(r) < hi else []) + ([REPLACE] if r and n_symbols > 1 else []) + \
            ([DELETE] if len(r) > lo else [])
        if not allowed:
            break
        edit = allowed[int(rng.integers(len(allowed)))]
        if edit == INSERT:
            r.insert(int(rng.integers(len(r) + 1)), int(rng.integers(n_symbols)))
        elif edit == REPLACE:
            i = int(rng.integers(len(r)))
            r[i] = (r[i] + 1 + int(rng.integers(n_symbols - 1))) % n_symbols
        else:
            del r[int(rng.integers(len(r)))]
    return r


def fixed_length_plans(rng: np.random.Generator, count: int, n: int, valid_start: Callable[[np.ndarray], np.ndarray],
                       tries: int = 200) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Edit plans that end at length n: ``(k, types, n0, ok)`` — edits per plan (count,),
    their types (count, MAX_EDITS), the start length (count,), and whether a plan was found
    (``valid_start(lengths) -> bool``: a positive of that length exists)."""
    k = np.zeros(count, dtype=np.int64)
    types = np.zeros((count, MAX_EDITS), dtype=np.int64)
    n0 = np.zeros(count, dtype=np.int64)
    ok = np.zeros(count, dtype=bool)
    todo = np.arange(count)
    steps = np.arange(MAX_EDITS)
    for _ in range(tries):
        if not len(todo):
            break
        kk = np.minimum(rng.geometric(0.5, size=len(todo)), MAX_EDITS)
        tt = rng.integers(0, 3, size=(len(todo), MAX_EDITS))
        active = steps[None, :] < kk[:, None]
        delta = np.where(active, (tt == INSERT).astype(np.int64) - (tt == DELETE), 0)
        start = n - delta.sum(axis=1)
        before = start[:, None] + np.cumsum(delta, axis=1) - delta  # length before each edit
        feasible = (start >= 0) & ~(active & (tt != INSERT) & (before <= 0)).any(axis=1)
        feasible[feasible] = valid_start(start[feasible])
        hit = todo[feasible]
        k[hit], types[hit], n0[hit], ok[hit] = kk[feasible], tt[feasible], start[feasible], True
        todo = todo[~feasible]
    return k, types, n0, ok


def apply_edits(rng: np.random.Generator, starts: list[np.ndarray], k: np.ndarray, types: np.ndarray,
                n_symbols: int, n: int) -> np.ndarray:
    """Apply the plans (k, types) to the start strings (one 1-D id array each, lengths n0),
    each edit at a uniform position with a uniform symbol (a different one for replace):
    ids (count, n), all of the final length n."""
    count = len(starts)
    if count == 0:
        return np.zeros((0, n), dtype=np.int64)
    width = max(max(len(s) for s in starts), n) + int(k.max()) + 1
    cur = np.zeros((count, width), dtype=np.int64)
    length = np.array([len(s) for s in starts], dtype=np.int64)
    for i, s in enumerate(starts):
        cur[i, : len(s)] = s
    rows, cols = np.arange(count), np.arange(width)[None, :]
    for j in range(int(k.max())):  # sequential in the edits, vectorised over strings
        act, t = j < k, types[:, j]
        u = rng.random(count)
        pos = np.where(t == INSERT, np.floor(u * (length + 1)), np.floor(u * np.maximum(length, 1))).astype(np.int64)
        pos = pos[:, None]
        sym = rng.integers(0, n_symbols, size=count)[:, None]
        other = (cur[rows, pos[:, 0]] + rng.integers(1, max(n_symbols, 2), size=count)) % n_symbols
        right = np.concatenate([cur[:, :1], cur[:, :-1]], axis=1)  # cur[c − 1]
        left = np.concatenate([cur[:, 1:], np.zeros((count, 1), dtype=np.int64)], axis=1)  # cur[c + 1]
        inserted = np.where(cols < pos, cur, np.where(cols == pos, sym, right))
        deleted = np.where(cols < pos, cur, left)
        replaced = np.where(cols == pos, other[:, None], cur)
        new = np.where((t == INSERT)[:, None], inserted, np.where((t == DELETE)[:, None], deleted, replaced))
        cur = np.where(act[:, None], new, cur)
        length += np.where(act, (t == INSERT).astype(np.int64) - (t == DELETE), 0)
    assert (length == n).all()
    return cur[:, :n]
