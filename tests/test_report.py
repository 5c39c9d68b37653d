"""The report framework: status rule, failure isolation, SQLite resume, HTML/JSON output.

These tests use small hand-written claims (one of them a real compiled-model measurement
with a deliberately wrong bound) so they run in seconds; test_report_e2e.py runs every
registered claim at size "test".
"""

from __future__ import annotations

import json
import math
import sqlite3

import numpy as np
import pytest
from report_html_check import parse_report

from expressivity.report import (
    Check,
    ClaimSpec,
    Context,
    Measurement,
    Store,
    evaluate,
    reproduce,
    status_of,
)
from expressivity.report.html import markdown_table

# --------------------------------------------------------------------------- status rule


@pytest.mark.parametrize(
    ("measured", "relation", "bound", "tol", "ok"),
    [
        (1e-12, "<=", 1e-9, 0.0, True),
        (1e-9, "<=", 1e-9, 0.0, True),
        (2e-9, "<=", 1e-9, 0.0, False),
        (2e-9, "<=", 1e-9, 2e-9, True),  # tol loosens ≤
        (5.0, ">=", 4.0, 0.0, True),
        (3.9, ">=", 4.0, 0.0, False),
        (7, "==", 7, 0.0, True),
        (8, "==", 7, 0.0, False),
        (-1.1, "~", -1.0, 0.2, True),
        (-1.3, "~", -1.0, 0.2, False),
        (float("nan"), "<=", 1.0, 0.0, False),  # NaN never satisfies a bound
        (float("inf"), ">=", 1.0, 0.0, False),
    ],
)
def test_check_relations(measured, relation, bound, tol, ok):
    assert Check("q", measured, relation, bound, tol).ok() is ok


def test_status_rule_names_the_failing_check():
    good = Check("max |error|", 3e-12, "<=", 1e-9)
    bad = Check("slope", -0.5, "~", -1.0, tol=0.2)
    assert status_of([good])[0] == "holds"
    status, reason = status_of([good, bad])
    assert status == "violated"
    assert "slope" in reason and "FAILED" in reason and "max |error|" not in reason
    assert status_of([])[0] == "not applicable"


def test_check_validation():
    with pytest.raises(ValueError, match="relation"):
        Check("q", 1.0, "<", 2.0)
    with pytest.raises(ValueError, match="tol"):
        Check("q", 1.0, "~", 2.0)
    with pytest.raises(ValueError, match="size"):
        Context(size="huge")


# --------------------------------------------------------------------------- claims used below


def _softmax_error_at_lam10(ctx: Context) -> Measurement:
    """A real measurement: σ_λ error of a compiled 1-D net at λ = 10 (of order 1e-2)."""
    from expressivity.compile import compile_maxout
    from expressivity.cpwl import MaxoutNetwork

    net = MaxoutNetwork.random(1, (3,), 3, seed=1)
    cm = compile_maxout(net, domain=(-1, 1), attention="softmax", lam=10.0)
    x = np.linspace(-1, 1, 2001)[:, None]
    err = float(np.max(np.abs(cm.evaluate(x) - net(x))))
    return Measurement((Check("sup error at λ=10", err, "<=", ctx.pick(_WRONG_BOUND)),), f"error {err:.3g}")


_WRONG_BOUND = {"test": 1e-12, "quick": 1e-12, "full": 1e-12}  # deliberately wrong: true error ≫ 1e-12


def _fig() -> bytes:
    from expressivity.report import figures

    fig, (ax,) = figures.new(1, 2, 2)
    ax.plot([0, 1], [0, 1])
    return figures.png(fig)


CALLS: dict[str, int] = {}


def _ok(ctx: Context) -> Measurement:
    CALLS["ok"] = CALLS.get("ok", 0) + 1
    return Measurement((Check("x", 1.0, "<=", 2.0),), "x = 1", {"x": [1.0, np.float64(2.0)]}, _fig())


def _missing(ctx: Context) -> Measurement:
    import expressivity.no_such_area  # noqa: F401

    raise AssertionError("unreachable")


def _boom(ctx: Context) -> Measurement:
    raise RuntimeError("measurement blew up")


def _interrupt(ctx: Context) -> Measurement:
    raise KeyboardInterrupt


def spec(cid, run, **kw) -> ClaimSpec:
    return ClaimSpec(id=cid, title=f"claim {cid}", source="test", bound="x ≤ 2", bound_value=2.0,
                     run=run, **kw)


WRONG = spec("fake.wrong-bound", _softmax_error_at_lam10, depends=("compile",))
OK = spec("fake.ok", _ok)
MISSING = spec("fake.missing", _missing)
BOOM = spec("fake.boom", _boom)


# --------------------------------------------------------------------------- evaluate


