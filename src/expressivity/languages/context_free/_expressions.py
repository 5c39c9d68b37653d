"""Bracketed modular expressions shared by modular arithmetic with brackets and solve equation.

Grammar (the benchmark's generator, by length): E → d | −d | (d) | (−d) | (E ∘ E) with
digits d ∈ {0, …, M−1} and ∘ ∈ ``ops``. Lengths: d is 1, −d is 2, (d) is 3, (−d) is 4, and an
expression of length n ≥ 5 is (L ∘ R) with |L| uniform in 1 … n−4 and |R| = n − 3 − |L|; so
every length n ≥ 1 holds expressions, and the sampler draws exactly this recursion.
"""

from __future__ import annotations

import numpy as np


def sample_expression(rng: np.random.Generator, modulus: int, length: int, ops: str) -> str:
    """One random expression of exactly ``length`` symbols (the recursion above)."""
    d = str(int(rng.integers(0, modulus)))
    if length == 1:
        return d
    if length == 2:
        return "-" + d
    if length == 3:
        return "(" + d + ")"
    if length == 4:
        return "(-" + d + ")"
    left = int(rng.integers(1, length - 3))  # 1 … n−4
    op = ops[int(rng.integers(0, len(ops)))]
    lhs = sample_expression(rng, modulus, left, ops)
    rhs = sample_expression(rng, modulus, length - 3 - left, ops)
    return "(" + lhs + op + rhs + ")"


class _Parser:
    """Recursive descent over the grammar; values are affine maps x ↦ a·x + b (mod M), so
    the same parser evaluates expressions (no x) and equations (one x)."""

    def __init__(self, s: str, modulus: int, ops: str, name: str, allow_x: bool) -> None:
        self.s, self.M, self.ops, self.name, self.allow_x = s, modulus, ops, name, allow_x
        self.digits = "0123456789"[:modulus]

    def fail(self, i: int):
        raise ValueError(f"{self.name}: {self.s!r} is not an expression of E → d | -d | (d) | (-d) | (E∘E) "
                         f"(error at position {i})")

    def atom(self, i: int) -> tuple[tuple[int, int], int] | None:
        """d or -d at i: ((a, b), next index), or None."""
        s, sign = self.s, 1
        j = i
        if j < len(s) and s[j] == "-":
            sign, j = -1, j + 1
        if j < len(s) and s[j] in self.digits:
            return (0, sign * int(s[j]) % self.M), j + 1
        if j < len(s) and s[j] == "x" and self.allow_x:
            return (sign % self.M, 0), j + 1
        return None

    def expr(self, i: int) -> tuple[tuple[int, int], int]:
        s, M = self.s, self.M
        got = self.atom(i)
        if got is not None:
            return got
        if i >= len(s) or s[i] != "(":
            self.fail(i)
        got = self.atom(i + 1)
        if got is not None and got[1] < len(s) and s[got[1]] == ")":
            return got[0], got[1] + 1  # (d) or (-d)
        (a1, b1), j = self.expr(i + 1)
        if j >= len(s) or s[j] not in self.ops:
            self.fail(j)
        op = s[j]
        (a2, b2), k = self.expr(j + 1)
        if k >= len(s) or s[k] != ")":
            self.fail(k)
        if op == "+":
            val = ((a1 + a2) % M, (b1 + b2) % M)
        elif op == "-":
            val = ((a1 - a2) % M, (b1 - b2) % M)
        else:
            if a1 and a2:
                self.fail(j)  # x·x is not affine (never produced: equations have one x)
            val = ((a1 * b2 + a2 * b1) % M, (b1 * b2) % M)
        return val, k + 1

    def parse(self) -> tuple[int, int]:
        val, j = self.expr(0)
        if j != len(self.s):
            self.fail(j)
        return val


def expression_value(s: str, modulus: int, ops: str, name: str) -> int:
    """Value of the expression s mod M; ValueError if s is not in the grammar."""
    (_, b) = _Parser(s, modulus, ops, name, allow_x=False).parse()
    return b


def affine(s: str, modulus: int, ops: str, name: str) -> tuple[int, int]:
    """(a, b) with s(x) ≡ a·x + b (mod M) for an expression with digits or ``x``."""
    return _Parser(s, modulus, ops, name, allow_x=True).parse()
