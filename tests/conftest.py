"""Shared fixtures.

``unit_server``: ``reproduce`` starts each unit as a fresh process (spawn), which imports
torch again for every unit (seconds each, tens of seconds on a loaded machine). Tests of the
bookkeeping around units fork them instead from one fork server (the driver's ``forkserver``
start) that imported the package once. The server is a clean process that never ran torch, so
forking it is safe (forking pytest itself is not: a child's first parallel torch op can hang in
OpenMP once the parent has run one), and units are still pickled to it, as for spawn. Spawn
itself stays tested where reproduce runs without this fixture.

``--device`` (default cpu): the device the device-aware training tests (tests/test_device.py,
tests/test_train_many.py) train on, e.g. ``pytest --device cuda`` on a GPU machine; the
``device`` fixture gives it, and skips when it is not present here.

``region_invariants`` (autouse): the counters' tests (tests/test_regions_*.py) run with
``EXPRESSIVITY_CHECK=1``, so every cut of every mesh they build is checked
(``expressivity.regions.invariants``).
"""

from __future__ import annotations

import multiprocessing

import pytest

# what units import: the report and the areas its claims measure; torch._dynamo is imported
# by torch's optimizers on first use (seconds)
_PRELOAD = ["expressivity.report.reproduce", "expressivity.report.registry", "expressivity.compile",
            "expressivity.regions", "expressivity.limits", "expressivity.train", "torch._dynamo"]


def pytest_addoption(parser):
    parser.addoption("--device", default="cpu", help="device of the device-aware training tests: cpu (default), "
                     "cuda, cuda:N, mps")


@pytest.fixture
def device(request) -> str:
    """The ``--device`` option; the test is skipped when that device is absent here."""
    name = request.config.getoption("--device")
    from expressivity.train.devices import resolve_device

    try:
        resolve_device(name)
    except ValueError as exc:
        pytest.skip(str(exc))
    return name


@pytest.fixture(autouse=True)
def region_invariants(request, monkeypatch):
    """The mesh invariant checks are on in the counters' tests."""
    if request.node.path.name.startswith("test_regions_"):
        monkeypatch.setenv("EXPRESSIVITY_CHECK", "1")


@pytest.fixture(scope="session")
def fork_server():
    """Start the fork server once per session; its start method's name."""
    from expressivity.runs import Unit, run_units

    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(_PRELOAD)  # no effect if a server already runs (then units import more)
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("EXPRESSIVITY_MP_START", raising=False)
        mp.setenv("OMP_NUM_THREADS", "1")  # read by the server's torch: one thread per unit, as for spawn
        (warm,) = run_units([Unit("warm", len, ((),))], start="forkserver")  # the server is up before timing starts
    assert warm.status == "done", warm.error
    return "forkserver"


@pytest.fixture
def unit_server(fork_server, monkeypatch):
    """Units of ``reproduce`` forked from the warm fork server (see the module docstring)."""
    monkeypatch.setenv("EXPRESSIVITY_MP_START", fork_server)
