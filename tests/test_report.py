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
    measure_and_judge,
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


def test_a_failed_requirement_is_not_applicable_whatever_the_checks_say():
    good, bad = Check("score", 95.0, ">=", 90.0), Check("score", 80.0, ">=", 90.0)
    fitted, unfitted = Check("fit", 100.0, ">=", 99.0), Check("fit", 95.0, ">=", 99.0)
    assert status_of([good], [fitted])[0] == "holds" and status_of([bad], [fitted])[0] == "violated"
    for checks in ([good], [bad]):
        status, reason = status_of(checks, [fitted, unfitted])
        assert status == "not applicable" and "FAILED requirement fit = 95" in reason and "score" not in reason


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


_WRONG_BOUND = {"test": 1e-12, "quick": 1e-12, "standard": 1e-12, "full": 1e-12}  # deliberately wrong: true error ≫ 1e-12


def _fig() -> bytes:
    from expressivity.report import figures

    fig, (ax,) = figures.new(1, 2, 2)
    ax.plot([0, 1], [0, 1])
    return figures.png(fig)


def _ok(ctx: Context) -> Measurement:
    return Measurement((Check("x", 1.0, "<=", 2.0),), "x = 1", {"x": [1.0, np.float64(2.0)]}, _fig())


def _missing(ctx: Context) -> Measurement:
    import expressivity.no_such_area  # noqa: F401

    raise AssertionError("unreachable")


def _boom(ctx: Context) -> Measurement:
    raise RuntimeError("measurement blew up")


def spec(cid, run, **kw) -> ClaimSpec:
    return ClaimSpec(id=cid, title=f"claim {cid}", source="test", bound="x ≤ 2", bound_value=2.0,
                     run=run, **kw)


WRONG = spec("fake.wrong-bound", _softmax_error_at_lam10)
OK = spec("fake.ok", _ok)
MISSING = spec("fake.missing", _missing)
BOOM = spec("fake.boom", _boom)


# --------------------------------------------------------------------------- measure_and_judge


def test_wrong_bound_is_reported_violated():
    claim, _ = measure_and_judge(WRONG, Context(size="test"))
    assert claim.status == "violated"
    assert "FAILED sup error at λ=10" in claim.reason
    assert claim.checks[0]["ok"] is False and claim.checks[0]["measured"] > 1e-6


