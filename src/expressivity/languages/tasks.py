"""Tasks on a language, in the style of the DeepMind formal-language benchmark.

``task.sample_batch(generator, batch_size, length)`` (generator: a numpy Generator, the only
source of randomness) returns ``{"input": LongTensor (B, T), "output": FloatTensor (B, T, C),
"mask": BoolTensor (B, T)}`` where output[b, t] is the target distribution over C classes at
position t and mask marks the scored positions. One string length per batch (no padding).

- ``recognition``: input = s_1 … s_n CLS (T = n + 1); C = 2 (class 1 = s ∈ L); only the CLS
  position is scored; each batch holds ⌊B/2⌋ negatives and ⌈B/2⌉ positives in random order
  (negatives include near-misses, see :meth:`Language.sample`; for a FLaRe language, their
  negatives, with ``num_edits`` in the batch).
- ``next_symbol``: language modelling on positives: input = BOS s_1 … s_n (T = n + 1);
  C = |Σ| + 1 (last class = EOS); output[b, t] = p*(· | s_1 … s_t), the optimal next-symbol
  distribution of the language's generative process; every position is scored.
- ``classification`` (function tasks with C classes, e.g. modular arithmetic): input =
  s_1 … s_n CLS (T = n + 1); C = the task's number of classes; only CLS is scored; inputs
  come from the task's own input distribution (uniform strings for parity check, random
  expressions for modular arithmetic, …), not balanced by class.
- ``transduction`` (function tasks with an output string, e.g. reverse string): input =
  s_1 … s_n EOS CLS^m with m = ``output_length(n)`` (T = n + 1 + m): EOS separates input
  from output, and the model writes output symbol j at the j-th CLS placeholder, as the
  benchmark's models predict the output after the input. C = |Γ| (+ 1 for END when the
  output length varies); output[b, n + 1 + j] is the one-hot target y_j, mask marks the
  scored placeholders (up to and including END). With ``computation_steps`` c > 0 the EOS is
  repeated c more times before the placeholders, s_1 … s_n EOS^{1+c} CLS^m (T = n + 1 + c + m):
  steps without input or output in which a recurrent model can act on its memory (Delétang et
  al.'s ``computation_steps_mult`` appends c·n such tokens; here c is a count). A Tape-RNN needs
  one for Duplicate String: with only the EOS step between input and output, no one-hot tape
  program exists (:mod:`expressivity.report.chomsky_claims`).

Languages (:class:`Language`) support ``recognition`` and ``next_symbol``; function tasks
(:class:`FunctionTask`) support exactly their own kind.
"""

from __future__ import annotations

import numpy as np
import torch

from .base import Language, Task
from .flare.base import FlareLanguage
from .function import Classification, FunctionTask, Transduction, check_int
from .vocab import BOS, CLS, EOS_TOKEN, Vocab, token_layout

KINDS = ("recognition", "next_symbol", "classification", "transduction")
LANGUAGE_KINDS = ("recognition", "next_symbol")


def cls_tokens(vocab: Vocab, ids: np.ndarray) -> np.ndarray:
    """Token ids s_1 … s_n CLS (B, n + 1) of symbol indices ids (B, n): what a recogniser or
    classifier reads (the label at CLS)."""
    return token_layout(vocab.ids_of(ids), suffix=(CLS,))


def bos_tokens(vocab: Vocab, ids: np.ndarray) -> np.ndarray:
    """Token ids BOS s_1 … s_n (B, n + 1) of symbol indices ids (B, n): what a next-symbol
    model reads (position t predicts s_{t+1}, the last one EOS)."""
    return token_layout(vocab.ids_of(ids), prefix=(BOS,))


