"""The one run driver (expressivity.runs.driver): units on local processes or Ray tasks,
per-unit timeout on both, failures isolated per unit, outcomes handed to the driver."""

from __future__ import annotations

import os
import signal
import socket
import time

import pytest

from expressivity.runs import Unit, run_units


def _value(i: int) -> dict:
    return {"i": i, "pid": os.getpid()}


def _sleep(seconds: float) -> str:
    time.sleep(seconds)
    return "woke"


def _fail() -> None:
    raise RuntimeError("this unit fails")


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _progress() -> str:
    from expressivity.runs import report_progress

    report_progress(0.5)
    return "ok"


def test_local_units_run_in_children_and_reach_the_driver_as_they_finish():
    seen = []
    outcomes = run_units([Unit(f"u{i}", _value, (i,)) for i in range(4)], workers=2,
                         on_done=lambda o: seen.append((o.unit.key, os.getpid())))
    assert sorted(o.unit.key for o in outcomes) == ["u0", "u1", "u2", "u3"]
    assert all(o.status == "done" and o.value["pid"] != os.getpid() for o in outcomes)
    assert sorted(k for k, _ in seen) == ["u0", "u1", "u2", "u3"] and {p for _, p in seen} == {os.getpid()}
    assert {o.unit.key: o.value["i"] for o in outcomes} == {"u0": 0, "u1": 1, "u2": 2, "u3": 3}


def test_local_failures_stay_in_their_unit():
    # forked units start at once: 3 s is ample for the quick ones; a unit's own limit overrides the run's
    units = [Unit("ok", _value, (1,)), Unit("raises", _fail), Unit("killed", _die), Unit("slow", _sleep, (120,)),
             Unit("own-limit", _sleep, (4.0,), timeout=600)]
    got = {o.unit.key: o for o in run_units(units, workers=2, timeout=3)}
    assert got["ok"].status == "done" and got["own-limit"].value == "woke"
    assert got["raises"].status == "error" and "RuntimeError: this unit fails" in got["raises"].error
    assert got["killed"].status == "error" and "killed by SIGKILL" in got["killed"].error
    assert got["slow"].status == "timed_out" and "timed out after 3 s" in got["slow"].error
    assert got["slow"].seconds >= 3


def test_progress_from_a_child_reaches_the_driver():
    seen = []
    run_units([Unit("p", _progress)], on_progress=lambda u, f: seen.append((u.key, f)))
    assert ("p", 0.5) in seen


def test_bad_arguments_are_one_line_errors():
    with pytest.raises(ValueError, match="backend"):
        run_units([Unit("a", _value, (1,))], backend="slurm")
    with pytest.raises(ValueError, match="unique"):
        run_units([Unit("a", _value, (1,)), Unit("a", _value, (2,))])
    with pytest.raises(ValueError, match="Unit objects"):
        run_units(["a"])
    with pytest.raises(ValueError, match="timeout"):
        run_units([Unit("a", _value, (1,))], timeout=0)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_address_where_nothing_answers_fails_in_seconds():
    pytest.importorskip("ray")
    address = f"127.0.0.1:{_free_port()}"
    t0 = time.monotonic()
    with pytest.raises(ValueError, match=f"--address {address}: no Ray cluster answers there"):
        run_units([Unit("a", _value, (1,))], backend="ray", address=address)
    assert time.monotonic() - t0 < 10  # the promise: a one-line error within 10 s
    with pytest.raises(ValueError, match="host:port"):
        run_units([Unit("a", _value, (1,))], backend="ray", address="nowhere")


@pytest.mark.slow
def test_ray_units_time_out_and_fail_alone():
    pytest.importorskip("ray")
    import sys

    from ray import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # Ray workers cannot import tests/
    # the limit counts from submission (a Ray worker may still be starting): any limit far
    # below the 120 s the unit sleeps makes it time out
    units = [Unit("ok", _value, (3,)), Unit("raises", _fail), Unit("slow", _sleep, (120,), timeout=3)]
    got = {o.unit.key: o for o in run_units(units, backend="ray", workers=2)}
    assert got["ok"].status == "done" and got["ok"].value["i"] == 3
    assert got["raises"].status == "error" and "this unit fails" in got["raises"].error
    assert got["slow"].status == "timed_out" and "timed out after 3 s" in got["slow"].error


def test_a_spawned_unit_that_cannot_be_loaded_fails_alone_with_the_reason():
    """Spawned children load their unit only after arranging to die with the driver; a unit
    whose module exists only in the driver (here: made at run time) fails with that reason, and
    the other unit still runs. A forked child needs no loading: the same unit runs there."""
    import sys
    import types

    ghost = types.ModuleType("expressivity_ghost_module")
    exec("def value():\n    return 'from the ghost'\n", ghost.__dict__)
    sys.modules[ghost.__name__] = ghost
    try:
        units = [Unit("ghost", ghost.value), Unit("ok", _value, (1,))]
        got = {o.unit.key: o for o in run_units(units, workers=2, start="spawn")}
        assert got["ok"].status == "done" and got["ok"].value["i"] == 1
        assert got["ghost"].status == "error"
        assert "could not be loaded in its process" in got["ghost"].error and "ModuleNotFoundError" in got["ghost"].error
        assert run_units([Unit("ghost", ghost.value)], start="fork")[0].value == "from the ghost"
    finally:
        del sys.modules[ghost.__name__]
