"""The hub layout's mechanics, one home for every model kind: ``save_pretrained`` /
``from_pretrained`` / ``push_to_hub`` as methods (:class:`PretrainedMixin`), a directory of
``config.json`` + safetensors files, and where a name resolves to.

``config.json`` holds ``format: "expressivity.hub/1"``, the model's ``kind`` and the records
that kind writes (each kind's class says which: :attr:`PretrainedMixin.hub_keys`);
``model.safetensors`` the model's tensors (metadata ``{"format": "pt"}``, as the hub writes it).
Bytes are deterministic (sorted JSON; tensors by the one safetensors writer,
:func:`expressivity.fileio.write_safetensors`: sorted header, name order); every file gets the
one file mode (:func:`expressivity.fileio.file_mode`, the umask's) and is moved into place
atomically. A local directory needs nothing else and no network; any other name that looks
like a Hugging Face repo id (``name`` or ``org/name``) is downloaded with
``huggingface_hub.hf_hub_download`` (extra ``expressivity[hub]``), into its cache, and read
as a local directory — checked the same way.

Why not huggingface_hub's ``ModelHubMixin``: it rebuilds a model as ``cls(**config)`` from
its ``__init__`` arguments and writes its own config.json and model card; our kinds are
rebuilt from validated records (a compile record, a registry name, a RunConfig), some with a
second weight file (a compiled model's source network), and loading must work offline
without the package. The method names and keyword arguments are the mixin's.

A leaf: it imports nothing of ours but the bottom leaves :mod:`~expressivity.fileio` and
:mod:`~expressivity.model_kinds` (every class with a ``hub_kind`` registers it there).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import ClassVar

import torch

from .fileio import check_path, make_dir, read_json, write_safetensors, write_text_atomic
from .model_kinds import register

FORMAT = "expressivity.hub/1"
CONFIG_NAME = "config.json"
WEIGHTS_NAME = "model.safetensors"
SOURCE_NET_NAME = "source_net.safetensors"
FILES = (WEIGHTS_NAME, SOURCE_NET_NAME)  # the tensor files a hub directory may hold
COMMON_KEYS = frozenset({"format", "kind", "transformer", "channels"})
_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?$")


class PretrainedMixin:
    """``save_pretrained(dir)`` / ``Cls.from_pretrained(dir_or_repo_id)`` / ``push_to_hub(repo_id)``.

    A model kind sets :attr:`hub_kind` and :attr:`hub_keys` (its records in config.json;
    :attr:`hub_optional` may be absent) and implements ``_hub_records()`` → (records, {file
    name: tensors}) and the classmethod ``_from_hub(config, directory)``, which checks
    everything it reads (``config`` has passed :func:`read_config`)."""

    hub_kind: ClassVar[str]
    hub_keys: ClassVar[frozenset[str]] = frozenset()
    hub_optional: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if "hub_kind" in cls.__dict__:  # the model kind (expressivity.model_kinds.kind_of)
            register(cls.hub_kind, cls)

    def _hub_records(self) -> tuple[dict, dict[str, dict[str, torch.Tensor]]]:
        raise NotImplementedError

    @classmethod
    def _from_hub(cls, config: dict, directory: Path):
        raise NotImplementedError

    def save_pretrained(self, save_directory: str | Path, *, push_to_hub: bool = False, repo_id: str | None = None,
                        token: str | None = None) -> Path:
        """Write the model to ``save_directory`` (created if needed): config.json + model.safetensors
        (+ source_net.safetensors for a compiled model with its network); with ``push_to_hub``,
        upload it to ``repo_id`` (default: the directory's name) through huggingface_hub."""
        records, files = self._hub_records()
        out = write_layout(save_directory, self.hub_kind, records, files)
        if push_to_hub:
            upload(out, repo_id if repo_id is not None else out.name, token=token)
        return out

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path: str | Path, *, revision: str | None = None,
                        cache_dir: str | Path | None = None, force_download: bool = False,
                        local_files_only: bool = False, token: str | None = None):
        """The model saved by :meth:`save_pretrained` in a local directory, or in a Hugging Face
        repo (``org/name``, downloaded by huggingface_hub; ``revision``, ``cache_dir``,
        ``force_download``, ``local_files_only`` and ``token`` are passed to it). The directory
        must hold this class's kind; ``expressivity.interop.from_pretrained`` takes any kind."""
        d = resolve(pretrained_model_name_or_path, revision=revision, cache_dir=cache_dir,
                    force_download=force_download, local_files_only=local_files_only, token=token)
        return cls.from_config(read_config(d, kind_keys(cls), expect=f"{cls.hub_kind} ({cls.__name__})"), d)

    @classmethod
    def from_config(cls, config: dict, directory: Path):
        """The model of a checked ``config`` (:func:`read_config`) and the files beside it."""
        if config["kind"] != cls.hub_kind:
            raise ValueError(f"{Path(directory) / CONFIG_NAME}: holds a {config['kind']} model, not a {cls.hub_kind} "
                             f"({cls.__name__}); expressivity.interop.from_pretrained loads every kind")
        return cls._from_hub(config, Path(directory))

    def push_to_hub(self, repo_id: str, *, token: str | None = None, private: bool | None = None,
                    commit_message: str = "Upload model (expressivity.hub/1)") -> str:
        """Save the model to a temporary directory and upload it to the Hugging Face repo
        ``repo_id`` (created if needed) through huggingface_hub; returns the commit's URL."""
        with tempfile.TemporaryDirectory() as tmp:
            self.save_pretrained(tmp)
            return upload(Path(tmp), repo_id, token=token, private=private, commit_message=commit_message)


