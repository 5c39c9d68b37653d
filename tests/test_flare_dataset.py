"""FLaRe's splits generated with their process, and their files read back (a small directory
written here in their format; the comparison with a real checkout is bench/flare_bench.py)."""

from __future__ import annotations

import numpy as np
import pytest

from expressivity import languages as L
from expressivity.languages.flare.dataset import (
    SPLITS,
    generate_split,
    generate_splits,
    read_split,
    split_directory,
)


def _write(d, lines, labels, edits):
    d.mkdir(parents=True, exist_ok=True)
    (d / "main.tok").write_text("".join(f"{line}\n" for line in lines))
    (d / "labels.txt").write_text("".join(f"{y}\n" for y in labels))
    (d / "num-edits.txt").write_text("".join(f"{e}\n" for e in edits))


def test_read_split_maps_their_tokens(tmp_path):
    lang = L.get("flare.stack_manipulation")
    d = split_directory(tmp_path, lang, "validation-short")
    assert d == tmp_path / "stack-manipulation" / "datasets" / "validation-short"
    _write(d, ["0 1 PUSH 1 POP # 1 0", "", "POP #"], [1, 0, 0], ["", "2"])
    split = read_split(d, lang)
    assert split.strings == ["01+1-#10", "", "-#"]
    assert split.labels.tolist() == [True, False, False] and split.num_edits.tolist() == [0, -1, 2]
    assert [lang.accepts(s) for s in split.strings] == split.labels.tolist()
    dyck = L.get("flare.dyck_k_m")
    _write(tmp_path / "d", ["(0 (1 )1 )0"], [1], [])
    assert read_split(tmp_path / "d", dyck).strings == ["([])"]


def test_read_split_refuses_foreign_or_inconsistent_files(tmp_path):
    lang = L.get("flare.marked_copy")
    _write(tmp_path / "a", ["0 # 0", "PUSH"], [1, 0], [""])
    with pytest.raises(ValueError, match=r"line 2: tokens \['PUSH'\] are not symbols of flare.marked_copy"):
        read_split(tmp_path / "a", lang)
    _write(tmp_path / "b", ["0 # 0"], [1, 0], [])
    with pytest.raises(ValueError, match="main.tok has 1 strings but labels.txt 2 labels"):
        read_split(tmp_path / "b", lang)
    _write(tmp_path / "c", ["0 # 0", "0"], [1, 0], [])
    with pytest.raises(ValueError, match="num-edits.txt has 0 lines for 1 negatives"):
        read_split(tmp_path / "c", lang)
    with pytest.raises(ValueError, match="FLaRe file"):
        read_split(tmp_path / "missing", lang)


@pytest.mark.parametrize("name", ["flare.parity", "flare.marked_reversal", "flare.stack_manipulation",
                                  "flare.binary_multiplication"])
def test_generated_splits_follow_their_process(name):
    lang = L.get(name)
    split = generate_split(lang, np.random.default_rng(0), 3000, 0, 30)
    assert len(split) == 3000 and abs(split.labels.mean() - 0.5) < 0.04
    assert split.lengths.min() >= 0 and split.lengths.max() <= 30
    assert [lang.accepts(s) for s in split.strings] == split.labels.tolist()
    neg = split.num_edits[~split.labels]
    assert (split.num_edits[split.labels] == 0).all() and (neg != 0).all()
    assert 0.2 < np.mean(neg == -1) < 0.9  # uniform and perturbed negatives both occur
    lengths = set(split.lengths[split.labels].tolist())
    assert lengths <= set(lang.positive_lengths(0, 30)) and len(lengths) > 5


def test_held_out_split_excludes_the_other_splits():
    lang = L.get("flare.first")
    splits = generate_splits(lang, 0, ("test-short-held-out", "validation-short"))
    assert set(splits) == {"test-short-held-out", "validation-short"}
    assert len(splits["test-short-held-out"]) == SPLITS["test-short-held-out"][0]
    assert not set(splits["test-short-held-out"].strings) & set(splits["validation-short"].strings)


def test_bad_split_requests():
    with pytest.raises(ValueError, match="no strings of the language have a length in 2-2; it has strings of lengths 1, 3"):
        generate_split(L.get("flare.marked_copy"), np.random.default_rng(0), 5, 2, 2)
    with pytest.raises(ValueError, match="unknown FLaRe split"):
        generate_splits(L.get("flare.parity"), 0, ("dev",))
    with pytest.raises(ValueError, match="needs a FLaRe language"):
        generate_split(L.get("parity"), np.random.default_rng(0), 5, 0, 5)
    with pytest.raises(ValueError, match="could not draw"):  # every string of length ≤ 1 excluded
        generate_split(L.get("flare.parity"), np.random.default_rng(0), 20, 0, 1, exclude={"", "0", "1"})
