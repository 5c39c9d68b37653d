"""TransformerConfig: the frozen description of one model of the project.

Symbols follow the papers and TransformerLens: d_model (residual width), n_layers (L),
n_heads (H), d_head, d_mlp (FFN hidden width), n_ctx (maximal number of positions).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Literal

from .positions import POSITIONALS

Attention = Literal["hardmax", "softmax"]
LayerNormPlacement = Literal["none", "pre", "post"]
Positional = Literal["learned", "sinusoidal", "none", "relative", "rope", "alibi", "i_over_n"]
DType = Literal["float32", "float64"]


@dataclass(frozen=True)
class TransformerConfig:
    """Shape and behaviour of a :class:`~expressivity.transformer.Transformer`.

    Exactly one of ``d_vocab`` (token-id input) and ``d_input`` (continuous per-token
    vectors) is set.
    """

    d_model: int  # width of the residual stream
    n_layers: int  # number of blocks L (attention then FFN, each with a residual)
    n_heads: int  # heads per attention sublayer H
    d_head: int  # query/key/value width per head
    d_mlp: int  # hidden width of the token-wise ReLU FFN (0 = no FFN)
    d_vocab: int | None = None  # token-id input: number of token ids
    d_input: int | None = None  # continuous input: per-token input width
    d_out: int | None = None  # unembedding W_U: d_model -> d_out; None = return the residual
    n_ctx: int = 1024  # positions available to the learned positional embedding
    positional: Positional = "learned"  # learned W_pos | sinusoidal | none | relative | rope | alibi | i_over_n (positions.py)
    attention: Attention = "softmax"  # hardmax (even split over tied maxima) | softmax σ_λ
    lam: float = 1.0  # λ: logits are λ·(q·k) (use 1/sqrt(d_head) for the usual scaling)
    log_length_scaling: bool = False  # multiply logits by log n, n = keys a query sees
    causal: bool = False  # position i attends to j <= i only
    layer_norm: LayerNormPlacement = "none"  # none | pre (with a final LN) | post
    ln_eps: float = 1e-5  # ε in LN(x) = (x − mean)/sqrt(var + ε)·w + b; ε = 0 allowed
    dtype: DType = "float32"

    def __post_init__(self) -> None:
        for name in ("d_model", "n_layers", "n_heads", "d_head", "n_ctx"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"TransformerConfig.{name} must be a positive int, got {value!r}")
        if not isinstance(self.d_mlp, int) or self.d_mlp < 0:
            raise ValueError(f"TransformerConfig.d_mlp must be an int >= 0, got {self.d_mlp!r}")
        if (self.d_vocab is None) == (self.d_input is None):
            raise ValueError(
                "TransformerConfig: set exactly one of d_vocab (token ids) and d_input "
                f"(continuous inputs), got d_vocab={self.d_vocab!r}, d_input={self.d_input!r}"
            )
        for name in ("d_vocab", "d_input", "d_out"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 1):
                raise ValueError(f"TransformerConfig.{name} must be a positive int or None, got {value!r}")
        _check_choice("positional", self.positional, POSITIONALS)
        if self.positional == "rope" and self.d_head % 2:
            raise ValueError(f"TransformerConfig.d_head must be even for positional='rope' (it rotates pairs "
                             f"of coordinates), got {self.d_head}")
        _check_choice("attention", self.attention, ("hardmax", "softmax"))
        _check_choice("layer_norm", self.layer_norm, ("none", "pre", "post"))
        _check_choice("dtype", self.dtype, ("float32", "float64"))
        if not (isinstance(self.lam, (int, float)) and math.isfinite(self.lam) and self.lam > 0):
            raise ValueError(f"TransformerConfig.lam (λ) must be a finite number > 0, got {self.lam!r}")
        if not (math.isfinite(self.ln_eps) and self.ln_eps >= 0):
            raise ValueError(f"TransformerConfig.ln_eps must be >= 0, got {self.ln_eps!r}")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> TransformerConfig:
        known = set(cls.__dataclass_fields__)
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"TransformerConfig: unknown fields {sorted(unknown)}")
        return cls(**data)


def _check_choice(name: str, value: object, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ValueError(f"TransformerConfig.{name} must be one of {allowed}, got {value!r}")
