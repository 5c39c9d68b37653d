"""Fine-tuning from a construction: a hand-built transformer as a run's starting point.

``RunConfig(init="construction:NAME", init_params={...}, perturb=σ)`` (Chiang & Cholak 2022,
§6: they perturb their hand-set PARITY / FIRST weights and fine-tune from them). The model's
whole architecture — d_model, layers, heads, d_mlp, vocabulary, the position features its
encoder computes, attention kind, layer norm — is the construction's; the RunConfig's size
fields are not used. Every parameter θ starts at the construction's value θ_c plus noise,

    θ = θ_c + σ·ε,   ε ~ N(0, I),

drawn from ``torch.Generator().manual_seed(cfg.seed)`` over the parameters in name order
(σ = 0: exactly the construction).

:class:`ConstructionModel` maps the task's ids (B, T) = s_1 … s_n CLS to the construction's
input (its own ``encoder``, e.g. PARITY's length-dependent features p_j = j/(n+1)), runs the
copied transformer, reads the logit z at the construction's read position and returns
recognition logits (B, T, 2) with [−z/2, +z/2] at CLS (0 elsewhere), so that
P(s ∈ L) = softmax(·)₁ = σ(z), the construction's own read-out.
"""

from __future__ import annotations

import copy
import json
from functools import lru_cache

import torch
from torch import Tensor, nn

from ... import constructions
from ...languages.vocab import SPECIALS

PREFIX = "construction:"


def construction_name(init: str) -> str | None:
    """NAME of ``init = "construction:NAME"``; None for ``"random"``."""
    return init[len(PREFIX):] if init.startswith(PREFIX) else None


@lru_cache(maxsize=16)
def _build(name: str, params_json: str):
    return constructions.get(name, **json.loads(params_json))


def get_construction(name: str, params: dict):
    """The construction ``name`` built with ``params`` (cached; never mutate it: models copy
    its transformer)."""
    return _build(name, json.dumps(params, sort_keys=True))


class ConstructionModel(nn.Module):
    """A construction's transformer (a copy: trainable) behind its own encoder; ids → logits."""

    def __init__(self, construction) -> None:
        super().__init__()
        self.transformer = copy.deepcopy(construction.transformer)
        self.transformer.train()
        self._encoder = construction.encoder
        self._language = construction.language
        self.name = construction.name

    @property
    def cfg(self):
        return self.transformer.cfg

    def forward(self, inputs: Tensor, key_mask: Tensor | None = None) -> Tensor:
        if inputs.dim() != 2:
            raise ValueError(f"token ids must have shape (B, T), got {tuple(inputs.shape)}")
        B, T = inputs.shape
        strings = self._language.to_strings((inputs[:, :-1] - len(SPECIALS)).cpu().numpy())  # drop CLS
        enc = self._encoder(strings)
        device = inputs.device
        key_mask = None if enc.key_mask is None else enc.key_mask.to(device)
        y = self.transformer(enc.inputs.to(device), key_mask=key_mask)  # (B, T', 1)
        z = y[torch.arange(B, device=device), torch.as_tensor(enc.read, device=device), 0]  # (B,)
        logits = torch.zeros(B, T, 2, dtype=y.dtype, device=device)
        logits[:, -1, 0] = -z / 2
        logits[:, -1, 1] = z / 2
        return logits  # (B, T, 2)


def perturb_(model: nn.Module, sigma: float, seed: int) -> nn.Module:
    """θ += σ·ε for every parameter (name order), ε ~ N(0, I) from ``seed``; in place."""
    if sigma == 0:
        return model
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for _, p in sorted(model.named_parameters()):
            p.add_(sigma * torch.randn(p.shape, generator=g, dtype=torch.float64).to(p.dtype))
    return model


def from_construction(cfg) -> ConstructionModel:
    """The starting model of ``cfg`` (``cfg.init`` a construction), perturbed by ``cfg.perturb``."""
    c = get_construction(construction_name(cfg.init), cfg.init_params)
    return perturb_(ConstructionModel(c), cfg.perturb, cfg.seed)
