"""Limits of self-attention (Hahn 2020): flip sensitivity vs Lemma 5, random restrictions
and depth reduction (Theorem 1), Dyck-2 cross-entropy. See docs/limits.md."""

from .depth_reduction import DepthReductionResult, LayerLog, ReductionConfig, depth_reduction
from .encoder import TokenEncoder, as_encoder
from .lemma5 import Lemma5Bound, lemma5_bound, token_embedding_table
from .restriction import (
    DependenceRow,
    dependence_under_restriction,
    dyck_restriction,
    hardmax_copy,
    influential_free_inputs,
    random_restriction,
)
from .sensitivity import (
    FlipMeasurement,
    SensitivityReport,
    SensitivityRow,
    flip_sensitivity,
    measure_flips,
)

__all__ = [
    "DependenceRow",
    "DepthReductionResult",
    "FlipMeasurement",
    "LayerLog",
    "Lemma5Bound",
    "ReductionConfig",
    "SensitivityReport",
    "SensitivityRow",
    "TokenEncoder",
    "as_encoder",
    "dependence_under_restriction",
    "depth_reduction",
    "dyck_restriction",
    "flip_sensitivity",
    "hardmax_copy",
    "influential_free_inputs",
    "lemma5_bound",
    "measure_flips",
    "random_restriction",
    "token_embedding_table",
]
