"""Even pairs (Delétang et al. 2023, regular): is the number of ``01`` and ``10`` pairs even?

Definition: f(s) = (#{i : s_i s_{i+1} ∈ {01, 10}}) mod 2 for s ∈ {0, 1}ⁿ; classification,
C = 2 (class 0 = even). Equivalently f(s) = [s_1 ≠ s_n]: every change of symbol flips
whether the current symbol equals the first one.
Alphabet ``01``. Examples: ``001110`` has one ``01`` and one ``10`` → 2, even → class 0;
``0101001`` has two ``10`` and three ``01`` → 5, odd → class 1.
Length n = number of bits, n ≥ 1; inputs uniform over {0, 1}ⁿ.
"""

from __future__ import annotations

from ..function import Classification, uniform_ids


class EvenPairs(Classification):
    name = "even_pairs"
    alphabet = "01"
    n_classes = 2

    def output(self, s: str) -> int:
        self.to_ids(s)
        return sum(a != b for a, b in zip(s, s[1:])) % 2

    def _sample_ids(self, rng, count, length):
        return uniform_ids(rng, count, length, 2)

    def outputs_ids(self, ids):
        return (ids[:, 1:] != ids[:, :-1]).sum(axis=1) % 2
