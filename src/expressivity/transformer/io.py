"""Save and load a Transformer with safetensors: weights + config + channel map (JSON metadata).

Files are written by the one safetensors writer, :func:`expressivity.fileio.write_safetensors`:
deterministic (the same model gives the same bytes: metadata and tensors in sorted order, no
timestamps), atomic (a temporary file in the same directory, then renamed; an interrupted save
leaves the old file), with the one file mode (:func:`expressivity.fileio.file_mode`: the
umask's, 0644 under umask 022). Loading checks everything before building the model: a missing, foreign,
truncated or tampered file (a missing or extra tensor, a wrong shape or dtype, NaN/inf
weights, incomplete or non-JSON metadata) gives one ``ValueError`` naming the file and what
is wrong. :func:`load_state` applies the same checks to any module's state dict (the hub
layout, training checkpoints of every model kind), so no loader casts a dtype or takes a NaN
weight silently.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors import safe_open

from ..fileio import check_output_path, check_path, safetensors_dtype, write_safetensors
from ..pretrained import first_line, read_tensors  # noqa: F401  (read_tensors: re-exported, its home is pretrained)
from ..rules import check_bool
from .channels import ChannelMap
from .config import TransformerConfig
from .model import Transformer

FORMAT = "expressivity.transformer/1"
AUX_KEY = "aux_tensors"  # metadata: JSON list of the tensors that are not the model's (save_transformer's aux)

def save_transformer(model: Transformer, path: str | Path, extra: dict[str, str] | None = None, *,
                     finite: bool = True, aux: dict[str, torch.Tensor] | None = None) -> None:
    """Write ``model`` to ``path``; ``extra`` is stored as further string metadata. A NaN or
    inf weight is refused unless ``finite=False`` (the file could not be loaded back without it).

    ``aux``: further tensors that travel in the same file but are not the model's (e.g. a
    compiled model's source network); their names go to the metadata entry ``aux_tensors``,
    :func:`load_transformer` skips exactly those and :func:`read_aux` reads them back."""
    if not isinstance(model, Transformer):
        raise ValueError(f"model must be a Transformer, got {type(model).__name__}")
    path = check_output_path(path, "path")
    if check_bool(finite, "finite"):
        check_finite_weights(model, f"path {path}")
    if extra is not None and (not isinstance(extra, dict) or not all(isinstance(k, str) for k in extra)):
        raise ValueError(f"extra must be a dict of string keys and values, got {type(extra).__name__}")
    tensors = {k: v.detach().contiguous().cpu() for k, v in model.state_dict().items()}
    meta = {"format": FORMAT, "config": json.dumps(model.cfg.to_dict(), sort_keys=True)}
    if aux:
        clash = sorted(set(aux) & set(tensors))
        if clash or not all(isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in aux.items()):
            raise ValueError(f"aux must map new tensor names to tensors (clashing with the model's: {clash[:3]})")
        tensors.update({k: v.detach().contiguous().cpu() for k, v in aux.items()})
        meta[AUX_KEY] = json.dumps(sorted(aux))
    if model.channels is not None:
        meta["channels"] = model.channels.to_json()
    for key, value in (extra or {}).items():
        if not isinstance(value, str):
            raise ValueError(f"metadata value for {key!r} must be a string (use json.dumps)")
        if key in ("format", "config", "channels", AUX_KEY):
            raise ValueError(f"metadata key {key!r} is reserved")
        meta[key] = value
    write_safetensors(path, tensors, meta)


def safetensors_metadata(path: str | Path) -> dict[str, str]:
    """The string metadata of any safetensors file ({} if it has none), or a one-line error."""
    try:
        with safe_open(str(path), framework="pt") as f:
            return dict(f.metadata() or {})
    except Exception as exc:  # safetensors raises its own error types
        raise ValueError(f"{path} is not a safetensors file: {_first_line(exc)}") from None


def read_metadata(path: str | Path) -> dict[str, str]:
    """The string metadata of a file written by :func:`save_transformer` (checked to be one)."""
    path = check_path(path, "path")
    if path.is_dir():
        raise ValueError(f"model file {path} is a directory")
    if not path.is_file():
        raise ValueError(f"no such model file: {path}")
    meta = safetensors_metadata(path)
    if meta.get("format") != FORMAT:
        raise ValueError(f"{path} was not written by expressivity (metadata format {meta.get('format')!r})")
    return meta


_first_line = first_line


def metadata_json(meta: dict, key: str, path: str | Path):
    """The JSON value of metadata entry ``key`` of the file ``path``, or a one-line error
    naming the file (missing entry, or not JSON)."""
    try:
        return json.loads(meta[key])
    except KeyError:
        raise ValueError(f"{path}: metadata has no {key!r} entry (incomplete file?)") from None
    except (json.JSONDecodeError, TypeError) as exc:
        raise ValueError(f"{path}: metadata {key!r} is not valid JSON ({getattr(exc, 'msg', exc)})") from None


def load_transformer(path: str | Path, *, finite: bool = True) -> Transformer:
    """Rebuild the model saved by :func:`save_transformer`, channel names included.

    Every tensor of the model must be in the file with its shape and dtype, and no other;
    NaN/inf weights are refused unless ``finite=False`` (e.g. to inspect a diverged run).
    """
    path = check_path(path, "path")
    finite = check_bool(finite, "finite")
    meta = read_metadata(path)
    data = metadata_json(meta, "config", path)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: metadata 'config' must be a JSON object, got {type(data).__name__}")
    try:
        cfg = TransformerConfig.from_dict(data)
    except ValueError as exc:
        raise ValueError(f"{path}: bad config: {exc}") from None
    channels = None
    if "channels" in meta:
        names = metadata_json(meta, "channels", path)
        if not (isinstance(names, list) and all(isinstance(n, str) for n in names)):
            raise ValueError(f"{path}: metadata 'channels' must be a JSON list of channel names")
        channels = channel_map(names, cfg.d_model, f"{path}: metadata 'channels'")
    try:
        model = Transformer(cfg, channels)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    want = model.state_dict()
    aux = aux_names(meta, path)
    state = {}
    try:
        with safe_open(str(path), framework="pt") as f:
            keys = set(f.keys())
            if aux - keys:
                raise ValueError(f"{path}: metadata {AUX_KEY!r} lists tensor(s) the file lacks: {sorted(aux - keys)[:5]}")
            keys -= aux
            missing, extra = sorted(set(want) - keys), sorted(keys - set(want))
            if missing:
                raise ValueError(f"{path}: missing tensor(s) {', '.join(missing[:5])}" + (" …" if len(missing) > 5 else ""))
            if extra:
                raise ValueError(f"{path}: unexpected tensor(s) {', '.join(extra[:5])}" + (" …" if len(extra) > 5 else ""))
            for key in sorted(keys):
                sl = f.get_slice(key)
                shape, dtype = tuple(sl.get_shape()), sl.get_dtype()
                if shape != tuple(want[key].shape):
                    raise ValueError(f"{path}: tensor {key} has shape {shape}, expected {tuple(want[key].shape)}")
                if dtype != safetensors_dtype(want[key].dtype):
                    raise ValueError(f"{path}: tensor {key} has dtype {dtype}, expected {cfg.dtype}")
                state[key] = f.get_tensor(key)
    except ValueError:
        raise
    except Exception as exc:  # truncated or corrupt data
        raise ValueError(f"{path}: cannot read the tensors (truncated or corrupt file: {_first_line(exc)})") from None
    if finite:
        for key in sorted(state):
            if not torch.isfinite(state[key]).all():
                raise ValueError(f"{path}: tensor {key} contains NaN or inf")
    with torch.no_grad():
        model.load_state_dict(state, strict=True)
    return model


def aux_names(meta: dict[str, str], path: str | Path) -> set[str]:
    """The names listed by metadata ``aux_tensors`` (empty when absent), checked to be a list
    of strings."""
    if AUX_KEY not in meta:
        return set()
    names = metadata_json(meta, AUX_KEY, path)
    if not (isinstance(names, list) and all(isinstance(n, str) for n in names)):
        raise ValueError(f"{path}: metadata {AUX_KEY!r} must be a JSON list of tensor names")
    return set(names)


def read_aux(path: str | Path) -> dict[str, torch.Tensor]:
    """The ``aux`` tensors written by :func:`save_transformer` ({} when the file has none)."""
    path = check_path(path, "path")
    names = aux_names(read_metadata(path), path)
    if not names:
        return {}
    try:
        with safe_open(str(path), framework="pt") as f:
            lacking = sorted(names - set(f.keys()))
            if lacking:
                raise ValueError(f"{path}: metadata {AUX_KEY!r} lists tensor(s) the file lacks: {lacking[:5]}")
            return {k: f.get_tensor(k) for k in sorted(names)}
    except ValueError:
        raise
    except Exception as exc:  # truncated or corrupt data
        raise ValueError(f"{path}: cannot read the tensors (truncated or corrupt file: {_first_line(exc)})") from None


def channel_map(names, d_model: int, where: str) -> ChannelMap:
    """The channel map of a saved model: a list of ``d_model`` distinct names, or a one-line
    error naming ``where``."""
    if not (isinstance(names, list) and all(isinstance(n, str) for n in names)):
        raise ValueError(f"{where} must be a list of channel names, got {type(names).__name__}")
    if len(names) != d_model:
        raise ValueError(f"{where} lists {len(names)} names but d_model = {d_model}")
    try:
        return ChannelMap(tuple(names))
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None


def nonfinite_tensor(module: torch.nn.Module) -> str | None:
    """The name of the first parameter or buffer of ``module`` holding NaN or inf (None: all
    finite)."""
    for key, value in module.state_dict().items():
        if value.is_floating_point() and not torch.isfinite(value).all():
            return key
    return None


def check_finite_weights(module: torch.nn.Module, what: str) -> None:
    """Refuse a module with a NaN or inf weight (before it is saved or exported)."""
    key = nonfinite_tensor(module)
    if key is not None:
        raise ValueError(f"{what}: tensor {key} contains NaN or inf; such a model is not saved or exported "
                         "(a diverged run? keep its last finite checkpoint)")


def load_state(module: torch.nn.Module, state: dict[str, torch.Tensor], where: str, *, finite: bool = True,
               what: str = "") -> None:
    """Load ``state`` into ``module`` after checking it whole: the same tensor names (none
    missing, none extra), shapes and dtypes as the module's own (never cast), and finite
    values unless ``finite=False``. One-line ``ValueError`` naming ``where`` and the tensor;
    ``what`` is added to a mismatch (e.g. "does not fit a lstm built from its run config")."""
    want = module.state_dict()
    tail = f" ({what})" if what else ""
    missing, extra = sorted(set(want) - set(state)), sorted(set(state) - set(want))
    if missing:
        raise ValueError(f"{where}: missing tensor(s) {', '.join(missing[:5])}" + (" …" if len(missing) > 5 else "") + tail)
    if extra:
        raise ValueError(f"{where}: unexpected tensor(s) {', '.join(extra[:5])}" + (" …" if len(extra) > 5 else "") + tail)
    for key in sorted(state):
        got, ref = state[key], want[key]
        if not isinstance(got, torch.Tensor):
            raise ValueError(f"{where}: {key} is not a tensor")
        if tuple(got.shape) != tuple(ref.shape):
            raise ValueError(f"{where}: tensor {key} has shape {tuple(got.shape)}, expected {tuple(ref.shape)}{tail}")
        if got.dtype != ref.dtype:
            raise ValueError(f"{where}: tensor {key} has dtype {got.dtype}, expected {ref.dtype} (tensors are not "
                             f"cast on load){tail}")
        if finite and got.is_floating_point() and not torch.isfinite(got).all():
            raise ValueError(f"{where}: tensor {key} contains NaN or inf")
    with torch.no_grad():
        module.load_state_dict(state, strict=True)
