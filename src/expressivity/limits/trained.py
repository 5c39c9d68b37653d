"""A trained model (from ``expressivity.train``) seen as strings → what the transformer reads.

Training tasks tokenise with :class:`~expressivity.languages.Vocab` (specials first, then the
alphabet): recognition reads ``s_1 … s_n CLS`` at the CLS position, next-symbol prediction
reads ``BOS s_1 … s_n`` at the last position. :class:`TrainedModel` gives such a transformer
the :class:`~expressivity.constructions.base.Encoder` interface (``.encode(strings)``,
``.language``, ``.transformer``) the limits analyses take.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from ..constructions.base import Encoded
from ..languages import BOS, CLS, Language, Vocab
from ..languages import get as get_language
from ..transformer import Transformer, load_transformer, read_metadata


@dataclass(frozen=True, eq=False)
class TrainedModel:
    """A trained checkpoint as an :class:`~expressivity.constructions.base.Encoder`."""

    transformer: Transformer
    language: Language
    kind: str = "recognition"  # recognition | next_symbol

    def __post_init__(self) -> None:
        if self.kind not in ("recognition", "next_symbol"):
            raise ValueError(f"TrainedModel.kind must be 'recognition' or 'next_symbol', got {self.kind!r}")

    @property
    def attention(self) -> str:
        return self.transformer.cfg.attention

    def encode(self, strings: list[str]) -> Encoded:
        ids = self.language.to_ids(list(strings))  # (B, n)
        vocab = Vocab(self.language.alphabet)
        B, n = ids.shape
        tok = vocab.ids_of(ids)
        if self.kind == "recognition":
            x = np.concatenate([tok, np.full((B, 1), CLS)], axis=1)
        else:
            x = np.concatenate([np.full((B, 1), BOS), tok], axis=1)
        return Encoded(torch.as_tensor(x, dtype=torch.long), None, torch.full((B,), n, dtype=torch.long))


def load_trained(path: str | Path) -> TrainedModel:
    """A ``model.safetensors`` written by ``train_run(out_dir=...)`` (its run config is in the metadata)."""
    meta = read_metadata(path)
    if "run_config" not in meta:
        raise ValueError(f"{path} has no run_config metadata (not written by expressivity.train)")
    rc = json.loads(meta["run_config"])
    lang = get_language(rc["task"], **(rc.get("task_params") or {}))
    return TrainedModel(load_transformer(path), lang, rc.get("kind", "recognition"))
