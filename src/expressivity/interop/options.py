"""The options of the commands that read model files, ``expressivity regions``, ``export``,
``compile`` and ``verify``, as data (an :class:`~expressivity.train.options.Opt` each: name,
type, default, help), declared once beside the checks of what they give (:mod:`.region_inputs`,
:mod:`.export_targets`, :mod:`.torch_in`, :mod:`.verification`); the command line builds its
parameters from them. Imports nothing that imports torch."""

from __future__ import annotations

from pathlib import Path

from ..train.options import Opt

DEFAULT_CHECK = 10_000  # inputs on which onnxruntime is compared with our forward, unless --check says

REGIONS: tuple[Opt, ...] = (
    Opt("model", Path, "a .safetensors transformer, a JSON network spec, or a torch nn.Sequential's state dict "
        "(.pt / .safetensors) with --layers", default=..., argument=True),
    Opt("layers", shared=True),
    Opt("segment", tuple[str, str], "A B: the segment from A to B"),
    Opt("plane", tuple[str, str, str], "O U V: origin + αU + βV"),
    Opt("through", tuple[Path, Path, Path], "A.npy B.npy C.npy: the plane through three inputs (any shape, e.g. "
        "C,H,W)"),
    Opt("bounds", str, "α_lo,α_hi,β_lo,β_hi for --plane (default -1,1,-1,1)"),
    Opt("box", bool, "the whole box [--lo, --hi]^d (d ≤ 6; subdivision counter)", default=False),
    Opt("stream", bool, "with --box (or a box / slice --domain): count activation regions only, in bounded "
        "memory (no linear regions, no --plot)", default=False),
    Opt("domain", str, 'any registered domain as JSON, e.g. \'{"type": "segment", "a": [0, 0], "b": [1, 1]}\' '
        "(see docs/extending.md)"),
    Opt("lo", float, "box lower bound (every coordinate; default -1)"),
    Opt("hi", float, "box upper bound (every coordinate; default 1)"),
    Opt("compile_it", bool, "compile a JSON network to a hardmax transformer first", default=False, flag="--compile"),
    Opt("n_tokens", int, "tokens for a plain transformer (default n_ctx)"),
    Opt("plot", shared=True),
    Opt("color_by", "ColorBy", "colour --plot by linear or activation region (default linear)"),
    Opt("as_json", bool, "print the result as JSON", default=False, flag="--json"),
)

EXPORT: tuple[Opt, ...] = (
    Opt("model", Path, "a model: .safetensors (compile/train output), a train output directory (any model kind) or "
        "a hub directory", default=..., argument=True),
    Opt("onnx", Path, "write ONNX here (checked with onnxruntime)"),
    Opt("hub", Path, "write the hub layout here (config.json + model.safetensors)"),
    Opt("transformer_lens", Path, "write a TransformerLens 4.x export here (tl_config.json + model.safetensors, "
        "which TransformerBridge.boot_native + load_state_dict take; Python: "
        "expressivity.interop.transformer_lens.load_transformer_lens(DIR) gives the bridge back; see docs/interop.md)"),
    Opt("lam", float, "with --transformer-lens: λ of the σ_λ softmax a hardmax compiled model is recompiled with "
        "(TransformerLens has no hardmax)"),
    Opt("n_ctx", int, "with --transformer-lens: the longest sequence the bridge takes (default: the model's n_ctx, "
        "at most 4096)"),
    Opt("check", int, f"inputs on which onnxruntime is compared with our forward (with --onnx; default "
        f"{DEFAULT_CHECK:,}; 0: skip)"),
    Opt("tolerance", float, "largest |onnxruntime − ours| the check accepts (with --onnx; default 1e-9 in float64, "
        "1e-4 in float32, × max(1, max |output|))"),
    Opt("allow_zero_eps", bool, "export layer norm with eps = 0 to ONNX anyway", default=False),
)

COMPILE: tuple[Opt, ...] = (
    Opt("spec", Path, "JSON network spec (maxout | relu | random; see docs/compile.md), or a torch "
        "nn.Sequential's state dict (.pt / .safetensors) with --layers", default=..., argument=True),
    Opt("out", Path, "where to write the .safetensors model", default=..., flag=("--out", "-o")),
    Opt("layers", shared=True),
    Opt("attention", "AttentionName", "hardmax (exact) or softmax (σ_λ)", default="hardmax"),
    Opt("lam", float, "λ for softmax attention"),
    Opt("show_channels", bool, "print the residual channel map", default=False, flag="--channels"),
)

VERIFY: tuple[Opt, ...] = (
    Opt("model", Path, "a model written by `expressivity compile`", default=..., argument=True),
    Opt("spec", Path, "the JSON spec (or torch weights) it was compiled from (default: the source network saved "
        "in MODEL by `expressivity compile`)", argument=True),
    Opt("layers", shared=True),
    Opt("points", int, "random points in the domain (corners are added)", default=10_000),
    Opt("seed", default=0, shared=True),
)
