"""The logic the CLI calls lives in the library: its checks name the options as the caller
gives them, and its text is usable without the CLI."""

from __future__ import annotations

import pytest

from expressivity.report.reproduce import check_options
from expressivity.train.results import RUN_COLUMNS, mean, records_text


@pytest.mark.parametrize("kw, word", [(dict(size="huge"), "size"), (dict(backend="slurm"), "backend"),
                                      (dict(address="auto"), "address"), (dict(timeout=0.0), "timeout"),
                                      (dict(workers=0), "workers")])
@pytest.mark.parametrize("prefix", ["", "--"])
def test_reproduce_checks_name_the_option_as_given(kw, word, prefix):
    with pytest.raises(ValueError, match=f"{prefix}{word}"):
        check_options(**kw, prefix=prefix)


def test_reproduce_checks_pass_good_options():
    check_options(size="test", backend="local", timeout=1.0, workers=2)


def test_csv_of_no_records_has_the_header():
    assert records_text([], "csv").splitlines()[0].split(",") == list(RUN_COLUMNS)


def test_csv_spreads_the_bin_scores_into_columns():
    rec = {c: None for c in RUN_COLUMNS} | {"scores": {"mean_accuracy": 0.5, "accuracy_41_500": 0.25}}
    header, row = records_text([rec], "csv").splitlines()
    assert header.split(",")[-1] == "accuracy_41_500" and row.endswith("0.25")
    assert "mean_accuracy" in header.split(",")[:len(RUN_COLUMNS)]


def test_mean_skips_missing_values():
    assert mean([1.0, None, 3.0]) == 2.0 and mean([None]) is None
