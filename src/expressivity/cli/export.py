"""`expressivity export`: a saved model into other tools' formats (ONNX, the hub layout,
TransformerLens)."""

from __future__ import annotations

from pathlib import Path

import typer

from . import app
from ._common import console, fail, output_path, user_errors

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
    from ..interop import load_any
    from ..interop.export_targets import check_distinct_outputs, check_export_options

    with user_errors():
        n_check = check_export_options(onnx, hub, transformer_lens, lam=lam, n_ctx=n_ctx, check=check,
                                       tolerance=tolerance, allow_zero_eps=allow_zero_eps,
                                       default_check=DEFAULT_CHECK)
    onnx_path = output_path(onnx, "--onnx")
    hub_path = output_path(hub, "--hub", kind="dir")
    tl_path = output_path(transformer_lens, "--transformer-lens", kind="dir")
    with user_errors():
        check_distinct_outputs(model, onnx_path, hub_path, tl_path)
        m = load_any(model)
        tl = None
        if tl_path is not None:  # refuse (hardmax without --lam, post-LN, …) before anything is written
            from ..interop.transformer_lens import to_transformer_lens

            tl = _with_options(lambda: to_transformer_lens(m, lam=lam, n_ctx=n_ctx))
        if onnx_path is not None:
            from ..interop.onnx_export import check_inputs_memory, preflight

            preflight(m, allow_zero_eps=allow_zero_eps)  # refuse before anything is written
            if n_check:
                check_inputs_memory(m, n_check, "--check")
        _write(m, hub_path, tl, tl_path, onnx_path, allow_zero_eps=allow_zero_eps)
    if onnx_path is not None and n_check:
        _check_onnx(m, onnx_path, n_check, tolerance)


def _write(m, hub_path, tl, tl_path, onnx_path, *, allow_zero_eps: bool) -> None:
    """Write the hub layout, the TransformerLens export and the ONNX file that were asked for."""
    if hub_path is not None:
        from ..interop import save_pretrained

        save_pretrained(m, hub_path)
        console.print(f"wrote {hub_path}/ (config.json + model.safetensors)")
    if tl is not None:
        tl.save(tl_path)
        bound = f", error bound {tl.error_bound:.3g} against the model (σ_λ, λ = {tl.lam:g})" if tl.lam else ""
        from ..interop.transformer_lens import LOAD_WITH_TL

        console.print(f"wrote {tl_path}/ (TransformerLens: tl_config.json + model.safetensors{bound}); load it "
                      f"with expressivity.interop.transformer_lens.load_transformer_lens({str(tl_path)!r}) or, "
                      "TransformerLens alone, with:", highlight=False, soft_wrap=True)
        console.print(LOAD_WITH_TL.replace("DIR", str(tl_path)), highlight=False, soft_wrap=True, markup=False)
    if onnx_path is not None:
        from ..interop.onnx_export import export_onnx

        export_onnx(m, onnx_path, allow_zero_eps=allow_zero_eps)
        console.print(f"wrote {onnx_path}")


def _check_onnx(m, onnx_path: Path, n_check: int, tolerance) -> None:
    """onnxruntime against our forward on ``n_check`` inputs; exit code 1 when they disagree."""
    from ..interop.onnx_export import check_onnx

    with user_errors():
        result = check_onnx(m, onnx_path, n_inputs=n_check, tolerance=tolerance)
    console.print(result.line(), highlight=False, soft_wrap=True)
    if not result.ok:
        what = (f"{result.nonfinite} outputs are NaN or inf" if result.nonfinite else
                f"they differ by {result.max_abs_error:.3g}, over the tolerance {result.tolerance:.3g}")
        fail(f"--check: onnxruntime and our forward disagree on {onnx_path} ({what}); the file is left there "
             "for inspection: please report it", code=1)


def _with_options(export):
    """``export()`` with the API's argument names in its errors given as the CLI's options."""
    try:
        return export()
    except ValueError as exc:
        msg = str(exc).replace("pass lam=… (shell: expressivity export MODEL --transformer-lens DIR --lam LAM)",
                               "give --lam LAM")
        raise ValueError(msg.replace("pass a smaller n_ctx", "give a smaller --n-ctx")) from None
