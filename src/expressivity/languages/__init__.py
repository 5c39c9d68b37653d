"""Formal languages and function tasks with exact oracles and samplers.

Entry points: ``get(name, **params)`` returns a :class:`Language` (membership, samplers,
generative process; kinds ``recognition`` and ``next_symbol``) or a :class:`FunctionTask`
(an exact function; kind ``classification`` or ``transduction``); ``get_task(name, kind,
**params)`` wraps it in a :class:`Task` with ``sample_batch(rng, batch_size, length)``.

Languages: ``parity`` (odd number of 1s), ``first`` (first bit is 1), ``majority`` (strictly
more 1s than 0s; ties are out) — binary languages take ``p_end``; ``dyck`` (``k`` ≤ 256,
``max_depth``, ``p_open``; Dyck-2 alphabet ``()[]``); ``shuffle_dyck``; ``tomita1`` …
``tomita7``; ``anbn``, ``anbncn``, ``anbncndn``.
Function tasks (Delétang et al. 2023): see :data:`REGISTRY` and :data:`LEVELS`, both held by
:mod:`.registry` with :func:`register` (a new task's module calls it; importing the module
registers the task).
The 18 FLaRe languages (Butoi et al. 2025) as recognizers: ``flare.<name>``
(:mod:`.flare`, e.g. ``flare.marked_copy``).
``EOS`` ("$") is the end symbol in next-symbol distributions.
"""

from __future__ import annotations

import inspect

from .base import EOS, Language, Task
from .context_free.anbn import AnBn
from .context_free.modular_arithmetic_brackets import ModularArithmeticBrackets
from .context_free.reverse_string import ReverseString
from .context_free.solve_equation import SolveEquation
from .context_free.stack_manipulation import StackManipulation
from .context_sensitive.anbncn import AnBnCn, AnBnCnDn
from .context_sensitive.binary_addition import BinaryAddition
from .context_sensitive.binary_multiplication import BinaryMultiplication
from .context_sensitive.bucket_sort import BucketSort
from .context_sensitive.compute_sqrt import ComputeSqrt
from .context_sensitive.duplicate_string import DuplicateString
from .context_sensitive.missing_duplicate import MissingDuplicate
from .context_sensitive.odds_first import OddsFirst
from .context_sensitive.shuffle_dyck import ShuffleDyck
from .dyck import PAIRS, Dyck
from .first import First
from .flare import CHOMSKY as _FLARE_LEVELS
from .flare import FLARE, PREFIX, FlareLanguage, unknown_flare
from .function import Classification, FunctionTask, Transduction
from .majority import Majority
from .parity import Parity
from .registry import LEVELS, REGISTRY, register, register_all
from .regular.cycle_navigation import CycleNavigation
from .regular.even_pairs import EvenPairs
from .regular.modular_arithmetic import ModularArithmetic
from .regular.parity_check import ParityCheck
from .regular.tomita import TOMITA
from .tasks import (
    KINDS,
    ClassificationTask,
    NextSymbolTask,
    RecognitionTask,
    TransductionTask,
    make_task,
)
from .vocab import BOS, CLS, EOS_TOKEN, PAD, Vocab, token_layout

# the built-in tasks by Chomsky level (MAJORITY is a one-counter language, not regular;
# Shuffle-Dyck-1 = Dyck-1); a new task registers itself in its own module instead
register_all("regular", {
    "parity": Parity, "first": First, **TOMITA,
    # Delétang et al. 2023
    "even_pairs": EvenPairs, "modular_arithmetic": ModularArithmetic, "parity_check": ParityCheck,
    "cycle_navigation": CycleNavigation})
register_all("context-free", {
    "majority": Majority, "dyck": Dyck, "anbn": AnBn,
    # Delétang et al. 2023: deterministic context-free
    "stack_manipulation": StackManipulation, "reverse_string": ReverseString,
    "modular_arithmetic_brackets": ModularArithmeticBrackets, "solve_equation": SolveEquation})
register_all("context-sensitive", {
    "shuffle_dyck": ShuffleDyck, "anbncn": AnBnCn, "anbncndn": AnBnCnDn,
    # Delétang et al. 2023
    "duplicate_string": DuplicateString, "missing_duplicate": MissingDuplicate, "odds_first": OddsFirst,
    "binary_addition": BinaryAddition, "binary_multiplication": BinaryMultiplication,
    "compute_sqrt": ComputeSqrt, "bucket_sort": BucketSort})
# Butoi et al. 2025 (FLaRe): recognizers, flare.<name>, at our level of their class
for _name, _cls in FLARE.items():
    register(_name, _cls, _FLARE_LEVELS[_cls.level])
del _name, _cls

# a task whose module ends with its own register(...) call is added by importing it here,
# one line, e.g. ``from .regular import ends_in_one`` (docs/extending.md)


def _check_name(name) -> None:
    if isinstance(name, str) and name.startswith(PREFIX) and name not in REGISTRY:
        raise ValueError(unknown_flare(name))
    if not isinstance(name, str) or name not in REGISTRY:
        raise ValueError(f"unknown language or task {name!r}; choose one of {sorted(REGISTRY)}")


def get(name: str, **params) -> Language | FunctionTask:
    """The language or function task ``name`` built with ``params``; one-line ValueError
    naming the allowed names (the FLaRe ones for an unknown ``flare.<name>``) or parameters."""
    _check_name(name)
    cls = REGISTRY[name]
    allowed = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise ValueError(f"{name}: unknown parameters {unknown}; valid parameters: {allowed}")
    return cls(**params)


def get_language(name: str, **params) -> Language:
    """``get(name, **params)`` for a language only (what the limits analyses read); a function
    task gets a one-line ValueError naming the languages."""
    source = get(name, **params)
    if not isinstance(source, Language):
        names = ", ".join(n for n in sorted(REGISTRY) if issubclass(REGISTRY[n], Language))
        raise ValueError(f"{name} is a {source.kind} task (a function of the input string), not a language; "
                         f"choose a language: {names}")
    return source


def kinds_of(name: str) -> tuple[str, ...]:
    """The task kinds ``name`` supports."""
    _check_name(name)
    cls = REGISTRY[name]
    return (cls.kind,) if issubclass(cls, FunctionTask) else ("recognition", "next_symbol")


def get_task(name: str, kind: str = "recognition", **params) -> Task:
    """Task of ``kind`` on ``get(name, **params)``; kind ``recognition`` | ``next_symbol`` for
    languages, ``classification`` | ``transduction`` (the task's own) for function tasks.
    ``computation_steps`` among the params is the task's, not the language's (a transduction's
    steps between input and output, :class:`TransductionTask`)."""
    if kind not in KINDS:
        raise ValueError(f"unknown task kind {kind!r}; choose one of {KINDS}")
    if kind not in kinds_of(name):
        raise ValueError(f"{name} supports kinds {kinds_of(name)}, not {kind!r}")
    steps = params.pop("computation_steps", 0)
    return make_task(get(name, **params), kind, steps)


__all__ = ["BOS", "CLS", "EOS", "EOS_TOKEN", "FLARE", "KINDS", "LEVELS", "PAD", "PAIRS", "REGISTRY", "Classification",
           "ClassificationTask", "Dyck", "First", "FlareLanguage", "FunctionTask", "Language", "Majority", "NextSymbolTask", "Parity",
           "RecognitionTask", "Task", "Transduction", "TransductionTask", "Vocab", "get", "get_language", "get_task", "token_layout",
           "kinds_of",
           "make_task", "register"]
