"""FLaRe's arithmetic languages (Butoi et al. 2025, Table 1, class CS): an equation in binary.

Numbers are little-endian binary (least significant bit first) of at least one bit; trailing
zeros (leading zeros of the number) are allowed anywhere.

| name | language | alphabet | ours where the definition is the same |
|---|---|---|---|
| ``flare.binary_addition`` | x ``+`` y ``=`` z with z = x + y | ``01+=`` | ``binary_addition`` (z = its output up to trailing zeros) |
| ``flare.binary_multiplication`` | x ``×`` y ``=`` z with z = x · y | ``01×=`` | ``binary_multiplication`` (``*`` there) |
| ``flare.compute_sqrt`` | x ``=`` z with z = ⌊√x⌋ | ``01=`` | — (``compute_sqrt`` is big-endian) |

Examples: ``01+1=11`` (2 + 1 = 3) in, ``01+1=1`` out; ``11×11=1001`` (3 · 3 = 9) in;
``0001=01`` (⌊√8⌋ = 2) in.

Their positives of length n (n ≥ 5, ≥ 3 for the square root): the n − 5 (n − 3) free bits are
split among the numbers by Dirichlet proportions — weights (1, 1, 1) for x, y, z in addition,
(1, 1, 2) in multiplication, (2, 1) for x, z in the square root — floored cumulatively, plus
one bit each; x gets the shorter of the two operands; x is uniform over the numbers that fit
(and keep z within its bits), y likewise given x; then x and y swap places with probability
½ and z is padded with zeros to its bits. Lengths are uniform over the range. They define no
probability of a string. The next-symbol sets: bits (and, after one, the operator or ``=``)
while reading a number, then z's bits are forced up to its highest 1, then 0 or EOS.
"""

from __future__ import annotations

import math
import re

import numpy as np

from ..context_sensitive.binary_addition import BinaryAddition as _Addition
from ..context_sensitive.binary_multiplication import BinaryMultiplication as _Multiplication
from .base import FlareLanguage


