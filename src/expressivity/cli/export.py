"""`expressivity export`: a saved model into other tools' formats (ONNX, the hub layout,
TransformerLens)."""

from __future__ import annotations

from pathlib import Path

import typer

from . import app
from ._common import console, fail, output_path

DEFAULT_CHECK = 10_000


@app.command("export")
def export_cmd(
    model: Path = typer.Argument(..., help="a model: .safetensors (compile/train output), a train output directory (any model kind) or a hub directory"),
    onnx: Path | None = typer.Option(None, "--onnx", help="write ONNX here (checked with onnxruntime)"),
    hub: Path | None = typer.Option(None, "--hub", help="write the hub layout here (config.json + model.safetensors)"),
    transformer_lens: Path | None = typer.Option(
        None, "--transformer-lens", help="write a TransformerLens 4.x export here (tl_config.json + model.safetensors, "
        "which TransformerBridge.boot_native + load_state_dict take; Python: "
        "expressivity.interop.transformer_lens.load_transformer_lens(DIR) gives the bridge back; see docs/interop.md)"),
    lam: float | None = typer.Option(None, "--lam", help="with --transformer-lens: λ of the σ_λ softmax a hardmax "
                                     "compiled model is recompiled with (TransformerLens has no hardmax)"),
    n_ctx: int | None = typer.Option(None, "--n-ctx", help="with --transformer-lens: the longest sequence the bridge "
                                     "takes (default: the model's n_ctx, at most 4096)"),
    check: int | None = typer.Option(None, "--check", help=f"inputs on which onnxruntime is compared with our forward "
                                     f"(with --onnx; default {DEFAULT_CHECK:,}; 0: skip)"),
    tolerance: float | None = typer.Option(None, "--tolerance", help="largest |onnxruntime − ours| the check accepts "
                                           "(with --onnx; default 1e-9 in float64, 1e-4 in float32, × max(1, max |output|))"),
    allow_zero_eps: bool = typer.Option(False, "--allow-zero-eps", help="export layer norm with eps = 0 to ONNX anyway"),
) -> None:
    """Export MODEL to ONNX (hardmax as an exact one-hot over ties), the hub layout and/or TransformerLens.

    ONNX takes transformers (every position encoding); the hub layout every model kind,
    recurrent training runs included (``expressivity export RUN_DIR --hub DIR``);
    TransformerLens softmax transformers and hardmax compiled models with --lam. The ONNX
    check exits with code 1 when onnxruntime and our forward differ by more than the tolerance
    or an output is not finite."""
    from ..interop.export_targets import check_export_options
    from ..interop.exporting import disagreement, export_model

    n_check = check_export_options(onnx, hub, transformer_lens, lam=lam, n_ctx=n_ctx, check=check, tolerance=tolerance,
                                   allow_zero_eps=allow_zero_eps, default_check=DEFAULT_CHECK)
    onnx_path = output_path(onnx, "--onnx")
    result = export_model(model, onnx=onnx_path, hub=output_path(hub, "--hub", kind="dir"),
                          tl=output_path(transformer_lens, "--transformer-lens", kind="dir"), lam=lam, n_ctx=n_ctx,
                          n_check=n_check, tolerance=tolerance, allow_zero_eps=allow_zero_eps,
                          say=lambda line: console.print(line, highlight=False, soft_wrap=True, markup=False))
    if result is not None:
        console.print(result.line(), highlight=False, soft_wrap=True)
        if not result.ok:
            fail(disagreement(result, onnx_path), code=1)
