"""Save and load a Transformer with safetensors: weights + config + channel map (JSON metadata)."""

from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors import safe_open
from safetensors.torch import save_file

from .channels import ChannelMap
from .config import TransformerConfig
from .model import Transformer

FORMAT = "expressivity.transformer/1"


def save_transformer(model: Transformer, path: str | Path, extra: dict[str, str] | None = None) -> None:
    """Write ``model`` to ``path``; ``extra`` is stored as further string metadata."""
    tensors = {k: v.detach().contiguous().cpu() for k, v in model.state_dict().items()}
    meta = {"format": FORMAT, "config": json.dumps(model.cfg.to_dict())}
    if model.channels is not None:
        meta["channels"] = model.channels.to_json()
    for key, value in (extra or {}).items():
        if not isinstance(value, str):
            raise ValueError(f"metadata value for {key!r} must be a string (use json.dumps)")
        meta[key] = value
    save_file(tensors, str(path), metadata=meta)


def read_metadata(path: str | Path) -> dict[str, str]:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such model file: {path}")
    try:
        with safe_open(str(path), framework="pt") as f:
            meta = f.metadata() or {}
    except Exception as exc:  # safetensors raises its own error types
        raise ValueError(f"{path} is not a safetensors file: {exc}") from None
    if meta.get("format") != FORMAT:
        raise ValueError(f"{path} was not written by expressivity (metadata format {meta.get('format')!r})")
    return meta


def load_transformer(path: str | Path) -> Transformer:
    """Rebuild the model saved by :func:`save_transformer`, channel names included."""
    meta = read_metadata(path)
    cfg = TransformerConfig.from_dict(json.loads(meta["config"]))
    channels = ChannelMap.from_json(meta["channels"]) if "channels" in meta else None
    model = Transformer(cfg, channels)
    state = {}
    with safe_open(str(path), framework="pt") as f:
        for key in f.keys():
            state[key] = f.get_tensor(key)
    with torch.no_grad():
        model.load_state_dict(state, strict=True)
    return model
