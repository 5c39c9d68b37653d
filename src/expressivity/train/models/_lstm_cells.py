"""One LSTM layer's cells over a whole sequence, forward and back, written out (no autograd):
the lstm's and the Stack-LSTM's written-out losses step them.

Torch's gate order and equations: from the pre-activations z_t = (z_i, z_f, z_g, z_o),

    i, f, o = σ(z_i, z_f, z_o),  g = tanh z_g,  c_t = f ⊙ c_{t−1} + i ⊙ g,  h_t = o ⊙ tanh c_t,

c_0 = 0. Back, from dh = ∂L/∂h_t and dc' = ∂L/∂c_{t+1} ⊙ f_{t+1}:

    dc = dh ⊙ M_t + dc',   ∂z_t = (dc ⊙ K_i, dc ⊙ K_f, dc ⊙ K_g, dh ⊙ K_o),

with the factors of every step computed at once before the loop: M = o (1 − tanh² c),
K_i = g σ'(i), K_f = c_{t−1} σ'(f), K_g = i (1 − g²), K_o = tanh c · σ'(o), σ' = σ (1 − σ).
A step back is then four elementwise calls (against eleven with the slopes taken per step);
every step's views (a gate's columns, one step's rows) are made once (``unbind``), since
making a view costs about what a small elementwise call does. Packed steps (R runs side by
side, :func:`~._runs.active_runs`): step t works on its first n_t rows only, n_t not
increasing in t; the rows it leaves out get ∂z = 0.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ._runs import packed, zero_tails

_sigmoid_backward = torch.ops.aten.sigmoid_backward.grad_input  # grad ⊙ y (1 − y) into grad_input
_tanh_backward = torch.ops.aten.tanh_backward.grad_input  # grad ⊙ (1 − y²) into grad_input


class LSTMCells:
    """The cells of one LSTM layer for T steps of N rows: ``Z`` (T, N, 4d) the pre-activations,
    each step's h_{t−1} part added by the caller before :meth:`step` (Z then holds z_t; the
    forward steps only read it); ``H`` (T, N, d) where h_t goes (a new buffer when None).
    After the forward steps, :meth:`start_back` computes the factors over Z and returns it as
    ∂Z, and :meth:`step_back` from t = T−1 down writes ∂z_t into it. (Fewer buffers: the
    sequence's tensors are 10–20 times a core's L1 at the benchmark's size.) ``rows``: each
    step's leading rows n_t (packed steps; None: all N); every per-step tensor a caller passes
    or gets back then has n_t rows."""

    def __init__(self, Z: Tensor, H: Tensor | None = None, rows: list[int] | None = None) -> None:
        T, N, d4 = Z.shape
        d = d4 // 4
        self.d, self.N, self.Z, self.rows, self._backed = d, N, Z, rows, False
        self.A = A = torch.empty_like(Z)  # σ(i), σ(f), tanh(g), σ(o)
        self.C = C = Z.new_empty(T, N, d)
        self.TC = TC = torch.empty_like(C)
        self.H = H = torch.empty_like(C) if H is None else H
        self._z, self._zg = packed(Z.unbind(0), rows), packed(Z[..., 2 * d:3 * d].unbind(0), rows)
        self._a, self._i = packed(A.unbind(0), rows), packed(A[..., :d].unbind(0), rows)
        self._f, self._g = packed(A[..., d:2 * d].unbind(0), rows), packed(A[..., 2 * d:3 * d].unbind(0), rows)
        self._o = packed(A[..., 3 * d:].unbind(0), rows)
        self._c, self._tc, self._h = packed(C.unbind(0), rows), packed(TC.unbind(0), rows), packed(H.unbind(0), rows)
        self._c_prev = self._c[:-1] if rows is None else packed(C.unbind(0)[:-1], rows[1:])  # c_{t−1}, n_t rows

    def step(self, t: int) -> Tensor:
        """The gates, c_t, tanh c_t and h_t from z_t (:attr:`Z`'s step t, complete); → h_t."""
        a, g, c, tc, h = self._a[t], self._g[t], self._c[t], self._tc[t], self._h[t]
        torch.sigmoid(self._z[t], out=a)  # the g block's σ is written over by its tanh next
        torch.tanh(self._zg[t], out=g)
        if t:
            torch.mul(self._f[t], self._c_prev[t - 1], out=c).addcmul_(self._i[t], g)
        else:
            torch.mul(self._i[t], g, out=c)
        torch.tanh(c, out=tc)
        return torch.mul(self._o[t], tc, out=h)

    def start_back(self) -> Tensor:
        """The factors M, K of every step at once (module docstring), written over buffers the
        backward pass no longer reads (K over :attr:`Z`, M over tanh c); → ∂Z (T, N, 4d),
        where :meth:`step_back` writes ∂z_t over K_t (the Z buffer again). It may run again
        (an autograd node's backward with retain_graph): A and c are intact, tanh c is
        taken again."""
        if self._backed:  # a second backward pass (retain_graph): tanh c again, as the forward step took it
            torch.tanh(self.C, out=self.TC)
        self._backed = True
        A, TC, d = self.A, self.TC, self.d
        K = self.Z
        i, f, g, o = A[..., :d], A[..., d:2 * d], A[..., 2 * d:3 * d], A[..., 3 * d:]
        _sigmoid_backward(g, i, grad_input=K[..., :d])
        K[0, :, d:2 * d].zero_()  # c_0 = 0
        _sigmoid_backward(self.C[:-1], f[1:], grad_input=K[1:, :, d:2 * d])
        _tanh_backward(i, g, grad_input=K[..., 2 * d:3 * d])
        _sigmoid_backward(TC, o, grad_input=K[..., 3 * d:])
        _tanh_backward(o, TC, grad_input=TC)  # M, over tanh c (read last just above)
        T, N = TC.shape[:2]
        if self.rows is not None:  # the rows a step leaves out: ∂z = 0 (step_back writes the others)
            zero_tails(K, self.rows)
        self._k3 = packed(K[..., :3 * d].view(T, N, 3, d).unbind(0), self.rows)
        self._ko = packed(K[..., 3 * d:].unbind(0), self.rows)
        return K

    def step_back(self, t: int, dh: Tensor, dc: Tensor | None) -> Tensor:
        """∂z_t over K_t (:meth:`start_back`'s ∂Z) from dh = ∂L/∂h_t (complete) and dc =
        ∂L/∂c_{t+1} ⊙ f_{t+1} (None at the last step; updated in place; packed steps: all N
        rows) → ∂L/∂c_t ⊙ f_t, the next (earlier) step's dc."""
        m = self._tc[t]  # M_t (start_back wrote it over tanh c_t)
        n = m.shape[0]
        if dc is None and n == self.N:
            dc = part = torch.mul(m, dh)
            self._dc3 = dc3 = dc.unsqueeze(1)  # dc is this tensor, updated in place, at every earlier step
        else:
            if dc is None:  # packed: all N rows, zero until a step first reads them
                dc = m.new_zeros(self.N, self.d)
                self._dc3 = dc.unsqueeze(1)
            part, dc3 = (dc, self._dc3) if n == self.N else (dc[:n], self._dc3[:n])
            part.addcmul_(m, dh)
        torch.mul(self._k3[t], dc3, out=self._k3[t])
        torch.mul(self._ko[t], dh, out=self._ko[t])
        if t:
            part.mul_(self._f[t])
        return dc
