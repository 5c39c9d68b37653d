"""Brute-force Dyck-(k, D) reference shared by the Dyck construction tests (a plain module, not a conftest).

member(s, k, D) is the independent stack test every recogniser is checked against;
the generators give whole small domains, balanced words and near-miss words (hypothesis).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import strategies as st

from expressivity.languages import PAIRS


def member(s: str, k: int, D: int) -> bool:
    """Brute force: push on open, pop a matching open on close, height ≤ D, empty at the end."""
    opens = {p[0]: t for t, p in enumerate(PAIRS[:k])}
    closes = {p[1]: t for t, p in enumerate(PAIRS[:k])}
    stack: list[int] = []
    for ch in s:
        if ch in opens:
            stack.append(opens[ch])
            if len(stack) > D:
                return False
        elif not stack or stack.pop() != closes[ch]:
            return False
    return not stack


def all_strings(alphabet: str, max_len: int) -> list[str]:
    """Every string over alphabet of length 0..max_len."""
    return ["".join(p) for n in range(max_len + 1) for p in itertools.product(alphabet, repeat=n)]


def balanced_words(k: int, n: int, max_height: int) -> list[str]:
    """Every balanced word over k pair types of length n with stack height ≤ max_height."""
    out = []
    for shape in itertools.product((0, 1), repeat=n):  # 0 = open, 1 = close
        h, ok = 0, True
        for x in shape:
            h += 1 if x == 0 else -1
            if h < 0 or h > max_height:
                ok = False
                break
        if not ok or h != 0:
            continue
        n_pairs = n // 2
        for types in itertools.product(range(k), repeat=n_pairs):
            stack, it, word = [], iter(types), []
            for x in shape:
                if x == 0:
                    t = next(it)
                    stack.append(t)
                    word.append(PAIRS[t][0])
                else:
                    word.append(PAIRS[stack.pop()][1])
            out.append("".join(word))
    return out


def assert_sampled_strings_match(c, k: int, D: int, rng: np.random.Generator) -> None:
    """Sampled members and non-members of lengths 20, 100, 1000: the sampler and c.predict agree with member."""
    for n, count in ((20, 40), (100, 10), (1000, 3)):
        pos = c.language.sample(rng, count, n, positive=True)
        neg = c.language.sample(rng, count, n, positive=False)
        truth = np.array([member(s, k, D) for s in pos + neg])
        assert truth[:count].all() and not truth[count:].any()  # the sampler agrees with brute force
        assert np.array_equal(c.predict(pos + neg), truth), (k, D, n)


def assert_rejects_too_long_and_foreign(c) -> None:
    """c built with k = 1 and max_length = 4: a length-6 string and a foreign symbol raise ValueError."""
    with pytest.raises(ValueError, match="max_length"):
        c.logits(["()()()"])
    with pytest.raises(ValueError, match="alphabet"):
        c.logits(["(]"])


@st.composite
def near_dyck(draw, max_k: int, max_steps: int):
    """A random Dyck-(k, D+1) word (k ≤ max_k, D ≤ 5) with a few random edits: members and near misses."""
    k = draw(st.integers(1, max_k))
    D = draw(st.integers(1, 5))
    alphabet = "".join(PAIRS[:k])
    stack, out = [], []
    for _ in range(draw(st.integers(0, max_steps))):
        if stack and (len(stack) > D or draw(st.booleans())):
            out.append(PAIRS[stack.pop()][1])
        else:
            t = draw(st.integers(0, k - 1))
            stack.append(t)
            out.append(PAIRS[t][0])
    out += [PAIRS[t][1] for t in reversed(stack)]
    for _ in range(draw(st.integers(0, 2))):
        if out:
            out[draw(st.integers(0, len(out) - 1))] = draw(st.sampled_from(alphabet))
    return k, D, "".join(out)
