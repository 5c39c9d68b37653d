"""Hand-built transformers: explicit weights in the project's Transformer.

``get(name, **params) -> Construction`` with

* ``"parity"``  — PARITY (odd number of 1s), 2 layers, softmax, Chiang & Cholak (2022) style;
  params ``layer_norm: bool = False``, ``eps: float = 0.0`` (post-LN on the doubled stream),
  ``scale: float = 1.0`` (the confidence s > 0: every logit is multiplied by s).
* ``"first"``   — FIRST (first bit is 1), 2 layers, softmax; same params.
* ``"parity-compiled"`` — PARITY for every length ≤ ``max_length`` (default 12), a counting
  head plus a compiled CPWL g(k/T) = ±1; hardmax, exact; ``method`` = "interpolate" |
  "sawtooth" (width vs depth growing with N).
* ``"dyck"``    — Dyck-(k, D) recogniser, hardmax; params ``k`` (2), ``max_depth`` (2),
  ``max_length`` (2048), ``scale`` (10, the logit magnitude), ``method``:
  "depth-lookup" (default, 4 layers for every D, ``dyck.py``) | "yao" (D + 1 layers, one per
  depth level as in Yao et al. 2021, ``dyck_yao.py``).

Every construction has ``.transformer``, ``.attention``, ``.accept_probability(strings)``,
``.logits``, ``.encode`` (what the model reads), ``.language`` and ``.summary()``.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable

from ..rules import check_choice
from . import dyck, dyck_yao, first, parity, parity_compiled
from .base import (
    Construction,
    Encoded,
    Encoder,
    ce_bits_closed_form,
    ce_bits_from_logits,
    check_labels,
)

DYCK_METHODS = {"depth-lookup": dyck.build, "yao": dyck_yao.build}


def _dyck(k: int = 2, max_depth: int = 2, max_length: int = 2048, scale: float = 10.0,
          method: str = "depth-lookup") -> Construction:
    """Dyck-(k, D) by hard attention: 4 layers ("depth-lookup") or D + 1 layers ("yao")."""
    if not isinstance(method, str) or method not in DYCK_METHODS:
        raise ValueError(f"dyck: unknown method {method!r}; choose one of: {', '.join(DYCK_METHODS)}")
    c = DYCK_METHODS[method](k=k, max_depth=max_depth, max_length=max_length, scale=scale)
    return dataclasses.replace(c, params={**c.params, "method": method})


REGISTRY: dict[str, Callable[..., Construction]] = {
    "parity": parity.build,
    "first": first.build,
    "parity-compiled": parity_compiled.build,
    "dyck": _dyck,
}


def allowed_params(name: str) -> list[str]:
    """Parameter names accepted by construction ``name``."""
    check_choice(name, "construction", sorted(REGISTRY))
    return list(inspect.signature(REGISTRY[name]).parameters)


def get(name: str, **params) -> Construction:
    """Construction ``name`` built with ``params``; ValueError lists what is allowed."""
    check_choice(name, "construction", sorted(REGISTRY))
    allowed = allowed_params(name)
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise ValueError(f"construction {name!r} does not take {unknown}; allowed parameters: {allowed}")
    return REGISTRY[name](**params)


__all__ = ["REGISTRY", "Construction", "Encoded", "Encoder", "allowed_params", "ce_bits_closed_form", "ce_bits_from_logits",
           "check_labels", "get"]
