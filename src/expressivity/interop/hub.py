"""The Hugging Face hub layout for every model kind: a directory with ``config.json`` and
``model.safetensors`` (local directories only; no network, no ``huggingface_hub`` needed).

``save_pretrained(model, dir)`` / ``from_pretrained(dir)`` round-trip, to bitwise-identical
outputs, each kind of model the project has:

=================  ========================================================================
kind               what ``config.json`` adds to the transformer's config and channel map
=================  ========================================================================
``transformer``    nothing (a plain :class:`~expressivity.transformer.Transformer`)
``compiled``       the compile record of :class:`~expressivity.compile.CompiledModel` (domain
                   [lo, hi], attention, λ, per-layer error bounds ε_k, big-M) and, when the
                   model has its source network, that network's shape; its weights are in
                   ``source_net.safetensors`` (so ``verify`` needs no spec)
``construction``   the registry name and parameters of a hand-built construction (its
                   encoder is code: it is rebuilt from the registry, then given the saved
                   weights)
``trained``        the language (name and parameters) and the read-out kind of a
                   :class:`~expressivity.limits.trained.TrainedModel`
``run``            a :class:`~expressivity.interop.runs.TrainedRun` — a trained model of any
                   registered kind (transformer, rnn, lstm, stack_rnn, tape_rnn, …): its
                   whole RunConfig (``"run"``), from which ``train.build_model`` rebuilds
                   it; ``"transformer"`` is that transformer's config, or null for the
                   recurrent models
=================  ========================================================================

``model.safetensors`` holds exactly the transformer's (for ``run``: the model's) ``state_dict`` (metadata
``{"format": "pt"}``, as the hub writes it), so it loads into our ``Transformer`` with
``strict=True``. Bytes are deterministic: JSON with sorted keys, tensors in safetensors'
fixed order. Files are created with ``open`` (mode 0o666 filtered by the umask; safetensors'
own ``save_file`` would make them 0o600) and moved into place atomically.

Nothing loaded is believed unchecked: ``config.json`` may hold only the keys its kind writes,
each record is validated field by field (a compile record as in ``load_compiled``: lo < hi,
bounds finite and ≥ 0, the transformer's attention and λ), every tensor must have the
module's name, shape and dtype and be finite (:func:`~expressivity.transformer.load_state`),
and a compiled model with its source network is measured against it on sample points of its
domain: a pair further apart than its error bound is refused (an edited ``source_net`` or
weight file).
"""

from __future__ import annotations

import dataclasses
import inspect
import json
from pathlib import Path

import torch
from safetensors.torch import save as safetensors_bytes

from ..checks import check_path, make_dir, write_atomic, write_bytes_atomic
from ..compile import CompiledModel
from ..compile.compiled import assemble, check_record, net_from_tensors, net_record, net_tensors
from ..constructions import REGISTRY as CONSTRUCTIONS
from ..constructions import Construction
from ..cpwl import MaxoutNetwork
from ..languages import REGISTRY as LANGUAGES
from ..languages import Language
from ..limits.trained import TrainedModel
from ..transformer import (
    Transformer,
    TransformerConfig,
    check_finite_weights,
    load_state,
    read_metadata,
)
from ..transformer.io import channel_map
from .runs import (
    TrainedRun,
    checkpoint_metadata,
    is_checkpoint,
    load_run,
    read_tensors,
    rebuild,
    run_config,
)

FORMAT = "expressivity.hub/1"
CONFIG_NAME = "config.json"
WEIGHTS_NAME = "model.safetensors"
SOURCE_NET_NAME = "source_net.safetensors"
KINDS = ("transformer", "compiled", "construction", "trained", "run")
_COMMON_KEYS = {"format", "kind", "transformer", "channels"}
_KIND_KEYS = {"transformer": set(), "compiled": {"compiled", "source_net"}, "construction": {"construction"},
              "trained": {"trained"}, "run": {"run"}}  # the keys save_pretrained writes, per kind

Model = Transformer | CompiledModel | Construction | TrainedModel | TrainedRun