def uniform_int(rng: np.random.Generator, hi: int) -> int:
    """Uniform over 0 … hi (a Python int of any size)."""
    bits = hi.bit_length()
    while True:
        x = int.from_bytes(rng.bytes((bits + 7) // 8), "little") >> ((8 - bits % 8) % 8)
        if x <= hi:
            return x


def split_bits(rng: np.random.Generator, free: int, weights: tuple[float, ...]) -> list[int]:
    """Their split of ``free`` bits among the numbers: Dirichlet proportions, cumulative sums
    floored, plus one bit each."""
    p = rng.dirichlet(weights)
    cum = np.floor(np.cumsum(p[:-1]) * free)
    return [int(v) + 1 for v in np.diff(cum, prepend=0, append=free)]


def bits_of(x: int, width: int) -> list[int]:
    """x in little-endian binary, padded with zeros to ``width`` bits (at least one)."""
    return [(x >> i) & 1 for i in range(max(width, 1))]


def _value(bits: str) -> int:
    return int(bits[::-1], 2)


class _Equation(FlareLanguage):
    """``x ∘ y = z`` (two operands) or ``x = z`` (one), z = f(operands)."""

    level = "CS"
    operator = ""  # "" for one operand
    weights: tuple[float, ...] = ()
    shortest = 5

    def f(self, *xs: int) -> int:
        raise NotImplementedError

    def _parts(self, s: str) -> list[str] | None:
        op = re.escape(self.operator)
        pattern = rf"([01]+){op}([01]+)=([01]+)" if self.operator else r"([01]+)=([01]+)"
        m = re.fullmatch(pattern, s)
        return None if m is None else list(m.groups())

    def accepts(self, s: str) -> bool:
        parts = self._parts(s)
        return parts is not None and _value(parts[-1]) == self.f(*map(_value, parts[:-1]))

    def accepts_ids(self, ids):
        return np.array([self.accepts(s) for s in self.to_strings(ids)], dtype=bool)

    def positive_lengths(self, lo, hi):
        return list(range(max(lo, self.shortest), hi + 1))

    def _operands(self, rng, widths: list[int]) -> list[int]:
        raise NotImplementedError

    def _sample_positive_ids(self, rng, count, length):
        rows = []
        for _ in range(count):  # Python ints: the numbers have up to n bits
            widths = split_bits(rng, length - self.shortest, self.weights)
            if len(widths) == 3:  # x gets the shorter operand
                widths[:2] = sorted(widths[:2])
            xs = self._operands(rng, widths)
            z = self.f(*xs)
            nums = [bits_of(x, w) for x, w in zip(xs, widths)]
            if len(nums) == 2 and rng.integers(2):
                nums.reverse()
            symbols = nums[0] + ([2] + nums[1] if len(nums) == 2 else []) + [len(self.alphabet) - 1]
            rows.append(symbols + bits_of(z, widths[-1]))
        return np.array(rows, dtype=np.int64).reshape(count, length)

    def next_symbol_sets(self, ids):
        count, n = ids.shape
        K = len(self.alphabet)
        eq, op = K - 1, 2
        out = np.zeros((count, n + 1, K + 1), dtype=bool)
        for b, s in enumerate(self.to_strings(ids)):  # a parse of each prefix, one string at a time
            seps = [eq] if not self.operator else [op, eq]
            part, read, numbers, forced = 0, 0, [], None
            for t in range(n + 1):
                if forced is None:  # reading an operand: bits, and the separator after one bit
                    out[b, t, :2] = True
                    out[b, t, seps[part]] = read > 0
                else:  # reading z: its bits up to the highest 1, then 0 or EOS
                    j = read
                    out[b, t, forced[j] if j < len(forced) else 0] = True
                    out[b, t, K] = j >= len(forced)
                if t == n:
                    break
                c = int(ids[b, t])
                if not out[b, t, c]:
                    break  # the prefix left the language: later rows stay empty
                if forced is None and c == seps[part]:
                    numbers.append(_value(s[t - read:t]))
                    part, read = part + 1, 0
                    if part == len(seps):
                        z = self.f(*numbers)
                        forced = bits_of(z, z.bit_length())
                else:
                    read += 1
        return out


class BinaryAddition(_Equation):
    name = "flare.binary_addition"
    alphabet = "01+="
    flare_dir = "binary-addition"
    operator = "+"
    weights = (1, 1, 1)

    def f(self, x, y):
        return x + y

    def accepts(self, s: str) -> bool:
        parts = self._parts(s)  # z agrees with our binary_addition's output up to trailing zeros
        return parts is not None and (parts[2].rstrip("0") or "0") == _Addition().output(f"{parts[0]}+{parts[1]}")

    def _operands(self, rng, widths):
        nx, ny, nz = widths
        max_z = 2 ** nz - 1
        x = uniform_int(rng, min(2 ** nx - 1, max_z))  # (widths: x already the shorter operand)
        return [x, uniform_int(rng, min(2 ** ny - 1, max_z - x))]


class BinaryMultiplication(_Equation):
    name = "flare.binary_multiplication"
    alphabet = "01×="
    flare_dir = "binary-multiplication"
    operator = "×"
    weights = (1, 1, 2)

    def f(self, x, y):
        return x * y

    def accepts(self, s: str) -> bool:
        parts = self._parts(s)  # z agrees with our binary_multiplication's output up to trailing zeros
        return parts is not None and (parts[2].rstrip("0") or "0") == \
            _Multiplication().output(f"{parts[0]}*{parts[1]}")

    def _operands(self, rng, widths):
        nx, ny, nz = widths
        max_z = 2 ** nz - 1
        x = uniform_int(rng, 2 ** nx - 1)
        return [x, uniform_int(rng, 2 ** ny - 1 if x == 0 else min(2 ** ny - 1, max_z // x))]


class ComputeSqrt(_Equation):
    name = "flare.compute_sqrt"
    alphabet = "01="
    flare_dir = "compute-sqrt"
    weights = (2, 1)
    shortest = 3

    def f(self, x):
        return math.isqrt(x)

    def _operands(self, rng, widths):
        nx, nz = widths
        return [uniform_int(rng, min(2 ** nx - 1, 2 ** (2 * nz) - 1))]


ARITHMETIC = (BinaryAddition, BinaryMultiplication, ComputeSqrt)
