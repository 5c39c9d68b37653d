"""Modular arithmetic without brackets (Delétang et al. 2023, regular).

Definition: s = d₀ o₁ d₁ o₂ … o_m d_m with digits d_i ∈ {0, …, M−1} and operators
o_i ∈ ``operators`` ⊆ {+, −, ·} (written ``+-*``); f(s) = the value of the expression with
the usual precedence (· before + and −, left to right) reduced mod M; classification with
C = M (``modulus``, 5 in the benchmark, at most 10 so digits stay one symbol).
Alphabet: the digits ``0``…``M−1`` then the operators, e.g. ``01234+-*``.
Examples (M = 5): ``1+2*3`` = 7 → class 2; ``1-1-1`` = −1 → class 4;
``0*1+4*3-2`` = 10 → class 0.
Length n = number of symbols; only odd n ≥ 1 hold an expression (the benchmark silently
shortens even lengths by one; here even lengths are not valid lengths). Inputs: digits and
operators uniform and independent.
"""

from __future__ import annotations

import numpy as np

from ..function import Classification, check_int

_OPS = "+-*"


class ModularArithmetic(Classification):
    name = "modular_arithmetic"

    def __init__(self, modulus: int = 5, operators: str = "+-*") -> None:
        self.modulus = check_int(self.name, "modulus", modulus, 2, 10)
        if not isinstance(operators, str) or not operators or not set(operators) <= set(_OPS) \
                or len(set(operators)) != len(operators):
            raise ValueError(f"{self.name}: operators must be distinct symbols from {_OPS!r}, got {operators!r}")
        self.operators = "".join(c for c in _OPS if c in operators)  # canonical order
        self.n_classes = self.modulus
        self.alphabet = "".join(str(d) for d in range(self.modulus)) + self.operators

    def supports(self, length: int) -> bool:
        return length % 2 == 1

    def output(self, s: str) -> int:
        ids = self.to_ids(s)[0]
        M = self.modulus
        if len(s) % 2 == 0 or (ids[0::2] >= M).any() or (ids[1::2] < M).any():
            raise ValueError(f"{self.name}: {s!r} is not digit (operator digit)*")
        total, term = 0, int(s[0])  # sum of finished terms, current product (with its sign)
        for op, d in zip(s[1::2], s[2::2]):
            if op == "*":
                term *= int(d)
            else:
                total += term
                term = int(d) if op == "+" else -int(d)
        return (total + term) % M

    def _sample_ids(self, rng, count, length):
        ids = rng.integers(0, self.modulus, size=(count, length))
        ids[:, 1::2] = self.modulus + rng.integers(0, len(self.operators), size=(count, length // 2))
        return ids

    def outputs_ids(self, ids):
        M = self.modulus
        count, n = ids.shape
        total = np.zeros(count, dtype=np.int64)
        term = ids[:, 0].copy()
        ops = np.array(list(self.operators))
        for t in range(1, n, 2):  # one operator at a time, vectorised over the batch
            op, d = ops[ids[:, t] - M], ids[:, t + 1]
            mul = op == "*"
            total = np.where(mul, total, (total + term) % M)
            term = np.where(mul, term * d, np.where(op == "+", d, -d)) % M
        return (total + term) % M

    def __repr__(self) -> str:
        return f"ModularArithmetic(modulus={self.modulus}, operators={self.operators!r})"
