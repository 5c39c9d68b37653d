"""CLI commands of the report area (filled in by that area)."""

from . import app  # noqa: F401
