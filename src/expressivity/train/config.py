"""RunConfig: the frozen description of one training run (task, model, lengths, optimiser).

Lengths: training strings have lengths drawn uniformly from the valid lengths in
``train_lengths`` = (lo, hi) (inclusive; e.g. only even lengths for Dyck); evaluation is per
length in ``test_lengths`` (invalid lengths for the task are dropped). Both are read with the
one parser of lengths, :func:`expressivity.rules.parse_lengths` / ``parse_length_range``
("1-40", "41-500", "51-100,101-150", 12, (1, 40)), however the config is built; every other
field is checked with its name (``RunConfig.grad_clip must be >= 0 …``).

Initialisation: ``init = "random"`` (the model's own seeded init) or ``"construction:NAME"``
(fine-tuning from a hand-built transformer of :mod:`expressivity.constructions`, built with
``init_params``, every weight perturbed by N(0, ``perturb``²); see
:mod:`.models.construction`). A construction fixes the architecture, so the size fields
(layers, heads, d_model, d_mlp, positional, layer_norm, ln_eps) are not used; it needs
``model="transformer"``, ``kind="recognition"`` and the construction's language as the task.
Memory: ``memory_size`` is the number of cells of the stack (``stack_rnn``, ``stack_lstm``) or
tape (``tape_rnn``); 0 keeps the models' own sizes (30 stack cells, 40 tape cells: Delétang et
al.'s code). A stack of K cells holds K symbols, so e.g. a Stack-RNN reverses at most K of
them; a model without memory takes no ``memory_size``. ``eval_memory_size`` (0 = the same)
gives the model another number of cells when it is evaluated (test lengths and the fit
range): memory is part of the machine, not a learned weight, so a model trained with the
cells its training strings need can be tested with the cells longer strings need.
Auxiliary losses (Butoi et al. 2025): ``aux = ("lm", "next_symbol")`` adds language
modelling and/or next-symbol prediction on the positive strings to a recognizer, each with
coefficient 1, or ``{"lm": 0.5}`` (:mod:`.recognizers`); it needs a causal model — the
recurrent ones, or a transformer with ``causal = True`` (a causal attention mask for a
recognizer or classifier too; next-symbol transformers are always causal).
Device and precision (:mod:`.devices`): ``device`` = auto | cpu | cuda | cuda:N | mps says
where the run trains and is never part of :meth:`to_dict` (nor of the run id): a run resumed
on another device is the same run. ``dtype`` = float32 | bfloat16 (autocast, transformer only)
changes the numbers, so bfloat16 is part of the id.
``init``, ``init_params``, ``perturb``, ``memory_size``, ``eval_memory_size``, ``aux``, ``causal`` and ``dtype`` at their
defaults are left out of :meth:`to_dict`, so the run ids of configs written before they existed
do not change.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal

from ..constructions import REGISTRY as CONSTRUCTIONS
from ..languages import KINDS, REGISTRY, get_task, kinds_of
from ..rules import (
    check_choice,
    check_float,
    check_int,
    parse_length_range,
    parse_lengths,  # noqa: F401  (re-exported: the one parser of lengths)
)
from ..transformer.config import LAYER_NORMS
from ..transformer.positions import POSITIONALS
from .devices import DTYPES, check_device_name
from .recognizers import check_aux, normalize_aux

Model = Literal["transformer", "rnn", "lstm", "stack_rnn", "stack_lstm", "tape_rnn"]
MODELS: tuple[str, ...] = ("transformer", "rnn", "lstm", "stack_rnn", "stack_lstm", "tape_rnn")  # see train/models/
MAX_LENGTH = 10**7  # longest train/test length accepted (far past what fits in memory anyway)
MAX_TEST_LENGTHS = 100_000  # test lengths per run (each is evaluated separately)
MAX_SIZE = {"layers": 1024, "heads": 4096, "d_model": 2**20, "d_mlp": 2**24, "steps": 10**9,
            "batch_size": 2**20, "eval_batch": 2**20, "checkpoint_every": 10**9}
Accuracy = Literal["per_string", "per_position"]
INIT_CONSTRUCTION = "construction:"  # init = "construction:NAME"
_OMITTED_DEFAULTS = {"init": "random", "init_params": {}, "perturb": 0.0, "memory_size": 0, "eval_memory_size": 0, "aux": {},
                     "causal": False, "dtype": "float32"}  # dropped from to_dict at these values
PLACE_FIELDS = ("device",)  # where a run trains, not what it is: never in to_dict / the run id
MEMORY_MODELS: tuple[str, ...] = ("stack_rnn", "stack_lstm", "tape_rnn")  # the models with a memory_size


def init_choices() -> list[str]:
    """Valid values of RunConfig.init."""
    return ["random"] + [INIT_CONSTRUCTION + name for name in sorted(CONSTRUCTIONS)]


@dataclass(frozen=True)
class RunConfig:
    """One run: train ``model`` on ``kind`` of language ``task`` and test per length."""

    task: str  # a name of expressivity.languages.REGISTRY: parity | dyck | tomita3 | reverse_string | …
    kind: str = "recognition"  # recognition | next_symbol (languages) | classification | transduction (function tasks)
    task_params: dict = field(default_factory=dict)  # e.g. {"k": 2, "max_depth": 3} for dyck
    model: Model = "transformer"  # transformer | rnn (Elman) | lstm | stack_rnn | stack_lstm | tape_rnn (train/models/)
    layers: int = 2  # transformer blocks / stacked RNN or LSTM layers (stack_rnn, stack_lstm, tape_rnn: one core)
    heads: int = 2  # attention heads (transformer only); d_head = d_model / heads
    d_model: int = 64  # residual width / hidden size of the recurrent models
    d_mlp: int = 0  # FFN hidden width; 0 = 4·d_model
    train_lengths: tuple[int, int] = (1, 40)  # inclusive range of training lengths
    test_lengths: tuple[int, ...] = tuple(range(41, 501))  # evaluated one by one
    steps: int = 1000  # optimiser steps (one batch each)
    batch_size: int = 32
    lr: float = 1e-3  # Adam learning rate
    seed: int = 0  # model init and data; runs are deterministic given the seed
    init: str = "random"  # random | construction:NAME (parity, first, dyck, …): start from hand-built weights
    init_params: dict = field(default_factory=dict)  # parameters of the construction, e.g. {"layer_norm": True}
    perturb: float = 0.0  # σ of the Gaussian noise added to every weight of the construction
    positional: str = "sinusoidal"  # none | sinusoidal | learned | relative | rope | alibi | i_over_n (transformer)
    layer_norm: str = "pre"  # none | pre | post (transformer)
    ln_eps: float = 1e-5  # layer-norm ε
    log_length_scaling: bool = False  # attention logits × log n
    eval_batch: int = 32  # strings per test length
    accuracy: Accuracy = "per_string"  # next_symbol: string correct iff all positions right
    protocol: str = "custom"  # preset name this config came from (informational)
    grad_clip: float = 1.0  # max gradient norm (0 = off)
    checkpoint_every: int = 500  # steps between checkpoints (when an output dir is given)
    memory_size: int = 0  # cells of the stack / tape of stack_rnn, stack_lstm, tape_rnn; 0 = the model's own
    eval_memory_size: int = 0  # cells of that stack / tape when evaluated (test and fit lengths); 0 = memory_size's
    aux: dict = field(default_factory=dict)  # auxiliary losses of a recognizer: ("lm", "next_symbol") or {"lm": 0.5}
    causal: bool = False  # transformer: causal attention for recognition/classification too (next_symbol always is)
    device: str = "auto"  # auto | cpu | cuda | cuda:N | mps (train/devices.py); not part of the run id
    dtype: str = "float32"  # float32 | bfloat16 (transformer forward under autocast)

    def __post_init__(self) -> None:
        def need(cond: bool, name: str, msg: str) -> None:
            if not cond:
                raise ValueError(f"RunConfig.{name} {msg}, got {getattr(self, name)!r}")

        def put(name: str, value) -> None:
            object.__setattr__(self, name, value)

        def field_name(name: str) -> str:
            return f"RunConfig.{name}"

        need(isinstance(self.task, str) and self.task != "", "task", "must be a language name")
        if not isinstance(self.task_params, Mapping) and self.task_params is not None:
            raise ValueError(f"RunConfig.task_params must be a mapping of language parameters "
                             f"(e.g. {{'k': 2}}), got {self.task_params!r}")
        put("task_params", dict(self.task_params or {}))
        if not all(isinstance(k, str) for k in self.task_params):
            raise ValueError(f"RunConfig.task_params keys must be parameter names, got {list(self.task_params)!r}")
        put("train_lengths", parse_length_range(self.train_lengths, field_name("train_lengths")))
        put("test_lengths", parse_lengths(self.test_lengths, field_name("test_lengths"),
                                                 max_count=MAX_TEST_LENGTHS))
        for name in ("train_lengths", "test_lengths"):
            top = max(getattr(self, name))
            if top > MAX_LENGTH:
                raise ValueError(f"RunConfig.{name}: length {top} is over the limit of {MAX_LENGTH:,} "
                                 "(no model here trains or runs at such lengths)")
        check_choice(self.kind, "RunConfig.kind", KINDS)
        check_choice(self.model, "RunConfig.model", MODELS)
        for name in ("layers", "heads", "d_model", "steps", "batch_size", "eval_batch", "checkpoint_every"):
            put(name, check_int(getattr(self, name), field_name(name), min=1, max=MAX_SIZE[name]))
        put("d_mlp", check_int(self.d_mlp, "RunConfig.d_mlp", min=0, max=MAX_SIZE["d_mlp"]))
        put("memory_size", check_int(self.memory_size, "RunConfig.memory_size (stack / tape cells; 0 = the "
                                            "model's own)", min=0, max=MAX_LENGTH))
        put("eval_memory_size", check_int(self.eval_memory_size, "RunConfig.eval_memory_size (stack / tape cells "
                                                 "at evaluation; 0 = memory_size's)", min=0, max=MAX_LENGTH))
        for name in ("memory_size", "eval_memory_size"):
            if getattr(self, name) and self.model not in MEMORY_MODELS:
                raise ValueError(f"RunConfig.{name} sizes the stack or tape of {', '.join(MEMORY_MODELS)}; model "
                                 f"{self.model!r} has none (leave {name} at 0)")
        put("seed", check_int(self.seed, "RunConfig.seed", min=0, max=2**63 - 1))
        need(self.d_model % self.heads == 0, "d_model", f"must be divisible by heads = {self.heads}")
        put("lr", check_float(self.lr, "RunConfig.lr", min=0, min_open=True))
        put("ln_eps", check_float(self.ln_eps, "RunConfig.ln_eps", min=0))
        put("grad_clip", check_float(self.grad_clip, "RunConfig.grad_clip (max gradient norm; 0 = off)", min=0))
        need(isinstance(self.log_length_scaling, bool), "log_length_scaling", "must be True or False")
        put("aux", normalize_aux(self.aux))
        need(isinstance(self.causal, bool), "causal", "must be True or False")
        if self.causal and self.model != "transformer":
            raise ValueError(f"RunConfig.causal masks a transformer's attention; model {self.model!r} reads causally "
                             "already (leave causal False)")
        if self.causal and self.kind == "next_symbol":
            raise ValueError("RunConfig.causal: a next_symbol transformer is causal already (leave causal False)")
        put("device", check_device_name(self.device, "RunConfig.device"))
        check_choice(self.dtype, "RunConfig.dtype", DTYPES)
        if self.dtype != "float32" and (self.model != "transformer" or self.init != "random"):
            raise ValueError(f"RunConfig.dtype {self.dtype} (autocast) is for a randomly initialised transformer; "
                             f"model {self.model!r} with init {self.init!r} trains in float32 (leave dtype out)")
        check_choice(self.positional, "RunConfig.positional", POSITIONALS)
        check_choice(self.layer_norm, "RunConfig.layer_norm", LAYER_NORMS)
        check_choice(self.accuracy, "RunConfig.accuracy", ("per_string", "per_position"))
        need(isinstance(self.protocol, str), "protocol", "must be a name")
        task = self.make_task()  # raises ValueError for unknown tasks / bad params / a kind the task lacks
        if self.model == "transformer" and self.positional == "rope" and (self.d_model // self.heads) % 2:
            raise ValueError(f"RunConfig.positional 'rope' rotates pairs of coordinates, so d_head = d_model / heads "
                             f"must be even, got {self.d_model} / {self.heads} = {self.d_model // self.heads}")
        if self.model == "transformer" and self.positional == "i_over_n" and self.kind == "next_symbol":
            raise ValueError("RunConfig.positional 'i_over_n' shows every position the string's length n, which "
                             "a next-symbol model must not see; use rope, alibi, relative, sinusoidal or learned")
        self._check_init(task)
        check_aux(self, task)
        lo, hi = self.train_lengths
        if next(filter(task.valid_length, range(lo, hi + 1)), None) is None:
            near = task.valid_lengths(range(0, max(hi, 40) + 1))[:8]
            raise ValueError(f"RunConfig.train_lengths {lo}-{hi} holds no valid length for "
                             f"{self.task} {self.kind}" + (f"; its valid lengths start {', '.join(map(str, near))}, …"
                                                           if near else ""))
        if not task.valid_lengths(self.test_lengths):
            raise ValueError(f"RunConfig.test_lengths holds no valid length for {self.task} {self.kind}")

    def _check_init(self, task) -> None:
        """init / init_params / perturb: a known construction whose language is the task's,
        on a model and kind that can take it (see the module docstring)."""
        choices = init_choices()
        if not isinstance(self.init, str) or not (self.init == "random" or self.init.startswith(INIT_CONSTRUCTION)):
            raise ValueError(f"unknown RunConfig.init {self.init!r}; choose one of: {', '.join(choices)}")
        if not isinstance(self.init_params, Mapping) or not all(isinstance(k, str) for k in self.init_params):
            raise ValueError(f"RunConfig.init_params must be a mapping of construction parameters "
                             f"(e.g. {{'layer_norm': True}}), got {self.init_params!r}")
        object.__setattr__(self, "init_params", dict(self.init_params))
        object.__setattr__(self, "perturb", check_float(
            self.perturb, "RunConfig.perturb (σ of the noise on the construction's weights)", min=0))
        if self.init == "random":
            if self.perturb or self.init_params:
                raise ValueError("RunConfig.perturb and init_params apply to init='construction:NAME' only; "
                                 f"init is 'random' (choose one of: {', '.join(choices)})")
            return
        name = self.init[len(INIT_CONSTRUCTION):]
        if name not in CONSTRUCTIONS:
            raise ValueError(f"unknown RunConfig.init {self.init!r}; choose one of: {', '.join(choices)}")
        if self.model != "transformer":
            raise ValueError(f"RunConfig.init {self.init!r} starts a transformer from hand-built weights; model "
                             f"{self.model!r} cannot take it (use model='transformer', or init='random')")
        if self.kind != "recognition":
            raise ValueError(f"RunConfig.init {self.init!r}: constructions are recognisers, so kind must be "
                             f"'recognition', got {self.kind!r}")
        from .models.construction import get_construction

        c = get_construction(name, self.init_params)  # ValueError names the allowed parameters
        ours, theirs = task.language, c.language
        if (ours.name, ours.alphabet, getattr(ours, "max_depth", None), getattr(ours, "k", None)) != \
                (theirs.name, theirs.alphabet, getattr(theirs, "max_depth", None), getattr(theirs, "k", None)):
            raise ValueError(f"RunConfig.init {self.init!r} recognises {theirs!r}, not the run's task {ours!r}; "
                             f"use task={theirs.name!r} with the same parameters, or another of: "
                             f"{', '.join(choices[1:])}")
        if c.max_length is not None and self.max_length > c.max_length:
            raise ValueError(f"RunConfig.init {self.init!r} is built for lengths <= {c.max_length}, the run "
                             f"reaches {self.max_length}; pass a larger max_length in init_params")

    def make_task(self):
        return get_task(self.task, self.kind, **self.task_params)

    @property
    def max_length(self) -> int:
        return max(self.train_lengths[1], max(self.test_lengths))

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for name in PLACE_FIELDS:
            del d[name]
        d["train_lengths"] = list(self.train_lengths)
        d["test_lengths"] = list(self.test_lengths)
        for name, default in _OMITTED_DEFAULTS.items():
            if d[name] == default:
                del d[name]
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunConfig:
        """A RunConfig from a mapping (a YAML run, ``to_dict()`` output); unknown keys refused.
        Without ``kind``, a function task gets its own (classification | transduction) and a
        language ``recognition``, the field's default."""
        if not isinstance(data, Mapping):
            raise ValueError(f"RunConfig.from_dict needs a mapping of fields, got {type(data).__name__}")
        if not all(isinstance(k, str) for k in data):
            raise ValueError(f"RunConfig: field names must be strings, got {sorted(map(repr, data))}")
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"RunConfig: unknown fields {sorted(unknown)}; allowed: {sorted(known)}")
        if "task" not in data:
            raise ValueError("RunConfig: 'task' is required (a language name, e.g. parity)")
        if "kind" not in data and isinstance(data["task"], str) and data["task"] in REGISTRY:  # a function task's one kind; recognition else
            data = {**data, "kind": kinds_of(data["task"])[0]}
        return cls(**data)  # lengths are parsed in __post_init__

    @property
    def run_id(self) -> str:
        """Stable id: sha256 of the canonical JSON config (first 16 hex digits)."""
        return hashlib.sha256(self.to_json().encode()).hexdigest()[:16]

    def label(self) -> str:
        params = ",".join(f"{k}={v}" for k, v in sorted(self.task_params.items()))
        if self.init != "random":
            return (f"{self.task}{'(' + params + ')' if params else ''}/{self.kind}/{self.init}"
                    f" σ{self.perturb:g} seed{self.seed}")
        if self.aux:
            return (f"{self.task}{'(' + params + ')' if params else ''}/{self.kind}+{'+'.join(self.aux)}/{self.model}"
                    f" L{self.layers} d{self.d_model} seed{self.seed}")
        return (f"{self.task}{'(' + params + ')' if params else ''}/{self.kind}/{self.model}"
                f" L{self.layers} d{self.d_model} seed{self.seed}")