def model_kind(model) -> str:
    """``"transformer"`` | ``"compiled"`` | ``"construction"`` | ``"trained"`` | ``"run"``."""
    if isinstance(model, TrainedRun):
        return "run"
    if isinstance(model, CompiledModel):
        return "compiled"
    if isinstance(model, Construction):
        return "construction"
    if isinstance(model, TrainedModel):
        return "trained"
    if isinstance(model, Transformer):
        return "transformer"
    raise ValueError(f"model: cannot save a {type(model).__name__}; expected a Transformer, CompiledModel, "
                     "Construction, TrainedModel or TrainedRun (a trained model of train.MODELS with its RunConfig: "
                     "TrainedRun(model, config))")


def transformer_of(model) -> Transformer:
    """The :class:`Transformer` inside any model kind (a ValueError for a recurrent run)."""
    kind = model_kind(model)
    if kind == "run":
        if not isinstance(model.model, Transformer) and model.config.init != "random":
            raise ValueError(f"a run fine-tuned from {model.config.init} reads its construction's encoding, not "
                             "token ids: export run.encoder() (the construction with the run's weights) instead")
        if not isinstance(model.model, Transformer):
            raise ValueError(f"a {model.kind} model is not a transformer: the ONNX and TransformerLens exports take "
                             "transformers (the hub layout, save_pretrained / --hub, takes every model kind)")
        return model.model
    return model if kind == "transformer" else model.transformer


# --------------------------------------------------------------------------- saving
def save_pretrained(model: Model, directory: str | Path) -> Path:
    """Write ``model`` to ``directory`` (created if needed) as config.json + model.safetensors.

    Example::

        cm = compile_maxout(net, (-1.0, 1.0))
        save_pretrained(cm, "my-model")        # my-model/config.json, model.safetensors, …
        assert (from_pretrained("my-model").evaluate(x) == cm.evaluate(x)).all()
    """
    kind = model_kind(model)
    module = model.model if kind == "run" else transformer_of(model)
    tr = module if isinstance(module, Transformer) else None
    out = check_path(directory, "directory")
    if out.exists() and not out.is_dir():
        raise ValueError(f"directory {out} is a file; give a directory for the hub layout")
    check_finite_weights(module, f"model ({kind})")  # it could not be loaded back
    config: dict = {
        "format": FORMAT,
        "kind": kind,
        "transformer": tr.cfg.to_dict() if tr is not None else None,
        "channels": list(tr.channels.names) if tr is not None and tr.channels is not None else None,
    }
    source_net = None
    if kind == "run":
        config["run"] = model.config.to_dict()
    elif kind == "compiled":
        config["compiled"] = model.metadata()
        if model.net is not None:
            source_net = net_tensors(model.net)
            config["source_net"] = net_record(model.net)
    elif kind == "construction":
        config["construction"] = {"name": model.name, "params": _jsonable(model.params, "construction params")}
        if model.name not in CONSTRUCTIONS:
            raise ValueError(f"construction {model.name!r} is not in the registry; it cannot be rebuilt on load")
    elif kind == "trained":
        config["trained"] = {"language": _language_record(model.language), "kind": model.kind}
    make_dir(out, "directory")
    # safetensors' save_file creates its file with mode 0o600; writing its bytes ourselves keeps the umask
    write_bytes_atomic(out / WEIGHTS_NAME, safetensors_bytes(_state(module), metadata={"format": "pt"}))
    if source_net is not None:
        write_bytes_atomic(out / SOURCE_NET_NAME, safetensors_bytes(source_net, metadata={"format": "pt"}))
    elif (out / SOURCE_NET_NAME).exists():
        (out / SOURCE_NET_NAME).unlink()  # a stale file from an earlier save would be read back
    text = json.dumps(config, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    write_atomic(out / CONFIG_NAME, lambda p: p.write_text(text, encoding="utf-8"))
    return out


def _state(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().contiguous().cpu() for k, v in module.state_dict().items()}


def _jsonable(value, what: str):
    try:
        json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):
        raise ValueError(f"{what} {value!r} are not JSON values; they cannot go into config.json") from None
    return value


def _language_record(lang: Language) -> dict:
    name = getattr(lang, "name", None)
    if LANGUAGES.get(name) is not type(lang):
        raise ValueError(f"language {type(lang).__name__} is not in the language registry; it cannot be saved")
    names = [p for p in inspect.signature(type(lang).__init__).parameters if p != "self"]
    params = {p: getattr(lang, p) for p in names if hasattr(lang, p)}
    return {"name": name, "params": _jsonable(params, "language params")}


