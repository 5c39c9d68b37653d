"""Paper 1's constructions: Maxout/ReLU networks → Transformer (hardmax exact, σ_λ within O(1/λ))."""

from .compiled import CompiledModel, load_compiled
from .complexity import ComplexityReport, complexity_report
from .maxout_to_transformer import channel_map, compile_maxout, compile_relu
from .spec import load_spec, parse_spec

__all__ = [
    "CompiledModel",
    "ComplexityReport",
    "channel_map",
    "compile_maxout",
    "compile_relu",
    "complexity_report",
    "load_compiled",
    "load_spec",
    "parse_spec",
]
