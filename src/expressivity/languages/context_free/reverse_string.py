"""Reverse string (Delétang et al. 2023, deterministic context-free): output s reversed.

Definition: f(s₁ … s_n) = s_n … s₁ for s over the first ``vocab_size`` digits (2 in the
benchmark, at most 10); transduction with output alphabet = input alphabet and
output_length(n) = n.
Alphabet ``01`` (``vocab_size`` = 2). Examples: ``011010`` → ``010110``;
``123021`` → ``120321`` (vocab_size 4).
Length n = number of input symbols, n ≥ 1; inputs uniform over Σⁿ.
"""

from __future__ import annotations

from ..function import Transduction, check_int, uniform_ids


class ReverseString(Transduction):
    name = "reverse_string"

    def __init__(self, vocab_size: int = 2) -> None:
        self.vocab_size = check_int(self.name, "vocab_size", vocab_size, 2, 10)
        self.alphabet = self.output_alphabet = "0123456789"[: self.vocab_size]

    def output_length(self, length: int) -> int:
        return length

    def output(self, s: str) -> str:
        self.to_ids(s)
        return s[::-1]

    def _sample_ids(self, rng, count, length):
        return uniform_ids(rng, count, length, self.vocab_size)

    def outputs_ids(self, ids):
        return ids[:, ::-1].copy()

    def __repr__(self) -> str:
        return f"ReverseString(vocab_size={self.vocab_size})"
