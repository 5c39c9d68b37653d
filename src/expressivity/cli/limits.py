"""CLI commands of the limits area (filled in by that area)."""

from . import app  # noqa: F401
