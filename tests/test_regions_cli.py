"""`expressivity regions` from the shell: counts, JSON, plots and one-line errors."""

import json

import pytest
from typer.testing import CliRunner

from expressivity.cli import app
from expressivity.report.theorem44 import depth_table

runner = CliRunner()


@pytest.fixture()
def saw(tmp_path):
    p = tmp_path / "saw.json"
    p.write_text(json.dumps({"type": "sawtooth", "q": 3, "L": 3}))
    return p


def test_segment_json_counts_q_to_the_L(saw):
    res = runner.invoke(app, ["regions", str(saw), "--segment", "0", "1", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["linear_regions"] == 27 and out["activation_regions"] == 27


def test_compiled_transformer_file_counts_like_its_source(saw, tmp_path):
    pytest.importorskip("expressivity.compile")
    from expressivity.compile import compile_maxout
    from expressivity.cpwl.families import sawtooth_maxout

    path = tmp_path / "saw.safetensors"
    compile_maxout(sawtooth_maxout(2, 4), domain=(0.0, 1.0)).save(path)
    res = runner.invoke(app, ["regions", str(path), "--segment", "0", "1", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["linear_regions"] == 16


def test_plane_plot_writes_a_png(tmp_path):
    spec = tmp_path / "net.json"
    spec.write_text(json.dumps({"type": "random", "in_dim": 2, "widths": [5, 5], "ranks": 2, "seed": 0}))
    png = tmp_path / "r.png"
    res = runner.invoke(app, ["regions", str(spec), "--plane", "0,0", "1,0", "0,1", "--plot", str(png)])
    assert res.exit_code == 0, res.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_box_on_a_line(saw):
    res = runner.invoke(app, ["regions", str(saw), "--box", "--lo", "0", "--hi", "1", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["activation_regions"] == 27


@pytest.mark.parametrize("args,msg", [
    ([], "exactly one"),
    (["--segment", "0", "1", "--box"], "exactly one"),
    (["--plane", "0,0", "1,0", "0,1"], "input dimension"),
    (["--segment", "0", "x"], "comma-separated"),
])
def test_bad_input_is_one_line_exit_2(saw, args, msg):
    res = runner.invoke(app, ["regions", str(saw), *args])
    assert res.exit_code == 2
    assert msg in res.output


def test_theorem44_quick_rows_equal_the_prediction():
    pytest.importorskip("expressivity.compile")
    rows = depth_table(qs=(2, 3), depths=range(1, 5), n_random=1)
    for r in rows:
        assert r.counted == r.maxout == r.q**r.L
        assert r.D == r.L + 1 and r.T == r.q
        assert r.paper_bound == pytest.approx(float(r.q) ** (r.D // 3 - 1))
