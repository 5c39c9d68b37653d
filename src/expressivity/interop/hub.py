"""The hub layout for every model kind: a directory with ``config.json`` and
``model.safetensors``; local directories need no network and no ``huggingface_hub``, a
Hugging Face repo id goes through it (extra ``expressivity[hub]``).

Every kind has the methods ``save_pretrained(dir)`` / ``Kind.from_pretrained(dir_or_repo_id)`` /
``push_to_hub(repo_id)`` (:class:`expressivity.pretrained.PretrainedMixin`, each kind's records
in its own package); the free functions here are thin wrappers that take any kind:
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
``network``        a :class:`~expressivity.cpwl.MaxoutNetwork` (a ReLU net is one): its
                   depth and read-out; ``model.safetensors`` holds its float64 weights
                   (``transformer`` and ``channels`` are null)
=================  ========================================================================

``model.safetensors`` holds exactly the transformer's (for ``run``: the model's) ``state_dict`` (metadata
``{"format": "pt"}``, as the hub writes it), so it loads into our ``Transformer`` with
``strict=True``. Bytes are deterministic: JSON with sorted keys, tensors written by the one
safetensors writer (:func:`expressivity.fileio.write_safetensors`: sorted header, tensors in
name order) — the same writer as training checkpoints and ``save_transformer``. Every file gets
the one file mode (:func:`expressivity.fileio.file_mode`: 0o666 filtered by the umask) and is
moved into place atomically.

Nothing loaded is believed unchecked: ``config.json`` may hold only the keys its kind writes,
each record is validated field by field (a compile record as in ``load_compiled``: lo < hi,
bounds finite and ≥ 0, the transformer's attention and λ), every tensor must have the
module's name, shape and dtype and be finite (:func:`~expressivity.transformer.load_state`),
and a compiled model with its source network is measured against it on sample points of its
domain: a pair further apart than its error bound is refused (an edited ``source_net`` or
weight file).
"""

from __future__ import annotations

from pathlib import Path

from ..compile import CompiledModel
from ..constructions import Construction
from ..cpwl import MaxoutNetwork
from ..fileio import check_path
from ..limits.trained import TrainedModel
from ..model_kinds import kind_of
from ..pretrained import CONFIG_NAME, FORMAT, SOURCE_NET_NAME, WEIGHTS_NAME, resolve
from ..pretrained import read_config as _read_config
from ..transformer import Transformer, read_metadata
from .runs import TrainedRun, checkpoint_metadata, is_train_run_dir, load_run

__all__ = ["CONFIG_NAME", "FORMAT", "KINDS", "SOURCE_NET_NAME", "WEIGHTS_NAME", "from_pretrained", "is_hub_dir",
           "load_any", "load_saved", "model_kind", "read_config", "save_pretrained", "transformer_of"]

Model = Transformer | CompiledModel | Construction | TrainedModel | TrainedRun | MaxoutNetwork
CLASSES: dict[str, type] = {cls.hub_kind: cls for cls in (Transformer, CompiledModel, Construction, TrainedModel,
                                                           TrainedRun, MaxoutNetwork)}
KINDS = tuple(CLASSES)
_KIND_KEYS = {kind: (cls.hub_keys, cls.hub_optional) for kind, cls in CLASSES.items()}


def model_kind(model) -> str:
    """``"transformer"`` | ``"compiled"`` | ``"construction"`` | ``"trained"`` | ``"run"`` | ``"network"``:
    :func:`~expressivity.model_kinds.kind_of`, refusing the kinds the hub layout does not save."""
    kind = kind_of(model, default=None)
    if kind in CLASSES:
        return kind
    raise ValueError(f"model: cannot save a {type(model).__name__}; expected a Transformer, CompiledModel, "
                     "Construction, TrainedModel, MaxoutNetwork or TrainedRun (a trained model of train.MODELS "
                     "with its RunConfig: TrainedRun(model, config))")


def transformer_of(model) -> Transformer:
    """The :class:`Transformer` inside any model kind (a ValueError for a recurrent run)."""
    kind = model_kind(model)
    if kind == "run":
        inner = kind_of(model.model)
        if inner != "transformer" and model.config.init != "random":
            raise ValueError(f"a run fine-tuned from {model.config.init} reads its construction's encoding, not "
                             "token ids: export run.encoder() (the construction with the run's weights) instead")
        if inner != "transformer":
            raise ValueError(f"a {model.kind} model is not a transformer: the ONNX and TransformerLens exports take "
                             "transformers (the hub layout, save_pretrained / --hub, takes every model kind)")
        return model.model
    if kind == "network":
        raise ValueError("a MaxoutNetwork is not a transformer: compile it first (compile_maxout(net, domain), "
                         "or `expressivity compile`), then export the compiled model")
    return model if kind == "transformer" else model.transformer


# --------------------------------------------------------------------------- saving and loading
def save_pretrained(model: Model, directory: str | Path) -> Path:
    """Write ``model`` (any kind) to ``directory`` (created if needed) as config.json +
    model.safetensors: ``model.save_pretrained(directory)``.

    Example::

        cm = compile_maxout(net, (-1.0, 1.0))
        save_pretrained(cm, "my-model")        # my-model/config.json, model.safetensors, …
        assert (from_pretrained("my-model").evaluate(x) == cm.evaluate(x)).all()
    """
    model_kind(model)  # a one-line error for anything that is not a model of ours
    return model.save_pretrained(directory)


def read_config(directory: str | Path) -> dict:
    """The parsed ``config.json`` of a hub directory written by :func:`save_pretrained`: its
    format, kind and keys checked (the records themselves are checked by the loaders)."""
    return _read_config(directory, _KIND_KEYS)


def is_hub_dir(path: str | Path) -> bool:
    """Whether ``path`` is a directory holding a ``config.json`` (the hub layout)."""
    p = Path(path)
    return p.is_dir() and (p / CONFIG_NAME).is_file()


def from_pretrained(directory: str | Path, *, revision: str | None = None, cache_dir: str | Path | None = None,
                    force_download: bool = False, local_files_only: bool = False, token: str | None = None) -> Model:
    """Rebuild the model written by :func:`save_pretrained`, of the kind it was saved as: a
    local directory, or a Hugging Face repo id (``org/name``; revision, cache_dir,
    force_download, local_files_only and token go to huggingface_hub).

    An output directory of ``train_run(out_dir=...)`` / ``expressivity train --out`` (its own
    config.json + model.safetensors) loads too, as a :class:`TrainedRun` of any model kind.
    Everything is checked before it is used (see the module docstring)."""
    d = resolve(directory, revision=revision, cache_dir=cache_dir, force_download=force_download,
                local_files_only=local_files_only, token=token)
    if is_train_run_dir(d):
        return load_run(d)
    if (d / "tl_config.json").is_file() and not (d / CONFIG_NAME).is_file():
        raise ValueError(f"directory {d} is a TransformerLens export (`export --transformer-lens`), not the hub layout: "
                         "load it with expressivity.interop.transformer_lens.load_transformer_lens(dir)")
    config = read_config(d)
    return CLASSES[config["kind"]].from_config(config, d)


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