# --------------------------------------------------------------------------- loading
def read_config(directory: str | Path) -> dict:
    """The parsed ``config.json`` of a hub directory written by :func:`save_pretrained`: its
    format, kind and keys checked (the records themselves are checked by the loaders)."""
    d = check_path(directory, "directory")
    if not d.is_dir():
        raise ValueError(f"directory {d} does not exist or is not a directory (expected the hub layout: "
                         f"{CONFIG_NAME} + {WEIGHTS_NAME})")
    path = d / CONFIG_NAME
    if not path.is_file():
        raise ValueError(f"directory {d} has no {CONFIG_NAME}: not a saved model")
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path} is not valid JSON ({exc})") from None
    except OSError as exc:
        raise ValueError(f"{path} cannot be read ({exc.strerror or exc})") from None
    if not isinstance(config, dict) or config.get("format") != FORMAT:
        got = config.get("format") if isinstance(config, dict) else None
        raise ValueError(f"{path} was not written by expressivity's save_pretrained "
                         f"(format {got!r}, expected {FORMAT!r})")
    kind = config.get("kind")
    if not isinstance(kind, str) or kind not in KINDS:
        raise ValueError(f"{path}: kind must be one of {KINDS}, got {kind!r}")
    allowed = _COMMON_KEYS | _KIND_KEYS[kind]
    unknown = sorted(set(config) - allowed)
    if unknown:
        raise ValueError(f"{path}: unknown keys {unknown} for kind {kind!r}; allowed: {sorted(allowed)}")
    required = sorted((_COMMON_KEYS | _KIND_KEYS[kind]) - set(config) - {"source_net"})
    if required:
        raise ValueError(f"{path}: missing keys {required} (kind {kind!r})")
    if not (d / WEIGHTS_NAME).is_file():
        raise ValueError(f"directory {d} has no {WEIGHTS_NAME}")
    return config


def is_hub_dir(path: str | Path) -> bool:
    """Whether ``path`` is a directory holding a ``config.json`` (the hub layout)."""
    p = Path(path)
    return p.is_dir() and (p / CONFIG_NAME).is_file()


def from_pretrained(directory: str | Path) -> Model:
    """Rebuild the model written by :func:`save_pretrained`, of the kind it was saved as.

    An output directory of ``train_run(out_dir=...)`` / ``expressivity train --out`` (its own
    config.json + model.safetensors) loads too, as a :class:`TrainedRun` of any model kind.
    Everything is checked before it is used (see the module docstring)."""
    d = check_path(directory, "directory")
    if _is_train_run_dir(d):
        return load_run(d)
    config = read_config(d)
    where = d / CONFIG_NAME
    if config["kind"] == "run":
        run = rebuild(run_config(config["run"], str(where)), read_tensors(d / WEIGHTS_NAME), str(d / WEIGHTS_NAME))
        built = run.model.cfg.to_dict() if isinstance(run.model, Transformer) else None
        if config.get("transformer") != built:
            raise ValueError(f"{where}: its run config builds another transformer than the one saved "
                             "(config differs); it was saved by another version")
        return run
    tr = _transformer(config, d)
    kind = config["kind"]
    if kind == "transformer":
        return tr
    if kind == "compiled":
        return _compiled(tr, config, d)
    if kind == "construction":
        return _construction(tr, config["construction"], where)
    return _trained(tr, config["trained"], where)


def _transformer(config: dict, d: Path) -> Transformer:
    """The transformer of ``config.json`` with the checked weights of ``model.safetensors``."""
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


def load_any(path: str | Path) -> Model:
    """Any saved model: a hub directory (:func:`from_pretrained`, train output directories
    included) or one of our ``.safetensors`` files — compiled (``expressivity compile``),
    trained (``expressivity train``) or a plain transformer."""
    p = check_path(path, "model")
    if p.is_dir():
        return from_pretrained(p)
    if not p.is_file():
        raise ValueError(f"model {p} does not exist (expected a .safetensors file or a hub directory)")
    if p.suffix != ".safetensors":
        raise ValueError(f"model {p}: expected a .safetensors file or a hub directory, got {p.suffix or 'no suffix'}")
    if "run_config" in checkpoint_metadata(p):  # a training checkpoint, of any model kind
        return load_run(p)
    return load_saved(p)


