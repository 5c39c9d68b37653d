"""docs/extending.md, exercised: a throwaway language, region domain and report claim, each
defined here, are seen by the registries and the command line without editing anything else."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from expressivity import languages
from expressivity.languages.binary import BinaryLanguage
from expressivity.regions import count as count_mod


class EndsInOne(BinaryLanguage):
    """Toy language: bit strings whose last symbol is 1 (regular)."""

    name = "ends_in_one"

    def accepts(self, s: str) -> bool:
        return set(s) <= {"0", "1"} and s.endswith("1")

    def accepts_ids(self, ids: np.ndarray) -> np.ndarray:
        return ids[:, -1] == 1 if ids.shape[1] else np.zeros(len(ids), dtype=bool)

    def supports(self, length: int, positive: bool) -> bool:
        return length >= 1

    def _sample_positive_ids(self, rng, count, length):
        ids = rng.integers(0, 2, size=(count, length))
        ids[:, -1] = 1
        return ids

    def _initial_state(self, count):
        return np.zeros(count, dtype=np.int64)

    def _advance(self, state, sym):
        return np.asarray(sym == 1, dtype=np.int64)

    def _accepting(self, state):
        return state == 1


@pytest.fixture
def toy_language(monkeypatch):
    monkeypatch.setattr(languages, "REGISTRY", dict(languages.REGISTRY))
    monkeypatch.setattr(languages, "LEVELS", dict(languages.LEVELS))
    languages.register("ends_in_one", EndsInOne, level="regular")
    return "ends_in_one"


def test_a_registered_language_is_a_task_and_a_cli_language(toy_language):
    lang = languages.get(toy_language)
    rng = np.random.default_rng(0)
    ids = lang.sample_mixed_ids(rng, 6, 5)
    assert lang.accepts_ids(ids).tolist() == [True] * 3 + [False] * 3
    batch = languages.get_task(toy_language, "recognition").sample_batch(rng, 4, 6)
    assert batch["input"].shape == (4, 7)
    assert languages.LEVELS[toy_language] == "regular"
    from expressivity.cli import app

    res = CliRunner().invoke(app, ["sensitivity", "--model", "random", "--language", toy_language,
                                   "--lengths", "4,6", "--strings", "2"], terminal_width=200)
    assert res.exit_code == 0, res.output
    assert "Lemma 5 applies" in res.output


def test_register_refuses_a_taken_name_and_bad_levels(toy_language):
    with pytest.raises(ValueError, match="taken by"):
        languages.register("parity", EndsInOne, level="regular")
    with pytest.raises(ValueError, match="level must be"):
        languages.register("other", EndsInOne, level="regularish")


DIAGONAL_MODULE = '''"""A region domain in one file: the diagonal {t·(1, …, 1) : t ∈ [−size, size]} of R^dim."""

from dataclasses import dataclass

import numpy as np

from expressivity.regions import Segment, count_regions, register_domain
from expressivity.regions.count import counter_for
from expressivity.regions.domains import check_vector


@dataclass(frozen=True)
class Diagonal:
    size: float = 1.0
    dim: int = 2

    def __post_init__(self):
        (size,) = check_vector(self.size, "Diagonal.size")
        if size <= 0:
            raise ValueError(f"Diagonal.size must be > 0, got {size}")

    def corners(self, in_dim):
        return np.array([[-1.0], [1.0]]) * self.size * np.ones(self.dim)


def count(prog, domain, progress, general, method):
    """The segment with the same ends counts it (its pieces: a SegmentPieces)."""
    ends = domain.corners(prog.in_dim)
    seg = Segment(ends[0], ends[1])
    return counter_for(seg).count(prog, seg, progress, general, method)


def plot(model, domain, path, color_by="linear", regions=None, **lower_kw):
    """One bar per piece along t ∈ [0, 1], coloured by its region."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    r = regions if regions is not None else count_regions(model, domain, **lower_kw)
    p = r.pieces
    lab = r.linear_labels if color_by == "linear" else p.region
    fig, ax = plt.subplots(figsize=(6, 1))
    ax.broken_barh(list(zip(p.t0, p.t1 - p.t0)), (0, 1), facecolors=plt.cm.tab20(lab % 20))
    fig.savefig(path)
    plt.close(fig)
    return r


