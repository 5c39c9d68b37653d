"""Tasks on a language, in the style of the DeepMind formal-language benchmark.

``task.sample_batch(generator, batch_size, length)`` (generator: a numpy Generator, the only
source of randomness) returns ``{"input": LongTensor (B, T), "output": FloatTensor (B, T, C),
"mask": BoolTensor (B, T)}`` where output[b, t] is the target distribution over C classes at
position t and mask marks the scored positions. One string length per batch (no padding).

- ``recognition``: input = s_1 … s_n CLS (T = n + 1); C = 2 (class 1 = s ∈ L); only the CLS
  position is scored; each batch holds ⌊B/2⌋ negatives and ⌈B/2⌉ positives in random order
  (negatives include near-misses, see :meth:`Language.sample`).
- ``next_symbol``: language modelling on positives: input = BOS s_1 … s_n (T = n + 1);
  C = |Σ| + 1 (last class = EOS); output[b, t] = p*(· | s_1 … s_t), the optimal next-symbol
  distribution of the language's generative process; every position is scored.
"""

from __future__ import annotations

import numpy as np
import torch

from .base import Language, Task
from .vocab import BOS, CLS, Vocab

KINDS = ("recognition", "next_symbol")


class RecognitionTask(Task):
    kind = "recognition"

    def __init__(self, language: Language) -> None:
        self.language = language
        self.name = language.name
        self.vocab = Vocab(language.alphabet)
        self.n_outputs = 2

    def valid_length(self, length: int) -> bool:
        lang = self.language
        return lang.supports(length, True) and lang.supports(length, False)

    def sample_batch(self, generator: np.random.Generator, batch_size: int, length: int) -> dict:
        if not self.valid_length(length):
            raise ValueError(f"{self.name} recognition: length {length} lacks positive or negative strings")
        lang = self.language
        n_pos = (batch_size + 1) // 2
        ids = np.concatenate([lang.sample_ids(generator, n_pos, length, True),
                              lang.sample_ids(generator, batch_size - n_pos, length, False)])
        labels = np.concatenate([np.ones(n_pos, dtype=np.int64), np.zeros(batch_size - n_pos, dtype=np.int64)])
        order = generator.permutation(batch_size)
        ids, labels = ids[order], labels[order]
        tokens = np.concatenate([self.vocab.ids_of(ids), np.full((batch_size, 1), CLS)], axis=1)  # (B, n+1)
        output = torch.zeros(batch_size, length + 1, 2)
        output[torch.arange(batch_size), length, torch.from_numpy(labels)] = 1.0
        mask = torch.zeros(batch_size, length + 1, dtype=torch.bool)
        mask[:, length] = True
        return {"input": torch.from_numpy(tokens).long(), "output": output, "mask": mask,
                "label": torch.from_numpy(labels)}


class NextSymbolTask(Task):
    kind = "next_symbol"

    def __init__(self, language: Language) -> None:
        self.language = language
        self.name = language.name
        self.vocab = Vocab(language.alphabet)
        self.n_outputs = len(language.alphabet) + 1

    def valid_length(self, length: int) -> bool:
        return self.language.supports(length, True)

    def sample_batch(self, generator: np.random.Generator, batch_size: int, length: int) -> dict:
        if not self.valid_length(length):
            raise ValueError(f"{self.name} next_symbol: no positive strings of length {length}")
        lang = self.language
        ids = lang.sample_ids(generator, batch_size, length, True)  # (B, n)
        target = lang.next_symbol_table(ids)  # (B, n + 1, |Σ| + 1)
        tokens = np.concatenate([np.full((batch_size, 1), BOS), self.vocab.ids_of(ids)], axis=1)  # (B, n+1)
        return {"input": torch.from_numpy(tokens).long(),
                "output": torch.from_numpy(target).float(),
                "mask": torch.ones(batch_size, length + 1, dtype=torch.bool)}


def make_task(language: Language, kind: str) -> Task:
    if kind == "recognition":
        return RecognitionTask(language)
    if kind == "next_symbol":
        return NextSymbolTask(language)
    raise ValueError(f"unknown task kind {kind!r}; choose one of {KINDS}")