def kind_keys(cls) -> dict[str, tuple[frozenset[str], frozenset[str]]]:
    """``{kind: (its keys, the optional ones)}`` of one class (for :func:`read_config`)."""
    return {cls.hub_kind: (cls.hub_keys, cls.hub_optional)}


# --------------------------------------------------------------------------- writing
def check_finite_tensors(tensors: dict[str, torch.Tensor], what: str) -> None:
    """Refuse NaN or inf in any float tensor about to be saved (it could not be loaded back)."""
    for key in sorted(tensors):
        t = tensors[key]
        if t.is_floating_point() and not torch.isfinite(t).all():
            raise ValueError(f"{what}: tensor {key} contains NaN or inf; such a model is not saved or exported "
                             "(a diverged run? keep its last finite checkpoint)")


def write_layout(directory, kind: str, records: dict, files: dict[str, dict[str, torch.Tensor]]) -> Path:
    """Write config.json (format, kind, ``records``) and each of ``files`` (name → tensors) to
    ``directory``; a tensor file of :data:`FILES` not in ``files`` is removed (a stale one from
    an earlier save would be read back)."""
    out = check_path(directory, "directory")
    if out.exists() and not out.is_dir():
        raise ValueError(f"directory {out} is a file; give a directory for the hub layout")
    for tensors in files.values():
        check_finite_tensors(tensors, f"model ({kind})")
    config = {"format": FORMAT, "kind": kind, **records}
    text = json.dumps(config, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    make_dir(out, "directory")
    for name in sorted(files):
        state = {k: v.detach().contiguous().cpu() for k, v in files[name].items()}
        write_safetensors(out / name, state)
    for name in FILES:
        if name not in files and (out / name).exists():
            (out / name).unlink()
    write_text_atomic(out / CONFIG_NAME, text)
    return out


def jsonable(value, what: str):
    """``value`` if it is JSON (it goes into config.json), else a one-line error naming ``what``."""
    try:
        json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):
        raise ValueError(f"{what} {value!r} are not JSON values; they cannot go into config.json") from None
    return value


# --------------------------------------------------------------------------- reading
def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def read_tensors(path) -> dict[str, torch.Tensor]:
    """Every tensor of a safetensors file (name → tensor), or a one-line error."""
    from safetensors import safe_open

    try:
        with safe_open(str(path), framework="pt") as f:
            return {k: f.get_tensor(k) for k in f.keys()}
    except Exception as exc:  # safetensors raises its own error types
        raise ValueError(f"{path} is not a safetensors file: {first_line(exc)}") from None


def record(rec, keys: set[str], where, what: str) -> dict:
    """``rec`` as a dict holding exactly ``keys`` (one line naming ``where`` and ``what`` else)."""
    if not isinstance(rec, dict):
        raise ValueError(f"{where}: {what} must be an object, got {type(rec).__name__}")
    unknown, missing = sorted(set(rec) - keys), sorted(keys - set(rec))
    if unknown:
        raise ValueError(f"{where}: {what} has unknown fields {unknown}; allowed: {sorted(keys)}")
    if missing:
        raise ValueError(f"{where}: {what} misses {missing}")
    return rec


