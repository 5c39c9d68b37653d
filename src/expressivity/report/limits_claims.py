"""Placeholder until the area lands."""

SPECS: list = []
