"""Multi-node Ray through the one run driver: a head and two worker nodes started with
``ray start`` as separate processes (own CPUs, own temp dir, free ports, no dashboard, small
object stores). A small unit set runs with ``address=host:port``; one worker node is killed
mid-run; no finished unit is lost and the run completes on the remaining node.

Only the processes this test starts are stopped (by process group; never ``ray stop``,
which would stop every Ray on the machine)."""

from __future__ import annotations

import json
import os
import random
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

RAY = Path(sys.executable).with_name("ray")
SRC = Path(__file__).resolve().parents[1] / "src"
N_UNITS = 6  # 2 finish before the kill; the rest (≥ 2 unit-lengths of work) after it
UNIT_S = 1.5
JOIN_S = 420  # the driver's wait for both worker nodes, restarts included (a 2-core CI host is slow)
REJOIN_S = 90  # a worker node not joined this long after its start is started again, with fresh ports
RESTARTS = 3


def _free_ports(n: int) -> list[int]:
    """``n`` distinct free ports (all held open at once while the kernel picks them)."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


_TOKEN = secrets.token_hex(32)  # this cluster's own auth token: nothing read from or written to ~/.ray


def _env() -> dict:
    env = dict(os.environ)
    env.update({"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": _TOKEN})
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")])
    env.update({"RAY_USAGE_STATS_ENABLED": "0", "RAY_health_check_period_ms": "1000",
                "RAY_health_check_failure_threshold": "3", "RAY_health_check_initial_delay_ms": "1000"})
    return env


def _ports(ports: list[int], worker_base: int) -> list[str]:
    """A node's own ports: 6 from ``ports`` and 40 worker ports from ``worker_base`` (below
    the kernel's ephemeral range 32768–60999, so they cannot meet the others)."""
    names = ["--node-manager-port", "--object-manager-port", "--metrics-export-port",
             "--dashboard-agent-listen-port", "--dashboard-agent-grpc-port", "--runtime-env-agent-port"]
    args = [x for name, port in zip(names, ports) for x in (name, str(port))]
    return [*args, "--min-worker-port", str(worker_base), "--max-worker-port", str(worker_base + 40)]


class Node:
    def __init__(self, args: list[str], log: Path) -> None:
        self.log = log
        self.proc = subprocess.Popen([str(RAY), "start", "--block", "--disable-usage-stats", *args],
                                     stdout=open(log, "w"), stderr=subprocess.STDOUT, env=_env(),
                                     start_new_session=True)  # its own group: killed with everything it started

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(10)