def load_saved(path: str | Path) -> CompiledModel | Transformer:
    """One of our ``.safetensors`` files that is not a training checkpoint: a compiled model
    (``expressivity compile``; its metadata has ``compiled``) or a plain transformer."""
    if "compiled" in read_metadata(path):
        from ..compile import load_compiled

        return load_compiled(path)
    from ..transformer import load_transformer

    return load_transformer(path)


def _is_train_run_dir(d: Path) -> bool:
    """An output directory of ``train_run``: its config.json is the RunConfig, and its
    model.safetensors carries the run config as metadata (ours carries ``{"format": "pt"}``)."""
    return (d / CONFIG_NAME).is_file() and is_checkpoint(d)


def _record(rec, keys: set[str], where, what: str) -> dict:
    """``rec`` as a dict holding exactly ``keys`` (one line naming ``where`` and ``what`` else)."""
    if not isinstance(rec, dict):
        raise ValueError(f"{where}: {what} must be an object, got {type(rec).__name__}")
    unknown, missing = sorted(set(rec) - keys), sorted(keys - set(rec))
    if unknown:
        raise ValueError(f"{where}: {what} has unknown fields {unknown}; allowed: {sorted(keys)}")
    if missing:
        raise ValueError(f"{where}: {what} misses {missing}")
    return rec


def _source_net(config: dict, d: Path) -> MaxoutNetwork | None:
    """The source network of a compiled hub directory (``source_net`` + its tensors), checked."""
    rec = config.get("source_net")
    if rec is None:
        return None
    where, path = d / CONFIG_NAME, d / SOURCE_NET_NAME
    _record(rec, {"depth", "readout"}, where, "source_net")
    if not path.is_file():
        raise ValueError(f"directory {d} has no {SOURCE_NET_NAME}, which {CONFIG_NAME} says it has (source_net)")
    return net_from_tensors(rec, read_tensors(path), str(where), str(path))


def _compiled(tr: Transformer, config: dict, d: Path) -> CompiledModel:
    fields = check_record(config["compiled"], d / CONFIG_NAME, tr)
    return assemble(tr, fields, _source_net(config, d), f"{d / WEIGHTS_NAME}", f"its {SOURCE_NET_NAME}")


def _construction(tr: Transformer, rec, where: Path) -> Construction:
    rec = _record(rec, {"name", "params"}, where, "construction")
    name, params = rec["name"], rec["params"]
    if not isinstance(name, str) or name not in CONSTRUCTIONS:
        raise ValueError(f"{where}: unknown construction {name!r}; choose one of {sorted(CONSTRUCTIONS)}")
    if not isinstance(params, dict):
        raise ValueError(f"{where}: construction.params must be an object, got {type(params).__name__}")
    try:
        rebuilt = CONSTRUCTIONS[name](**params)
    except TypeError as exc:
        raise ValueError(f"{where}: construction.params of {name!r}: {exc}") from None
    except ValueError as exc:
        raise ValueError(f"{where}: construction.params: {exc}") from None
    if rebuilt.transformer.cfg != tr.cfg:
        raise ValueError(f"{where}: construction {name!r} with {params} builds a different transformer than the saved "
                         "one (config differs); it was saved by another version")
    return dataclasses.replace(rebuilt, transformer=tr)


def _trained(tr: Transformer, rec, where: Path) -> TrainedModel:
    rec = _record(rec, {"language", "kind"}, where, "trained")
    lang = _record(rec["language"], {"name", "params"}, where, "trained.language")
    if not isinstance(lang["name"], str) or lang["name"] not in LANGUAGES:
        raise ValueError(f"{where}: unknown language {lang['name']!r}")
    if not isinstance(lang["params"], dict):
        raise ValueError(f"{where}: trained.language.params must be an object, got {type(lang['params']).__name__}")
    try:
        language = LANGUAGES[lang["name"]](**lang["params"])
        return TrainedModel(tr, language, rec["kind"])
    except TypeError as exc:
        raise ValueError(f"{where}: trained: {exc}") from None
    except ValueError as exc:
        raise ValueError(f"{where}: trained: {exc}") from None
