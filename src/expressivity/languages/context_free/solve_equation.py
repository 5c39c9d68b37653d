"""Solve equation (Delétang et al. 2023, deterministic context-free): find the unknown x.

Definition: s = E ``=`` v where E is an expression of the grammar of modular arithmetic
with brackets (operators + and − only) in which exactly one digit is replaced by ``x``, and
v ∈ {0, …, M−1}; f(s) = the x ∈ {0, …, M−1} with E(x) ≡ v (mod M). Without · the
expression is x ↦ ±x + b, so the solution is unique: x = ±(v − b) mod M. Classification with
C = M (``modulus``, 5 in the benchmark).
Alphabet: digits, ``+-()``, ``x``, ``=``; e.g. ``01234+-()x=``.
Example (M = 5): ``((x+2)-(-3))=1`` → x + 5 ≡ 1 → class 1.
Length n = total number of symbols (expression, ``=`` and v), n ≥ 3. Inputs: a random
expression of length n − 2 (the benchmark's recursion), one of its digits chosen uniformly
replaced by x, and v its value (the benchmark picks the digit by a forward scan from a
random position, which favours digits after long operator runs; here it is uniform).
"""

from __future__ import annotations

import numpy as np

from ..function import Classification, check_int
from ._expressions import affine, expression_value, sample_expression


class SolveEquation(Classification):
    name = "solve_equation"

    def __init__(self, modulus: int = 5) -> None:
        self.modulus = check_int(self.name, "modulus", modulus, 2, 10)
        self.n_classes = self.modulus
        self.alphabet = "0123456789"[: self.modulus] + "+-()x="

    def supports(self, length: int) -> bool:
        return length >= 3

    def output(self, s: str) -> int:
        self.to_ids(s)
        lhs, eq, v = s[:-2], s[-2:-1], s[-1:]
        if eq != "=" or not v.isdigit() or int(v) >= self.modulus or lhs.count("x") != 1:
            raise ValueError(f"{self.name}: {s!r} is not E=v with one x in E")
        a, b = affine(lhs, self.modulus, "+-", self.name)  # a = ±1
        return a * (int(v) - b) % self.modulus

    def _sample_ids(self, rng, count, length):
        rows = []
        for _ in range(count):
            expr = sample_expression(rng, self.modulus, length - 2, "+-")
            value = expression_value(expr, self.modulus, "+-", self.name)
            digits = [i for i, c in enumerate(expr) if c.isdigit()]
            i = digits[int(rng.integers(0, len(digits)))]
            rows.append(f"{expr[:i]}x{expr[i + 1:]}={value}")
        return self.to_ids(rows) if count else np.zeros((0, length), dtype=np.int64)

    def __repr__(self) -> str:
        return f"SolveEquation(modulus={self.modulus})"
