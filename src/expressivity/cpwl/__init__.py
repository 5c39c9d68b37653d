"""Piecewise-linear math, numpy first: maxout networks, ReLU MLP conversion, CPWL pieces,
and constructed families with known region counts (sawtooth, tent map, Serra et al.)."""

from .families import sawtooth_maxout, serra_domain, serra_net, tent_map, zigzag, zigzag_pieces
from .maxout import Bounds, MaxoutLayer, MaxoutNetwork, box
from .pieces import difference_of_max, interpolate_1d, max_min, max_of_affine
from .relu import from_relu_mlp

__all__ = [
    "Bounds",
    "MaxoutLayer",
    "MaxoutNetwork",
    "box",
    "difference_of_max",
    "from_relu_mlp",
    "interpolate_1d",
    "max_min",
    "max_of_affine",
    "sawtooth_maxout",
    "serra_domain",
    "serra_net",
    "tent_map",
    "zigzag",
    "zigzag_pieces",
]
