"""Limits of self-attention (Hahn 2020): flip sensitivity vs Lemma 5, random restrictions
and depth reduction (Theorem 1), Dyck-2 cross-entropy. See docs/limits.md."""

from ..lazy import lazy_names

_WHERE = {  # each public name -> its submodule, imported on first use (lazy_names): reading .options
    # (the command line's option specs, at its start-up) imports no torch
    **dict.fromkeys(("DepthReductionResult", "LayerLog", "ReductionConfig", "depth_reduction"), "depth_reduction"),
    "TokenEncoder": "encoder", "as_encoder": "encoder",
    **dict.fromkeys(("Lemma5Bound", "lemma5_bound", "token_embedding_table"), "lemma5"),
    **dict.fromkeys(("DependenceRow", "dependence_under_restriction", "dyck_restriction", "hardmax_copy",
                     "influential_free_inputs", "random_restriction"), "restriction"),
    **dict.fromkeys(("FlipMeasurement", "SensitivityReport", "SensitivityRow", "flip_sensitivity", "measure_flips"),
                    "sensitivity"),
}

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

__getattr__, __dir__ = lazy_names(__name__, _WHERE)
