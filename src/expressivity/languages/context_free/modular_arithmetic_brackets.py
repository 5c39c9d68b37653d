"""Modular arithmetic with brackets (Delétang et al. 2023, deterministic context-free).

Definition: s is an expression of the grammar E → d | −d | (d) | (−d) | (E ∘ E) with digits
d ∈ {0, …, M−1} and ∘ ∈ {+, −, ·} (``mult=True``, the default) or ∘ ∈ {+, −}
(``mult=False``); f(s) = its value mod M; classification with C = M (``modulus``, 5 in the
benchmark, at most 10). Multiplication is in by default because the benchmark ran it so: its
task table builds this task with ``mult=True`` (``experiments/constants.py``), and the
paper's appendix lists + − · ; its class's own default (``mult=False``) is not what produced
Table 2.
Alphabet: digits, then ``+-``, ``*`` if ``mult``, then ``()``; e.g. ``01234+-*()``.
Examples (M = 5): ``((1+2)-(-3))`` = 6 → class 1; ``(-4)`` → class 1; ``(3*(2+4))`` = 18 →
class 3.
Length n = number of symbols, every n ≥ 1; inputs are drawn by the benchmark's recursion
(see :mod:`._expressions`: (L ∘ R) with |L| uniform in 1 … n−4).
"""

from __future__ import annotations

import numpy as np

from ..function import Classification, check_int
from ._expressions import expression_value, sample_expression


class ModularArithmeticBrackets(Classification):
    name = "modular_arithmetic_brackets"

    def __init__(self, modulus: int = 5, mult: bool = True) -> None:
        self.modulus = check_int(self.name, "modulus", modulus, 2, 10)
        if not isinstance(mult, bool):
            raise ValueError(f"{self.name}: mult must be a bool, got {mult!r}")
        self.mult = mult
        self.ops = "+-*" if mult else "+-"
        self.n_classes = self.modulus
        self.alphabet = "0123456789"[: self.modulus] + self.ops + "()"

    def output(self, s: str) -> int:
        self.to_ids(s)
        return expression_value(s, self.modulus, self.ops, self.name)

    def _sample_ids(self, rng, count, length):
        exprs = [sample_expression(rng, self.modulus, length, self.ops) for _ in range(count)]
        return self.to_ids(exprs) if count else np.zeros((0, length), dtype=np.int64)

    def __repr__(self) -> str:
        return f"ModularArithmeticBrackets(modulus={self.modulus}, mult={self.mult})"
