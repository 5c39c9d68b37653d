"""Brute-force references over all short strings: membership by a language's plain ``accepts``,
valid next symbols, the uniform-action PDFA of FLaRe, and the edit distance to a language."""

from __future__ import annotations

import itertools
import math
from functools import cache


def words(alphabet: str, n: int):
    return ("".join(w) for w in itertools.product(alphabet, repeat=n))


def members(accepts, alphabet: str, max_len: int) -> set[str]:
    return {w for n in range(max_len + 1) for w in words(alphabet, n) if accepts(w)}


def continues(accepts, alphabet: str, prefix: str, reach: int) -> bool:
    """Some member starts with ``prefix`` and has at most ``reach`` more symbols."""
    return any(accepts(prefix + w) for r in range(reach + 1) for w in words(alphabet, r))


def valid_next(accepts, alphabet: str, prefix: str, reach: int) -> set[str]:
    """{a : prefix·a starts a member} ∪ {"$" if prefix is a member}, members within ``reach``."""
    out = {a for a in alphabet if continues(accepts, alphabet, prefix + a, reach)}
    return out | ({"$"} if accepts(prefix) else set())


def pdfa_probability(accepts, alphabet: str, s: str, reach: int) -> float:
    """FLaRe's uniform-action PDFA: after each prefix, each valid action (a next symbol, or
    ending when the prefix is a member) has probability 1 / #actions."""
    p = 1.0
    for t in range(len(s) + 1):
        acts = valid_next(accepts, alphabet, s[:t], reach)
        step = s[t] if t < len(s) else "$"
        if step not in acts:
            return 0.0
        p /= len(acts)
    return p


def levenshtein(a: str, b: str) -> int:
    @cache
    def d(i: int, j: int) -> int:
        if i == 0 or j == 0:
            return i + j
        return min(d(i - 1, j) + 1, d(i, j - 1) + 1, d(i - 1, j - 1) + (a[i - 1] != b[j - 1]))

    return d(len(a), len(b))


def distance_to(s: str, pool: set[str]) -> float:
    return min((levenshtein(s, w) for w in pool), default=math.inf)
