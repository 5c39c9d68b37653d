"""Stack manipulation (Delétang et al. 2023, deterministic context-free).

Definition: the input is an initial stack over {0, 1}, given bottom to top, followed by
instructions ``p`` (POP), ``a`` (PUSH 0), ``b`` (PUSH 1); POP on an empty stack does nothing.
f(s) = the final stack read top to bottom (as if popping it); transduction with output
alphabet ``01`` plus END (the output length varies), output_length(n) = n + 1 (the final
stack has at most n symbols; END follows it; later positions are not scored).
Input alphabet ``01pab`` (the benchmark's tokens 0, 1, POP = 2, PUSH 0 = 3, PUSH 1 = 4).
Example: ``0110bpp``: 0110 → PUSH 1 → 01101 → POP → 0110 → POP → 011 → output ``110``
(then END). ``110ppp`` → empty stack → output ``""`` (END at the first position).
Valid inputs: [01]* [pab]*. Length n = number of input symbols, n ≥ 1; as in the benchmark
the stack part has a uniform length in 1 … n−1 (n for n = 1) with uniform bits, the rest are
uniform instructions.
"""

from __future__ import annotations

import re

import numpy as np

from ..function import Transduction

_POP, _PUSH0, _PUSH1 = 2, 3, 4


class StackManipulation(Transduction):
    name = "stack_manipulation"
    alphabet = "01pab"
    output_alphabet = "01"
    terminated = True

    def output_length(self, length: int) -> int:
        return length + 1

    def output(self, s: str) -> str:
        self.to_ids(s)  # ValueError on foreign symbols
        m = re.fullmatch(r"([01]*)([pab]*)", s)
        if m is None:
            raise ValueError(f"{self.name}: {s!r} is not a stack [01]* followed by instructions [pab]*")
        stack = list(m.group(1))
        for op in m.group(2):
            if op == "p":
                if stack:
                    stack.pop()
            else:
                stack.append("0" if op == "a" else "1")
        return "".join(reversed(stack))

    def _sample_ids(self, rng, count, length):
        if length == 1:
            return rng.integers(0, 2, size=(count, 1))
        k = rng.integers(1, length, size=count)  # stack length in 1 … n−1
        stack = rng.integers(0, 2, size=(count, length))
        ops = rng.integers(_POP, _PUSH1 + 1, size=(count, length))
        return np.where(np.arange(length) < k[:, None], stack, ops)

    def outputs_ids(self, ids):
        """Vectorised stack machine: one symbol per step for all strings at once."""
        count, n = ids.shape
        stack = np.zeros((count, n + 1), dtype=np.int64)
        depth = np.zeros(count, dtype=np.int64)
        rows = np.arange(count)
        for t in range(n):
            sym = ids[:, t]
            push = sym != _POP
            value = np.where(sym < 2, sym, sym - _PUSH0)  # stack bits push themselves
            stack[rows[push], depth[push]] = value[push]
            depth = np.where(push, depth + 1, np.maximum(depth - 1, 0))
        out = np.full((count, n + 1), -1, dtype=np.int64)
        j = np.arange(n + 1)
        top_down = stack[rows[:, None], (depth[:, None] - 1 - j).clip(min=0)]  # (count, n+1)
        out = np.where(j < depth[:, None], top_down, out)
        out[rows, depth] = self.end_index
        return out
