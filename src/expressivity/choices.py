"""The transformer's named choices, defined once and torch-free (the command line reads them at
start-up): the attention (hardmax argmax or softmax σ_λ), the layer-norm placement and the
position encoding. ``transformer/config.py`` and ``transformer/positions.py`` check against them."""

from __future__ import annotations

from typing import Literal, get_args

Attention = Literal["hardmax", "softmax"]
ATTENTIONS: tuple[str, ...] = get_args(Attention)

LayerNormPlacement = Literal["none", "pre", "post"]
LAYER_NORMS: tuple[str, ...] = get_args(LayerNormPlacement)

Positional = Literal["learned", "sinusoidal", "none", "relative", "rope", "alibi", "i_over_n"]
POSITIONALS: tuple[str, ...] = get_args(Positional)
