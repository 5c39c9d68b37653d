"""Our FLaRe datasets against theirs: per language and split, total-variation distances of the
length, label and edit histograms, beside the noise floor of two of our own seeds.

    .venv/bin/python bench/flare_bench.py PATH/TO/flare [--languages parity,marked_copy] [--splits train,test]

PATH is a checkout of rycolab/flare (one directory per language: ``main.tok``,
``labels.txt``, ``num-edits.txt``, ``datasets/<split>/…``); without one the bench says so and
exits (it never runs in the test suite). For each language and split it generates our split
with their counts and length ranges (``languages.flare.dataset``, seed 0; a second seed for
the floor) and prints:

- ``labels ≠``: their strings whose label disagrees with our membership oracle (must be 0);
- ``TV len+`` / ``TV len−``: total variation between the length histograms of the positives /
  negatives (one bin per length up to 80, bins of 10 beyond);
- ``|ΔP(+)|``: the difference of the fractions of positives;
- ``TV edits``: between the histograms of the negatives' edit counts (uniform, 1, 2, 3, 4, ≥ 5);
- ``TV dist``: between the histograms of the negatives' exact edit distance to the language
  (1, 2, 3, ≥ 4; regular languages, splits with strings ≤ 80, both datasets measured by our DFA);
- ``floor``: the largest of these between our seed 0 and seed 1 — what sampling noise alone gives.

A distance well above the floor means the two datasets are drawn differently.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from expressivity import languages as L
from expressivity.languages.flare import ORDER, FlareDFALanguage
from expressivity.languages.flare.dataset import (
    SPLITS,
    generate_splits,
    read_split,
    split_directory,
)


def _hist(values: np.ndarray, bins: list) -> np.ndarray:
    idx = np.digitize(values, bins[1:-1]) if len(values) else np.zeros(0, int)
    h = np.bincount(idx, minlength=len(bins) - 1).astype(float)
    return h / max(h.sum(), 1.0)


def tv(a: np.ndarray, b: np.ndarray, bins: list) -> float:
    return 0.5 * float(np.abs(_hist(a, bins) - _hist(b, bins)).sum())


LENGTH_BINS = list(range(0, 81)) + list(range(90, 511, 10))
EDIT_BINS = [-1, 0, 1, 2, 3, 4, 5, 10**9]  # uniform | 1 | 2 | 3 | 4 | ≥ 5 (edges between)
DIST_BINS = [1, 2, 3, 4, 10**9]


def distances(lang, split) -> dict[str, float]:
    """The edit-distance histogram input: exact distances of the negatives (regular only)."""
    if not isinstance(lang, FlareDFALanguage) or split.lengths.max(initial=0) > 80:
        return {}
    neg = [s for s, y in zip(split.strings, split.labels) if not y]
    out = []
    for n in sorted({len(s) for s in neg}):
        group = [s for s in neg if len(s) == n]
        ids = lang.to_ids(group) if n else np.zeros((len(group), 0), dtype=np.int64)
        out.extend(lang.edit_distance(ids).tolist())
    return {"dist": np.array(out)}


def compare(lang, a, b) -> dict[str, float]:
    la, lb = a.lengths, b.lengths
    row = {"TV len+": tv(la[a.labels], lb[b.labels], LENGTH_BINS),
           "TV len−": tv(la[~a.labels], lb[~b.labels], LENGTH_BINS),
           "|ΔP(+)|": abs(float(a.labels.mean()) - float(b.labels.mean())),
           "TV edits": tv(np.where(a.num_edits < 0, -1, a.num_edits)[~a.labels],
                          np.where(b.num_edits < 0, -1, b.num_edits)[~b.labels], EDIT_BINS)}
    da, db = distances(lang, a), distances(lang, b)
    if da and db:
        row["TV dist"] = tv(da["dist"], db["dist"], DIST_BINS)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout", nargs="?", help="path of a rycolab/flare checkout")
    ap.add_argument("--languages", default=",".join(n.removeprefix("flare.") for n in ORDER))
    ap.add_argument("--splits", default="train,validation-short,validation-long,test")
    args = ap.parse_args()
    if not args.checkout or not Path(args.checkout).is_dir():
        print("flare_bench: give the path of a rycolab/flare checkout (git clone https://github.com/rycolab/flare); "
              "skipped", file=sys.stderr)
        sys.exit(0)
    names = [f"flare.{n.strip()}" for n in args.languages.split(",") if n.strip()]
    splits = [s.strip() for s in args.splits.split(",") if s.strip()]
    bad = [s for s in splits if s not in SPLITS]
    if bad:
        sys.exit(f"flare_bench: unknown split(s) {bad}; choose from {', '.join(SPLITS)}")
    cols = ["TV len+", "TV len−", "|ΔP(+)|", "TV edits", "TV dist"]
    print("| language | split | strings | labels ≠ | " + " | ".join(cols) + " | floor | seconds |")
    print("|---|---|---|---|" + "---|" * (len(cols) + 2))
    for name in names:
        lang = L.get(name)
        t0 = time.perf_counter()
        ours, again = generate_splits(lang, 0, tuple(splits)), generate_splits(lang, 1, tuple(splits))
        for split in splits:
            where = split_directory(args.checkout, lang, split)
            try:
                theirs = read_split(where, lang)
            except ValueError as exc:
                print(f"| {name} | {split} | — | {str(exc)[:60]} |" + " |" * (len(cols) + 2))
                continue
            wrong = sum(lang.accepts(s) != y for s, y in zip(theirs.strings, theirs.labels))
            row, floor = compare(lang, ours[split], theirs), compare(lang, ours[split], again[split])
            cells = [f"{row[c]:.3f}" if c in row else "—" for c in cols]
            print(f"| {name.removeprefix('flare.')} | {split} | {len(theirs)} | {wrong} | " + " | ".join(cells)
                  + f" | {max(floor.values()):.3f} | {time.perf_counter() - t0:.0f} |", flush=True)


if __name__ == "__main__":
    main()
