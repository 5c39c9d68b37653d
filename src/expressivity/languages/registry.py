"""The task registry: name → class (:data:`REGISTRY`) and name → Chomsky level (:data:`LEVELS`).

A language or function task registers itself with one call at the bottom of its own module,
``register("ends_in_one", EndsInOne, level="regular")``; importing that module (one line in
``languages/__init__.py``, or anywhere for a module outside the tree) is the registration.
:func:`expressivity.languages.get`, ``get_task``, training (``--task``) and the limits
commands (``--language``) read these two dicts, so they see it at once. A leaf of the
package: it imports only the base classes.
"""

from __future__ import annotations

from .base import Language
from .function import FunctionTask

CHOMSKY_LEVELS: tuple[str, ...] = ("regular", "context-free", "context-sensitive")

REGISTRY: dict[str, type[Language] | type[FunctionTask]] = {}
LEVELS: dict[str, str] = {}  # MAJORITY is a one-counter language (context-free); Shuffle-Dyck-1 = Dyck-1


def register(name: str, cls: type[Language] | type[FunctionTask], level: str) -> None:
    """Add the language or function task ``cls`` under ``name`` at Chomsky ``level``
    (regular | context-free | context-sensitive). Registering the same class under the same
    name again is a no-op (a module imported twice); a name taken by another class, a bad
    name, class or level is a one-line ValueError."""
    if not isinstance(name, str) or not name or any(ch.isspace() for ch in name):
        raise ValueError(f"register: name must be a non-empty string without spaces, got {name!r}")
    if not (isinstance(cls, type) and issubclass(cls, (Language, FunctionTask))):
        raise ValueError(f"register: {cls!r} is not a Language or FunctionTask subclass")
    if level not in CHOMSKY_LEVELS:
        raise ValueError(f"register: level must be one of {', '.join(CHOMSKY_LEVELS)}, got {level!r}")
    if name in REGISTRY and REGISTRY[name] is not cls:
        raise ValueError(f"register: {name!r} is taken by {REGISTRY[name].__name__}")
    REGISTRY[name] = cls
    LEVELS[name] = level


def register_all(level: str, tasks: dict[str, type[Language] | type[FunctionTask]]) -> None:
    """:func:`register` each ``name → cls`` of ``tasks`` at ``level``."""
    for name, cls in tasks.items():
        register(name, cls, level)


__all__ = ["CHOMSKY_LEVELS", "LEVELS", "REGISTRY", "register", "register_all"]
