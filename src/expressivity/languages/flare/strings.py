"""FLaRe's languages of a string w and something made of it (Butoi et al. 2025, Table 1).

| name | class | language | alphabet | positives of length n (their sampler) | ours where the definition is the same |
|---|---|---|---|---|---|
| ``flare.majority`` | DCF | strictly more 1s than 0s | ``01`` | n ≥ 1; #1 uniform in ⌊n/2⌋+1 … n, then shuffled | ``majority`` |
| ``flare.marked_reversal`` | DCF | w ``#`` wᴿ, w ∈ {0, 1}* | ``01#`` | n = 2m + 1; w uniform | ``reverse_string`` (wᴿ = its output) |
| ``flare.unmarked_reversal`` | CF | w wᴿ (even palindromes, ε included) | ``01`` | n = 2m; w uniform | — |
| ``flare.marked_copy`` | CS | w ``#`` w | ``01#`` | n = 2m + 1; w uniform | ``duplicate_string`` (w w is its output, here with a marker) |
| ``flare.missing_duplicate_string`` | CS | w w with one ``1`` replaced by ``_`` | ``01_`` | n = 2m ≥ 2; w uniform with a 1 at a uniform place, then a uniform one of ww's 1s hidden | — (``missing_duplicate`` hides any bit) |
| ``flare.odds_first`` | CS | w ``#`` w₁w₃w₅…w₂w₄… (1-based odd positions first) | ``01#`` | n = 2m + 1; w uniform | ``odds_first`` with ``order="paper"`` |
| ``flare.bucket_sort`` | CS | w ``#`` sorted(w), w ∈ {1, …, 5}* | ``12345#`` | n = 2m + 1; w uniform | ``bucket_sort`` (digits shifted by one) |

Their sampler draws the half-length m (the length n for majority) uniformly over the range,
so the positive lengths are uniform; where the string is then uniform given its length they
define log P(s) = −log #lengths − m·log |Σ_w| (the reversals, marked copy, odds first, bucket
sort). The next-symbol sets are exact for every prefix: before the marker every symbol (and
the marker) is valid, after it the rest is forced; majority and unmarked reversal accept
both bits always, and EOS when the prefix is a member; missing duplicate accepts 0, 1 and
``_`` until the ``_``, then 0 and 1 (and EOS on members).
"""

from __future__ import annotations

import math

import numpy as np

from ..context_free.reverse_string import ReverseString
from ..context_sensitive.bucket_sort import BucketSort as _BucketSortTask
from ..context_sensitive.odds_first import OddsFirst as _OddsFirstTask
from ..majority import Majority as _Majority
from .base import FlareLanguage


def _empty_sets(ids: np.ndarray, k: int) -> np.ndarray:
    return np.zeros((ids.shape[0], ids.shape[1] + 1, k + 1), dtype=bool)