def _wait_port(port: int, seconds: float, node: Node) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if node.proc.poll() is not None:
            raise AssertionError(f"ray start exited early:\n{node.log.read_text()[-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.3)
    raise AssertionError(f"the Ray head did not listen on {port} within {seconds} s")


DRIVER = textwrap.dedent('''
    import json, os, sys, time
    from expressivity.runs import Store, Unit, run_units

    def unit(i, seconds):
        import ray
        time.sleep(seconds)
        return {"i": i, "node": ray.get_runtime_context().get_node_id()}

    address, db, n, seconds, joined = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
    import ray
    ray.init(address=address, logging_level="WARNING", log_to_driver=False)
    deadline = time.monotonic() + JOIN_S
    while ray.cluster_resources().get("CPU", 0) < 2:  # both worker nodes have joined
        # the test reads which nodes have joined (by node-manager port) and restarts one that has not
        ports = sorted(nd["NodeManagerPort"] for nd in ray.nodes() if nd["Alive"])
        with open(joined + ".tmp", "w") as f:
            json.dump(ports, f)
        os.replace(joined + ".tmp", joined)
        assert time.monotonic() < deadline, f"the worker nodes did not join: {ray.cluster_resources()}"
        time.sleep(0.5)
    print("cluster ready", flush=True)
    store = Store(db)
    units = [Unit(f"u{i}", unit, (i, seconds)) for i in range(n)]
    def record(o):
        store.put_unit(o.unit.key, "cluster", "test", o.status, o.value, o.error or None, o.seconds)
        print(o.unit.key, o.status, o.error.splitlines()[0] if o.error else "", flush=True)
    run_units(units, backend="ray", address=address, timeout=90, on_done=record)
    store.close()
    print("driver finished", flush=True)
''').replace("JOIN_S", str(JOIN_S))


def _done(db: Path) -> dict:
    from expressivity.runs import Store

    if not db.exists() or db.stat().st_size == 0:  # not yet created, or its schema not yet committed
        return {}
    with Store(db, read_only=True) as st:
        return {k: u for k, u in st.units(group="cluster").items() if u["status"] == "done"}


def _tail(path: Path, n: int = 1500) -> str:
    return path.read_text(errors="replace")[-n:] if path.exists() else "(no file)"


def _diagnosis(tmp: Path) -> str:
    """The driver's output and the tail of every node's log and process-exit log."""
    parts = [f"--- driver\n{_tail(tmp / 'driver.log')}"]
    for log in sorted(tmp.glob("*.log")):
        if log.name != "driver.log":
            parts.append(f"--- {log.name}\n{_tail(log, 800)}")
    for exits in sorted(tmp.glob("*/session_*/logs/ray_process_exit.log")):
        parts.append(f"--- {exits.relative_to(tmp)}\n{_tail(exits, 800)}")
    return "\n".join(parts)


def _joined(path: Path) -> set[int]:
    """The node-manager ports of the nodes the driver last saw alive."""
    try:
        return set(json.loads(path.read_text()))
    except (OSError, ValueError):
        return set()


def test_killing_a_worker_node_loses_no_finished_unit_and_the_run_completes():
    if not RAY.exists() or shutil.which("ray", path=str(RAY.parent)) is None:
        pytest.skip("the ray command is not installed")
    tmp = Path(tempfile.mkdtemp(prefix="rt", dir="/tmp"))  # short: Ray's socket paths must stay < 108 chars
    nodes: list[Node] = []
    driver = None
    try:
        port, *ports = _free_ports(1 + 6)
        small = ["--object-store-memory", str(80 * 1024**2), "--include-dashboard", "false"]
        head = Node(["--head", "--port", str(port), "--num-cpus", "0", "--temp-dir", str(tmp / "head"),
                     "--node-ip-address", "127.0.0.1",
                     *small, *_ports(ports, 30_100)], tmp / "head.log")
        nodes.append(head)
        _wait_port(port, 60, head)
        address = f"127.0.0.1:{port}"
        bases = iter(random.sample(range(10_000, 30_000, 100), 2 + RESTARTS))  # distinct worker-port ranges

        def worker(k: int, attempt: int) -> tuple[Node, int, float]:
            """Worker node ``k``: fresh ports each attempt, its own temp dir (nodes sharing the
            head's session directory race for its socket names)."""
            own = _free_ports(6)
            node = Node(["--address", address, "--num-cpus", "1", "--node-ip-address", "127.0.0.1",
                         "--temp-dir", str(tmp / f"w{k}.{attempt}"), "--object-store-memory", str(80 * 1024**2),
                         *_ports(own, next(bases))], tmp / f"worker{k}.{attempt}.log")
            return node, own[0], time.monotonic()

        workers = [worker(k, 0) for k in range(2)]
        nodes.extend(w[0] for w in workers)
        (tmp / "driver.py").write_text(DRIVER)
        db, joined, log = tmp / "cluster.sqlite", tmp / "joined.json", tmp / "driver.log"
        driver = subprocess.Popen([sys.executable, str(tmp / "driver.py"), address, str(db), str(N_UNITS),
                                   str(UNIT_S), str(joined)], stdout=open(log, "w"), stderr=subprocess.STDOUT,
                                  env=_env(), start_new_session=True)
        restarts = 0
        while "cluster ready" not in _tail(log, 10**6):
            assert driver.poll() is None, _diagnosis(tmp)
            alive = _joined(joined)
            for k, (node, manager_port, started) in enumerate(workers):
                if manager_port in alive:
                    continue
                if node.proc.poll() is not None or time.monotonic() - started > REJOIN_S:
                    # it exited, or it runs without joining (a port taken between _free_ports and its bind)
                    assert restarts < RESTARTS, f"worker node {k} did not join\n{_diagnosis(tmp)}"
                    restarts += 1
                    node.kill()
                    workers[k] = worker(k, restarts)
                    nodes.append(workers[k][0])
            time.sleep(0.3)
        deadline = time.monotonic() + 90
        while len(_done(db)) < 2:  # wait until both nodes have finished work
            assert driver.poll() is None, _diagnosis(tmp)
            assert time.monotonic() < deadline, f"no unit finished within 90 s\n{_diagnosis(tmp)}"
            time.sleep(0.1)
        before = _done(db)
        nodes_used = {u["value"]["node"] for u in before.values()}
        victim = workers[0][0]
        victim.kill()  # one worker node dies mid-run (its raylet and its running task with it)
        driver.wait(timeout=110)
        out = _tail(log, 10**6)
        assert driver.returncode == 0, _diagnosis(tmp)
        assert "driver finished" in out
        after = _done(db)
        assert set(before) <= set(after), "a finished unit was lost"
        assert {k: u["value"] for k, u in before.items()} == {k: after[k]["value"] for k in before}
        assert sorted(after) == sorted(f"u{i}" for i in range(N_UNITS)), out  # every unit finished
        later = {after[k]["value"]["node"] for k in set(after) - set(before)}
        assert len(later) >= 1 and len(nodes_used | later) >= 1
    finally:
        if driver is not None and driver.poll() is None:
            os.killpg(driver.pid, signal.SIGKILL)
            driver.wait(10)
        for node in reversed(nodes):
            node.kill()
        if os.environ.get("KEEP_RAY_TMP") is None:
            shutil.rmtree(tmp, ignore_errors=True)