def cls_batch(vocab: Vocab, ids: np.ndarray, labels: np.ndarray, n_classes: int) -> dict:
    """The batch of a label read at CLS: input s_1 … s_n CLS (B, n+1), a one-hot target over
    ``n_classes`` at the CLS position only, mask on that position; ids (B, n), labels (B,)."""
    B, n = ids.shape
    tokens = cls_tokens(vocab, ids)  # (B, n+1)
    output = np.zeros((B, n + 1, n_classes), dtype=np.float32)  # built in numpy: fewer calls per batch
    output[np.arange(B), n, labels] = 1.0
    mask = np.zeros((B, n + 1), dtype=bool)
    mask[:, n] = True
    return {"input": torch.from_numpy(tokens).long(), "output": torch.from_numpy(output), "mask": torch.from_numpy(mask),
            "label": torch.from_numpy(labels)}


class _LanguageTask(Task):
    """A task over a :class:`Language`: the vocabulary of its alphabet."""

    def __init__(self, language: Language) -> None:
        self.language = language
        self.name = language.name
        self.vocab = Vocab(language.alphabet)


class RecognitionTask(_LanguageTask):
    kind = "recognition"
    n_outputs = 2

    def valid_length(self, length: int) -> bool:
        lang = self.language
        return lang.supports(length, True) and lang.supports(length, False)

    def sample_batch(self, generator: np.random.Generator, batch_size: int, length: int) -> dict:
        if not self.valid_length(length):
            raise ValueError(f"{self.name} recognition: length {length} lacks positive or negative strings")
        ids = self.language.sample_mixed_ids(generator, batch_size, length)  # ⌈B/2⌉ members first
        n_pos = (batch_size + 1) // 2
        labels = np.concatenate([np.ones(n_pos, dtype=np.int64), np.zeros(batch_size - n_pos, dtype=np.int64)])
        order = generator.permutation(batch_size)
        ids, labels = ids[order], labels[order]
        return cls_batch(self.vocab, ids, labels, 2)


class FlareRecognitionTask(RecognitionTask):
    """Recognition on a FLaRe language: its negatives (uniform strings and perturbed
    positives, :meth:`~.flare.base.FlareLanguage.sample_negatives`), and the batch also carries
    ``num_edits`` (B,): the edits that made each negative (−1: a uniform string; 0: a positive)."""

    def sample_batch(self, generator: np.random.Generator, batch_size: int, length: int) -> dict:
        if not self.valid_length(length):
            raise ValueError(f"{self.name} recognition: length {length} lacks positive or negative strings")
        lang = self.language
        n_pos = (batch_size + 1) // 2
        neg, edits = lang.sample_negatives(generator, batch_size - n_pos, length)
        ids = np.concatenate([lang.sample_ids(generator, n_pos, length, True), neg])
        labels = np.r_[np.ones(n_pos, dtype=np.int64), np.zeros(batch_size - n_pos, dtype=np.int64)]
        edits = np.r_[np.zeros(n_pos, dtype=np.int64), edits]
        order = generator.permutation(batch_size)
        batch = cls_batch(self.vocab, ids[order], labels[order], 2)
        return batch | {"num_edits": torch.from_numpy(edits[order])}


class NextSymbolTask(_LanguageTask):
    kind = "next_symbol"

    def __init__(self, language: Language) -> None:
        super().__init__(language)
        self.n_outputs = len(language.alphabet) + 1

    def valid_length(self, length: int) -> bool:
        return self.language.supports(length, True)

    def sample_batch(self, generator: np.random.Generator, batch_size: int, length: int) -> dict:
        if not self.valid_length(length):
            raise ValueError(f"{self.name} next_symbol: no positive strings of length {length}")
        lang = self.language
        ids = lang.sample_ids(generator, batch_size, length, True)  # (B, n)
        target = lang.next_symbol_table(ids)  # (B, n + 1, |Σ| + 1)
        tokens = bos_tokens(self.vocab, ids)  # (B, n+1)
        return {"input": torch.from_numpy(tokens).long(),
                "output": torch.from_numpy(target).float(),
                "mask": torch.ones(batch_size, length + 1, dtype=torch.bool)}


