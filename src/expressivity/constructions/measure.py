"""A construction measured on sampled strings, per length n (``expressivity construct``).

For each n: ``samples`` strings from :meth:`~expressivity.languages.base.Language.sample_mixed`
(half members when both classes exist), one forward pass for their logits z, then

- accuracy = mean[(z > 0) = (s ∈ L)] against exact membership,
- CE (bits) = mean −log2 P(y | s), P(1 | s) = σ(z) (:func:`.base.ce_bits_from_logits`),

next to the model's size. :func:`registry_rows` describes the registry (parameters with
their defaults, one line on the idea) for listings.
"""

from __future__ import annotations

import inspect

import numpy as np

from ..listing import Listing
from . import REGISTRY
from .base import Construction, ce_bits_from_logits


def measure_by_length(c: Construction, lengths, samples: int, seed: int = 0, progress=None) -> list[dict]:
    """One row per length n: n, members, non_members, accuracy, ce_bits, layers, heads, params.
    ``progress()`` is called after each length."""
    rng = np.random.default_rng(seed)
    cfg = c.transformer.cfg
    size = {"layers": cfg.n_layers, "heads": cfg.n_heads, "params": c.transformer.n_params()}
    rows = []
    for n in lengths:
        strings = c.language.sample_mixed(rng, samples, n)
        labels = c.language.accepts_batch(strings) if strings else np.zeros(0, dtype=bool)
        z = c.logits(strings)  # one forward pass feeds both numbers
        rows.append({"n": n, "members": int(labels.sum()), "non_members": int((~labels).sum()),
                     "accuracy": float(np.mean((z > 0) == labels)),
                     "ce_bits": ce_bits_from_logits(z, labels), **size})
        if progress is not None:
            progress()
    return rows


def registry_rows() -> list[tuple[str, dict, str]]:
    """(name, {parameter: default or inspect.Parameter.empty}, first docstring line) per construction."""
    out = []
    for name, build in REGISTRY.items():
        params = {p.name: p.default for p in inspect.signature(build).parameters.values()}
        doc = inspect.getdoc(build) or ""
        out.append((name, params, doc.splitlines()[0] if doc else ""))
    return out


def registry_listing() -> Listing:
    """``expressivity constructions``: name, parameters (``k=default``, or ``k`` without one)
    and the idea of each construction."""
    rows = tuple((name, ", ".join(f"{k}={v!r}" if v is not inspect.Parameter.empty else k
                                  for k, v in defaults.items()) or "—", description)
                 for name, defaults, description in registry_rows())
    cols = ("name", "parameters (defaults)", "description")
    return Listing(cols, rows, text=cols, no_wrap=(0,), show_lines=True)


def measures_listing(c: Construction, rows: list[dict]) -> Listing:
    """``expressivity construct``: the construction's idea and size above one row per length."""
    s = c.summary()
    heading = (f"{c.name} {c.params}: {c.description}\n{c.attention} attention, d_model = {s['d_model']}, "
               f"d_mlp = {s['d_mlp']}, layer norm = {s['layer_norm']}, nonzero params = {s['n_params_nonzero']}")
    return Listing(("n", "members", "non-members", "accuracy", "CE (bits)", "layers", "heads", "params"),
                   tuple((str(r["n"]), str(r["members"]), str(r["non_members"]), f"{r['accuracy']:.4f}",
                          f"{r['ce_bits']:.6f}", str(r["layers"]), str(r["heads"]), str(r["params"])) for r in rows),
                   heading=heading, framed=True)
