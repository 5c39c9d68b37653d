"""CLI commands of the train area (filled in by that area)."""

from . import app  # noqa: F401