def test_wrong_bound_is_reported_violated():
    claim, _ = evaluate(WRONG, Context(size="test"))
    assert claim.status == "violated"
    assert "FAILED sup error at λ=10" in claim.reason
    assert claim.checks[0]["ok"] is False and claim.checks[0]["measured"] > 1e-6


def test_missing_or_failing_code_is_not_applicable_with_reason():
    claim, fig = evaluate(MISSING, Context(size="test"))
    assert claim.status == "not applicable" and fig is None
    assert "ModuleNotFoundError" in claim.reason and "no_such_area" in claim.reason
    claim, _ = evaluate(BOOM, Context(size="test"))
    assert claim.status == "not applicable" and "measurement blew up" in claim.reason


# --------------------------------------------------------------------------- reproduce + store


def test_reproduce_writes_html_and_json_with_violation_visible(tmp_path):
    res = reproduce(tmp_path / "out", size="test", db=None, specs=[OK, WRONG, MISSING, BOOM])
    page = parse_report(res.index)
    assert [r["id"] for r in page.rows] == ["fake.ok", "fake.wrong-bound", "fake.missing", "fake.boom"]
    status = {r["id"]: r["status"] for r in page.rows}
    assert status == {"fake.ok": "holds", "fake.wrong-bound": "violated",
                      "fake.missing": "not applicable", "fake.boom": "not applicable"}
    violated = next(r for r in page.rows if r["id"] == "fake.wrong-bound")
    assert "violated" in violated["class"] and "FAILED" in violated["text"]
    assert len(page.images) == 1 and page.images[0]["width"] > 0
    assert page.sections == set(status)
    doc = json.loads((tmp_path / "out" / "claims.json").read_text())
    assert doc["counts"] == {"holds": 1, "violated": 1, "not applicable": 2}
    for c in doc["claims"]:
        assert c["status"] == "holds" or c["reason"]
        assert c["command"].startswith("expressivity reproduce --size test --only " + c["id"])
    assert (tmp_path / "out" / "figures" / "fake.ok.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = markdown_table(list(res.claims))
    assert md.count("\n") == 2 + 4 and "violated: FAILED" in md


def test_interrupted_run_resumes_from_the_store(tmp_path):
    db = tmp_path / "r.sqlite"
    CALLS.clear()
    interrupting = spec("fake.interrupt", _interrupt)
    with pytest.raises(KeyboardInterrupt):
        reproduce(tmp_path / "o", size="test", db=db, specs=[OK, WRONG, interrupting, BOOM])
    with Store(db) as st:  # the two claims finished before the interruption are committed
        assert st.count("test") == 2
    res = reproduce(tmp_path / "o", size="test", db=db, specs=[OK, WRONG, BOOM])
    assert set(res.reused) == {"fake.ok", "fake.wrong-bound"}
    assert res.computed == ("fake.boom",)  # not-applicable results are retried, never stored
    assert CALLS["ok"] == 1
    reused = {c.id: c for c in res.claims}
    assert reused["fake.ok"].reused and reused["fake.wrong-bound"].status == "violated"
    # the reused figure is written again from the database
    page = parse_report(res.index)
    assert len(page.images) == 1 and page.images[0]["width"] > 0
    res3 = reproduce(tmp_path / "o", size="test", db=db, specs=[OK, WRONG])
    assert res3.computed == () and CALLS["ok"] == 1
    # another size is a different key
    res4 = reproduce(tmp_path / "o", size="quick", db=db, specs=[OK])
    assert res4.computed == ("fake.ok",)
    # reuse=False re-measures
    res5 = reproduce(tmp_path / "o", size="test", db=db, specs=[OK], reuse=False)
    assert res5.computed == ("fake.ok",) and CALLS["ok"] == 3


def test_store_rejects_foreign_databases(tmp_path):
    other = tmp_path / "other.sqlite"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE runs (x)")
    con.commit()
    con.close()
    with pytest.raises(ValueError, match="not a report store"):
        Store(other)
    junk = tmp_path / "junk.sqlite"
    junk.write_text("this is not a database, just text " * 100)
    with pytest.raises(ValueError, match="not an SQLite database"):
        Store(junk)


def test_reproduce_rejects_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="size"):
        reproduce(tmp_path, size="medium", db=None, specs=[OK])
    with pytest.raises(ValueError, match="backend"):
        reproduce(tmp_path, size="test", backend="slurm", db=None, specs=[OK])
    with pytest.raises(ValueError, match="unknown claim id"):
        reproduce(tmp_path, size="test", db=None, only=["no.such.claim"])


def test_registry_ids_unique_and_commands_regenerate():
    from expressivity.report import all_specs

    specs = all_specs()
    assert len({s.id for s in specs}) == len(specs) >= 3
    for s in specs:
        assert s.source and s.bound and s.how_to_read, s.id
        assert s.bound_value is None or math.isfinite(s.bound_value)


