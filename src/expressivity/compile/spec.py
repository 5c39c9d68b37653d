"""JSON specification of a network to compile (validated with pydantic).

Three kinds, chosen by ``"type"``; every kind carries the compile ``"domain"``:

* ``{"type": "maxout", "layers": [{"W": [m][p][d], "b": [m][p]}, ...],
  "readout": {"A": [out][m_L], "c": [out]} | null, "domain": {"lo": -1, "hi": 1}}``
* ``{"type": "relu", "layers": [{"W": [out][in], "b": [out]}, ...], "relu_after_last": false,
  "domain": ...}`` — Linear layers with ReLU between them (torch's (out, in) layout).
* ``{"type": "random", "in_dim": 2, "widths": [8, 8], "ranks": 3 | [3, 2], "seed": 0,
  "out_dim": 1, "domain": ...}`` — a Gaussian random maxout network.

``lo``/``hi`` are numbers or per-coordinate lists. Unknown fields are errors.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..cpwl import MaxoutNetwork


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DomainSpec(_Strict):
    lo: float | list[float] = -1.0
    hi: float | list[float] = 1.0


class MaxoutLayerSpec(_Strict):
    W: list[list[list[float]]]
    b: list[list[float]]


class ReadoutSpec(_Strict):
    A: list[list[float]]
    c: list[float]


class MaxoutSpec(_Strict):
    type: Literal["maxout"]
    layers: list[MaxoutLayerSpec] = Field(min_length=1)
    readout: ReadoutSpec | None = None
    domain: DomainSpec = DomainSpec()

    def build(self) -> MaxoutNetwork:
        ro = (np.array(self.readout.A), np.array(self.readout.c)) if self.readout else None
        return MaxoutNetwork.from_weights([(np.array(l.W), np.array(l.b)) for l in self.layers], ro)


class LinearSpec(_Strict):
    W: list[list[float]]
    b: list[float] | None = None


class ReluSpec(_Strict):
    type: Literal["relu"]
    layers: list[LinearSpec] = Field(min_length=1)
    relu_after_last: bool = False
    domain: DomainSpec = DomainSpec()

    def build(self) -> MaxoutNetwork:
        import torch
        from torch import nn

        from ..cpwl import from_relu_mlp

        mods: list[nn.Module] = []
        for n, layer in enumerate(self.layers):
            W = np.array(layer.W, dtype=np.float64)
            if W.ndim != 2 or W.size == 0:
                raise ValueError(f"layers.{n}.W must be a non-empty (out, in) matrix")
            if n and W.shape[1] != mods[-1 if isinstance(mods[-1], nn.Linear) else -2].out_features:
                raise ValueError(f"layers.{n}.W has {W.shape[1]} inputs but the previous layer has "
                                 f"{mods[-1 if isinstance(mods[-1], nn.Linear) else -2].out_features} outputs")
            b = np.zeros(W.shape[0]) if layer.b is None else np.array(layer.b, dtype=np.float64)
            if b.shape != (W.shape[0],):
                raise ValueError(f"layers.{n}.b must have {W.shape[0]} entries, got {b.shape[0]}")
            if not (np.all(np.isfinite(W)) and np.all(np.isfinite(b))):
                raise ValueError(f"layers.{n} contains NaN or inf")
            lin = nn.Linear(W.shape[1], W.shape[0]).double()
            with torch.no_grad():
                lin.weight.copy_(torch.from_numpy(W))
                lin.bias.copy_(torch.from_numpy(b))
            mods.append(lin)
            if n < len(self.layers) - 1 or self.relu_after_last:
                mods.append(nn.ReLU())
        return from_relu_mlp(nn.Sequential(*mods))


class RandomSpec(_Strict):
    type: Literal["random"]
    in_dim: int = Field(ge=1)
    widths: list[int] = Field(min_length=1)
    ranks: int | list[int]
    seed: int = 0
    out_dim: int | None = 1
    domain: DomainSpec = DomainSpec()

    def build(self) -> MaxoutNetwork:
        return MaxoutNetwork.random(self.in_dim, self.widths, self.ranks, seed=self.seed, out_dim=self.out_dim)


NetworkSpec = Annotated[MaxoutSpec | ReluSpec | RandomSpec, Field(discriminator="type")]


class _Document(_Strict):
    network: NetworkSpec


def parse_spec(data: dict) -> tuple[MaxoutNetwork, tuple]:
    """Validate a spec dict; return the network and its domain ``(lo, hi)``."""
    try:
        spec = _Document(network=data).network
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"][1:]) or "spec"
        raise ValueError(f"invalid network spec at {where}: {err['msg']} ({exc.error_count()} error(s))") from None
    net = spec.build()
    lo, hi = spec.domain.lo, spec.domain.hi
    return net, (np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64))


def load_spec(path: str | Path) -> tuple[MaxoutNetwork, tuple]:
    """Read and validate a JSON spec file (see the module docstring for the schema)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such spec file: {path}")
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON: {exc.msg} at line {exc.lineno}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: the spec must be a JSON object with a 'type' field")
    return parse_spec(data)
