"""FLaRe's stack manipulation (Butoi et al. 2025, Table 1, class DCF).

L = { u o₁ … o_k ``#`` v }: an initial stack u ∈ {0, 1}* (bottom to top), operations
o_i ∈ {``+``b (PUSH b, b ∈ {0, 1}), ``-`` (POP)}, where no POP meets an empty stack, then the
marker and v = the final stack read top to bottom. Alphabet ``01+-#`` (their tokens PUSH and
POP are ``+`` and ``-`` here). Examples: ``01+1-#10`` in (01 → 011 → 01), ``0-#`` in,
``-#`` out (POP on an empty stack), ``01#01`` out (the stack reads top first).

Ours, ``stack_manipulation`` (Delétang et al.), ignores a POP on an empty stack and outputs
the stack; where no POP meets an empty stack, v is its output (the membership reuses it).

Their sampler draws the initial stack size a and the number of pushes b uniformly over the
range's bounds (a ≤ (hi − 1)/2, then b ≤ (hi − 2a − 1)/3), bits uniform, then operations
one at a time — PUSH or (when the stack is not empty) POP with probability ½ each, ending at
the PUSH after the b-th — so the length is 2a + 3b + 1 (every n ≥ 1 but 2) and not uniform
(:meth:`sample_range_positives` follows it). At a given length n the pairs (a, b) with
2a + 3b + 1 = n are drawn uniformly here (theirs weighs them by the range's bounds). No
probability of a string is defined. Next-symbol sets: bits, PUSH and ``#`` (and POP over a
non-empty stack) in the initial stack; a bit after PUSH; PUSH, ``#`` (and POP) after an
operation; after ``#`` the stack's symbols are forced, then EOS.
"""

from __future__ import annotations

import math
import re

import numpy as np

from ..context_free.stack_manipulation import StackManipulation as _StackTask
from .base import FlareLanguage

_PUSH, _POP, _MARK = 2, 3, 4


class StackManipulation(FlareLanguage):
    name = "flare.stack_manipulation"
    alphabet = "01+-#"
    level = "DCF"
    flare_dir = "stack-manipulation"
    tokens = {"PUSH": "+", "POP": "-"}

    def accepts(self, s: str) -> bool:
        m = re.fullmatch(r"([01]*)((?:\+[01]|-)*)#([01]*)", s)
        if m is None:
            return False
        depth = len(m.group(1))
        for c in m.group(2):
            depth += 1 if c == "+" else -1 if c == "-" else 0
            if depth < 0:
                return False  # a POP on an empty stack
        ours = m.group(1) + m.group(2).replace("+0", "a").replace("+1", "b").replace("-", "p")
        return m.group(3) == (_StackTask().output(ours) if ours else "")

    def accepts_ids(self, ids):
        return np.array([self.accepts(s) for s in self.to_strings(ids)], dtype=bool)

    def positive_lengths(self, lo, hi):
        return [n for n in range(max(lo, 1), hi + 1) if n != 2]

    def _sample_positive_ids(self, rng, count, length):
        pairs = [(a, (length - 1 - 2 * a) // 3) for a in range((length - 1) // 2 + 1) if (length - 1 - 2 * a) % 3 == 0]
        picks = rng.integers(0, len(pairs), size=count)
        return np.array([self._string(rng, *pairs[i]) for i in picks], dtype=np.int64).reshape(count, length)

    def sample_range_positives(self, rng, count, lo, hi):
        if hi < 1:
            raise ValueError(f"{self.name}: no strings of the language have a length in {lo}-{hi}")
        out = []
        for _ in range(count):  # their joint draw of (stack size, pushes)
            a = int(rng.integers(max(0, math.ceil((lo - 1) / 2)), (hi - 1) // 2 + 1))
            b = int(rng.integers(max(0, math.ceil((lo - 2 * a - 1) / 3)), (hi - 2 * a - 1) // 3 + 1))
            out.append(np.array(self._string(rng, a, b), dtype=np.int64))
        return out

    @staticmethod
    def _string(rng, n_stack: int, n_push: int) -> list[int]:
        stack = [int(b) for b in rng.integers(0, 2, size=n_stack)]
        out, pushes = list(stack), 0
        while True:
            if stack and rng.integers(2):
                out.append(_POP)
                stack.pop()
            elif pushes == n_push:
                break
            else:
                bit = int(rng.integers(2))
                out += [_PUSH, bit]
                stack.append(bit)
                pushes += 1
        return out + [_MARK] + stack[::-1]

    def next_symbol_sets(self, ids):
        count, n = ids.shape
        out = np.zeros((count, n + 1, 6), dtype=bool)
        for b in range(count):  # simulate the stack along each string
            stack: list[int] = []
            phase = "initial"  # initial | bit (after PUSH) | ops | tail
            for t in range(n + 1):
                if phase == "tail":
                    out[b, t, stack[-1] if stack else 5] = True
                elif phase == "bit":
                    out[b, t, :2] = True
                else:
                    out[b, t, [_PUSH, _MARK]] = True
                    out[b, t, _POP] = bool(stack)
                    out[b, t, :2] = phase == "initial"
                if t == n:
                    break
                c = int(ids[b, t])
                if not out[b, t, c]:
                    break  # the prefix left the language
                if phase == "tail":
                    stack.pop()
                elif phase == "bit":
                    stack.append(c)
                    phase = "ops"
                elif c < 2:
                    stack.append(c)
                elif c == _PUSH:
                    phase = "bit"
                elif c == _POP:
                    stack.pop()
                    phase = "ops"
                else:
                    phase = "tail"
        return out
