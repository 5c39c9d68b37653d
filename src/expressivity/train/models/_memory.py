"""What the stack and the tape share: every action's moved memory as one row selection, and
the mix of those moves by the action weights.

A memory update is M_t = Σ_A a_A · move_A(X) where X (B, R, m) is the memory with the new
value in place (the stack's P = [v; S; 0], the tape's W) and move_A picks, for each cell
k < K, one row of X: cell k after action A is X[row_A(k)]. All A moves at once are one
``index_select`` (:func:`take_rows`; rows the same for every memory, or per memory through
the (B·R, m) matrix), and the mix is one batched product (:func:`mix`). (A gradient gathered
through the inverse selection instead of torch's scatter-add, and ``gather`` with a
(B, A·K, m) index, were both slower here: issue 21.)
"""

from __future__ import annotations

import torch
from torch import Tensor


def mix(a: Tensor, moved: Tensor) -> Tensor:
    """Σ_A a_A · moved_A, one batched product: a (B, A) action weights, moved (B, A·K, m) the
    memory after each action, action by action → (B, K, m)."""
    B, rows, m = moved.shape
    A = a.shape[-1]
    return torch.bmm(a.reshape(B, 1, A), moved.view(B, A, rows // A * m)).view(B, rows // A, m)


def flat_rows(rows: Tensor, R: int) -> Tensor:
    """Per-memory rows (B, A·K) of B memories of R rows → indices (B·A·K,) into their
    (B·R, m) matrix."""
    B = rows.shape[0]
    return (rows + R * torch.arange(B, device=rows.device)[:, None]).reshape(-1)


def take_rows(X: Tensor, rows: Tensor) -> Tensor:
    """Every action's moved memory, (B, A·K, m), from X (B, R, m) and ``rows`` (A·K,), the
    same for every memory."""
    return X.index_select(1, rows)


def take_flat(X: Tensor, flat: Tensor) -> Tensor:
    """As :func:`take_rows` with per-memory rows: ``flat`` = :func:`flat_rows` (B·A·K,)."""
    B, R, m = X.shape
    return X.reshape(B * R, m).index_select(0, flat).view(B, -1, m)
