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

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from safetensors import safe_open
from torch import nn

from ..languages import get as get_language
from ..limits.trained import TrainedModel
from ..train import RunConfig, build_model
from ..transformer import Transformer

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

    def encoder(self) -> TrainedModel:
        """A transformer run as the limits analyses' Encoder (strings → what it reads)."""
        if not isinstance(self.model, Transformer):
            raise ValueError(f"a {self.kind} run has no transformer: the limits analyses take transformers only")
        if self.config.kind not in ("recognition", "next_symbol"):
            raise ValueError(f"a {self.config.kind} run reads no language strings: the limits analyses take "
                             "recognition and next_symbol runs")
        return TrainedModel(self.model, get_language(self.config.task, **self.config.task_params), self.config.kind)


def rebuild(config: RunConfig, state: dict[str, torch.Tensor], where: str) -> TrainedRun:
    """The run's model from the registry, given the saved ``state`` (``strict=True``)."""
    task = config.make_task()
    model = build_model(config, len(task.vocab), task.n_outputs)
    try:
        with torch.no_grad():
            model.load_state_dict(state, strict=True)
    except RuntimeError as exc:
        raise ValueError(f"{where} does not fit a {config.model} built from its run config (the model's code "
                         f"changed since?): {' '.join(str(exc).split())[:300]}") from None
    return TrainedRun(model.eval(), config)


def run_config(data, where: str) -> RunConfig:
    """A RunConfig from its dict, or a one-line ValueError naming ``where``."""
    try:
        return RunConfig.from_dict(data)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: bad run config ({exc})") from None


def checkpoint_metadata(path: Path) -> dict[str, str]:
    """The string metadata of a safetensors file ({} if it has none), or a one-line error."""
    try:
        with safe_open(str(path), framework="pt") as f:
            return dict(f.metadata() or {})
    except Exception as exc:  # safetensors raises its own error types
        raise ValueError(f"{path} is not a safetensors file: {exc}") from None


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
    p = Path(path)
    f = p / WEIGHTS_NAME if p.is_dir() else p
    if not f.is_file():
        raise ValueError(f"{p} holds no {WEIGHTS_NAME}: not a training output directory")
    meta = checkpoint_metadata(f)
    if "run_config" not in meta:
        raise ValueError(f"{f} has no run_config metadata (not written by expressivity.train)")
    try:
        data = json.loads(meta["run_config"])
    except json.JSONDecodeError as exc:
        raise ValueError(f"{f}: its run_config metadata is not JSON ({exc})") from None
    return rebuild(run_config(data, str(f)), read_tensors(f), str(f))


def read_tensors(path: Path) -> dict[str, torch.Tensor]:
    """Every tensor of a safetensors file, or a one-line error."""
    try:
        with safe_open(str(path), framework="pt") as f:
            return {k: f.get_tensor(k) for k in f.keys()}
    except Exception as exc:  # safetensors raises its own error types
        raise ValueError(f"{path} is not a safetensors file: {exc}") from None
