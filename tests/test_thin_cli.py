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


def test_metrics_listing_keeps_12_evenly_spaced_lengths_with_both_ends():
    from expressivity.train.single import metrics_listing

    metrics = [{"length": n, "accuracy": 1.0, "ce_bits": None, "optimal_bits": 0.0, "excess_bits": 0.0}
               for n in range(41, 71)]
    rows = metrics_listing(metrics, "t").rows
    lengths = [int(r[0]) for r in rows]
    assert len(rows) == 12 and lengths[0] == 41 and lengths[-1] == 70 and lengths == sorted(set(lengths))
    assert rows[0][2] == "nan"  # a missing metric


def test_a_failed_run_shows_its_status_in_red_and_its_error_cut_to_50():
    from expressivity.train.results import runs_listing

    rec = {"name": "parity", "protocol": "custom", "status": "error", "error": "x" * 80}
    view = runs_listing([rec], "1 run")
    assert view.rows[0][3] == "error" and view.rows[0][4] == "x" * 50 and view.styles == ((0, 3, "red"),)


def test_show_prints_cells_as_text_not_markup(capsys):
    from expressivity.cli.output import show
    from expressivity.listing import Listing

    show(Listing(("a", "b"), (("[bold]x[/]", "1"), None, ("y", "2")), heading="above", notes=("below",),
                 styles=((2, 0, "red"),)))
    out = capsys.readouterr().out
    assert "[bold]x[/]" in out and out.index("above") < out.index("y") < out.index("below")


def test_sweep_advice_names_the_fix():
    from expressivity.train.sweep import SweepSummary

    assert SweepSummary(total=1, done=1).advice is None
    assert "--retry-errors --restart" in SweepSummary(errors=1, error_messages=["corrupt: use --restart"]).advice
    assert SweepSummary(errors=1, error_messages=["boom"]).advice.endswith("rerun with --retry-errors")


def test_store_check_sets_aside_another_version_only_when_asked(tmp_path):
    from expressivity.runs import Store, VersionMismatch

    assert Store.check(tmp_path / "new.sqlite") is None and (tmp_path / "new.sqlite").exists()  # nothing set aside
    db = tmp_path / "r.sqlite"
    Store(db, version="0.0.1+aaaaaaaaaaaa").close()
    with pytest.raises(VersionMismatch, match="0.0.1"):
        Store.check(db)
    aside = Store.check(db, reset=True)
    assert aside is not None and aside.exists() and db.exists() and aside != db
    (tmp_path / "junk.sqlite").write_text("not a database")
    with pytest.raises(ValueError):
        Store.check(tmp_path / "junk.sqlite")


@pytest.mark.parametrize("flags, size", [((False, False, False, None), "quick"), ((False, True, False, None), "standard"),
                                         ((False, False, True, None), "full"), ((True, False, False, "test"), "test")])
def test_reproduce_size_of_the_flags(flags, size):
    from expressivity.report.reproduce import size_of

    assert size_of(*flags) == size


def test_reproduce_size_flags_exclude_each_other():
    from expressivity.report.reproduce import size_of

    with pytest.raises(ValueError, match="mutually exclusive"):
        size_of(True, True, False)


def test_plot_path_checked_before_work(tmp_path):
    from expressivity.limits.plots import check_plot_path

    check_plot_path(None)
    check_plot_path(tmp_path / "f.png")
    with pytest.raises(ValueError, match=r"--plot .*\.xyz"):
        check_plot_path(tmp_path / "f.xyz")
    assert not (tmp_path / "f.png").exists()  # checked, nothing written
