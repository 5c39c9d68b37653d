"""Models for a task, all ids (B, T) → logits (B, T, C), one module each:

- ``transformer``: the project's Transformer (:mod:`.transformer`; position encodings in
  :mod:`expressivity.transformer.positions`);
- ``rnn``: Elman RNN (:mod:`.rnn`); ``lstm``: torch.nn.LSTM (:mod:`.lstm`);
- ``stack_rnn``: Elman RNN + differentiable stack (:mod:`.stack_rnn`, Joulin & Mikolov 2015);
- ``stack_lstm``: LSTM controller + the same stack (:mod:`.stack_lstm`, Delétang et al. 2023);
- ``tape_rnn``: Elman RNN + differentiable tape (:mod:`.tape_rnn`, Delétang et al. 2023).

``build_model(cfg, d_vocab, d_out)`` builds ``cfg.model``, initialised deterministically from
``cfg.seed`` (a stack or tape of ``memory_cells(cfg)`` cells) — or, with ``cfg.init = "construction:NAME"``, the construction's transformer
perturbed by N(0, ``cfg.perturb``²) (:mod:`.construction`). ``MODELS`` is the registry (a plain dict of builders).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager

import torch
from torch import nn

from ...rules import check_choice
from ...transformer import Transformer
from ..config import MEMORY_MODELS, RunConfig
from ..config import MODELS as MODEL_NAMES
from .construction import ConstructionModel, from_construction
from .lstm import LSTMModel
from .rnn import RNNModel
from .stack_lstm import StackLSTM
from .stack_rnn import STACK_SIZE, StackModel, StackRNN, stack_update
from .tape_rnn import TAPE_SIZE, TapeRNN, tape_update
from .transformer import transformer_config

OWN_MEMORY = {"stack_rnn": STACK_SIZE, "stack_lstm": STACK_SIZE, "tape_rnn": TAPE_SIZE}  # cells by default


def memory_cells(cfg: RunConfig) -> int:
    """Cells K of the stack or tape of ``cfg.model``: ``cfg.memory_size``, or the model's own
    size (:data:`OWN_MEMORY`) when it is 0; 0 for a model without memory."""
    return (cfg.memory_size or OWN_MEMORY[cfg.model]) if cfg.model in OWN_MEMORY else 0


def eval_memory_cells(cfg: RunConfig) -> int:
    """Cells K of the stack or tape when the model is evaluated: ``cfg.eval_memory_size``, else
    :func:`memory_cells`."""
    return (cfg.eval_memory_size or memory_cells(cfg)) if cfg.model in OWN_MEMORY else 0


@contextmanager
def memory_resized(model: nn.Module, cells: int):
    """``model`` with every stack and tape of K cells in it given ``cells`` cells (0: as they are)
    inside the block, restored after. The weights do not depend on K: the stack / tape is state
    (B, K, m), zero at t = 0, so only how much it holds changes."""
    mems = [mod for mod in model.modules() if isinstance(mod, (StackModel, TapeRNN))] if cells else []
    before = [mod.K for mod in mems]
    for mod in mems:
        mod.K = cells
    try:
        yield model
    finally:
        for mod, k in zip(mems, before):
            mod.K = k


def _transformer(cfg: RunConfig, d_vocab: int, d_out: int) -> nn.Module:
    return Transformer(transformer_config(cfg, d_vocab, d_out))


MODELS: dict[str, Callable[[RunConfig, int, int], nn.Module]] = {
    "transformer": _transformer,
    "rnn": lambda cfg, v, c: RNNModel(v, cfg.d_model, cfg.layers, c),
    "lstm": lambda cfg, v, c: LSTMModel(v, cfg.d_model, cfg.layers, c),
    "stack_rnn": lambda cfg, v, c: StackRNN(v, cfg.d_model, c, memory_cells(cfg)),
    "stack_lstm": lambda cfg, v, c: StackLSTM(v, cfg.d_model, c, memory_cells(cfg)),
    "tape_rnn": lambda cfg, v, c: TapeRNN(v, cfg.d_model, c, memory_cells(cfg), jumps=cfg.kind != "next_symbol"),
}
assert tuple(MODELS) == MODEL_NAMES and tuple(OWN_MEMORY) == MEMORY_MODELS


def build_model(cfg: RunConfig, d_vocab: int, d_out: int) -> nn.Module:
    """The model of ``cfg``, initialised deterministically from ``cfg.seed``."""
    check_choice(cfg.model, "model", MODELS)
    if cfg.init != "random":
        return from_construction(cfg)
    with torch.random.fork_rng():
        torch.manual_seed(cfg.seed)
        model = MODELS[cfg.model](cfg, d_vocab, d_out)
    if isinstance(model, Transformer):
        model.reset_parameters(cfg.seed)
    return model


__all__ = ["MODELS", "OWN_MEMORY", "ConstructionModel", "LSTMModel", "RNNModel", "StackLSTM", "StackModel", "StackRNN", "TapeRNN", "build_model", "eval_memory_cells", "memory_cells", "memory_resized", "stack_update",
           "tape_update", "transformer_config"]
