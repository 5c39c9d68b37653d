"""How strings get into a model, once for every analysis in ``limits/``.

Every analysis takes an :class:`~expressivity.constructions.base.Encoder` — anything with
``.transformer``, ``.language`` and ``.encode(strings) -> Encoded(inputs, key_mask, read)``:
constructions (hand-built and compiled) and trained checkpoints (:mod:`.trained`) — or a
plain token-id :class:`Transformer` (symbol a = token id a, or a
:class:`.restriction.SymbolInterface`). This module holds what they share: telling the two
apart, encoding symbol-index arrays, and finding which token positions hold the string.
"""

from __future__ import annotations

import numpy as np
import torch

from ..constructions.base import Encoded
from ..transformer import Transformer


def as_transformer(model) -> Transformer:
    """The model itself if it is a :class:`Transformer`, else its ``.transformer`` (an Encoder)."""
    if isinstance(model, Transformer):
        return model
    t = getattr(model, "transformer", None)
    if isinstance(t, Transformer):
        return t
    raise ValueError(f"model: expected a Transformer or a construction (an object with .transformer), "
                     f"got {type(model).__name__} {model!r:.40}")


def is_encoder(model) -> bool:
    """True for an Encoder (its own ``.encode(strings)``), False for a plain Transformer."""
    return not isinstance(model, Transformer) and callable(getattr(model, "encode", None))


def encode_ids(encoder, language, ids: np.ndarray) -> Encoded:
    """Symbol indices (N, n) over ``language``'s alphabet -> the Encoder's :class:`Encoded`."""
    return encoder.encode(language.to_strings(np.asarray(ids)))


def constant_strings(K: int, n: int) -> np.ndarray:
    """The K constant strings a^n as symbol indices: (K, n)."""
    return np.repeat(np.arange(K)[:, None], n, axis=1)


def symbol_positions(x: torch.Tensor, n: int) -> torch.Tensor:
    """Token positions holding the string: those where the encodings (inputs or embeddings)
    x (K, T[, d]) of the K constant strings differ. (n,) long; ValueError unless exactly n."""
    diff = x[1:] != x[:1]
    if diff.dim() == 3:
        diff = diff.any(-1)
    positions = torch.nonzero(diff.any(0)).flatten()
    if positions.numel() != n:
        raise ValueError(f"could not locate the {n} string positions in the construction's encoding "
                         f"(found {positions.numel()} positions that depend on the symbol)")
    return positions
