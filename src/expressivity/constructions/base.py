"""Construction: a hand-built :class:`~expressivity.transformer.Transformer` for one language.

A construction owns its input encoding (which tokens go where, and for the Chiang & Cholak
models the length-dependent positional features), the index of the token whose output is
read, and the read-out convention: the model's output at that token is a logit z, and
P(s ∈ L) = σ(z) = 1 / (1 + e^(−z)). The model *accepts* s iff z > 0.

Cross-entropy (bits per string) of a labelled set {(s, y)}:
    CE = mean −log2 P(y | s),  P(1 | s) = σ(z),  P(0 | s) = σ(−z),
computed as softplus(∓z)/ln 2 so it stays accurate for |z| ≫ 1 and for z → 0 (CE → 1 bit).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np
import torch
from torch import Tensor

from ..languages import Language
from ..memory import check_memory, chunk_rows
from ..pretrained import WEIGHTS_NAME, PretrainedMixin, jsonable, record
from ..rules import as_real_array, parse_lengths
from ..transformer import Transformer
from ..transformer.config import Attention

AttentionKind = Attention  # the transformer's one attention type

# bytes of the (B, H, T, T) float64 score tensor per forward chunk (2e6 entries; guard for n = 1000)
_CHUNK_BYTES = 8 * 2_000_000


class Encoded(NamedTuple):
    """What the transformer reads for a batch of strings."""

    inputs: Tensor  # token ids (B, T) long, or continuous features (B, T, d_input)
    key_mask: Tensor | None  # (B, T) bool, True = real token; None = no masking
    read: Tensor  # (B,) long: position whose output is the logit z


@runtime_checkable
class Encoder(Protocol):
    """Strings into a model: what every analysis in ``limits/`` takes.

    Constructions (hand-built and compiled), trained checkpoints
    (:class:`~expressivity.limits.trained.TrainedModel`) and plain token-id transformers
    (wrapped by one adapter in ``limits/``) all provide it.
    ``encode(strings)`` maps strings of one length to :class:`Encoded`.
    """

    @property
    def transformer(self) -> Transformer: ...

    @property
    def language(self) -> Language: ...

    def encode(self, strings: list[str]) -> Encoded: ...


@dataclass(frozen=True, eq=False)
class Construction(PretrainedMixin):
    """A hand-built transformer recognising ``language``.

    ``encoder`` maps a list of strings (all of one length) to :class:`Encoded`; the model's
    output channel 0 at position ``read`` is the logit z.
    """

    name: str  # registry name ("parity", "first", "parity-compiled", "dyck")
    transformer: Transformer  # the one model class of the project
    attention: AttentionKind  # "hardmax" | "softmax" (equals transformer.cfg.attention)
    language: Language  # the language recognised (membership oracle, alphabet)
    encoder: Callable[[list[str]], Encoded] = field(repr=False)
    params: dict = field(default_factory=dict)  # the parameters the registry was called with
    description: str = ""  # one line: the idea of the construction
    info: dict = field(default_factory=dict)  # construction-specific facts (closed forms, sizes)
    n_tokens: Callable[[int], int] | None = field(default=None, repr=False)  # string length n -> T
    max_length: int | None = None  # longest string the construction is built for (None: any)

    # save_pretrained / from_pretrained (expressivity.pretrained): config.json's "construction"
    # is the registry name and parameters; the encoder is code, rebuilt from the registry
    hub_kind = "construction"
    hub_keys = frozenset({"construction"})

    def _hub_records(self):
        from ..transformer.hub import state, transformer_records
        from . import REGISTRY

        rec = {"name": self.name, "params": jsonable(self.params, "construction params")}
        if self.name not in REGISTRY:
            raise ValueError(f"construction {self.name!r} is not in the registry; it cannot be rebuilt on load")
        return {**transformer_records(self.transformer), "construction": rec}, {WEIGHTS_NAME: state(self.transformer)}

    @classmethod
    def _from_hub(cls, config, directory):
        """Rebuilt from the registry with the saved parameters, then given the saved weights (a
        registry that builds another config than the saved one is refused)."""
        import dataclasses

        from ..pretrained import CONFIG_NAME
        from ..transformer.hub import transformer_from_config
        from . import REGISTRY

        tr = transformer_from_config(config, directory)
        where = directory / CONFIG_NAME
        rec = record(config["construction"], {"name", "params"}, where, "construction")
        name, params = rec["name"], rec["params"]
        if not isinstance(name, str) or name not in REGISTRY:
            raise ValueError(f"{where}: unknown construction {name!r}; choose one of {sorted(REGISTRY)}")
        if not isinstance(params, dict):
            raise ValueError(f"{where}: construction.params must be an object, got {type(params).__name__}")
        try:
            rebuilt = REGISTRY[name](**params)
        except TypeError as exc:
            raise ValueError(f"{where}: construction.params of {name!r}: {exc}") from None
        except ValueError as exc:
            raise ValueError(f"{where}: construction.params: {exc}") from None
        if rebuilt.transformer.cfg != tr.cfg:
            raise ValueError(f"{where}: construction {name!r} with {params} builds a different transformer than the "
                             "saved one (config differs); it was saved by another version")
        return dataclasses.replace(rebuilt, transformer=tr)

    def __post_init__(self) -> None:
        if self.attention != self.transformer.cfg.attention:
            raise ValueError(f"Construction.attention={self.attention!r} but the transformer uses "
                             f"{self.transformer.cfg.attention!r}")

    # ------------------------------------------------------------------ encoding
    @property
    def alphabet(self) -> str:
        return self.language.alphabet

    def _check_strings(self, strings) -> list[str]:
        if isinstance(strings, str):
            raise ValueError("strings: pass a list of strings, not a single string")  # noqa: TRY004 (house rule: ValueError)
        try:
            strings = list(strings)
        except TypeError:
            raise ValueError(f"strings: expected a list of strings, got {type(strings).__name__}") from None
        for s in strings:
            if not isinstance(s, str):
                raise ValueError(f"{self.name}: strings must be str, got {type(s).__name__}")  # noqa: TRY004
        bad = set("".join(strings)) - set(self.alphabet)
        if bad:
            raise ValueError(f"{self.name}: symbols {sorted(bad)} are not in the alphabet {self.alphabet!r}")
        for n in sorted({len(s) for s in strings}):
            self._check_length(n)
        return strings

    def _check_length(self, n: int, name: str = "strings") -> None:
        if self.max_length is not None and n > self.max_length:
            raise ValueError(f"{self.name}: length {n} ({name}) exceeds max_length = {self.max_length}; "
                             "build the construction with a larger max_length")

    def tokens(self, n: int) -> int:
        """Number of tokens T the model reads for a string of length n."""
        return self.n_tokens(n) if self.n_tokens is not None else n + 1

    def _bytes_per_string(self, n: int) -> float:
        """Working set of one string of length n in a forward pass (float64): attention scores,
        pattern and a temporary (3·H·T²) plus the residual stream and FFN activations."""
        cfg = self.transformer.cfg
        T = self.tokens(n)
        return 8.0 * T * (3.0 * cfg.n_heads * T + 6.0 * cfg.d_model + 2.0 * cfg.d_mlp + (cfg.d_input or 1))

    def check_lengths(self, lengths, count: int = 1, name: str = "lengths") -> tuple[int, ...]:
        """``lengths`` parsed (:func:`~expressivity.rules.parse_lengths`) and checked: each n
        within ``max_length``, and ``count`` strings of each length (sampled, encoded and run one
        chunk at a time) within the memory budget. Returns the lengths."""
        ns = parse_lengths(lengths, name)
        for n in ns:
            self._check_length(n, name)
            need = self._bytes_per_string(n) + count * 8.0 * (3 * n + self.tokens(n) * (self.transformer.cfg.d_input or 1))
            check_memory(need, f"{self.name} on {count} string(s) of length {n}",
                         hint=f"use smaller {name} or fewer strings")
        return ns

    def encode(self, strings: list[str]) -> Encoded:
        """Encode strings of ONE common length (see :meth:`logits` for mixed lengths)."""
        strings = self._check_strings(strings)
        if len({len(s) for s in strings}) > 1:
            raise ValueError("encode needs strings of one length; logits() groups mixed lengths")
        return self.encoder(strings)

    # ------------------------------------------------------------------ evaluation
    def logits(self, strings: list[str]) -> np.ndarray:
        """z per string, (B,) float64. Strings are grouped by length and run in chunks."""
        strings = self._check_strings(strings)
        out = np.zeros(len(strings), dtype=np.float64)
        by_len: dict[int, list[int]] = {}
        for i, s in enumerate(strings):
            by_len.setdefault(len(s), []).append(i)
        model = self.transformer
        for n in by_len:
            check_memory(self._bytes_per_string(n), f"{self.name} on a string of length {n}",
                         hint="use shorter strings")
        with torch.no_grad():
            for _n, idx in sorted(by_len.items()):
                T = self.encoder([strings[idx[0]]]).inputs.shape[1]
                chunk = chunk_rows(8 * T * T * model.cfg.n_heads, budget=_CHUNK_BYTES)
                for start in range(0, len(idx), chunk):
                    part = idx[start:start + chunk]
                    enc = self.encoder([strings[i] for i in part])
                    y = model(enc.inputs, key_mask=enc.key_mask)  # (B, T, d_out)
                    z = y[torch.arange(len(part)), enc.read, 0]  # (B,)
                    out[part] = z.double().cpu().numpy()
        return out

    def accept_probability(self, strings: list[str]) -> np.ndarray:
        """P(s ∈ L) = σ(z) per string, (B,)."""
        z = self.logits(strings)
        return 0.5 * (1.0 + np.tanh(0.5 * z))  # σ(z), overflow-free

    def predict(self, strings: list[str]) -> np.ndarray:
        """Model decision z > 0, (B,) bool."""
        return self.logits(strings) > 0

    def cross_entropy_bits(self, strings: list[str], labels=None) -> float:
        """Mean −log2 P(label | s); labels default to the language's exact membership."""
        strings = self._check_strings(strings)
        if not strings:
            raise ValueError("strings: no strings given (the mean cross-entropy of none is undefined)")
        if labels is not None:
            labels = check_labels(labels, len(strings))
        z = self.logits(strings)
        if labels is None:
            labels = np.array([self.language.accepts(s) for s in strings], dtype=bool)
        return ce_bits_from_logits(z, labels)

    def summary(self) -> dict:
        """Name, parameters and sizes, for tables and reports."""
        cfg = self.transformer.cfg
        return {
            "name": self.name,
            "params": dict(self.params),
            "attention": self.attention,
            "n_layers": cfg.n_layers,
            "n_heads": cfg.n_heads,
            "d_model": cfg.d_model,
            "d_mlp": cfg.d_mlp,
            "layer_norm": cfg.layer_norm,
            "n_params": self.transformer.n_params(),
            "n_params_nonzero": self.transformer.n_params(nonzero=True),
            **self.info,
        }


