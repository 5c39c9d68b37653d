"""FLaRe's datasets: their splits generated with their process, and their files read back.

Their splits (``sample_dataset.py`` of rycolab/neural-network-recognizers; the files of
rycolab/flare), each a list of (string, label) with variable lengths:

| split | strings | lengths |
|---|---|---|
| ``train`` | 10 000 | 0–40 |
| ``validation-short`` | 1 000 | 0–40 |
| ``validation-long`` | 1 000 | 0–80 |
| ``test`` | 5 010 | 0–500 |
| ``test-short-held-out`` | 1 000 | 0–40, none of the strings of the three splits above (lengths ≤ 40) |

Every example is positive with probability ½ (:meth:`FlareLanguage.sample_range_positives`:
a length uniform over the range's valid lengths, then their sampler at that length), else a
negative: proposals are drawn until one is not in L (at most 100), each one, with
probability ½, a uniform string (a length uniform over the range, uniform symbols) or a
positive of the range with k ~ Geometric(½) random edits (:func:`.perturb.random_edits`).
:func:`generate_split` returns a :class:`FlareSplit` (strings, labels, and the number of
edits: k for a perturbed negative, −1 for a uniform one, 0 for a positive — their
``num-edits.txt`` has a line per negative, empty for a uniform one).

:func:`read_split` reads one split directory of a FLaRe checkout (``main.tok`` — tokens
separated by spaces, one string per line —, ``labels.txt``, ``num-edits.txt``) into the same
form, their tokens mapped to our symbols (``FlareLanguage.tokens``, e.g. PUSH → ``+``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...fileio import read_text_file
from ...rules import check_int, parse_length_range
from .base import FlareLanguage
from .perturb import random_edits

SPLITS: dict[str, tuple[int, int, int]] = {  # name → (strings, shortest, longest)
    "train": (10_000, 0, 40), "validation-short": (1_000, 0, 40), "validation-long": (1_000, 0, 80),
    "test": (5_010, 0, 500), "test-short-held-out": (1_000, 0, 40),
}
TRIES = 100  # proposals per example (theirs)


@dataclass(frozen=True)
class FlareSplit:
    strings: list[str]
    labels: np.ndarray  # (count,) bool: member
    num_edits: np.ndarray  # (count,) int: k edits (perturbed negative), −1 (uniform negative), 0 (positive)

    @property
    def lengths(self) -> np.ndarray:
        return np.array([len(s) for s in self.strings], dtype=np.int64)

    def __len__(self) -> int:
        return len(self.strings)


def _members(lang: FlareLanguage, strings: list[np.ndarray]) -> np.ndarray:
    """Membership of variable-length id arrays, one length at a time."""
    out = np.zeros(len(strings), dtype=bool)
    lengths = np.array([len(s) for s in strings])
    for n in np.unique(lengths):
        idx = np.flatnonzero(lengths == n)
        out[idx] = lang.accepts_ids(np.stack([strings[i] for i in idx]) if n else np.zeros((len(idx), 0), np.int64))
    return out


def generate_split(lang: FlareLanguage, rng: np.random.Generator, count: int, lo: int, hi: int,
                   exclude: set[str] | None = None) -> FlareSplit:
    """``count`` examples of lengths in [lo, hi] by their process (module docstring); strings
    in ``exclude`` are re-drawn (a ValueError if that fails 100 times for one example)."""
    if not isinstance(lang, FlareLanguage):
        raise ValueError(f"generate_split needs a FLaRe language (flare.<name>), got {lang!r}")
    count = check_int(count, "count", min=0)
    lo, hi = parse_length_range((lo, hi), "length range")
    if not lang.positive_lengths(lo, hi):
        raise ValueError(f"{lang.name}: no strings of the language have a length in {lo}-{hi}; it has strings of "
                         f"lengths {', '.join(map(str, lang.positive_lengths(0, 60)[:8]))}, …")
    exclude = exclude or set()
    K = len(lang.alphabet)
    labels = rng.random(count) < 0.5
    ids: list[np.ndarray] = [np.zeros(0, np.int64)] * count
    edits = np.zeros(count, dtype=np.int64)
    todo = np.arange(count)
    for _ in range(TRIES):
        if not len(todo):
            break
        pos, neg = todo[labels[todo]], todo[~labels[todo]]
        fresh: dict[int, np.ndarray] = dict(zip(pos.tolist(), lang.sample_range_positives(rng, len(pos), lo, hi)))
        pert = rng.random(len(neg)) < 0.5
        starts = lang.sample_range_positives(rng, int(pert.sum()), lo, hi)
        ks = rng.geometric(0.5, size=len(neg))
        lengths = rng.integers(lo, hi + 1, size=len(neg))
        it = iter(starts)
        for i, p, k, n in zip(neg.tolist(), pert, ks, lengths):
            fresh[i] = (np.array(random_edits(rng, next(it).tolist(), int(k), lo, hi, K), dtype=np.int64) if p
                        else rng.integers(0, K, size=int(n)))
            edits[i] = int(k) if p else -1
        order = list(fresh)
        inside = _members(lang, [fresh[i] for i in order])
        keep = []
        for i, member in zip(order, inside):
            ok = member == labels[i] and lang.to_strings(fresh[i][None])[0] not in exclude
            if ok:
                ids[i] = fresh[i]
            else:
                keep.append(i)
        todo = np.array(keep, dtype=np.int64)
    if len(todo):
        raise ValueError(f"{lang.name}: could not draw {len(todo)} example(s) outside the excluded strings in "
                         f"{TRIES} tries")
    edits[labels] = 0
    strings = [lang.to_strings(s[None])[0] if len(s) else "" for s in ids]
    return FlareSplit(strings, labels, edits)


def generate_splits(lang: FlareLanguage, seed: int = 0, names=tuple(SPLITS)) -> dict[str, FlareSplit]:
    """Their five splits (or ``names`` of them) in their order; the held-out split excludes the
    strings of the others of length ≤ 40, as theirs does."""
    unknown = [n for n in names if n not in SPLITS]
    if unknown:
        raise ValueError(f"unknown FLaRe split(s) {unknown}; choose from {', '.join(SPLITS)}")
    rng = np.random.default_rng(seed)
    seen: set[str] = set()
    out = {}
    for name in SPLITS:
        if name not in names and not (name != "test" and "test-short-held-out" in names):
            continue
        count, lo, hi = SPLITS[name]
        split = generate_split(lang, rng, count, lo, hi, exclude=seen if name == "test-short-held-out" else None)
        if name in ("train", "validation-short", "validation-long"):
            seen |= {s for s in split.strings if len(s) <= 40}
        if name in names:
            out[name] = split
    return out


def read_split(directory: str | Path, lang: FlareLanguage) -> FlareSplit:
    """One split directory of a FLaRe checkout (``main.tok``, ``labels.txt``,
    ``num-edits.txt``), tokens mapped to ``lang``'s symbols; one-line errors for a missing
    file or a token outside the language's alphabet."""
    d = Path(directory)
    texts = {}
    for name in ("main.tok", "labels.txt", "num-edits.txt"):
        texts[name] = read_text_file(d / name, f"FLaRe file {d / name}").splitlines()
    lines, labels_text, edits_text = texts["main.tok"], texts["labels.txt"], texts["num-edits.txt"]
    if len(lines) != len(labels_text):
        raise ValueError(f"{d}: main.tok has {len(lines)} strings but labels.txt {len(labels_text)} labels")
    strings = []
    for i, line in enumerate(lines):
        symbols = [lang.tokens.get(tok, tok) for tok in line.split()]
        bad = [tok for tok in symbols if len(tok) != 1 or tok not in lang.alphabet]
        if bad:
            raise ValueError(f"{d / 'main.tok'} line {i + 1}: tokens {bad[:3]} are not symbols of {lang.name} "
                             f"(alphabet {lang.alphabet!r}); is this the directory of another language?")
        strings.append("".join(symbols))
    labels = np.array([t.strip() == "1" for t in labels_text], dtype=bool)
    if int((~labels).sum()) != len(edits_text):
        raise ValueError(f"{d}: num-edits.txt has {len(edits_text)} lines for {int((~labels).sum())} negatives")
    edits = np.zeros(len(strings), dtype=np.int64)
    edits[~labels] = [int(t) if t.strip() else -1 for t in edits_text]
    return FlareSplit(strings, labels, edits)


def split_directory(checkout: str | Path, lang: FlareLanguage, split: str) -> Path:
    """Where a split of ``lang`` lies in a FLaRe checkout (the training split is the language
    directory itself, the others under ``datasets/``)."""
    base = Path(checkout) / lang.flare_dir
    return base if split == "train" else base / "datasets" / split
