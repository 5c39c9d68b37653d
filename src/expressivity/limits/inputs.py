"""The checked inputs of ``expressivity sensitivity`` and ``restrict``, from their options
(the names of :mod:`.options`): every path, length and count checked, and the model built,
before any measurement starts, so a bad option fails in one line naming it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..fileio import check_output_path
from ..rules import check_int, parse_lengths, parse_params


@dataclass(frozen=True)
class SensitivityInputs:
    """Lemma 5's measurement as asked: the model, the strings' language (None: the model's own
    or uniform random strings) and the lengths n."""

    model: Any
    language: Any
    lengths: list[int]


@dataclass(frozen=True)
class RestrictInputs:
    """Theorem 1's measurements as asked: the hard-attention model (strings read at a CLS token
    for the random model), the lengths n and the depth reduction's config."""

    model: Any
    lengths: list[int]
    reduction: Any


def sensitivity_inputs(o) -> SensitivityInputs:
    """``sensitivity``'s options (a namespace of :data:`.options.SENSITIVITY`) checked."""
    from .. import languages
    from .models import resolve_with_options
    from .plots import check_plot_path

    check_plot_path(o.plot)
    if o.json_out is not None:
        check_output_path(o.json_out, "--json")
    ns = parse_lengths(o.lengths, "--lengths")
    check_int(o.strings, "--strings", min=1)
    m = resolve_with_options(o.model, parse_params(o.param), seed=o.seed, attention=o.attention,
                             layer_norm=o.layer_norm, eps=o.eps, lam=o.lam, causal=o.causal, n_ctx=max(ns) + 1, vocab=2)
    return SensitivityInputs(m, languages.get_language(o.language) if o.language else None, ns)


def restrict_inputs(o) -> RestrictInputs:
    """``restrict``'s options (a namespace of :data:`.options.RESTRICT`) checked; with
    ``--constructive`` the depth reduction refuses a model or size it cannot take here."""
    from .depth_reduction import ReductionConfig, reduction_setup
    from .encoder import TokenEncoder
    from .models import resolve_model
    from .plots import check_plot_path

    check_plot_path(o.plot)
    ns = parse_lengths(o.lengths, "--lengths")
    check_int(o.n, "--n", min=2)
    check_int(o.restrictions, "--restrictions", min=1)
    check_int(o.completions, "--completions", min=1)
    m = resolve_model(o.model, parse_params(o.param), seed=o.seed, attention="hardmax", n_ctx=max([*ns, o.n]) + 1,
                      vocab=3)
    if o.model == "random":  # strings over {0, 1} read at a CLS token 2 after them
        m = TokenEncoder(m, symbols=(0, 1), suffix=(2,), readout=-1)
    red_cfg = ReductionConfig(k=o.k, q=o.q)
    if o.constructive:
        reduction_setup(m, o.n, red_cfg, o.as_hardmax)
    return RestrictInputs(m, ns, red_cfg)
