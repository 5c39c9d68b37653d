"""bench/regions_bench.py's option checks and skip paths, and bench/regions_torch.py's plane
composition, without running a bench."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))
import regions_bench  # noqa: E402
import regions_torch  # noqa: E402


@pytest.mark.parametrize("argv, flag", [
    (["--dd", "--torch-2d"], "give one of"),
    (["--torch-dd", "--conv"], "give one of"),
    (["--torch-2d", "--mem-gib", "0"], "--mem-gib and --timeout must be > 0"),
    (["--torch-dd", "--timeout", "-1"], "--mem-gib and --timeout must be > 0"),
    (["--torch-dd", "--berzins", "/no/such/checkout"], "--berzins: no such directory"),
])
def test_bad_options_are_refused_with_the_flag_named(argv, flag, capsys):
    with pytest.raises(SystemExit) as e:
        regions_bench.main(argv)
    assert e.value.code == 2
    assert flag in capsys.readouterr().err


def test_a_tool_over_the_cap_is_reported_not_raised():
    layers = regions_bench.random_layers([3, 16, 16], 0)
    res = regions_bench.run_dd(layers, 1, None, mem_gib=0.01, timeout=120)
    assert set(res) == {"ours"} and isinstance(res["ours"], str)  # no --berzins: no peer column
    row, text = regions_bench.dd_row("3-16-16", res)
    assert "ours: > cap" in text and row[1] == 0 and np.isnan(row[3])


def test_composed_first_layer_maps_the_square_onto_the_plane():
    plane = regions_torch.plane_of(20, 3)
    layers = regions_bench.random_layers([20, 6, 5], 1)
    first = regions_torch.composed_first(layers, plane)
    assert first[1:] == layers[1:] and first[0][0].shape == (2, 6)
    lo, hi = plane.polygon.min(0), plane.polygon.max(0)
    st = np.array([[-1.0, -1.0], [1.0, 1.0], [0.25, -0.5]])
    x = plane.points((lo + hi) / 2 + (hi - lo) / 2 * st)
    W, b = (a.astype(np.float64) for a in layers[0])
    np.testing.assert_allclose(st @ first[0][0] + first[0][1], x @ W + b, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(x[:2], plane.points(plane.polygon[[0, 2]]))  # the square's corners are the rectangle's


def test_a_dd_row_divides_the_rates():
    row, text = regions_bench.dd_row("n", {"ours": (100, 0.5, 2048), "berzins": (100, 2.0, 1024)})
    assert row[5:8] == (200.0, 50.0, 4.0) and row[8:] == (2.0, 1.0) and "> cap" not in text
    row, _ = regions_bench.dd_row("n", {"ours": (100, 0.5, 0)})  # no peer column
    assert row[2] == 0 and np.isnan(row[7])


def test_a_runs_peak_memory_is_seen_below_an_earlier_high_water_mark():
    """The d-D rows' memory column: what a run allocates counts even when an earlier peak
    (imports, a warm-up) was higher — ru_maxrss after − before would read ≈ 0 here."""
    import gc

    gc.collect()  # in a long test process, garbage freed between base and run would hide the run's pages
    earlier = np.ones(2**24)  # a 128 MiB high-water mark, then freed
    del earlier
    base = regions_bench._start_peak()
    run = np.ones(2**23)  # 64 MiB, every page touched
    peak_kib = regions_bench._run_peak(base)
    del run
    if not base[1]:
        pytest.skip("no /proc/self/clear_refs: the peak cannot be reset here")
    assert 56 * 1024 < peak_kib < 100 * 1024
