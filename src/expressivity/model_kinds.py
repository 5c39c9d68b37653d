"""What kind of model is this: the one answer, which ``regions``, ``interop`` and ``limits`` ask.

Each model class registers its kind once, beside its definition: every kind of the hub layout
(a :class:`~expressivity.pretrained.PretrainedMixin` with a ``hub_kind``) is registered by the
mixin itself; other classes call :func:`register`. :func:`kind_of` answers by the most specific
registered class in the model's MRO, then by protocol:

===============  ============================================================================
kind             what it is
===============  ============================================================================
``transformer``  a plain :class:`~expressivity.transformer.Transformer`
``compiled``     a :class:`~expressivity.compile.CompiledModel` (a maxout net compiled)
``construction`` a hand-built :class:`~expressivity.constructions.Construction`
``trained``      a :class:`~expressivity.limits.trained.TrainedModel` (checkpoint + language)
``run``          a :class:`~expressivity.interop.runs.TrainedRun` (any trained model + RunConfig)
``network``      a :class:`~expressivity.cpwl.MaxoutNetwork` (a ReLU net is one)
``program``      a :class:`~expressivity.regions.ir.Program` (the regions IR)
``encoder``      a token-id adapter (:class:`~expressivity.limits.encoder.TokenEncoder`) or any
                 object of the Encoder protocol (``.transformer`` and a callable ``.encode``)
``module``       any other ``torch.nn.Module``
===============  ============================================================================

A leaf: it imports nothing of ours.
"""

from __future__ import annotations

from torch import nn

__all__ = ["KINDS", "kind_of", "register"]

KINDS = ("transformer", "compiled", "construction", "trained", "run", "network", "program", "encoder", "module")
_REGISTRY: dict[type, str] = {}
_MISSING = object()


def register(kind: str, cls: type) -> type:
    """Record that instances of ``cls`` (and of its subclasses, unless they register their own)
    are models of ``kind``; returns ``cls``."""
    if kind not in KINDS:
        raise ValueError(f"unknown model kind {kind!r}; the kinds are {list(KINDS)}")
    _REGISTRY[cls] = kind
    return cls


def kind_of(model, default=_MISSING) -> str:
    """The kind of ``model`` (one of :data:`KINDS`); an object of no kind gets ``default``, or a
    one-line ValueError if none is given."""
    for cls in type(model).__mro__:
        kind = _REGISTRY.get(cls)
        if kind is not None:
            return kind
    if hasattr(model, "transformer") and callable(getattr(model, "encode", None)):
        return "encoder"
    if isinstance(model, nn.Module):
        return "module"
    if default is not _MISSING:
        return default
    raise ValueError(f"model: {type(model).__name__} is no kind of model of ours (expected one of {list(KINDS)})")
