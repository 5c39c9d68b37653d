"""The models the limits analyses are run on, by name: ``random`` | a construction | a file.

``random`` is a small transformer with seeded random weights (d_model 16, 2 layers of 2 heads,
d_mlp 32, one output channel): the architecture choices are the options of
:func:`random_transformer`. A construction name builds it from the registry with its
parameters; a ``.safetensors`` path loads a saved transformer, or a trained checkpoint (its
run config in the metadata) as an Encoder (:func:`~.trained.load_trained`: a
:class:`~.trained.TrainedModel`, or the construction a run was fine-tuned from, with the
run's weights).
"""

from __future__ import annotations

from pathlib import Path

from .. import constructions
from ..memory import check_memory
from ..rules import check_choice, check_float, check_int
from ..transformer import Transformer, TransformerConfig, load_transformer, safetensors_metadata
from ..transformer.config import ATTENTIONS, LAYER_NORMS


def random_transformer(seed: int = 0, attention: str = "softmax", layer_norm: str = "none", eps: float = 1e-5,
                       lam: float | None = None, causal: bool = False, n_ctx: int = 129,
                       vocab: int = 2, n_layers: int = 2, positional: str = "learned",
                       dtype: str = "float32") -> Transformer:
    """The ``random`` model, the one random-model factory of the limits analyses, their claims and
    benchmarks: d_model 16, ``n_layers`` blocks of 2 heads (d_head 8), d_mlp 32, one output;
    seeded weights, ``n_ctx`` positions, ``vocab`` token ids; λ (softmax only) defaults to 0.1."""
    check_choice(attention, "--attention", ATTENTIONS)
    check_choice(layer_norm, "--layer-norm", LAYER_NORMS)
    check_float(eps, "--eps", min=0.0)
    if lam is not None:
        check_float(lam, "--lam", min=0.0, min_open=True)
        if attention == "hardmax":
            raise ValueError("--lam applies to softmax attention only (hardmax's argmax is the same for every λ)")
    elif attention == "softmax":
        lam = 0.1
    check_int(seed, "--seed", min=0)
    check_int(n_layers, "n_layers", min=1)
    check_memory(3 * 4.0 * n_ctx * 16, f"the random model's positional table ({n_ctx} positions)",
                 hint="use smaller --lengths (or --n)")
    cfg = TransformerConfig(d_model=16, n_layers=n_layers, n_heads=2, d_head=8, d_mlp=32, d_vocab=vocab, d_out=1,
                            n_ctx=n_ctx, positional=positional, attention=attention, layer_norm=layer_norm,
                            ln_eps=eps, lam=lam, causal=causal, dtype=dtype)
    t = Transformer(cfg)
    t.reset_parameters(seed)
    return t


def resolve_with_options(model: str, params: dict, *, attention=None, layer_norm=None, eps=None, lam=None,
                         causal=None, **rest):
    """:func:`resolve_model` with the random model's options as given (None: not given, its
    default); giving one for another model is an error."""
    given = [k for k, v in {"--attention": attention, "--layer-norm": layer_norm, "--eps": eps, "--lam": lam,
                            "--causal": causal}.items() if v is not None]
    if model != "random" and given:
        raise ValueError(f"{', '.join(given)}: option(s) of --model random only; {model} has its own "
                         "architecture (use --param for a construction's parameters)")
    return resolve_model(model, params, attention=attention or "softmax", layer_norm=layer_norm or "none",
                         eps=1e-5 if eps is None else eps, lam=lam, causal=bool(causal), **rest)


def resolve_model(model: str, params: dict | None = None, **random_options):
    """'random' (``random_options`` go to :func:`random_transformer`) | a construction name
    (built with ``params``) | a path to a saved transformer or trained checkpoint."""
    params = params or {}
    if model == "random":
        if params:
            raise ValueError(f"--param {', '.join(params)}: parameters apply to constructions only; the random "
                             "model takes --attention, --layer-norm, --eps, --lam, --causal")
        return random_transformer(**random_options)
    if model.endswith(".safetensors") or Path(model).exists():
        if not Path(model).exists():
            raise FileNotFoundError(f"no such model file: {model}")
        if params:
            raise ValueError(f"--param {', '.join(params)}: parameters apply to constructions only, not to a "
                             "saved model")
        if "run_config" in safetensors_metadata(model):  # written by `expressivity train`
            from .trained import load_trained

            return load_trained(model)
        return load_transformer(model)
    if model not in constructions.REGISTRY:
        raise ValueError(f"--model {model!r} is not 'random', a construction ({', '.join(constructions.REGISTRY)}) "
                         "or an existing .safetensors file")
    return constructions.get(model, **params)
