"""Binary addition (Delétang et al. 2023, context-sensitive): a + b in little-endian binary.

Definition: s = a ``+`` b with a, b non-empty little-endian binary numbers (least
significant bit first); f(s) = a + b in little-endian binary without trailing zeros
(``0`` for zero); transduction with output alphabet ``01`` plus END (the sum's length
varies), output_length(n) = n + 1 as in the benchmark (the sum has at most n − 1 bits).
Alphabet ``01+``. Examples: ``001+01101`` = 4 + 22 = 26 → ``01011`` (then END);
``1001+000001`` = 9 + 32 = 41 → ``100101``.
Length n = number of symbols including ``+``, n ≥ 3; operands as in
:mod:`._binary_numbers` (the benchmark's degenerate inputs for n ≤ 2 are not used).
"""

from __future__ import annotations

from ._binary_numbers import BinaryOperation


class BinaryAddition(BinaryOperation):
    name = "binary_addition"
    alphabet = "01+"

    def output_length(self, length: int) -> int:
        return length + 1

    def combine(self, a: int, b: int) -> int:
        return a + b
