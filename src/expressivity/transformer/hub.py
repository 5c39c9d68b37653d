"""A :class:`~expressivity.transformer.Transformer` in the hub layout (kind ``transformer``):
``config.json``'s ``transformer`` (the :class:`TransformerConfig`) and ``channels`` (the
channel names, or null), ``model.safetensors`` its ``state_dict`` — which every kind built on
a transformer shares (:func:`transformer_records`, :func:`transformer_from_config`)."""

from __future__ import annotations

from pathlib import Path

from ..pretrained import CONFIG_NAME, WEIGHTS_NAME
from .config import TransformerConfig
from .io import channel_map, load_state, read_tensors
from .model import Transformer


def transformer_records(tr: Transformer | None) -> dict:
    """config.json's ``transformer`` and ``channels`` entries of ``tr`` (both null for a model
    that is not a transformer)."""
    return {"transformer": tr.cfg.to_dict() if tr is not None else None,
            "channels": list(tr.channels.names) if tr is not None and tr.channels is not None else None}


def state(module) -> dict:
    """The tensors ``model.safetensors`` holds: exactly ``module.state_dict()``."""
    return {k: v.detach().contiguous().cpu() for k, v in module.state_dict().items()}


def transformer_from_config(config: dict, d: Path) -> Transformer:
    """The transformer of ``config.json`` with the checked weights of ``model.safetensors``
    (names, shapes, dtypes, finite: :func:`~expressivity.transformer.load_state`)."""
    where = d / CONFIG_NAME
    if not isinstance(config["transformer"], dict):
        raise ValueError(f"{where}: transformer must be an object of TransformerConfig fields, got "
                         f"{type(config['transformer']).__name__}")
    try:
        cfg = TransformerConfig.from_dict(config["transformer"])
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: transformer: {exc}") from None
    channels = config.get("channels")
    if channels is not None:
        channels = channel_map(channels, cfg.d_model, f"{where}: channels")
    try:
        tr = Transformer(cfg, channels)
    except ValueError as exc:
        raise ValueError(f"{where}: transformer: {exc}") from None
    load_state(tr, read_tensors(d / WEIGHTS_NAME), str(d / WEIGHTS_NAME), what="does not match config.json")
    return tr.eval()
