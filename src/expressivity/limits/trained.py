"""A trained model (from ``expressivity.train``) seen as strings → what the transformer reads.

Training tasks tokenise with :class:`~expressivity.languages.Vocab` (specials first, then the
alphabet): recognition reads ``s_1 … s_n CLS`` at the CLS position, next-symbol prediction
reads ``BOS s_1 … s_n`` at the last position. :class:`TrainedModel` gives such a transformer
the :class:`~expressivity.constructions.base.Encoder` interface (``.encode(strings)``,
``.language``, ``.transformer``) the limits analyses take.

A checkpoint is rebuilt from its run config alone (:func:`rebuild_model`:
``train.build_model`` then the saved state dict, ``strict=True``), so every model kind loads
the same way; :func:`run_encoder` is then the Encoder of the model: a :class:`TrainedModel`
for a transformer trained from scratch, and for a run fine-tuned from a construction
(``init="construction:NAME"``) the construction itself with the fine-tuned weights — its
transformer reads the construction's own encoding (e.g. PARITY's length features), not
token ids. Recurrent models have no transformer and are refused.
"""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from ..constructions.base import Encoded, Encoder
from ..languages import REGISTRY as LANGUAGES
from ..languages import Language, Vocab, get_language
from ..languages.tasks import bos_tokens, cls_tokens
from ..pretrained import CONFIG_NAME, WEIGHTS_NAME, PretrainedMixin, jsonable, record
from ..train import RunConfig, recognizers
from ..train.models.construction import construction_name, get_construction
from ..transformer import Transformer, load_state, metadata_json, read_tensors, safetensors_metadata
from ..transformer.hub import state, transformer_from_config, transformer_records


@dataclass(frozen=True, eq=False)
class TrainedModel(PretrainedMixin):
    """A trained checkpoint as an :class:`~expressivity.constructions.base.Encoder`."""

    transformer: Transformer
    language: Language
    kind: str = "recognition"  # recognition | next_symbol

    # save_pretrained / from_pretrained (expressivity.pretrained): config.json's "trained" is
    # the language (registry name and parameters) and the read-out kind
    hub_kind = "trained"
    hub_keys = frozenset({"trained"})

    def _hub_records(self):
        rec = {"language": language_record(self.language), "kind": self.kind}
        return {**transformer_records(self.transformer), "trained": rec}, {WEIGHTS_NAME: state(self.transformer)}

    @classmethod
    def _from_hub(cls, config, directory):
        tr = transformer_from_config(config, directory)
        where = directory / CONFIG_NAME
        rec = record(config["trained"], {"language", "kind"}, where, "trained")
        lang = record(rec["language"], {"name", "params"}, where, "trained.language")
        if not isinstance(lang["name"], str) or lang["name"] not in LANGUAGES:
            raise ValueError(f"{where}: unknown language {lang['name']!r}")
        if not isinstance(lang["params"], dict):
            raise ValueError(f"{where}: trained.language.params must be an object, got "
                             f"{type(lang['params']).__name__}")
        try:
            return cls(tr, LANGUAGES[lang["name"]](**lang["params"]), rec["kind"])
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: trained: {exc}") from None

    def __post_init__(self) -> None:
        if self.kind not in ("recognition", "next_symbol"):
            raise ValueError(f"TrainedModel.kind must be 'recognition' or 'next_symbol', got {self.kind!r}")

    @property
    def attention(self) -> str:
        return self.transformer.cfg.attention

    def encode(self, strings: list[str]) -> Encoded:
        ids = self.language.to_ids(list(strings))  # (B, n)
        B, n = ids.shape
        x = (cls_tokens if self.kind == "recognition" else bos_tokens)(Vocab(self.language.alphabet), ids)
        return Encoded(torch.as_tensor(x, dtype=torch.long), None, torch.full((B,), n, dtype=torch.long))


def language_record(lang: Language) -> dict:
    """A registered language as JSON: its registry name and constructor parameters."""
    name = getattr(lang, "name", None)
    if LANGUAGES.get(name) is not type(lang):
        raise ValueError(f"language {type(lang).__name__} is not in the language registry; it cannot be saved")
    names = [p for p in inspect.signature(type(lang).__init__).parameters if p != "self"]
    params = {p: getattr(lang, p) for p in names if hasattr(lang, p)}
    return {"name": name, "params": jsonable(params, "language params")}


def run_config(data, where: str) -> RunConfig:
    """A RunConfig from its dict, or a one-line ValueError naming ``where``."""
    try:
        return RunConfig.from_dict(data)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: bad run config ({exc})") from None


def read_checkpoint(path: str | Path) -> tuple[RunConfig, dict[str, torch.Tensor]]:
    """The run config (its ``run_config`` metadata) and the tensors of a training checkpoint
    file (``model.safetensors`` written by ``train_run``)."""
    meta = safetensors_metadata(path)
    if "run_config" not in meta:
        raise ValueError(f"{path} has no run_config metadata (not written by expressivity.train)")
    return run_config(metadata_json(meta, "run_config", path), str(path)), read_tensors(path)


def rebuild_model(config: RunConfig, state: dict[str, torch.Tensor], where: str) -> nn.Module:
    """The run's model from the registry (``build_model`` with its task's vocabulary and output
    width; with its auxiliary heads for a run with ``aux`` losses), given the saved ``state``: the
    same tensors, shapes and dtypes, finite (:func:`~expressivity.transformer.load_state`); in eval
    mode."""
    task = config.make_task()
    model = recognizers.build(config, task)  # build_model, wrapped in AuxHeads when config.aux
    load_state(model, state, where, what=f"it does not fit a {config.model} built from its run config (the "
               "model's code changed since?)")
    return model.eval()


def run_encoder(model: nn.Module, config: RunConfig) -> Encoder:
    """The limits analyses' Encoder of a run's model (see the module docstring)."""
    name = construction_name(config.init)
    if name is not None:  # fine-tuned: the construction's encoder and read-out, the run's weights
        inner = getattr(model, "transformer", None)
        if not isinstance(inner, Transformer):
            raise ValueError(f"a run fine-tuned from construction {name!r} holds no transformer")
        return dataclasses.replace(get_construction(name, config.init_params), transformer=inner)
    if isinstance(model, recognizers.AuxHeads):  # the transformer under its aux heads (their rows read out too)
        model = model.base
    if not isinstance(model, Transformer):
        raise ValueError(f"a {config.model} run has no transformer: the limits analyses take transformers only")
    if config.kind not in ("recognition", "next_symbol"):
        raise ValueError(f"a {config.kind} run reads no language strings: the limits analyses take "
                         "recognition and next_symbol runs")
    return TrainedModel(model, get_language(config.task, **config.task_params), config.kind)


def load_trained(path: str | Path) -> Encoder:
    """A ``model.safetensors`` written by ``train_run(out_dir=...)`` as an Encoder: a
    :class:`TrainedModel`, or the fine-tuned construction (:func:`run_encoder`)."""
    config, state = read_checkpoint(path)
    return run_encoder(rebuild_model(config, state, str(path)), config)
