"""Formal languages with exact membership, samplers and optimal next-symbol distributions.

Entry points: ``get(name, **params) -> Language`` with names ``"parity"`` (odd number of 1s),
``"first"`` (first bit is 1), ``"majority"`` (strictly more 1s than 0s; ties are out),
``"dyck"`` (params ``k`` = 2, ``max_depth`` = None, ``p_open`` = 0.5; Dyck-2 alphabet ``()[]``);
binary languages take ``p_end`` (end probability of the generative process, 0.5).
``get_task(name, kind, **params)`` with kind ``"recognition"`` or ``"next_symbol"``.
``EOS`` ("$") is the end symbol in next-symbol distributions.
"""

from __future__ import annotations

from .base import EOS, Language, Task
from .dyck import PAIRS, Dyck
from .first import First
from .majority import Majority
from .parity import Parity
from .tasks import KINDS, NextSymbolTask, RecognitionTask, make_task
from .vocab import BOS, CLS, EOS_TOKEN, PAD, Vocab

REGISTRY: dict[str, type[Language]] = {"parity": Parity, "first": First, "majority": Majority, "dyck": Dyck}


def get(name: str, **params) -> Language:
    """The language ``name`` built with ``params``; ValueError names the allowed choices."""
    if name not in REGISTRY:
        raise ValueError(f"unknown language {name!r}; choose one of {sorted(REGISTRY)}")
    try:
        return REGISTRY[name](**params)
    except TypeError as exc:
        raise ValueError(f"bad parameters for language {name!r}: {exc}") from None


def get_task(name: str, kind: str = "recognition", **params) -> Task:
    """Task of ``kind`` ("recognition" | "next_symbol") on ``get(name, **params)``."""
    return make_task(get(name, **params), kind)


__all__ = ["BOS", "CLS", "EOS", "EOS_TOKEN", "KINDS", "PAD", "PAIRS", "REGISTRY", "Dyck", "First", "Language",
           "Majority", "NextSymbolTask", "Parity", "RecognitionTask", "Task", "Vocab", "get", "get_task",
           "make_task"]
