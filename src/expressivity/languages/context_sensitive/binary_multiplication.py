"""Binary multiplication (Delétang et al. 2023, context-sensitive): a · b in little-endian.

Definition: s = a ``*`` b with a, b non-empty little-endian binary numbers; f(s) = a · b in
little-endian binary without trailing zeros (``0`` for zero); transduction with output
alphabet ``01`` plus END, output_length(n) = n (a product of ℓ_a- and ℓ_b-bit numbers has at
most ℓ_a + ℓ_b = n − 1 bits, then END).
Alphabet ``01*``. Examples: ``001*01101`` = 4 · 22 = 88 → ``0001101``;
``1001*000001`` = 9 · 32 = 288 → ``000001001``.
Length n = number of symbols including ``*``, n ≥ 3; operands as in :mod:`._binary_numbers`.
"""

from __future__ import annotations

from ._binary_numbers import BinaryOperation


class BinaryMultiplication(BinaryOperation):
    name = "binary_multiplication"
    alphabet = "01*"

    def output_length(self, length: int) -> int:
        return length

    def combine(self, a: int, b: int) -> int:
        return a * b
