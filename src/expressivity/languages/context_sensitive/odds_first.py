"""Odds first (Delétang et al. 2023, context-sensitive): odd positions, then even ones.

Definition: f(s₁ s₂ … s_n) = s₁ s₃ s₅ … s₂ s₄ s₆ … (1-based positions: the odd ones first,
then the even ones, each in order); transduction with output alphabet = input alphabet,
output_length(n) = n. This follows the benchmark's docstring and examples; its code takes
the 0-based odd indices (s₂ s₄ …) first — the same task up to which half comes first.
Alphabet ``01`` (``vocab_size`` = 2, at most 10). Examples: ``00110101`` → ``0100 0111``;
``110`` → ``10 1``.
Length n = number of input symbols, n ≥ 1; inputs uniform over Σⁿ.
"""

from __future__ import annotations

import numpy as np

from ..function import DigitRearrangement


class OddsFirst(DigitRearrangement):
    name = "odds_first"


    def output(self, s: str) -> str:
        self.to_ids(s)
        return s[0::2] + s[1::2]

    def rearrange_ids(self, ids):
        return np.concatenate([ids[:, 0::2], ids[:, 1::2]], axis=1)
