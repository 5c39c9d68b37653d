"""Odds first (Delétang et al. 2023, context-sensitive): one half of the positions, then the other.

Definition, two orders of the same task (transduction, output alphabet = input alphabet,
output_length(n) = n):

- ``order="code"`` (the default): f(s₁ s₂ … s_n) = s₂ s₄ s₆ … s₁ s₃ s₅ … — the 0-based odd
  indices first, each half in order. This is what the benchmark's code computes
  (``concatenate([s[:, 1::2], s[:, ::2]])`` in ``tasks/cs/odds_first.py``), so it is the
  task behind the published Table 2.
- ``order="paper"``: f(s) = s₁ s₃ s₅ … s₂ s₄ s₆ … — the 1-based odd positions first, as the
  paper's text, the task's docstring and its examples state.

Alphabet ``01`` (``vocab_size`` = 2, at most 10). Examples: ``00110101`` → ``0111 0100``
(code) or ``0100 0111`` (paper); ``110`` → ``1 10`` (code) or ``10 1`` (paper).
Length n = number of input symbols, n ≥ 1; inputs uniform over Σⁿ.
"""

from __future__ import annotations

import numpy as np

from ...rules import check_choice
from ..function import DigitRearrangement

ORDERS = ("code", "paper")  # which half comes first: s₂s₄… (the benchmark's code) | s₁s₃… (its text)


class OddsFirst(DigitRearrangement):
    name = "odds_first"

    def __init__(self, vocab_size: int | None = None, order: str = "code") -> None:
        super().__init__(vocab_size)
        self.order = check_choice(order, f"{self.name}: order", ORDERS)
        self._first = 1 if self.order == "code" else 0  # 0-based index of the first symbol output

    def output(self, s: str) -> str:
        self.to_ids(s)
        return s[self._first::2] + s[1 - self._first::2]

    def rearrange_ids(self, ids):
        return np.concatenate([ids[:, self._first::2], ids[:, 1 - self._first::2]], axis=1)

    def __repr__(self) -> str:
        return f"OddsFirst(vocab_size={self.vocab_size}, order={self.order!r})"
