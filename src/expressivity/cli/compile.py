"""CLI commands of the compile area (filled in by that area)."""

from . import app  # noqa: F401
