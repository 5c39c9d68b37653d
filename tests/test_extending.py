"""docs/extending.md, exercised: a throwaway language, region domain and report claim, each
defined here, are seen by the registries and the command line without editing anything else."""

from __future__ import annotations

import importlib
import json
import sys

import numpy as np
import pytest
from typer.testing import CliRunner

from expressivity import languages
from expressivity.languages import registry
from expressivity.regions import count as count_mod


def _import_new_file(monkeypatch, root, module: str, text: str):
    """The extending path: ``text`` saved as the one new file of ``module`` under ``root`` (put
    on sys.path; a dotted name's folders are namespace packages, no ``__init__.py``), then
    imported — the one registration line."""
    path = root.joinpath(*module.split(".")).with_suffix(".py")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    monkeypatch.syspath_prepend(str(root))
    parts = module.split(".")
    for i in range(len(parts)):
        monkeypatch.delitem(sys.modules, ".".join(parts[:i + 1]), raising=False)
    return importlib.import_module(module)


ENDS_IN_ONE_MODULE = '''"""A language in one file: bit strings whose last symbol is 1 (regular)."""

import numpy as np

from expressivity.languages.binary import BinaryLanguage
from expressivity.languages.registry import register


class EndsInOne(BinaryLanguage):
    name = "ends_in_one"

    def accepts(self, s):
        return set(s) <= {"0", "1"} and s.endswith("1")

    def accepts_ids(self, ids):
        return ids[:, -1] == 1 if ids.shape[1] else np.zeros(len(ids), dtype=bool)

    def supports(self, length, positive):
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


register("ends_in_one", EndsInOne, level="regular")
'''


@pytest.fixture
def toy_language(monkeypatch, tmp_path):
    """docs/extending.md's language path: one new module file (written here) that ends with its
    ``register`` call; importing it is the one registration line. The registry is restored
    afterwards."""
    saved = dict(registry.REGISTRY), dict(registry.LEVELS)
    module = _import_new_file(monkeypatch, tmp_path, "toy_ends_in_one", ENDS_IN_ONE_MODULE)
    yield module.EndsInOne
    for table, before in zip((registry.REGISTRY, registry.LEVELS), saved, strict=True):
        table.clear()
        table.update(before)


def test_the_registry_is_one_set_of_objects():
    assert languages.REGISTRY is registry.REGISTRY and languages.LEVELS is registry.LEVELS
    assert languages.register is registry.register
    from expressivity.train import config

    assert config.REGISTRY is registry.REGISTRY
    assert set(registry.LEVELS) == set(registry.REGISTRY)


def test_a_language_from_one_file_is_sampled_and_tokenised(toy_language):
    name = "ends_in_one"
    assert languages.REGISTRY[name] is toy_language and languages.LEVELS[name] == "regular"
    lang = languages.get(name)
    rng = np.random.default_rng(0)
    ids = lang.sample_mixed_ids(rng, 6, 5)
    assert lang.accepts_ids(ids).tolist() == [True] * 3 + [False] * 3
    assert languages.kinds_of(name) == ("recognition", "next_symbol")
    batch = languages.get_task(name, "recognition").sample_batch(rng, 4, 6)
    assert batch["input"].shape == (4, 7)
    assert batch["label"].tolist().count(1) == 2
    # the generative process of the positives: p(EOS | prefix) > 0 only after a final 1
    dist = lang.next_symbol_distribution("10")
    assert dist["$"] == 0 and dist["0"] + dist["1"] == pytest.approx(1.0)
    assert lang.next_symbol_distribution("01")["$"] > 0


def test_a_language_from_one_file_trains_in_the_library(toy_language):
    from expressivity.train import RunConfig, train_run

    cfg = RunConfig(task="ends_in_one", model="lstm", layers=1, d_model=8, train_lengths=(1, 4),
                    test_lengths=(5, 6), steps=3, batch_size=8, eval_batch=8, device="cpu")
    result = train_run(cfg)
    assert result.status == "done"
    assert [m["length"] for m in result.metrics] == [5, 6]
    assert all(0.0 <= m["accuracy"] <= 1.0 for m in result.metrics)


