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
"""

from __future__ import annotations

import dataclasses
import inspect
import json
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import save as safetensors_bytes

from ..checks import write_atomic
from ..compile import CompiledModel
from ..constructions import REGISTRY as CONSTRUCTIONS
from ..constructions import Construction
from ..cpwl import MaxoutNetwork
from ..languages import REGISTRY as LANGUAGES
from ..languages import Language
from ..limits.trained import TrainedModel
from ..transformer import ChannelMap, Transformer, TransformerConfig, read_metadata
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
    out = Path(directory)
    if out.exists() and not out.is_dir():
        raise ValueError(f"directory {out} is a file; give a directory for the hub layout")
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
            source_net = _net_tensors(model.net)
            config["source_net"] = {"depth": model.net.depth, "readout": model.net.readout is not None}
    elif kind == "construction":
        config["construction"] = {"name": model.name, "params": _jsonable(model.params, "construction params")}
        if model.name not in CONSTRUCTIONS:
            raise ValueError(f"construction {model.name!r} is not in the registry; it cannot be rebuilt on load")
    elif kind == "trained":
        config["trained"] = {"language": _language_record(model.language), "kind": model.kind}
    out.mkdir(parents=True, exist_ok=True)
    # safetensors' save_file creates its file with mode 0o600; writing its bytes ourselves keeps the umask
    weights = safetensors_bytes(_state(module), metadata={"format": "pt"})
    write_atomic(out / WEIGHTS_NAME, lambda p: p.write_bytes(weights))
    if source_net is not None:
        net_bytes = safetensors_bytes(source_net, metadata={"format": "pt"})
        write_atomic(out / SOURCE_NET_NAME, lambda p: p.write_bytes(net_bytes))
    elif (out / SOURCE_NET_NAME).exists():
        (out / SOURCE_NET_NAME).unlink()  # a stale file from an earlier save would be read back
    text = json.dumps(config, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    write_atomic(out / CONFIG_NAME, lambda p: p.write_text(text, encoding="utf-8"))
    return out


def _state(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().contiguous().cpu() for k, v in module.state_dict().items()}


def _net_tensors(net: MaxoutNetwork) -> dict[str, torch.Tensor]:
    t: dict[str, torch.Tensor] = {}
    for k, layer in enumerate(net.layers):
        t[f"layers.{k}.W"] = torch.tensor(np.asarray(layer.W, dtype=np.float64))
        t[f"layers.{k}.b"] = torch.tensor(np.asarray(layer.b, dtype=np.float64))
    if net.readout is not None:
        t["readout.A"] = torch.tensor(np.asarray(net.readout[0], dtype=np.float64))
        t["readout.c"] = torch.tensor(np.asarray(net.readout[1], dtype=np.float64))
    return t


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
    """The parsed ``config.json`` of a hub directory written by :func:`save_pretrained`."""
    d = Path(directory)
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
    if not isinstance(config, dict) or config.get("format") != FORMAT:
        got = config.get("format") if isinstance(config, dict) else None
        raise ValueError(f"{path} was not written by expressivity's save_pretrained "
                         f"(format {got!r}, expected {FORMAT!r})")
    if config.get("kind") not in KINDS:
        raise ValueError(f"{path}: kind must be one of {KINDS}, got {config.get('kind')!r}")
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
    config.json + model.safetensors) loads too, as a :class:`TrainedRun` of any model kind."""
    d = Path(directory)
    if _is_train_run_dir(d):
        return load_run(d)
    config = read_config(d)
    if config["kind"] == "run":
        run = rebuild(run_config(config.get("run"), str(d / CONFIG_NAME)), read_tensors(d / WEIGHTS_NAME),
                      str(d / WEIGHTS_NAME))
        built = run.model.cfg.to_dict() if isinstance(run.model, Transformer) else None
        if config.get("transformer") != built:
            raise ValueError(f"{d / CONFIG_NAME}: its run config builds another transformer than the one saved "
                             "(config differs); it was saved by another version")
        return run
    try:
        cfg = TransformerConfig.from_dict(config["transformer"])
        channels = ChannelMap(tuple(config["channels"])) if config.get("channels") is not None else None
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{d / CONFIG_NAME}: bad transformer config ({exc})") from None
    tr = Transformer(cfg, channels)
    state = read_tensors(d / WEIGHTS_NAME)
    try:
        with torch.no_grad():
            tr.load_state_dict(state, strict=True)
    except RuntimeError as exc:
        raise ValueError(f"{d / WEIGHTS_NAME} does not match config.json: {' '.join(str(exc).split())}") from None
    tr.eval()
    kind = config["kind"]
    if kind == "transformer":
        return tr
    try:
        if kind == "compiled":
            return _compiled(tr, config, d)
        if kind == "construction":
            return _construction(tr, config["construction"])
        rec = config["trained"]
        lang = rec["language"]
        if lang.get("name") not in LANGUAGES:
            raise ValueError(f"{d / CONFIG_NAME}: unknown language {lang.get('name')!r}")
        return TrainedModel(tr, LANGUAGES[lang["name"]](**lang.get("params", {})), rec.get("kind", "recognition"))
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"{d / CONFIG_NAME}: bad {kind} record ({type(exc).__name__}: {exc})") from None


def load_any(path: str | Path) -> Model:
    """Any saved model: a hub directory (:func:`from_pretrained`, train output directories
    included) or one of our ``.safetensors`` files — compiled (``expressivity compile``),
    trained (``expressivity train``) or a plain transformer."""
    p = Path(path)
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


def _compiled(tr: Transformer, config: dict, d: Path) -> CompiledModel:
    rec = config["compiled"]
    net = None
    if config.get("source_net") is not None:
        t = {k: v.double().numpy() for k, v in read_tensors(d / SOURCE_NET_NAME).items()}
        depth = int(config["source_net"]["depth"])
        layers = [(t[f"layers.{k}.W"], t[f"layers.{k}.b"]) for k in range(depth)]
        readout = (t["readout.A"], t["readout.c"]) if config["source_net"]["readout"] else None
        net = MaxoutNetwork.from_weights(layers, readout)
    return CompiledModel(
        transformer=tr,
        net=net,
        lo=np.asarray(rec["lo"], dtype=np.float64),
        hi=np.asarray(rec["hi"], dtype=np.float64),
        attention=rec["attention"],
        lam=rec["lam"],
        layer_errors=tuple(rec["layer_errors"]),
        output_error=float(rec["output_error"]),
        big_m=tuple(rec["big_m"]),
        roundoff_error=float(rec.get("roundoff_error", 0.0)),
    )


def _construction(tr: Transformer, rec: dict) -> Construction:
    name, params = rec.get("name"), rec.get("params") or {}
    if name not in CONSTRUCTIONS:
        raise ValueError(f"unknown construction {name!r}; choose one of {sorted(CONSTRUCTIONS)}")
    rebuilt = CONSTRUCTIONS[name](**params)
    if rebuilt.transformer.cfg != tr.cfg:
        raise ValueError(f"construction {name!r} with {params} builds a different transformer than the saved "
                         "one (config differs); it was saved by another version")
    return dataclasses.replace(rebuilt, transformer=tr)
