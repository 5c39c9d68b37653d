"""Complexity of a compiled model next to its source network ("comparable complexity")."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..cpwl import MaxoutNetwork
from .compiled import CompiledModel


@dataclass(frozen=True)
class ComplexityReport:
    """Sizes of the maxout net (depth D, widths m_l, ranks p_l) and of its compiled transformer."""

    depth: int  # D, maxout layers
    widths: tuple[int, ...]
    ranks: tuple[int, ...]
    net_params: int  # Σ m_l p_l (d_l + 1) + read-out
    net_nonzero: int
    net_flops: int  # per input point
    blocks: int  # transformer blocks (attention + FFN)
    tokens: int  # T
    d_model: int
    d_mlp: int
    n_heads: int
    params_dense: int
    params_nonzero: int
    flops: int  # per input point (one sequence of T tokens, dense weights)

    @property
    def blocks_per_layer(self) -> float:
        return self.blocks / self.depth

    @property
    def param_ratio_dense(self) -> float:
        return self.params_dense / self.net_params

    @property
    def param_ratio_nonzero(self) -> float:
        return self.params_nonzero / self.net_nonzero

    @property
    def flop_ratio(self) -> float:
        return self.flops / self.net_flops

    def as_dict(self) -> dict:
        out = asdict(self)
        out.update(blocks_per_layer=self.blocks_per_layer, param_ratio_dense=self.param_ratio_dense,
                   param_ratio_nonzero=self.param_ratio_nonzero, flop_ratio=self.flop_ratio)
        return out

    def rows(self) -> list[tuple[str, str, str]]:
        """(quantity, maxout net, transformer) rows for a table."""
        return [
            ("depth / blocks", str(self.depth), f"{self.blocks} ({self.blocks_per_layer:.2f} per layer)"),
            ("width", "×".join(map(str, self.widths)), f"d_model {self.d_model}, d_mlp {self.d_mlp}, heads {self.n_heads}"),
            ("rank / tokens", "×".join(map(str, self.ranks)), str(self.tokens)),
            ("parameters (dense)", str(self.net_params), f"{self.params_dense} (×{self.param_ratio_dense:.1f})"),
            ("parameters (non-zero)", str(self.net_nonzero), f"{self.params_nonzero} (×{self.param_ratio_nonzero:.2f})"),
            ("FLOPs per point", str(self.net_flops), f"{self.flops} (×{self.flop_ratio:.1f})"),
        ]


def complexity_report(net: MaxoutNetwork, compiled: CompiledModel) -> ComplexityReport:
    """Sizes of ``net`` and of ``compiled`` (its compiled transformer) side by side."""
    if not isinstance(net, MaxoutNetwork):
        raise ValueError(f"net must be a MaxoutNetwork, got {type(net).__name__}")
    if not isinstance(compiled, CompiledModel):
        raise ValueError(f"compiled must be a CompiledModel, got {type(compiled).__name__}")
    tf = compiled.transformer
    cfg = tf.cfg
    return ComplexityReport(
        depth=net.depth, widths=net.widths, ranks=net.ranks,
        net_params=net.n_params(), net_nonzero=net.n_nonzero_params(), net_flops=net.flops(),
        blocks=cfg.n_layers, tokens=compiled.n_tokens, d_model=cfg.d_model, d_mlp=cfg.d_mlp,
        n_heads=cfg.n_heads, params_dense=tf.n_params(), params_nonzero=tf.n_params(nonzero=True),
        flops=tf.flops(compiled.n_tokens),
    )