class _FunctionTask(Task):
    """A task over a :class:`~.function.FunctionTask` (its source, also as ``language``): the
    vocabulary of its alphabet, one output per class, the lengths the function supports."""

    def __init__(self, function: Classification | Transduction) -> None:
        self.language = function  # the task's source (a FunctionTask here)
        self.function = function
        self.name = function.name
        self.vocab = Vocab(function.alphabet)
        self.n_outputs = function.n_classes

    def valid_length(self, length: int) -> bool:
        return self.function.supports(length)


class ClassificationTask(_FunctionTask):
    kind = "classification"

    def sample_batch(self, generator: np.random.Generator, batch_size: int, length: int) -> dict:
        if not self.valid_length(length):
            raise ValueError(f"{self.name} classification: no inputs of length {length}")
        ids = self.function.sample_ids(generator, batch_size, length)  # (B, n)
        labels = self.function.outputs_ids(ids)  # (B,)
        return cls_batch(self.vocab, ids, labels, self.n_outputs)


class TransductionTask(_FunctionTask):
    kind = "transduction"

    def __init__(self, function: Transduction, computation_steps: int = 0) -> None:
        super().__init__(function)
        self.computation_steps = check_int(function.name, "computation_steps", computation_steps, 0, 1000)

    def n_tokens(self, length: int) -> int:
        """Sequence length T = n + 1 + c + output_length(n) (c = ``computation_steps``)."""
        return length + 1 + self.computation_steps + self.function.output_length(length)

    def sample_batch(self, generator: np.random.Generator, batch_size: int, length: int) -> dict:
        if not self.valid_length(length):
            raise ValueError(f"{self.name} transduction: no inputs of length {length}")
        fn = self.function
        ids = fn.sample_ids(generator, batch_size, length)  # (B, n)
        targets = fn.outputs_ids(ids)  # (B, m), −1 = unscored
        m, first = targets.shape[1], length + 1 + self.computation_steps  # first placeholder
        tokens = token_layout(self.vocab.ids_of(ids), suffix=(EOS_TOKEN,) * (1 + self.computation_steps)
                              + (CLS,) * m)  # (B, n+1+c+m)
        T = first + m
        scored = np.zeros((batch_size, T), dtype=bool)
        scored[:, first:] = targets >= 0
        onehot = np.zeros((batch_size, T, self.n_outputs), dtype=np.float32)
        b, j = np.nonzero(targets >= 0)
        onehot[b, first + j, targets[b, j]] = 1.0
        return {"input": torch.from_numpy(tokens).long(), "output": torch.from_numpy(onehot),
                "mask": torch.from_numpy(scored)}


def make_task(source: Language | FunctionTask, kind: str, computation_steps: int = 0) -> Task:
    """The task of ``kind`` on a language or a function task (``computation_steps``: a
    transduction's, see the module docstring); one-line ValueError otherwise."""
    if kind not in KINDS:
        raise ValueError(f"unknown task kind {kind!r}; choose one of {KINDS}")
    if computation_steps and kind != "transduction":
        raise ValueError(f"computation_steps are steps between a transduction's input and output; "
                         f"kind {kind!r} has none (leave it at 0)")
    if isinstance(source, FunctionTask):
        if kind != source.kind:
            raise ValueError(f"{source.name} is a {source.kind} task; kind {kind!r} is not supported "
                             f"(choose {source.kind!r})")
        return ClassificationTask(source) if kind == "classification" else TransductionTask(source, computation_steps)
    if kind not in LANGUAGE_KINDS:
        raise ValueError(f"{source.name} is a language; kind {kind!r} is not supported (choose one of {LANGUAGE_KINDS})")
    if kind == "recognition":
        return FlareRecognitionTask(source) if isinstance(source, FlareLanguage) else RecognitionTask(source)
    return NextSymbolTask(source)