register_domain(Diagonal, "diagonal", count, plot=plot, progress="pieces")
'''


@pytest.fixture
def toy_domain(monkeypatch, tmp_path):
    """docs/extending.md's domain path: one new file (written here) whose import is the one
    registration line; the registries are restored afterwards."""
    import importlib
    import sys

    monkeypatch.setattr(count_mod, "COUNTERS", dict(count_mod.COUNTERS))
    monkeypatch.setattr(count_mod, "DOMAIN_NAMES", dict(count_mod.DOMAIN_NAMES))
    (tmp_path / "toy_diagonal_domain.py").write_text(DIAGONAL_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "toy_diagonal_domain", raising=False)
    module = importlib.import_module("toy_diagonal_domain")  # the registration line
    yield module.Diagonal
    sys.modules.pop("toy_diagonal_domain", None)


def test_a_domain_from_one_file_is_counted_drawn_and_reachable_from_the_cli(toy_domain, tmp_path):
    from expressivity.cli import app
    from expressivity.cpwl import MaxoutNetwork
    from expressivity.interop.region_models import region_model
    from expressivity.regions import Segment, count_regions, domain_from_spec
    from expressivity.regions.count import counter_for
    from expressivity.regions.plot import plot_domain

    net = MaxoutNetwork.random(2, [4, 4], 2, seed=0)
    # counting
    got = count_regions(net, toy_domain(size=0.5))
    ref = count_regions(net, Segment([-0.5, -0.5], [0.5, 0.5]))
    assert got.kind == "diagonal"
    assert (got.activation_regions, got.linear_regions) == (ref.activation_regions, ref.linear_regions)
    assert np.allclose(got.interior_points(), ref.interior_points())
    assert np.allclose(got.breakpoints, ref.breakpoints)
    assert counter_for(toy_domain()).progress == "pieces"
    assert domain_from_spec({"type": "diagonal", "size": 0.5}) == toy_domain(size=0.5)
    # plotting, with the count reused
    png = tmp_path / "diag.png"
    assert plot_domain(net, toy_domain(size=0.5), png, regions=got) is got
    assert png.stat().st_size > 0
    # the CLI and its JSON export
    spec = tmp_path / "net.json"
    spec.write_text(json.dumps({"type": "random", "in_dim": 2, "widths": [4, 4], "ranks": 2, "seed": 0}))
    runner = CliRunner()
    res = runner.invoke(app, ["regions", str(spec), "--domain", '{"type": "diagonal", "size": 0.5}', "--json"])
    assert res.exit_code == 0, res.output
    exported = json.loads(res.output)
    expected = count_regions(region_model(spec, False, None), toy_domain(size=0.5)).summary()
    assert exported.pop("seconds") >= 0 and expected.pop("seconds") >= 0
    assert exported == expected and exported["kind"] == "diagonal"
    png2 = tmp_path / "cli.png"
    res = runner.invoke(app, ["regions", str(spec), "--domain", '{"type": "diagonal"}', "--plot", str(png2)])
    assert res.exit_code == 0, res.output
    assert "linear regions" in res.output and png2.stat().st_size > 0
    res = runner.invoke(app, ["regions", str(spec), "--domain", '{"type": "diagonal", "size": -1}'])
    assert res.exit_code == 2 and "Diagonal.size must be > 0" in res.output


def test_domain_registration_and_spec_errors(toy_domain):
    from expressivity.regions import Slice, domain_from_spec
    from expressivity.regions.plot import plot_domain

    count = count_mod.COUNTERS[toy_domain].count

    class NoCorners:
        pass

    with pytest.raises(ValueError, match="corners"):
        count_mod.register_domain(NoCorners, "nocorners", count)
    with pytest.raises(ValueError, match="taken by"):
        count_mod.register_domain(toy_domain, "segment", count)
    with pytest.raises(ValueError, match="progress must be one of pieces, fraction"):
        count_mod.register_domain(toy_domain, "diagonal", count, progress="percent")
    with pytest.raises(ValueError, match="plot must be callable"):
        count_mod.register_domain(toy_domain, "diagonal", count, plot="diag.png")
    with pytest.raises(ValueError, match="unknown type 'ray'; choose one of .*diagonal"):
        domain_from_spec({"type": "ray"})
    with pytest.raises(ValueError, match="domain diagonal"):
        domain_from_spec({"type": "diagonal", "width": 3})
    with pytest.raises(ValueError, match="no picture is registered for a Slice domain .*box, diagonal, plane"):
        plot_domain(None, Slice([0.0, 0.0], [[1.0, 0.0]], 0.0, 1.0), "x.png")


def _answer(ctx):
    from expressivity.report.claims import Check, Measurement

    return Measurement(checks=(Check("the answer", 42.0, "==", 42.0),), summary="42")


def _square(i: int) -> dict:
    return {"square": i * i}


def _sum_of_squares(ctx):
    from expressivity.report.claims import Check, Measurement

    total = sum(v["square"] for v in ctx.units.values())
    return Measurement(checks=(Check("Σ i² for i < 3", total, "==", 5.0),), summary=str(total))


def _square_units(ctx) -> list:
    from expressivity.runs import Unit

    return [Unit(f"i{i}", _square, (i,)) for i in range(3)]


def test_a_new_claim_group_is_seen_by_the_registry_and_measured(monkeypatch, tmp_path, unit_server):
    """The claim path of docs/extending.md: a group module with SPECS, named in GROUPS — one
    whole claim and one split into work units, both measured and judged by ``reproduce``."""
    import sys
    import types

    from expressivity.report import registry
    from expressivity.report.claims import ClaimSpec
    from expressivity.report.reproduce import reproduce

    mod = types.ModuleType("expressivity.report.toy_claims")
    mod.SPECS = [ClaimSpec(id="toy.answer", title="The answer is 42", source="none", bound="= 42",
                           bound_value=42.0, run=_answer),
                 ClaimSpec(id="toy.squares", title="0 + 1 + 4 = 5", source="none", bound="= 5",
                           bound_value=5.0, run=_sum_of_squares, units=_square_units)]
    monkeypatch.setitem(sys.modules, "expressivity.report.toy_claims", mod)
    monkeypatch.setattr(registry, "GROUPS", (*registry.GROUPS, "toy_claims"))
    assert [s.id for s in registry.select(["toy"])] == ["toy.answer", "toy.squares"]
    assert registry.by_id("toy.answer").bound_value == 42.0
    res = reproduce(tmp_path / "out", size="test", db=tmp_path / "r.sqlite", specs=registry.select(["toy"]))
    assert [(c.id, c.status) for c in res.claims] == [("toy.answer", "holds"), ("toy.squares", "holds")]
    assert res.claims[1].units == {"done": 3, "total": 3}
