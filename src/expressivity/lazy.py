"""A package's public names imported on first use (PEP 562), so that importing one light
submodule (e.g. the options a command declares as data) does not import the heavy ones (torch).

``__getattr__, __dir__ = lazy_names(__name__, {"RunConfig": "config", ...})`` in a package's
``__init__``: ``package.RunConfig`` imports ``package.config`` and returns its ``RunConfig``;
any other ``package.sub`` imports the submodule ``sub`` (as an eager ``__init__`` would have).
A public name that is also a submodule's (``limits.depth_reduction``, a function in
``limits/depth_reduction.py``) stays the public one, as after an eager ``from .sub import sub``:
importing the submodule does not rebind it.
"""

from __future__ import annotations

import importlib
import sys
import types


class _LazyPackage(types.ModuleType):
    """A package whose submodules, once imported, never hide a public name of ``_lazy_where``."""

    def __setattr__(self, name: str, value) -> None:
        if isinstance(value, types.ModuleType) and name in self.__dict__.get("_lazy_where", ()):
            return  # the import system binding the submodule `name`: the public `name` wins
        super().__setattr__(name, value)


def lazy_names(package: str, where: dict[str, str]):
    """``(__getattr__, __dir__)`` for ``package``: each name of ``where`` comes from the submodule
    ``where[name]``, imported when the name is first asked for, and is then cached in the package."""
    module = sys.modules[package]
    module.__class__ = _LazyPackage
    module._lazy_where = where
    namespace = module.__dict__

    def __getattr__(name: str):
        if name in where:
            value = getattr(importlib.import_module(f"{package}.{where[name]}"), name)
            namespace[name] = value
            return value
        try:
            return importlib.import_module(f"{package}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{package}.{name}":
                raise
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(where))

    return __getattr__, __dir__
