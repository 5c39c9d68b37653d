"""The one transformer model of the project (see :mod:`.model` for the math)."""

from .builder import Weights, each
from .channels import ChannelMap
from .config import TransformerConfig
from .io import (
    check_finite_weights,
    load_state,
    load_transformer,
    metadata_json,
    read_aux,
    read_metadata,
    read_tensors,
    safetensors_metadata,
    save_transformer,
)
from .model import LayerNorm, Transformer, sinusoidal_positions

__all__ = [
    "ChannelMap",
    "LayerNorm",
    "Transformer",
    "TransformerConfig",
    "Weights",
    "each",
    "check_finite_weights",
    "load_state",
    "load_transformer",
    "metadata_json",
    "read_aux",
    "read_metadata",
    "read_tensors",
    "safetensors_metadata",
    "save_transformer",
    "sinusoidal_positions",
]
