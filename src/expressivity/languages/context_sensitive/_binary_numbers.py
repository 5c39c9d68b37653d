"""Little-endian binary operands ``a∘b`` shared by binary addition and multiplication, and
:class:`BinaryOperation`, their one base (alphabet ``01∘``, n ≥ 3, f(s) = a ∘ b in little-endian).

Inputs of length n ≥ 3: a has ℓ_a bits with ℓ_a uniform in 1 … n−2, b has ℓ_b = n − 1 − ℓ_a
bits, and each is uniform over the non-zero numbers of that many bits (leading zeros —
trailing symbols in little-endian — allowed), as in the benchmark.
"""

from __future__ import annotations

import re

import numpy as np

from ..function import Transduction


def sample_operands(rng: np.random.Generator, count: int, length: int, op_index: int) -> np.ndarray:
    """ids (count, length) over ``01∘`` (∘ = symbol ``op_index``) with non-zero operands."""
    ids = rng.integers(0, 2, size=(count, length))
    la = rng.integers(1, length - 1, size=count)  # 1 … n−2
    pos = np.arange(length)
    ids[np.arange(count), la] = op_index
    while True:  # resample the bits of operands that came out zero
        in_a, in_b = pos < la[:, None], pos > la[:, None]
        zero = ~((ids == 1) & in_a).any(axis=1) | ~((ids == 1) & in_b).any(axis=1)
        if not zero.any():
            return ids
        fresh = rng.integers(0, 2, size=(int(zero.sum()), length))
        ids[zero] = np.where(pos == la[zero, None], op_index, fresh)


def parse_operands(s: str, op: str, name: str) -> tuple[int, int]:
    """(a, b) from little-endian ``a∘b``; ValueError if s is not [01]+∘[01]+."""
    if re.fullmatch(rf"[01]+{re.escape(op)}[01]+", s) is None:
        raise ValueError(f"{name}: {s!r} is not a{op}b with little-endian binary numbers a, b")
    a, b = s.split(op)
    return int(a[::-1], 2), int(b[::-1], 2)


def little_endian(value: int) -> str:
    """Little-endian binary without trailing zeros; ``0`` for zero."""
    return format(value, "b")[::-1]


class BinaryOperation(Transduction):
    """s = a ∘ b (∘ = ``alphabet[2]``) → :meth:`combine` (a, b) in little-endian binary, then END."""

    output_alphabet = "01"
    terminated = True

    def combine(self, a: int, b: int) -> int:
        raise NotImplementedError

    def supports(self, length: int) -> bool:
        return length >= 3

    def output(self, s: str) -> str:
        self.to_ids(s)  # ValueError on foreign symbols
        a, b = parse_operands(s, self.alphabet[2], self.name)
        return little_endian(self.combine(a, b))

    def _sample_ids(self, rng, count, length):
        return sample_operands(rng, count, length, 2)
