"""Missing duplicate (Delétang et al. 2023, context-sensitive): recover the hidden bit of ww.

Definition: the input is w w with |w| = ⌊n/2⌋, w ∈ {0, 1}*, one position replaced by the
placeholder ``_``, followed by the padding symbol ``#`` when n is odd; f(s) = the hidden bit
(the symbol at the same place in the other copy); classification with C = 2.
Alphabet ``01_#`` (the benchmark's tokens 0, 1, 2 = placeholder, 3 = padding).
Examples: ``01100_10`` → w = ``0110`` → class 1; ``1011_1#`` → w = ``101`` → class 0.
Length n = total number of symbols including the padding, n ≥ 2 (the benchmark fills
n = 1 with a constant); w is uniform and the hidden position uniform over the 2⌊n/2⌋
places.
"""

from __future__ import annotations

import re

import numpy as np

from ..function import Classification

_HOLE, _PAD = 2, 3


class MissingDuplicate(Classification):
    name = "missing_duplicate"
    alphabet = "01_#"
    n_classes = 2

    def supports(self, length: int) -> bool:
        return length >= 2

    def output(self, s: str) -> int:
        self.to_ids(s)  # ValueError on foreign symbols
        half = len(s) // 2
        body = s[: 2 * half]
        if (len(s) % 2 and s[-1] != "#") or re.fullmatch(r"[01]*_[01]*", body) is None:
            raise ValueError(f"{self.name}: {s!r} is not w w with one '_' (then '#' if the length is odd)")
        i = body.index("_")
        other = body[(i + half) % (2 * half)]  # the same place in the other copy
        if body.replace("_", other)[:half] != body.replace("_", other)[half:]:
            raise ValueError(f"{self.name}: {s!r} is not a duplicated string with one hole")
        return int(other)

    def _sample_ids(self, rng, count, length):
        half = length // 2
        w = rng.integers(0, 2, size=(count, half))
        ids = np.concatenate([w, w, np.full((count, length % 2), _PAD)], axis=1)
        hole = rng.integers(0, 2 * half, size=count)
        ids[np.arange(count), hole] = _HOLE
        return ids

    def outputs_ids(self, ids):
        count, n = ids.shape
        half = n // 2
        rows = np.arange(count)
        hole = (ids[:, : 2 * half] == _HOLE).argmax(axis=1)
        return ids[rows, (hole + half) % (2 * half)]
