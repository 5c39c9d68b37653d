"""RunConfig: the frozen description of one training run (task, model, lengths, optimiser).

Lengths: training strings have lengths drawn uniformly from the valid lengths in
``train_lengths`` = (lo, hi) (inclusive; e.g. only even lengths for Dyck); evaluation is per
length in ``test_lengths`` (invalid lengths for the task are dropped).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal

from ..languages import KINDS, get_task

Model = Literal["transformer", "lstm"]
Accuracy = Literal["per_string", "per_position"]


def parse_lengths(text: str | int | list | tuple) -> tuple[int, ...]:
    """"41-500" -> (41, …, 500); "2,4,8" and "51-100,101-150" also work; ints/lists pass through."""
    if isinstance(text, bool):
        raise ValueError(f"bad length range {text!r}")
    if isinstance(text, int):
        text = str(text)
    if isinstance(text, (list, tuple)):
        out: list[int] = []
        for part in text:
            out.extend(parse_lengths(part))
        return tuple(out)
    out = []
    for part in str(text).replace(" ", "").split(","):
        try:
            if "-" in part:
                lo, hi = (int(x) for x in part.split("-"))
            else:
                lo = hi = int(part)
        except ValueError:
            raise ValueError(f"bad length range {text!r}: use 'LO-HI' or comma-separated ints, e.g. '41-500'") from None
        if lo < 0 or hi < lo:
            raise ValueError(f"bad length range {part!r}: need 0 <= LO <= HI")
        out.extend(range(lo, hi + 1))
    return tuple(out)


@dataclass(frozen=True)
class RunConfig:
    """One run: train ``model`` on ``kind`` of language ``task`` and test per length."""

    task: str  # a name of expressivity.languages.REGISTRY: parity | dyck | tomita3 | reverse_string | …
    kind: str = "recognition"  # recognition | next_symbol (languages) | classification | transduction (function tasks)
    task_params: dict = field(default_factory=dict)  # e.g. {"k": 2, "max_depth": 3} for dyck
    model: Model = "transformer"  # transformer (the project's Transformer) | lstm (torch.nn.LSTM)
    layers: int = 2  # transformer blocks / stacked LSTM layers
    heads: int = 2  # attention heads (transformer only); d_head = d_model / heads
    d_model: int = 64  # residual width / LSTM hidden size
    d_mlp: int = 0  # FFN hidden width; 0 = 4·d_model
    train_lengths: tuple[int, int] = (1, 40)  # inclusive range of training lengths
    test_lengths: tuple[int, ...] = tuple(range(41, 501))  # evaluated one by one
    steps: int = 1000  # optimiser steps (one batch each)
    batch_size: int = 32
    lr: float = 1e-3  # Adam learning rate
    seed: int = 0  # model init and data; runs are deterministic given the seed
    positional: str = "sinusoidal"  # learned | sinusoidal | none (transformer)
    layer_norm: str = "pre"  # none | pre | post (transformer)
    ln_eps: float = 1e-5  # layer-norm ε
    log_length_scaling: bool = False  # attention logits × log n
    eval_batch: int = 32  # strings per test length
    accuracy: Accuracy = "per_string"  # next_symbol: string correct iff all positions right
    protocol: str = "custom"  # preset name this config came from (informational)
    grad_clip: float = 1.0  # max gradient norm (0 = off)
    checkpoint_every: int = 500  # steps between checkpoints (when an output dir is given)

    def __post_init__(self) -> None:
        def need(cond: bool, name: str, msg: str) -> None:
            if not cond:
                raise ValueError(f"RunConfig.{name} {msg}, got {getattr(self, name)!r}")

        object.__setattr__(self, "task_params", dict(self.task_params or {}))
        object.__setattr__(self, "train_lengths", tuple(int(x) for x in self.train_lengths))
        object.__setattr__(self, "test_lengths", tuple(int(x) for x in self.test_lengths))
        need(self.kind in KINDS, "kind", f"must be one of {KINDS}")
        need(self.model in ("transformer", "lstm"), "model", "must be 'transformer' or 'lstm'")
        for name in ("layers", "heads", "d_model", "steps", "batch_size", "eval_batch", "checkpoint_every"):
            v = getattr(self, name)
            need(isinstance(v, int) and not isinstance(v, bool) and v >= 1, name, "must be a positive int")
        need(isinstance(self.d_mlp, int) and self.d_mlp >= 0, "d_mlp", "must be an int >= 0")
        need(self.d_model % self.heads == 0, "d_model", f"must be divisible by heads = {self.heads}")
        need(self.lr > 0, "lr", "must be > 0")
        need(isinstance(self.seed, int) and self.seed >= 0, "seed", "must be an int >= 0")
        need(self.positional in ("learned", "sinusoidal", "none"), "positional", "must be learned|sinusoidal|none")
        need(self.layer_norm in ("none", "pre", "post"), "layer_norm", "must be none|pre|post")
        need(self.ln_eps >= 0, "ln_eps", "must be >= 0")
        need(self.accuracy in ("per_string", "per_position"), "accuracy", "must be per_string|per_position")
        need(len(self.train_lengths) == 2 and 0 <= self.train_lengths[0] <= self.train_lengths[1],
             "train_lengths", "must be (lo, hi) with 0 <= lo <= hi")
        need(len(self.test_lengths) >= 1, "test_lengths", "must not be empty")
        task = self.make_task()  # raises ValueError for unknown tasks / bad params / a kind the task lacks
        if self.model == "transformer" and task.n_tokens(self.max_length) > self.max_length + 2:
            raise ValueError(f"RunConfig.kind {self.kind!r}: {self.task} needs {task.n_tokens(self.max_length)} "
                             f"positions at length {self.max_length}, but the transformer's n_ctx is "
                             f"max_length + 2 = {self.max_length + 2}; use model='lstm'")
        lo, hi = self.train_lengths
        if not task.valid_lengths(range(lo, hi + 1)):
            raise ValueError(f"RunConfig.train_lengths {self.train_lengths} holds no valid length for "
                             f"{self.task} {self.kind}")
        if not task.valid_lengths(self.test_lengths):
            raise ValueError(f"RunConfig.test_lengths holds no valid length for {self.task} {self.kind}")

    def make_task(self):
        return get_task(self.task, self.kind, **self.task_params)

    @property
    def max_length(self) -> int:
        return max(self.train_lengths[1], max(self.test_lengths))

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["train_lengths"] = list(self.train_lengths)
        d["test_lengths"] = list(self.test_lengths)
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunConfig:
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"RunConfig: unknown fields {sorted(unknown)}; allowed: {sorted(known)}")
        data = dict(data)
        for key in ("train_lengths", "test_lengths"):
            if key in data and isinstance(data[key], (str, int)):
                data[key] = parse_lengths(data[key])
        if "train_lengths" in data and len(data["train_lengths"]) != 2:
            lengths = data["train_lengths"]
            data["train_lengths"] = (min(lengths), max(lengths))
        return cls(**data)

    @property
    def run_id(self) -> str:
        """Stable id: sha256 of the canonical JSON config (first 16 hex digits)."""
        return hashlib.sha256(self.to_json().encode()).hexdigest()[:16]

    def label(self) -> str:
        params = ",".join(f"{k}={v}" for k, v in sorted(self.task_params.items()))
        return (f"{self.task}{'(' + params + ')' if params else ''}/{self.kind}/{self.model}"
                f" L{self.layers} d{self.d_model} seed{self.seed}")