def test_missing_or_failing_code_is_not_applicable_with_reason():
    claim, fig = measure_and_judge(MISSING, Context(size="test"))
    assert claim.status == "not applicable" and fig is None
    assert "ModuleNotFoundError" in claim.reason and "no_such_area" in claim.reason
    claim, _ = measure_and_judge(BOOM, Context(size="test"))
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
    assert doc["counts"] == {"holds": 1, "violated": 1, "not applicable": 2, "incomplete": 0}
    for c in doc["claims"]:
        assert c["status"] == "holds" or c["reason"]
        assert c["command"].startswith("expressivity reproduce --size test --only " + c["id"])
    assert (tmp_path / "out" / "figures" / "fake.ok.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = markdown_table(list(res.claims))
    assert md.count("\n") == 2 + 4 and "violated: FAILED" in md


def _interrupt_after(n_done: int):
    seen = []

    def on_event(ev) -> None:
        if ev.kind == "done":
            seen.append(ev.spec.id)
            if len(seen) == n_done:
                raise KeyboardInterrupt  # as if ^C reached the driver here
    return on_event


def test_interrupted_run_resumes_from_the_store(tmp_path, unit_server):
    db = tmp_path / "r.sqlite"
    with pytest.raises(KeyboardInterrupt):
        reproduce(tmp_path / "o", size="test", db=db, specs=[OK, WRONG, BOOM], workers=1,
                  on_event=_interrupt_after(2))
    with Store(db) as st:  # the two claims finished before the interruption are committed
        assert st.count_claims("test") == 2
    res = reproduce(tmp_path / "o", size="test", db=db, specs=[OK, WRONG, BOOM])
    assert set(res.reused) == {"fake.ok", "fake.wrong-bound"}
    assert res.computed == ("fake.boom",)  # not-applicable results are retried, never stored
    reused = {c.id: c for c in res.claims}
    assert reused["fake.ok"].reused and reused["fake.wrong-bound"].status == "violated"
    # the reused figure is written again from the database
    page = parse_report(res.index)
    assert len(page.images) == 1 and page.images[0]["width"] > 0
    res3 = reproduce(tmp_path / "o", size="test", db=db, specs=[OK, WRONG])
    assert res3.computed == ()
    # another budget is a different key
    res4 = reproduce(tmp_path / "o", size="quick", db=db, specs=[OK])
    assert res4.computed == ("fake.ok",)
    # reuse=False re-measures
    res5 = reproduce(tmp_path / "o", size="test", db=db, specs=[OK], reuse=False)
    assert res5.computed == ("fake.ok",)


def test_store_rejects_foreign_databases(tmp_path):
    other = tmp_path / "other.sqlite"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE runs (x)")
    con.commit()
    con.close()
    with pytest.raises(ValueError, match="not an expressivity results database"):
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


def test_a_store_of_another_code_version_is_refused_or_set_aside(tmp_path, unit_server):
    from expressivity.runs import VersionMismatch, code_version

    db = tmp_path / "k.sqlite"
    Store(db, version="0.0.1+0123456789ab").close()  # written by other code
    with pytest.raises(VersionMismatch, match=r"holds results of expressivity 0\.0\.1\+0123456789ab; this is "
                       + code_version().replace(".", r"\.").replace("+", r"\+")):
        reproduce(tmp_path / "o", size="test", db=db, specs=[OK])
    res = reproduce(tmp_path / "o", size="test", db=db, specs=[OK], reset_db=True)
    assert res.computed == ("fake.ok",) and res.set_aside == tmp_path / "k.0.0.1+0123456789ab.sqlite"
    assert res.set_aside.exists()
    again = reproduce(tmp_path / "o", size="test", db=db, specs=[OK], reset_db=True)
    assert again.reused == ("fake.ok",) and again.set_aside is None  # same version: resumed, not reset


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


def test_timeout_stops_a_slow_claim_and_the_report_goes_on(tmp_path, unit_server):
    db = tmp_path / "t.sqlite"
    events = []
    # units forked from the warm server start in well under a second: ample for the fast claim,
    # far below the 120 s the slow one wants
    res = reproduce(tmp_path / "o", size="test", db=db, specs=[OK, SLOW], timeout=10, on_event=events.append)
    got = {c.id: c for c in res.claims}
    assert got["fake.ok"].status == "holds"
    assert got["fake.slow"].status == "incomplete"
    assert "timed out after 10 s" in got["fake.slow"].reason and got["fake.slow"].seconds >= 10
    assert any(e.kind == "progress" and e.spec.id == "fake.slow" and e.fraction == 0.25 for e in events)
    with Store(db) as st:  # the stopped claim is not stored: a later run measures it again
        assert st.count_claims("test") == 1
        (unit,) = [u for u in st.units().values() if u["grp"] == "fake.slow"]
        assert unit["status"] == "timed_out"
    page = parse_report(res.index)
    assert {r["id"]: r["status"] for r in page.rows}["fake.slow"] == "incomplete"
    doc = json.loads((tmp_path / "o" / "claims.json").read_text())
    assert doc["counts"]["incomplete"] == 1 and doc["budget"] == "test"


def test_timeout_arguments_are_checked(tmp_path):
    with pytest.raises(ValueError, match="timeout must be > 0"):
        reproduce(tmp_path / "o", size="test", db=None, specs=[OK], timeout=0)


# --------------------------------------------------------------------------- claims split into units
def _unit_value(i: int, sleep: float = 0.0) -> dict:
    import time

    time.sleep(sleep)
    return {"i": i, "square": i * i}


def _units_of(sleep_last: float):
    def units(ctx: Context) -> list:
        from expressivity.runs import Unit

        # only u2 has a time limit: 10 s (forked from the warm server, a unit starts in well under a second)
        return [Unit(f"u{i}", _unit_value, (i, sleep_last if i == 2 else 0.0), timeout=10.0 if i == 2 else None)
                for i in range(3)]
    return units


def _judge_units(ctx: Context) -> Measurement:
    total = sum(v["square"] for v in ctx.units.values())
    return Measurement((Check("sum of squares", total, "==", 5),), f"sum {total}")


def test_a_split_claim_is_incomplete_until_every_unit_finished_and_resumes_by_unit(tmp_path, unit_server):
    db = tmp_path / "u.sqlite"
    slow = spec("fake.units", _judge_units, units=_units_of(600.0))
    res = reproduce(tmp_path / "o", size="test", db=db, specs=[slow])
    (claim,) = res.claims
    assert claim.status == "incomplete" and "1 of 3 units did not finish: u2 timed out after 10 s" in claim.reason
    assert claim.units == {"done": 2, "total": 3}
    with Store(db) as st:
        units = st.units(group="fake.units")
        assert sorted((k.rsplit("|", 1)[-1], u["status"]) for k, u in units.items()) == \
            [("u0", "done"), ("u1", "done"), ("u2", "timed_out")]
        assert st.count_claims("test") == 0  # incomplete: not stored as a claim
    before = {k: u["finished"] for k, u in units.items()}
    events = []
    fast = spec("fake.units", _judge_units, units=_units_of(0.0))
    res2 = reproduce(tmp_path / "o", size="test", db=db, specs=[fast], on_event=events.append)
    assert res2.claims[0].status == "holds" and res2.claims[0].units == {"done": 3, "total": 3}
    with Store(db) as st:
        after = {k: u["finished"] for k, u in st.units(group="fake.units").items()}
    changed = sorted(k.rsplit("|", 1)[-1] for k in after if after[k] != before[k])
    assert changed == ["u2"]  # only the unit that timed out ran again
    assert [e.units_done for e in events if e.kind == "done"] == [3]


def test_a_reused_claim_reads_the_current_how_to_read(tmp_path):
    """The prose lives in the ClaimSpec only: a claim taken from the store shows today's text."""
    from dataclasses import replace as _replace

    db = tmp_path / "r.sqlite"
    first = reproduce(tmp_path / "o", size="test", db=db, specs=[_replace(OK, how_to_read="old prose")])
    assert first.claims[0].how_to_read == "old prose"
    again = reproduce(tmp_path / "o", size="test", db=db, specs=[_replace(OK, how_to_read="new prose")])
    assert again.reused == ("fake.ok",) and again.claims[0].how_to_read == "new prose"
    assert "new prose" in again.index.read_text() and "old prose" not in again.index.read_text()


def test_units_start_longest_first_by_their_claims_budget(tmp_path, monkeypatch):
    """reproduce hands the driver its units longest first: a claim's budget_s shared by its units
    (a whole-claim unit carries its claim's), ties in claim order — so the longest unit does not
    start last and set the wall time alone."""
    import importlib

    R = importlib.import_module("expressivity.report.reproduce")  # the module, not the function
    order: list[str] = []
    real = R.run_units

    def spy(units, **kw):
        order.extend(u.key.split("|")[0] + "/" + u.key.rsplit("|", 1)[-1] for u in units)
        return real(units, **kw)

    monkeypatch.setattr(R, "run_units", spy)
    short = spec("fake.short", _ok, budget_s={"test": 1.0})
    split = spec("fake.units", _judge_units, units=_units_of(0.0), budget_s={"test": 30.0})  # 10 s a unit
    whole = spec("fake.whole", _ok, budget_s={"test": 20.0})
    res = reproduce(tmp_path / "o", size="test", db=None, specs=[short, split, whole], workers=1)
    assert {c.status for c in res.claims} == {"holds"}
    assert order == ["fake.whole/claim", "fake.units/u0", "fake.units/u1", "fake.units/u2", "fake.short/claim"]
    assert R.longest_first([], len) == []
