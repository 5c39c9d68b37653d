"""Deterministic context-free tasks (Delétang et al. 2023's level DCF; aⁿbⁿ).

Solvable with a stack: stack manipulation, reverse string, modular arithmetic with brackets,
solve equation, aⁿbⁿ. (Dyck-(k, D) lives in :mod:`expressivity.languages.dyck`.)
"""
