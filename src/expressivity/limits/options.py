"""The options of ``expressivity sensitivity``, ``restrict`` and ``dyck-ce`` as data (an
:class:`~expressivity.train.options.Opt` each: name, type, default, help), declared once beside
the measurements they configure; the command line builds its parameters from them. The random
model's options (``RANDOM_MODEL``: None is "not given", its default) are those of
:func:`.models.resolve_with_options`. Imports nothing that imports torch."""

from __future__ import annotations

from pathlib import Path

from ..train.options import Opt

RANDOM_MODEL: tuple[Opt, ...] = (
    Opt("attention", "AttentionName", "random model: the attention (default softmax)"),
    Opt("layer_norm", "LayerNormName", "random model: the layer norm (default none)"),
    Opt("eps", float, "random model: layer-norm eps (default 1e-5)"),
    Opt("lam", float, "random model: λ (default 0.1)"),
    Opt("causal", bool, "random model: causal attention", flag="--causal/--no-causal"),
)

SENSITIVITY: tuple[Opt, ...] = (
    Opt("model", str, "random | a construction (parity, first, dyck, ...) | a .safetensors file", default="parity"),
    Opt("param", default=(), shared=True),
    Opt("language", str, "language of the strings (default: the construction's; uniform random strings for other "
        "models)"),
    Opt("lengths", default="8,16,32,64,128", shared=True),
    Opt("strings", int, "strings per length (all their n flips are batched)", default=4),
    Opt("seed", default=0, shared=True),
    *RANDOM_MODEL,
    Opt("plot", shared=True),
    Opt("json_out", Path, "write the rows as JSON", flag="--json"),
)

RESTRICT: tuple[Opt, ...] = (
    Opt("model", str, "random (hardmax) | a construction | a .safetensors file", default="random"),
    Opt("param", default=(), shared=True),
    Opt("n", int, "input length for the constructive depth reduction", default=24),
    Opt("lengths", default="8,16,32,64", shared=True),
    Opt("free_fraction", float, "fraction C of free inputs (empirical)", default=0.5, flag="--C"),
    Opt("restrictions", int, "random restrictions per length", default=4),
    Opt("completions", int, "random completions per restriction", default=8),
    Opt("k", int, "Stage 2/3: top-k key items per event", default=4),
    Opt("q", float, "Stage 3: probability of fixing a free input", default=0.4),
    Opt("seed", default=0, shared=True),
    Opt("as_hardmax", bool, "evaluate a softmax model with hardmax", default=False,
        flag="--as-hardmax/--no-as-hardmax"),
    Opt("constructive", bool, "also run the depth reduction (binary alphabets)", default=True,
        flag="--constructive/--no-constructive"),
    Opt("plot", shared=True),
)

DYCK_CE: tuple[Opt, ...] = (
    Opt("quick", bool, "the ~1-minute setting (n = 8, 16, 32; 150 steps)", default=True, flag="--quick/--no-quick"),
    Opt("lengths", str, "even lengths n, e.g. 8,16,32 (overrides the preset)"),
    Opt("steps", int, "optimiser steps per (model, n)"),
    Opt("models", str, "comma-separated: transformer, lstm", default="transformer,lstm"),
    Opt("seed", default=0, shared=True),
    Opt("plot", shared=True),
)
