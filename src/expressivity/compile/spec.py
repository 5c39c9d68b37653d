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

import math
from pathlib import Path
from typing import Annotated, Literal

import numpy as np
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from ..cpwl import MaxoutNetwork
from ..fileio import read_json


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _int(v):
    """An integer as the spec means it: 3 or 3.0; never 2.9, "3" or true (no coercion)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not v.is_integer()):
        raise ValueError(f"must be an integer, got {v!r}")
    return int(v)


_Int = Annotated[int, BeforeValidator(_int)]
_Float = Annotated[float, BeforeValidator(lambda v: _number(v))]


def _number(v):
    """A JSON number (NaN/inf pass here and are refused with the array's name later); no
    strings, booleans or complex numbers."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"must be a number, got {v!r}")
    return float(v)


class DomainSpec(_Strict):
    lo: _Float | list[_Float] = -1.0
    hi: _Float | list[_Float] = 1.0


class MaxoutLayerSpec(_Strict):
    W: list[list[list[_Float]]]
    b: list[list[_Float]]


class ReadoutSpec(_Strict):
    A: list[list[_Float]]
    c: list[_Float]


class MaxoutSpec(_Strict):
    type: Literal["maxout"]
    layers: list[MaxoutLayerSpec] = Field(min_length=1)
    readout: ReadoutSpec | None = None
    domain: DomainSpec = DomainSpec()

    def build(self) -> MaxoutNetwork:
        ro = (np.array(self.readout.A), np.array(self.readout.c)) if self.readout else None
        return MaxoutNetwork.from_weights([(np.array(l.W), np.array(l.b)) for l in self.layers], ro)


class LinearSpec(_Strict):
    W: list[list[_Float]]
    b: list[_Float] | None = None


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
    in_dim: _Int = Field(ge=1)
    widths: list[_Int] = Field(min_length=1)
    ranks: _Int | list[_Int]
    seed: _Int = Field(0, ge=0)
    out_dim: _Int | None = Field(1, ge=1)
    domain: DomainSpec = DomainSpec()

    def build(self) -> MaxoutNetwork:
        return MaxoutNetwork.random(self.in_dim, self.widths, self.ranks, seed=self.seed, out_dim=self.out_dim)


def _power(q: int, L: int) -> float:
    """q^L as a float (inf past 1e300, never an overflow)."""
    return float(q) ** L if L * math.log10(q) < 300 else math.inf


class SawtoothSpec(_Strict):
    """The rank-q sawtooth z_q^∘L on [0, 1]: exactly q^L linear pieces."""

    type: Literal["sawtooth"]
    q: _Int = Field(2, ge=2)
    L: _Int = Field(1, ge=1)

    @property
    def domain(self) -> DomainSpec:
        return DomainSpec(lo=0.0, hi=1.0)

    def pieces(self) -> float:
        return _power(self.q, self.L)

    def build(self) -> MaxoutNetwork:
        from ..cpwl.families import sawtooth_maxout

        return sawtooth_maxout(self.q, self.L)


class TentSpec(_Strict):
    """The tent map t^∘L on [0, 1]: 2^L linear pieces."""

    type: Literal["tent"]
    L: _Int = Field(1, ge=1)

    @property
    def domain(self) -> DomainSpec:
        return DomainSpec(lo=0.0, hi=1.0)

    def pieces(self) -> float:
        return _power(2, self.L)

    def build(self) -> MaxoutNetwork:
        from ..cpwl.families import tent_map

        return tent_map(self.L)


class SerraSpec(_Strict):
    """Serra et al.'s 1-input ReLU net with ∏(n_l + 1) regions on ``serra_domain()``."""

    type: Literal["serra"]
    widths: list[Annotated[_Int, Field(ge=3)]] = Field([3], min_length=1)

    @property
    def domain(self) -> DomainSpec:
        from ..cpwl.families import serra_domain

        lo, hi = serra_domain()
        return DomainSpec(lo=lo, hi=hi)

    def pieces(self) -> float:
        return math.exp(min(700.0, sum(math.log(n + 1) for n in self.widths)))

    def build(self) -> MaxoutNetwork:
        from ..cpwl.families import serra_net

        return serra_net(self.widths)


NetworkSpec = Annotated[MaxoutSpec | ReluSpec | RandomSpec, Field(discriminator="type")]
ModelSpec = Annotated[MaxoutSpec | ReluSpec | RandomSpec | SawtoothSpec | TentSpec | SerraSpec,
                      Field(discriminator="type")]
FAMILIES = ("sawtooth", "tent", "serra")


class _Document(_Strict):
    network: NetworkSpec


class _ModelDocument(_Strict):
    network: ModelSpec


def _validate(doc, data):
    if not isinstance(data, dict):
        raise ValueError(f"invalid network spec: expected a JSON object with a 'type' field, got {type(data).__name__}")
    try:
        return doc(network=data).network
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"][1:] if not str(p).startswith("function-")) or "spec"
        msg = err["msg"].removeprefix("Value error, ")
        raise ValueError(f"invalid network spec at {where}: {msg} ({exc.error_count()} error(s))") from None


def parse_spec(data: dict) -> tuple[MaxoutNetwork, tuple]:
    """Validate a spec dict; return the network and its domain ``(lo, hi)``.

    Numbers must be JSON numbers (strings, booleans and complex numbers are refused); sizes
    must be integers (2.9 is refused, never rounded); unknown fields are errors."""
    spec = _validate(_Document, data)
    net = spec.build()
    lo, hi = spec.domain.lo, spec.domain.hi
    return net, (np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64))


def parse_model_spec(data: dict) -> tuple[MaxoutNetwork, tuple, float | None]:
    """Like :func:`parse_spec`, and also the constructed families ``{"type": "sawtooth", "q":
    3, "L": 4}`` | ``{"type": "tent", "L": 5}`` | ``{"type": "serra", "widths": [3, 4]}``
    (domain [0, 1], or ``serra_domain()``). Returns ``(net, (lo, hi), pieces)``, ``pieces``
    being the family's exact number of linear pieces on its domain (None for other kinds), so
    a counter can refuse a count that cannot fit before it starts."""
    spec = _validate(_ModelDocument, data)
    net = spec.build()
    lo, hi = spec.domain.lo, spec.domain.hi
    pieces = spec.pieces() if hasattr(spec, "pieces") else None
    return net, (np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)), pieces


def read_spec(path: str | Path, name: str = "SPEC") -> dict:
    """The JSON object in ``path``: one-line errors naming the file (missing, binary, not JSON)."""
    path = Path(path)
    data = read_json(path, name)
    if not isinstance(data, dict):
        raise ValueError(f"{name} {path}: the spec must be a JSON object with a 'type' field")
    return data


def load_spec(path: str | Path) -> tuple[MaxoutNetwork, tuple]:
    """Read and validate a JSON spec file (see the module docstring for the schema)."""
    return parse_spec(read_spec(path))