def test_cli_reproduce_one_claim(tmp_path):
    from typer.testing import CliRunner

    from expressivity.cli import app

    out, db = tmp_path / "rep", tmp_path / "db.sqlite"
    args = ["reproduce", "--size", "test", "--only", "compile.complexity", "--out", str(out), "--db", str(db)]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    assert "holds" in r.output and (out / "index.html").exists()
    r2 = CliRunner().invoke(app, args)
    assert r2.exit_code == 0 and "0 measured, 1 reused" in r2.output
    bad = CliRunner().invoke(app, ["reproduce", "--only", "nope", "--out", str(out), "--db", str(db)])
    assert bad.exit_code == 2 and "unknown claim id" in bad.output
    both = CliRunner().invoke(app, ["reproduce", "--quick", "--full"])
    assert both.exit_code == 2


@pytest.mark.slow
def test_ray_backend_runs_and_resumes(tmp_path):
    pytest.importorskip("ray")
    db = tmp_path / "ray.sqlite"
    res = reproduce(tmp_path / "out", size="test", backend="ray", db=db, only=["compile.complexity"])
    assert [c.id for c in res.claims] == ["compile.complexity"] and res.claims[0].status == "holds"
    assert res.computed == ("compile.complexity",)
    again = reproduce(tmp_path / "out", size="test", backend="ray", db=db, only=["compile.complexity"])
    assert again.reused == ("compile.complexity",) and again.computed == ()
    page = parse_report(again.index)
    assert page.rows[0]["status"] == "holds" and page.images[0]["width"] > 0


def test_changed_code_invalidates_stored_results(tmp_path, monkeypatch):
    from expressivity.report import store as store_mod

    db = tmp_path / "k.sqlite"
    spec_c = spec("fake.ok-compile", _ok, depends=("compile",))
    first = reproduce(tmp_path / "o", size="test", db=db, specs=[spec_c, OK])
    assert set(first.computed) == {"fake.ok-compile", "fake.ok"}
    real = store_mod._tree_hash

    def edited(part: str) -> str:  # as if a file of expressivity.compile had been edited
        return "edited" if part == "compile" else real(part)

    monkeypatch.setattr(store_mod, "_tree_hash", edited)
    second = reproduce(tmp_path / "o", size="test", db=db, specs=[spec_c, OK])
    assert second.computed == ("fake.ok-compile",) and second.reused == ("fake.ok",)


def test_cli_interrupt_says_how_to_resume(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    import expressivity.report as report_pkg
    from expressivity.cli import app

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(report_pkg, "reproduce", interrupted)
    r = CliRunner().invoke(app, ["reproduce", "--size", "test", "--only", "compile.complexity",
                                 "--out", str(tmp_path / "o"), "--db", str(tmp_path / "d.sqlite")])
    assert r.exit_code == 130 and "resume" in r.output


def _slow(ctx: Context) -> Measurement:
    import time

    ctx.progress(0.25)
    time.sleep(120)
    raise AssertionError("unreachable: stopped by the timeout")


SLOW = spec("fake.slow", _slow)


def test_timeout_stops_a_slow_claim_and_the_report_goes_on(tmp_path):
    import time

    db = tmp_path / "t.sqlite"
    events = []
    t0 = time.perf_counter()
    # generous for the fast claim (a spawned child imports numpy/matplotlib first, slowly on a
    # loaded CI machine), far below the 120 s the slow one wants
    res = reproduce(tmp_path / "o", size="test", db=db, specs=[OK, SLOW], timeout=15,
                    on_event=events.append)
    took = time.perf_counter() - t0
    got = {c.id: c for c in res.claims}
    assert got["fake.ok"].status == "holds"
    assert got["fake.slow"].status == "not applicable"
    assert "timed out after 15 s" in got["fake.slow"].reason and got["fake.slow"].seconds >= 15
    assert took < 90
    assert any(e.kind == "progress" and e.spec.id == "fake.slow" and e.fraction == 0.25 for e in events)
    with Store(db) as st:  # the stopped claim is not stored: a later run measures it again
        assert st.count("test") == 1
    page = parse_report(res.index)
    assert {r["id"]: r["status"] for r in page.rows}["fake.slow"] == "not applicable"


def test_timeout_arguments_are_checked(tmp_path):
    with pytest.raises(ValueError, match="timeout must be > 0"):
        reproduce(tmp_path / "o", size="test", db=None, specs=[OK], timeout=0)
    with pytest.raises(ValueError, match="local backend"):
        reproduce(tmp_path / "o", size="test", db=None, specs=[OK], backend="ray", timeout=5)