class Majority(FlareLanguage):
    name = "flare.majority"
    alphabet = "01"
    level = "DCF"
    flare_dir = "majority"

    def accepts(self, s: str) -> bool:
        return _Majority().accepts(s)

    def accepts_ids(self, ids):
        return 2 * ids.sum(axis=1) > ids.shape[1]

    def positive_lengths(self, lo, hi):
        return list(range(max(lo, 1), hi + 1))

    def _sample_positive_ids(self, rng, count, length):
        ones = rng.integers(length // 2 + 1, length + 1, size=count)
        rank = np.argsort(rng.random((count, length)), axis=1).argsort(axis=1)  # a uniform shuffle
        return (rank < ones[:, None]).astype(np.int64)

    def next_symbol_sets(self, ids):
        out = _empty_sets(ids, 2)
        out[:, :, :2] = True
        margin = np.concatenate([np.zeros((len(ids), 1), dtype=np.int64), np.cumsum(2 * ids - 1, axis=1)], axis=1)
        out[:, :, 2] = margin > 0
        return out


class _Marked(FlareLanguage):
    """w ``#`` g(w) for a map g of strings over the symbols before ``#`` (the last symbol)."""

    level = "CS"
    has_probability = True

    def transform(self, w: np.ndarray) -> np.ndarray:
        """g on a batch of w: (count, m) → (count, m)."""
        raise NotImplementedError

    def transform_str(self, w: str) -> str:
        """g on one string, through our own function task (the oracle; ``transform`` is checked against it)."""
        raise NotImplementedError

    @property
    def _marker(self) -> int:
        return len(self.alphabet) - 1

    def accepts(self, s: str) -> bool:
        mark = self.alphabet[-1]
        if s.count(mark) != 1 or set(s) - set(self.alphabet):
            return False
        w, v = s.split(mark)
        return len(w) == len(v) and v == self.transform_str(w)

    def accepts_ids(self, ids):
        count, n = ids.shape
        if n % 2 == 0:
            return np.zeros(count, dtype=bool)
        m = n // 2
        w, v = ids[:, :m], ids[:, m + 1:]
        return (ids[:, m] == self._marker) & (w != self._marker).all(axis=1) & (v == self.transform(w)).all(axis=1)

    def positive_lengths(self, lo, hi):
        first, last = math.ceil(max(0, lo - 1) / 2), math.floor(max(0, hi - 1) / 2)
        return [2 * m + 1 for m in range(first, last + 1)] if hi >= 1 else []

    def _sample_positive_ids(self, rng, count, length):
        w = rng.integers(0, self._marker, size=(count, length // 2))
        return np.concatenate([w, np.full((count, 1), self._marker), self.transform(w)], axis=1)

    def _log_probability_at_length(self, ids):
        return np.full(len(ids), -(ids.shape[1] // 2) * math.log(self._marker))

    def next_symbol_sets(self, ids):
        count, n = ids.shape
        out = _empty_sets(ids, len(self.alphabet))
        for b in range(count):  # one string at a time: where its marker is decides the rest
            row = ids[b]
            marks = np.flatnonzero(row == self._marker)
            stop = int(marks[0]) if len(marks) else n
            out[b, : stop + 1, : len(self.alphabet)] = True  # before the marker: any symbol or the marker
            if not len(marks):
                continue
            w = row[None, :stop]
            rest = np.concatenate([self.transform(w)[0], [len(self.alphabet)]])  # forced, then EOS
            t = stop + 1
            for j, want in enumerate(rest):
                if t + j > n:
                    break
                out[b, t + j, want] = True
                if t + j < n and row[t + j] != want:
                    break  # the string left the language: the later rows stay empty
        return out


class MarkedReversal(_Marked):
    name = "flare.marked_reversal"
    alphabet = "01#"
    level = "DCF"
    flare_dir = "marked-reversal"

    def transform(self, w):
        return w[:, ::-1]

    def transform_str(self, w):
        return ReverseString().output(w) if w else ""


class MarkedCopy(_Marked):
    name = "flare.marked_copy"
    alphabet = "01#"
    flare_dir = "marked-copy"

    def transform(self, w):
        return w

    def transform_str(self, w):
        return w


class OddsFirst(_Marked):
    name = "flare.odds_first"
    alphabet = "01#"
    flare_dir = "odds-first"

    def transform(self, w):
        return np.concatenate([w[:, 0::2], w[:, 1::2]], axis=1)

    def transform_str(self, w):
        return _OddsFirstTask(order="paper").output(w) if w else ""


class BucketSort(_Marked):
    name = "flare.bucket_sort"
    alphabet = "12345#"
    flare_dir = "bucket-sort"

    def transform(self, w):
        return np.sort(w, axis=1)

    def transform_str(self, w):
        digits = "".join(str(int(c) - 1) for c in w)  # our bucket_sort sorts the digits 0–4
        return "".join(str(int(c) + 1) for c in _BucketSortTask().output(digits)) if w else ""


class UnmarkedReversal(FlareLanguage):
    name = "flare.unmarked_reversal"
    alphabet = "01"
    level = "CF"
    flare_dir = "unmarked-reversal"
    has_probability = True

    def accepts(self, s: str) -> bool:
        return set(s) <= {"0", "1"} and len(s) % 2 == 0 and s == s[::-1]

    def accepts_ids(self, ids):
        return np.full(len(ids), ids.shape[1] % 2 == 0) & (ids == ids[:, ::-1]).all(axis=1)

    def positive_lengths(self, lo, hi):
        return [2 * m for m in range(math.ceil(max(lo, 0) / 2), hi // 2 + 1)] if hi >= 0 else []

    def _sample_positive_ids(self, rng, count, length):
        w = rng.integers(0, 2, size=(count, length // 2))
        return np.concatenate([w, w[:, ::-1]], axis=1)

    def _log_probability_at_length(self, ids):
        return np.full(len(ids), -(ids.shape[1] // 2) * math.log(2))

    def next_symbol_sets(self, ids):
        count, n = ids.shape
        out = _empty_sets(ids, 2)
        out[:, :, :2] = True
        for t in range(0, n + 1, 2):  # EOS after the even palindromes among the prefixes
            out[:, t, 2] = (ids[:, :t] == ids[:, :t][:, ::-1]).all(axis=1)
        return out


class MissingDuplicateString(FlareLanguage):
    name = "flare.missing_duplicate_string"
    alphabet = "01_"
    level = "CS"
    flare_dir = "missing-duplicate-string"

    def accepts(self, s: str) -> bool:
        if len(s) % 2 or s.count("_") != 1 or set(s) - set(self.alphabet):
            return False
        full = s.replace("_", "1")  # the hidden symbol is always a 1
        return full[: len(s) // 2] == full[len(s) // 2:]

    def accepts_ids(self, ids):
        count, n = ids.shape
        if n % 2:
            return np.zeros(count, dtype=bool)
        one_hole = (ids == 2).sum(axis=1) == 1
        full = np.where(ids == 2, 1, ids)
        return one_hole & (full[:, : n // 2] == full[:, n // 2:]).all(axis=1)

    def positive_lengths(self, lo, hi):
        return [2 * m for m in range(max(1, math.ceil(max(lo, 0) / 2)), hi // 2 + 1)]

    def _sample_positive_ids(self, rng, count, length):
        m = length // 2
        w = rng.integers(0, 2, size=(count, m))
        w[np.arange(count), rng.integers(0, m, size=count)] = 1  # at least one 1
        s = np.concatenate([w, w], axis=1)
        keys = np.where(s == 1, rng.random(s.shape), -1.0)
        s[np.arange(count), keys.argmax(axis=1)] = 2  # hide a uniformly chosen 1
        return s

    def next_symbol_sets(self, ids):
        count, n = ids.shape
        out = _empty_sets(ids, 3)
        holes = np.concatenate([np.zeros((count, 1), dtype=np.int64), np.cumsum(ids == 2, axis=1)], axis=1)
        out[:, :, :2] = (holes <= 1)[:, :, None]
        out[:, :, 2] = holes == 0
        for t in range(2, n + 1, 2):
            out[:, t, 3] = self.accepts_ids(ids[:, :t])
        return out


STRINGS = (Majority, MarkedReversal, UnmarkedReversal, MarkedCopy, MissingDuplicateString, OddsFirst, BucketSort)
