"""Reverse string (Delétang et al. 2023, deterministic context-free): output s reversed.

Definition: f(s₁ … s_n) = s_n … s₁ for s over the first ``vocab_size`` digits (2 in the
benchmark, at most 10); transduction with output alphabet = input alphabet and
output_length(n) = n.
Alphabet ``01`` (``vocab_size`` = 2). Examples: ``011010`` → ``010110``;
``123021`` → ``120321`` (vocab_size 4).
Length n = number of input symbols, n ≥ 1; inputs uniform over Σⁿ.
"""

from __future__ import annotations

from ..function import DigitRearrangement


class ReverseString(DigitRearrangement):
    name = "reverse_string"


    def output(self, s: str) -> str:
        self.to_ids(s)
        return s[::-1]

    def rearrange_ids(self, ids):
        return ids[:, ::-1].copy()
