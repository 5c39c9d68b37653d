"""A trained model of any registered kind, with the run that made it: :class:`TrainedRun`.

The models of :mod:`expressivity.train.models` (``MODELS``: transformer, rnn, lstm, stack_rnn,
tape_rnn, … — every kind registered there) are rebuilt from their
:class:`~expressivity.train.RunConfig` alone: ``build_model(cfg, |vocab|, n_outputs)`` with
the vocabulary and output width of ``cfg.make_task()``; the saved ``state_dict`` is then
loaded with ``strict=True``. So the hub layout and training checkpoints need nothing per
model kind: the RunConfig names the registry entry (``cfg.model``) and holds every size,
and a kind added to the registry is saved and loaded with no change here. A checkpoint of
an architecture that has changed since (other tensors or shapes) is refused, never loaded
partially.

A training output directory (``train_run(out_dir=…)`` / ``expressivity train --out``) holds
``config.json`` (the RunConfig) and ``model.safetensors`` (the state dict, its metadata
``run_config`` the same RunConfig): :func:`load_run` reads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from ..constructions.base import Encoder
from ..fileio import check_path
from ..limits.trained import read_checkpoint, rebuild_model, run_config, run_encoder
from ..pretrained import CONFIG_NAME, PretrainedMixin, resolve
from ..train import RunConfig
from ..transformer import Transformer, read_tensors
from ..transformer import safetensors_metadata as checkpoint_metadata
from ..transformer.hub import state, transformer_records

__all__ = ["TrainedRun", "checkpoint_metadata", "is_checkpoint", "is_train_run_dir", "load_run", "read_tensors",
           "rebuild", "run_config"]

WEIGHTS_NAME = "model.safetensors"


@dataclass(frozen=True, eq=False)
class TrainedRun(PretrainedMixin):
    """``model`` (built by ``train.build_model``) and the ``config`` it was trained with."""

    model: nn.Module
    config: RunConfig

    # save_pretrained / from_pretrained (expressivity.pretrained): config.json's "run" is the
    # whole RunConfig; "transformer" that transformer's config, or null for the recurrent models
    hub_kind = "run"
    hub_keys = frozenset({"run"})

    def _hub_records(self):
        tr = self.model if isinstance(self.model, Transformer) else None
        return {**transformer_records(tr), "run": self.config.to_dict()}, {WEIGHTS_NAME: state(self.model)}

    @classmethod
    def _from_hub(cls, config, directory):
        where = directory / CONFIG_NAME
        run = rebuild(run_config(config["run"], str(where)), read_tensors(directory / WEIGHTS_NAME),
                      str(directory / WEIGHTS_NAME))
        built = run.model.cfg.to_dict() if isinstance(run.model, Transformer) else None
        if config.get("transformer") != built:
            raise ValueError(f"{where}: its run config builds another transformer than the one saved "
                             "(config differs); it was saved by another version")
        return run

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, *, revision: str | None = None, cache_dir=None,
                        force_download: bool = False, local_files_only: bool = False,
                        token: str | None = None) -> TrainedRun:
        """A run saved by :meth:`save_pretrained` (kind ``run``) — or a training output
        directory (``expressivity train --out``), read by :func:`load_run`."""
        d = resolve(pretrained_model_name_or_path, revision=revision, cache_dir=cache_dir,
                    force_download=force_download, local_files_only=local_files_only, token=token)
        if is_train_run_dir(d):
            return load_run(d)
        return super().from_pretrained(d)

    def __post_init__(self) -> None:
        if not isinstance(self.config, RunConfig):
            raise ValueError(f"TrainedRun.config must be a RunConfig, got {type(self.config).__name__}")
        if not isinstance(self.model, nn.Module):
            raise ValueError(f"TrainedRun.model must be a torch module, got {type(self.model).__name__}")

    @property
    def kind(self) -> str:
        """The registry name of the model (``config.model``): transformer, rnn, lstm, …"""
        return self.config.model

    def __call__(self, inputs: torch.Tensor) -> torch.Tensor:
        """Logits (B, T, C) of token ids (B, T), without gradients."""
        with torch.no_grad():
            return self.model(inputs)

    def sample_inputs(self, n: int, seed: int = 0) -> torch.Tensor:
        """``n`` token sequences the model was trained to read: a batch of its task at the
        longest training length."""
        task = self.config.make_task()
        lo, hi = self.config.train_lengths
        length = max(task.valid_lengths(range(lo, hi + 1)))
        return torch.as_tensor(task.sample_batch(np.random.default_rng(seed), n, length)["input"])

    def encoder(self) -> Encoder:
        """The limits analyses' Encoder (strings → what the transformer reads): a
        :class:`~expressivity.limits.trained.TrainedModel`, or for a run fine-tuned from a
        construction that construction with the run's weights (``limits.trained.run_encoder``)."""
        return run_encoder(self.model, self.config)


def rebuild(config: RunConfig, state: dict[str, torch.Tensor], where: str) -> TrainedRun:
    """The run's model from the registry, given the saved ``state`` (``strict=True``)."""
    return TrainedRun(rebuild_model(config, state, where), config)


def is_checkpoint(path: str | Path) -> bool:
    """Whether ``path`` is a training checkpoint: a directory with model.safetensors, or that
    file, carrying ``run_config`` metadata."""
    p = Path(path)
    f = p / WEIGHTS_NAME if p.is_dir() else p
    if not f.is_file():
        return False
    try:
        return "run_config" in checkpoint_metadata(f)
    except ValueError:
        return False


def is_train_run_dir(d: Path) -> bool:
    """An output directory of ``train_run``: its config.json is the RunConfig, and its
    model.safetensors carries the run config as metadata (the hub layout's carries ``{"format": "pt"}``)."""
    return (Path(d) / CONFIG_NAME).is_file() and is_checkpoint(d)


def load_run(path: str | Path) -> TrainedRun:
    """A training checkpoint — its output directory or its ``model.safetensors`` — of any model kind."""
    p = check_path(path, "path")
    f = p / WEIGHTS_NAME if p.is_dir() else p
    if not f.is_file():
        raise ValueError(f"{p} holds no {WEIGHTS_NAME}: not a training output directory")
    return rebuild(*read_checkpoint(f), str(f))
