"""Small saved models of every kind, built once per test module and copied per test, for the
bad-input corpora of loaders and writers (tests/test_bad_input_hub.py, _export, _os).

``build(root)`` writes under ``root``:

* ``m.safetensors`` (hardmax compiled, 1-D), ``ms.safetensors`` (softmax, λ = 100), ``spec.json``
  (their network, with its domain), ``tr.safetensors`` (a plain float64 transformer);
* hub directories ``hub_compiled`` (with ``source_net.safetensors``), ``hub_net`` (its
  network alone, kind ``network``), ``hub_soft``,
  ``hub_tr``, ``hub_first`` (a construction), ``hub_run`` (an LSTM training run);
* training output directories ``run`` (transformer) and ``run_lstm``.

Editing helpers change one thing in a copy: :func:`edit_json` (a config.json),
:func:`edit_tensors` (a safetensors file's tensors and/or metadata), :func:`poison` (one NaN).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import torch
from safetensors import safe_open
from safetensors.torch import save_file

SPEC = {"type": "random", "in_dim": 1, "widths": [3], "ranks": 2, "seed": 0, "domain": {"lo": 0, "hi": 1}}
RUN = dict(task="parity", d_model=4, heads=1, layers=1, steps=2, batch_size=2, train_lengths=(2, 3),
           test_lengths=(4,), eval_batch=2, checkpoint_every=1)


def build(root: Path) -> Path:
    from expressivity import constructions
    from expressivity.compile import compile_maxout
    from expressivity.compile.spec import parse_spec
    from expressivity.interop import load_run, save_pretrained
    from expressivity.train import RunConfig, train_run
    from expressivity.transformer import Transformer, TransformerConfig, save_transformer

    root.mkdir(parents=True, exist_ok=True)
    (root / "spec.json").write_text(json.dumps(SPEC))
    net, domain = parse_spec(SPEC)
    cm = compile_maxout(net, domain)
    cm.save(root / "m.safetensors")
    save_pretrained(cm, root / "hub_compiled")
    save_pretrained(net, root / "hub_net")  # kind "network"
    soft = compile_maxout(net, domain, attention="softmax", lam=100.0)
    soft.save(root / "ms.safetensors")
    save_pretrained(soft, root / "hub_soft")
    tr = Transformer(TransformerConfig(d_model=4, n_layers=1, n_heads=1, d_head=2, d_mlp=4, d_vocab=3, d_out=2,
                                       n_ctx=8, dtype="float64"))
    save_transformer(tr, root / "tr.safetensors")
    save_pretrained(tr, root / "hub_tr")
    save_pretrained(constructions.get("first"), root / "hub_first")
    train_run(RunConfig(model="transformer", **RUN), out_dir=root / "run")
    train_run(RunConfig(model="lstm", **RUN), out_dir=root / "run_lstm")
    save_pretrained(load_run(root / "run_lstm"), root / "hub_run")
    return root


def copy_into(src: Path, dst: Path) -> Path:
    """Copy every saved model of ``src`` into ``dst`` (a test's own tmp_path)."""
    for p in src.iterdir():
        (shutil.copytree if p.is_dir() else shutil.copy)(p, dst / p.name)
    return dst


def edit_json(path: Path, fn: Callable[[dict], object]) -> None:
    """Apply ``fn`` (which edits in place) to the JSON document at ``path``."""
    doc = json.loads(path.read_text())
    fn(doc)
    path.write_text(json.dumps(doc))


def edit_tensors(path: Path, fn: Callable[[dict], object] | None = None,
                 meta_fn: Callable[[dict], object] | None = None) -> None:
    """Rewrite a safetensors file after ``fn(tensors)`` / ``meta_fn(metadata)`` edited them in place
    (``fn`` may also return a new dict of tensors)."""
    with safe_open(str(path), framework="pt") as f:
        meta = dict(f.metadata() or {})
        tensors = {k: f.get_tensor(k).clone() for k in f.keys()}
    out = fn(tensors) if fn else None
    if meta_fn:
        meta_fn(meta)
    save_file(out if isinstance(out, dict) else tensors, str(path), metadata=meta)


def edit_record(path: Path, key: str, fn: Callable[[dict], object]) -> None:
    """Edit the JSON metadata entry ``key`` (e.g. ``compiled``, ``config``) of a safetensors file."""
    def meta_fn(meta: dict) -> None:
        rec = json.loads(meta[key])
        fn(rec)
        meta[key] = json.dumps(rec)

    edit_tensors(path, meta_fn=meta_fn)


def poison(path: Path, value: float = float("nan")) -> None:
    """Put ``value`` (NaN by default) into the first float tensor of a safetensors file."""
    def fn(t: dict) -> None:
        key = next(k for k in sorted(t) if t[k].is_floating_point() and t[k].numel())
        t[key].view(-1)[0] = value

    edit_tensors(path, fn)


def as_dtype(dtype: torch.dtype) -> Callable[[dict], dict]:
    return lambda t: {k: v.to(dtype) for k, v in t.items()}
