"""TransformerConfig: the frozen description of one model of the project.

Symbols follow the papers and TransformerLens: d_model (residual width), n_layers (L),
n_heads (H), d_head, d_mlp (FFN hidden width), n_ctx (maximal number of positions).
"""

from __future__ import annotations

from dataclasses import MISSING, asdict, dataclass
from typing import Literal, get_args

from ..choices import (  # noqa: F401
    ATTENTIONS,
    LAYER_NORMS,
    POSITIONALS,
    Attention,
    LayerNormPlacement,
    Positional,
)
from ..rules import check_float, check_int

SCORE_BIAS = ("alibi", "relative")  # position encodings that add a bias b_h(t, s) to λ·q·k
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
    # λ: logits are λ·(q·k) (use 1/sqrt(d_head) for the usual scaling). softmax: > 0, default 1.0.
    # hardmax: None — argmax over λ·(q·k) is the same for every λ > 0 — except with a score bias
    # (alibi, relative: λ·q·k + b), where λ weighs q·k against the bias (default 1.0 there too)
    lam: float | None = None
    log_length_scaling: bool = False  # multiply logits by log n, n = keys a query sees
    causal: bool = False  # position i attends to j <= i only
    layer_norm: LayerNormPlacement = "none"  # none | pre (with a final LN) | post
    ln_eps: float = 1e-5  # ε in LN(x) = (x − mean)/sqrt(var + ε)·w + b; ε = 0 allowed
    dtype: DType = "float32"

    def __post_init__(self) -> None:
        def put(name: str, value) -> None:
            object.__setattr__(self, name, value)

        try:
            for name in ("d_model", "n_layers", "n_heads", "d_head", "n_ctx"):
                put(name, check_int(getattr(self, name), f"TransformerConfig.{name}", min=1))
            put("d_mlp", check_int(self.d_mlp, "TransformerConfig.d_mlp", min=0))
            for name in ("d_vocab", "d_input", "d_out"):
                if getattr(self, name) is not None:
                    put(name, check_int(getattr(self, name), f"TransformerConfig.{name}", min=1))
            put("lam", self._checked_lam())
            put("ln_eps", check_float(self.ln_eps, "TransformerConfig.ln_eps", min=0.0))
        except ValueError as exc:  # "must be >= 1" reads better as "a positive int" here
            raise ValueError(str(exc).replace("must be an integer", "must be a positive int")) from None
        if (self.d_vocab is None) == (self.d_input is None):
            raise ValueError(
                "TransformerConfig: set exactly one of d_vocab (token ids) and d_input "
                f"(continuous inputs), got d_vocab={self.d_vocab!r}, d_input={self.d_input!r}"
            )
        _check_choice("positional", self.positional, POSITIONALS)
        if self.positional == "rope" and self.d_head % 2:
            raise ValueError(f"TransformerConfig.d_head must be even for positional='rope' (it rotates pairs "
                             f"of coordinates), got {self.d_head}")
        _check_choice("attention", self.attention, ATTENTIONS)
        _check_choice("layer_norm", self.layer_norm, LAYER_NORMS)
        _check_choice("dtype", self.dtype, get_args(DType))
        for name in ("log_length_scaling", "causal"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"TransformerConfig.{name} must be true or false, got {getattr(self, name)!r}")

    def _checked_lam(self) -> float | None:
        scale_free = self.attention == "hardmax" and self.positional not in SCORE_BIAS
        if self.lam is None:
            return None if scale_free else 1.0
        if scale_free:
            raise ValueError(f"TransformerConfig.lam: hardmax attention has no λ (the argmax of λ·(q·k) is the same "
                             f"for every λ > 0, with positional={self.positional!r} adding no score bias); leave "
                             f"lam None, got {self.lam!r}")
        return check_float(self.lam, "TransformerConfig.lam (λ)", min=0.0, min_open=True)

    @property
    def score_scale(self) -> float:
        """The factor of q·k in the logits: λ, or 1 for hardmax without λ (where any λ > 0 gives
        the same attention)."""
        return 1.0 if self.lam is None else self.lam

    def as_hardmax(self) -> TransformerConfig:
        """This config with hardmax attention: λ is kept where a score bias makes it matter
        (alibi, relative) and dropped (None) elsewhere."""
        from dataclasses import replace

        return replace(self, attention="hardmax", lam=self.lam if self.positional in SCORE_BIAS else None)

    def n_params(self) -> int:
        """Number of parameters of the model this config describes (before building it)."""
        d, H, e = self.d_model, self.n_heads, self.d_head
        d_in = self.d_vocab if self.d_vocab is not None else self.d_input
        per_block = 4 * H * d * e + 3 * H * e + d + (2 * d * self.d_mlp + self.d_mlp + d if self.d_mlp else 0)
        if self.layer_norm != "none":
            per_block += 4 * d
        total = d_in * d + self.n_layers * per_block
        total += self.n_ctx * d if self.positional == "learned" else 0
        total += 2 * d if self.layer_norm == "pre" else 0
        total += (d * self.d_out + self.d_out) if self.d_out is not None else 0
        return int(total)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> TransformerConfig:
        if not isinstance(data, dict):
            raise ValueError(f"TransformerConfig.from_dict expects a dict of fields, got {type(data).__name__}")
        known = set(cls.__dataclass_fields__)
        unknown = set(map(str, data)) - known
        if unknown:
            raise ValueError(f"TransformerConfig: unknown fields {sorted(unknown)}")
        required = {n for n, f in cls.__dataclass_fields__.items()
                    if f.default is MISSING and f.default_factory is MISSING}
        if required - set(data):
            raise ValueError(f"TransformerConfig: missing fields {sorted(required - set(data))}")
        if (data.get("attention") == "hardmax" and data.get("positional", "learned") not in SCORE_BIAS
                and data.get("lam") == 1.0 and type(data.get("lam")) is float):
            data = {**data, "lam": None}  # files written before hardmax lost its λ carry the old default 1.0
        return cls(**data)


def _check_choice(name: str, value: object, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ValueError(f"TransformerConfig.{name} must be one of {allowed}, got {value!r}")