def ce_bits_from_logits(z, labels) -> float:
    """Mean −log2 P(y | s) for logits z (B,) and labels y (B,): mean softplus(∓z)/ln 2.

    Labels must be 0/1 or bools (:func:`check_labels`); logits must be finite, at least one."""
    z = as_real_array(z, "logits", ndim=1)
    if not len(z):
        raise ValueError("logits: none given (the mean cross-entropy of none is undefined)")
    y = check_labels(labels, len(z))
    margin = np.where(y, z, -z)
    return float(np.mean(np.logaddexp(0.0, -margin)) / math.log(2.0))


def check_labels(labels, count: int) -> np.ndarray:
    """``labels`` as a bool array of ``count`` entries; only 0/1 (or False/True) are labels —
    2, 0.5 or NaN are refused, never cast to True."""
    y = np.asarray(labels)
    if y.dtype == bool:
        out = y
    elif y.dtype.kind in "iuf":
        if not np.isin(y, (0, 1)).all():
            bad = y[~np.isin(y, (0, 1))].ravel()[0].item()
            raise ValueError(f"labels must be 0/1 or booleans (1 = member), got {bad!r}")
        out = y.astype(bool)
    else:
        raise ValueError(f"labels must be 0/1 or booleans (1 = member), got dtype {y.dtype}")
    if out.shape != (count,):
        raise ValueError(f"labels must have shape ({count},), got {out.shape}")
    return out


def ce_bits_closed_form(margin: float) -> float:
    """CE in bits when every string gets logit ±margin on the correct side: log2(1 + e^(−m))."""
    return float(np.logaddexp(0.0, -margin) / math.log(2.0))
