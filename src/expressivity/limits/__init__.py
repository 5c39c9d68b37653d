"""Limits of self-attention (Hahn 2020): flip sensitivity vs Lemma 5, random restrictions
and depth reduction (Theorem 1), Dyck-2 cross-entropy."""

from .lemma5 import Lemma5Bound, lemma5_bound, token_embedding_table
from .sensitivity import (FlipMeasurement, InputAdapter, SensitivityReport, SensitivityRow,
                          flip_sensitivity, measure_flips)

__all__ = [
    "FlipMeasurement",
    "Lemma5Bound",
    "SensitivityReport",
    "SensitivityRow",
    "flip_sensitivity",
    "lemma5_bound",
    "measure_flips",
]