def read_config(directory, kinds: dict[str, tuple[frozenset[str], frozenset[str]]], expect: str | None = None) -> dict:
    """The parsed ``config.json`` of a hub directory: written by ``save_pretrained`` (format),
    of one of ``kinds`` ({kind: (keys, optional keys)}), with exactly the keys that kind writes,
    and a ``model.safetensors`` beside it (the records are checked by the kinds' loaders).
    ``expect`` names the one kind a class's ``from_pretrained`` takes, for its message."""
    d = check_path(directory, "directory")
    if not d.is_dir():
        raise ValueError(f"directory {d} does not exist or is not a directory (expected the hub layout: "
                         f"{CONFIG_NAME} + {WEIGHTS_NAME})")
    path = d / CONFIG_NAME
    if not path.is_file():
        raise ValueError(f"directory {d} has no {CONFIG_NAME}: not a saved model")
    config = read_json(path, CONFIG_NAME)
    if not isinstance(config, dict) or config.get("format") != FORMAT:
        got = config.get("format") if isinstance(config, dict) else None
        raise ValueError(f"{path} was not written by expressivity's save_pretrained "
                         f"(format {got!r}, expected {FORMAT!r})")
    kind = config.get("kind")
    if expect is not None and isinstance(kind, str) and kind not in kinds:
        raise ValueError(f"{path}: holds a {kind} model, not a {expect}; expressivity.interop.from_pretrained "
                         "loads every kind")
    if not isinstance(kind, str) or kind not in kinds:
        raise ValueError(f"{path}: kind must be one of {tuple(kinds)}, got {kind!r}")
    keys, optional = kinds[kind]
    allowed = COMMON_KEYS | keys
    unknown = sorted(set(config) - allowed)
    if unknown:
        raise ValueError(f"{path}: unknown keys {unknown} for kind {kind!r}; allowed: {sorted(allowed)}")
    required = sorted(allowed - set(config) - optional)
    if required:
        raise ValueError(f"{path}: missing keys {required} (kind {kind!r})")
    if not (d / WEIGHTS_NAME).is_file():
        raise ValueError(f"directory {d} has no {WEIGHTS_NAME}")
    return config


# --------------------------------------------------------------------------- the Hugging Face hub
def is_repo_id(name: str) -> bool:
    """Whether ``name`` reads as a Hugging Face repo id (``name`` or ``org/name``) rather than a
    local path: not absolute, no ``~`` or ``..``, and no existing local directory as ``org``."""
    if not _REPO_ID.match(name) or ".." in name or name.endswith((".json", ".safetensors")):
        return False
    return "/" not in name or not Path(name.split("/")[0]).exists()


def _hf():
    try:
        import huggingface_hub
    except ImportError:
        raise ValueError("reading a model from the Hugging Face hub needs the optional package huggingface_hub, "
                         "which is not installed: pip install 'expressivity[hub]' (local directories need "
                         "nothing)") from None
    return huggingface_hub


def resolve(name, *, revision: str | None = None, cache_dir=None, force_download: bool = False,
            local_files_only: bool = False, token: str | None = None) -> Path:
    """The local directory of ``name``: itself when it is a directory, else — when it reads as a
    repo id (:func:`is_repo_id`) — the snapshot huggingface_hub downloads its files into
    (config.json first, then the tensor files it names). Anything else is a one-line error."""
    d = check_path(name, "directory")
    if d.is_dir() or d.exists() or not is_repo_id(str(name)):
        return d  # read_config says what is wrong with a local path
    hf = _hf()
    repo = str(name)
    kw = dict(repo_id=repo, revision=revision, cache_dir=cache_dir, force_download=force_download,
              local_files_only=local_files_only, token=token)
    try:
        config_path = Path(hf.hf_hub_download(filename=CONFIG_NAME, **kw))
        config = read_json(config_path, f"{repo}: its {CONFIG_NAME}")
        wanted = [WEIGHTS_NAME] + ([SOURCE_NET_NAME] if isinstance(config, dict) and config.get("source_net") else [])
        for filename in wanted:
            got = Path(hf.hf_hub_download(filename=filename, **kw))
            if got.parent != config_path.parent:
                raise ValueError(f"{repo}: huggingface_hub put {filename} apart from {CONFIG_NAME}")
    except ValueError:
        raise
    except Exception as exc:  # huggingface_hub's errors: not found, offline, gated, HTTP
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ValueError(f"directory {d} does not exist, and as a Hugging Face repo id {repo!r} it could not be "
                         f"downloaded ({type(exc).__name__}: {first})") from None
    return config_path.parent


def upload(directory: Path, repo_id: str, *, token: str | None = None, private: bool | None = None,
           commit_message: str = "Upload model (expressivity.hub/1)") -> str:
    """Upload a saved hub directory to the Hugging Face repo ``repo_id`` (created if needed)."""
    if not isinstance(repo_id, str) or not _REPO_ID.match(repo_id):
        raise ValueError(f"repo_id must be a Hugging Face repo id (name or org/name), got {repo_id!r}")
    hf = _hf()
    api = hf.HfApi(token=token)
    api.create_repo(repo_id, private=private, exist_ok=True)
    info = api.upload_folder(folder_path=os.fspath(directory), repo_id=repo_id, commit_message=commit_message,
                             allow_patterns=[CONFIG_NAME, *FILES])
    return str(getattr(info, "commit_url", info))
