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


def test_plot_of_a_domain_without_a_picture_names_those_with_one(tmp_path, saw):
    png = tmp_path / "s.png"
    res = runner.invoke(app, ["regions", str(saw), "--segment", "0", "1", "--plot", str(png)])
    assert res.exit_code == 2 and not png.exists()
    assert "no picture is registered for a Segment domain; domains with one: box, plane" in " ".join(res.output.split())


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


@pytest.fixture()
def compiled_file(tmp_path):
    from expressivity.compile import compile_maxout
    from expressivity.cpwl.families import sawtooth_maxout

    path = tmp_path / "saw.safetensors"
    compile_maxout(sawtooth_maxout(2, 2), domain=(0.0, 1.0)).save(path)
    return path


@pytest.mark.parametrize("args,msg", [
    (["--segment", "0", "1", "--layers", "shapes.json"], "--layers does not apply"),
    (["--segment", "0", "1", "--bounds", "0,1,0,1"], "--bounds does not apply"),
    (["--segment", "0", "1", "--lo", "0"], "--lo does not apply"),
    (["--segment", "0", "1", "--hi", "1"], "--hi does not apply"),
    (["--box", "--color-by", "activation"], "--color-by does not apply"),
    (["--segment", "0", "1", "--n-tokens", "2"], "--n-tokens does not apply"),
])
def test_an_option_that_does_not_apply_is_refused(saw, tmp_path, args, msg):
    """Issue 20: `regions --layers` with a JSON spec used to be ignored silently (docs/errors.md:
    an option that does not apply is refused, one line, exit 2)."""
    (tmp_path / "shapes.json").write_text("[]")
    res = runner.invoke(app, ["regions", str(saw), *args], catch_exceptions=False)
    assert res.exit_code == 2, res.output
    assert msg in res.output and len(res.output.strip().splitlines()) == 1


@pytest.mark.parametrize("args,msg", [
    (["--compile"], "--compile does not apply"),
    (["--layers", "x.json"], "--layers does not apply"),
    (["--n-tokens", "2"], "--n-tokens does not apply"),
])
def test_options_for_networks_are_refused_for_a_compiled_transformer_file(compiled_file, args, msg):
    res = runner.invoke(app, ["regions", str(compiled_file), "--segment", "0", "1", *args])
    assert res.exit_code == 2, res.output
    assert msg in res.output


def test_options_that_apply_still_work(saw, tmp_path):
    png = tmp_path / "p.png"
    spec = tmp_path / "net.json"
    spec.write_text(json.dumps({"type": "random", "in_dim": 2, "widths": [4], "ranks": 2, "seed": 0}))
    res = runner.invoke(app, ["regions", str(spec), "--plane", "0,0", "1,0", "0,1", "--bounds", "-1,1,-1,1",
                              "--plot", str(png), "--color-by", "activation"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["regions", str(saw), "--box", "--lo", "0", "--hi", "1", "--json"])
    assert res.exit_code == 0 and json.loads(res.output)["activation_regions"] == 27
