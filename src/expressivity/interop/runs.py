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

from ..checks import check_path
from ..constructions.base import Encoder
from ..limits.trained import read_checkpoint, rebuild_model, run_config, run_encoder
from ..train import RunConfig
from ..transformer import read_tensors
from ..transformer import safetensors_metadata as checkpoint_metadata

__all__ = ["TrainedRun", "checkpoint_metadata", "is_checkpoint", "load_run", "read_tensors", "rebuild",
           "run_config"]

WEIGHTS_NAME = "model.safetensors"


@dataclass(frozen=True, eq=False)
class TrainedRun:
    """``model`` (built by ``train.build_model``) and the ``config`` it was trained with."""

    model: nn.Module
    config: RunConfig

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


def load_run(path: str | Path) -> TrainedRun:
    """A training checkpoint — its output directory or its ``model.safetensors`` — of any model kind."""
    p = check_path(path, "path")
    f = p / WEIGHTS_NAME if p.is_dir() else p
    if not f.is_file():
        raise ValueError(f"{p} holds no {WEIGHTS_NAME}: not a training output directory")
    return rebuild(*read_checkpoint(f), str(f))
