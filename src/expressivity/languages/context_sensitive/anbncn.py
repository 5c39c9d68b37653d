"""aⁿbⁿcⁿ and aⁿbⁿcⁿdⁿ (Bhattamishra et al. 2020, context-sensitive counter languages).

Definition: L = {aᵐbᵐcᵐ : m ≥ 0} (alphabet ``abc``) and {aᵐbᵐcᵐdᵐ : m ≥ 0} (alphabet
``abcd``); ε ∈ L. Examples: ``aabbcc`` ∈ aⁿbⁿcⁿ, ``aabbc`` and ``abcabc`` ∉;
``abcd`` ∈ aⁿbⁿcⁿdⁿ. Length n = number of symbols; positives only for n divisible by 3 (4).
Membership, samplers and the generative process (parameter ``p_a``) are those of
:class:`..context_free.anbn.BlockCounting`.
"""

from __future__ import annotations

from ..context_free.anbn import BlockCounting


class AnBnCn(BlockCounting):
    name = "anbncn"
    alphabet = "abc"


class AnBnCnDn(BlockCounting):
    name = "anbncndn"
    alphabet = "abcd"
