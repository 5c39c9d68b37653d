"""CLI commands of the regions area (filled in by that area)."""

from . import app  # noqa: F401
