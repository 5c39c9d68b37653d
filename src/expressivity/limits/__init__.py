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

from .depth_reduction import DepthReductionResult, LayerLog, ReductionConfig, depth_reduction  # noqa: E402
from .restriction import (DependenceRow, SymbolInterface, dependence_under_restriction,  # noqa: E402
                          dyck_restriction, hardmax_copy, influential_free_inputs, random_restriction)

__all__ += [
    "DependenceRow",
    "DepthReductionResult",
    "LayerLog",
    "ReductionConfig",
    "SymbolInterface",
    "dependence_under_restriction",
    "depth_reduction",
    "dyck_restriction",
    "hardmax_copy",
    "influential_free_inputs",
    "random_restriction",
]