def test_a_language_from_one_file_reaches_the_cli(toy_language, tmp_path):
    from expressivity.cli import app

    runner = CliRunner()
    db = tmp_path / "runs.sqlite"
    res = runner.invoke(app, ["train", "--task", "ends_in_one", "--model", "lstm", "--layers", "1", "--d-model", "8",
                              "--train-lengths", "1-4", "--test-lengths", "5-6", "--steps", "3", "--batch-size", "8",
                              "--eval-batch", "8", "--device", "cpu", "--db", str(db), "--out", str(tmp_path / "ck")],
                        terminal_width=200)
    assert res.exit_code == 0, res.output
    assert "mean_accuracy = " in res.output and db.is_file()
    res = runner.invoke(app, ["results", "--db", str(db), "--json"])
    assert res.exit_code == 0, res.output
    (record,) = json.loads(res.stdout)
    assert (record["task"], record["model"], record["status"]) == ("ends_in_one", "lstm", "done")
    assert (record["min_length"], record["max_length"]) == (5, 6)
    png = tmp_path / "results.png"
    res = runner.invoke(app, ["results", "--db", str(db), "--plot", str(png)])
    assert res.exit_code == 0, res.output
    assert "ends_in_one" in res.output and png.stat().st_size > 0
    png = tmp_path / "sens.png"
    res = runner.invoke(app, ["sensitivity", "--model", "random", "--language", "ends_in_one", "--lengths", "4,6",
                              "--strings", "2", "--plot", str(png)], terminal_width=200)
    assert res.exit_code == 0, res.output
    assert "Lemma 5 applies" in res.output and png.stat().st_size > 0
    # the task list: an unknown --task names every task, the new one among them
    res = runner.invoke(app, ["train", "--task", "ends_in_zero", "--steps", "1"], terminal_width=400)
    assert res.exit_code == 2 and "'ends_in_one'" in res.output and "'parity'" in res.output


def test_register_refuses_a_taken_name_and_bad_levels(toy_language):
    with pytest.raises(ValueError, match="taken by EndsInOne"):
        registry.register("ends_in_one", languages.Parity, level="regular")
    with pytest.raises(ValueError, match="taken by Parity"):
        languages.register("parity", toy_language, level="regular")
    with pytest.raises(ValueError, match="level must be one of regular, context-free, context-sensitive"):
        languages.register("other", toy_language, level="regularish")
    with pytest.raises(ValueError, match="not a Language or FunctionTask subclass"):
        languages.register("other", dict, level="regular")
    languages.register("ends_in_one", toy_language, level="regular")  # a second import: a no-op
    assert "other" not in languages.REGISTRY and "other" not in languages.LEVELS


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
    monkeypatch.setattr(count_mod, "COUNTERS", dict(count_mod.COUNTERS))
    monkeypatch.setattr(count_mod, "DOMAIN_NAMES", dict(count_mod.DOMAIN_NAMES))
    yield _import_new_file(monkeypatch, tmp_path, "toy_diagonal_domain", DIAGONAL_MODULE).Diagonal


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


CLAIMS_MODULE = '''"""A claim group in one file: one claim measured whole (with a figure), one split into work units."""

from expressivity.report.claims import Check, ClaimSpec, Measurement
from expressivity.runs import Unit


def answer(ctx):
    from expressivity.report import figures

    fig, (ax,) = figures.new()
    ax.axhline(42.0)
    return Measurement(checks=(Check("the answer", 42.0, "==", 42.0),), summary="42", figure=figures.png(fig))


def square(i):
    return {"square": i * i}


def square_units(ctx):
    n = ctx.pick({"test": 3, "quick": 4, "standard": 5, "full": 6})
    return [Unit(f"i{i}", square, (i,)) for i in range(n)]


def sum_of_squares(ctx):
    n = len(ctx.units)
    total = sum(v["square"] for v in ctx.units.values())
    return Measurement(checks=(Check(f"sum of i^2 for i < {n}", total, "==", (n - 1) * n * (2 * n - 1) / 6),),
                       summary=f"sum = {total}")


BUDGET = {"test": 1, "quick": 1, "standard": 1, "full": 1}
SPECS = [
    ClaimSpec(id="toy.answer", title="The answer is 42", source="Adams 1979", bound="$= 42$", bound_value=42.0,
              run=answer, how_to_read="One flat line at the answer.", budget_s=BUDGET),
    ClaimSpec(id="toy.squares", title="Squares sum to (n-1)n(2n-1)/6", source="folklore", bound="closed form",
              bound_value=None, run=sum_of_squares, units=square_units, budget_s=BUDGET,
              how_to_read="No figure: the sum of the squares each unit computed, against the closed form."),
]
'''
GROUP = "toyext.claims"


@pytest.fixture
def toy_claims(monkeypatch, tmp_path):
    """docs/extending.md's claim path: one new group module (written here, in a folder on
    sys.path) and one entry in ``GROUPS`` naming it, the one registration line."""
    from expressivity.report import registry as claims_registry

    module = _import_new_file(monkeypatch, tmp_path / "ext", GROUP, CLAIMS_MODULE)
    monkeypatch.setattr(claims_registry, "GROUPS", (*claims_registry.GROUPS, GROUP))
    return module


