"""Child processes that die with their parent (no orphans after a kill -9 of the parent).

:func:`die_with_parent` is called first thing in a child (a sweep worker, a ``reproduce
--timeout`` claim): on Linux it asks the kernel for SIGKILL when the parent dies
(``prctl(PR_SET_PDEATHSIG)``, through ctypes), then checks that the parent is still alive (it may
have died before the request). Elsewhere, and for children of a fork server, a daemon thread
polls the parent once a second and exits the process when it is gone.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
import threading
import time

_PR_SET_PDEATHSIG = 1


def _prctl_pdeathsig(sig: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, sig, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def die_with_parent(parent_pid: int) -> None:
    """Make this process end when ``parent_pid`` (the process that started it) ends.

    Started through a fork server (``forkserver``), the kernel-level parent is the server:
    then the request covers the server, and a daemon thread also polls ``parent_pid``."""
    armed = _prctl_pdeathsig(signal.SIGKILL)
    direct = os.getppid() == parent_pid
    if not direct and not _alive(parent_pid):  # the parent died before the request took effect
        os._exit(1)
    if not armed or not direct:
        def watch() -> None:
            while True:
                time.sleep(1.0)
                if not _alive(parent_pid) or (direct and os.getppid() != parent_pid):
                    os._exit(1)

        threading.Thread(target=watch, daemon=True, name="die-with-parent").start()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def describe_exit(exitcode: int | None) -> str:
    """'killed by SIGKILL (out of memory?)', 'exit code 3', … for a child's exit code."""
    if exitcode is None:
        return "still running"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"killed by {name}" + (" (out of memory, or killed by hand?)" if -exitcode == signal.SIGKILL else "")
    return f"exit code {exitcode}"