def test_a_claim_group_from_one_file_is_registered(toy_claims):
    from expressivity.report import registry as claims_registry
    from expressivity.report.tables import how_to_read

    assert [s.id for s in claims_registry.select(["toy"])] == ["toy.answer", "toy.squares"]
    assert [s.id for s in claims_registry.all_specs()][-2:] == ["toy.answer", "toy.squares"]
    assert claims_registry.group_of("toy.squares") == GROUP
    assert claims_registry.group_of("compile.hardmax-exact") == "compile_claims"
    assert claims_registry.by_id("toy.answer") is toy_claims.SPECS[0]
    assert claims_registry.by_id(claims_registry.ref("toy.squares")) is toy_claims.SPECS[1]
    assert "- **toy.answer** — One flat line at the answer." in how_to_read()
    with pytest.raises(KeyError, match="toy.nothing"):
        claims_registry.group_of("toy.nothing")
    with pytest.raises(KeyError, match="in claim group 'compile_claims'"):
        claims_registry.by_id("compile_claims:toy.answer")


def test_a_claim_group_entry_must_name_a_module_with_specs(toy_claims, monkeypatch):
    from expressivity.report import registry as claims_registry

    monkeypatch.setattr(claims_registry, "GROUPS", ("compile_claims", "toy ext"))
    with pytest.raises(ValueError, match="claim group 'toy ext' is not a module name"):
        claims_registry.all_specs()
    monkeypatch.setattr(claims_registry, "GROUPS", ("compile_claims", "expressivity.report.figures"))
    with pytest.raises(ValueError, match="module expressivity.report.figures has no SPECS list of ClaimSpec"):
        claims_registry.all_specs()
    from expressivity.report.claims import ClaimSpec

    with pytest.raises(ValueError, match="without spaces or ':'"):  # ':' separates group and id in a ref
        ClaimSpec(id=f"{GROUP}:toy.answer", title="", source="", bound="", bound_value=None, run=len)
    monkeypatch.setattr(claims_registry, "GROUPS", (GROUP, GROUP))
    with pytest.raises(ValueError, match=r"duplicate claim ids: \['toy.answer', 'toy.squares'\]"):
        claims_registry.all_specs()


def test_a_claim_group_from_one_file_is_reproduced_tabled_and_reused(toy_claims, tmp_path, unit_server):
    """``reproduce`` measures both claims (their units in child processes, which find the group
    by its module), writes the figure, claims.json and the page; a second run, from the CLI,
    reuses the store; the claims table and the how-to-read list are generated from the run."""
    from expressivity.cli import app
    from expressivity.report.reproduce import reproduce

    db = tmp_path / "results.sqlite"
    res = reproduce(tmp_path / "first", size="test", db=db, only=["toy"])
    assert [(c.id, c.status) for c in res.claims] == [("toy.answer", "holds"), ("toy.squares", "holds")]
    assert sorted(res.computed) == ["toy.answer", "toy.squares"] and res.reused == ()
    assert res.claims[1].units == {"done": 3, "total": 3} and res.claims[1].measured == "sum = 5"
    figure = (tmp_path / "first" / "figures" / "toy.answer.png").read_bytes()
    assert figure.startswith(b"\x89PNG") and res.claims[0].figure == "figures/toy.answer.png"
    assert not (tmp_path / "first" / "figures" / "toy.squares.png").exists()
    page = res.index.read_text(encoding="utf-8")
    assert "One flat line at the answer." in page and "toy.squares" in page

    runner = CliRunner()
    out = tmp_path / "second"
    cli = runner.invoke(app, ["reproduce", "--size", "test", "--only", "toy", "--out", str(out), "--db", str(db)],
                        terminal_width=200)
    assert cli.exit_code == 0, cli.output
    assert "0 measured, 2 reused" in cli.output
    assert (out / "figures" / "toy.answer.png").read_bytes() == figure
    doc = json.loads((out / "claims.json").read_text(encoding="utf-8"))
    assert [(c["id"], c["reused"]) for c in doc["claims"]] == [("toy.answer", True), ("toy.squares", True)]
    assert doc["claims"][1]["how_to_read"] == toy_claims.SPECS[1].how_to_read

    page = tmp_path / "page.md"
    page.write_text("<!-- claims-table:start readme -->\n<!-- claims-table:end -->\n\n"
                    "<!-- how-to-read:start -->\n<!-- how-to-read:end -->\n", encoding="utf-8")
    cli = runner.invoke(app, ["claims-table", str(out / "claims.json"), str(page)])
    assert cli.exit_code == 0, cli.output
    text = page.read_text(encoding="utf-8")
    assert "| The answer is 42 (`toy.answer`) | Adams 1979 | $= 42$ | 42 | **holds** |" in text
    assert "2 of 2 claims hold (budget `--size test`)" in text
    assert "- **toy.squares** — No figure: the sum of the squares each unit computed, against the closed" in text
