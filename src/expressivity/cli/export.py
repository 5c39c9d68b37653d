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
    from ..rules import check_float, check_int
    from ..interop import load_any, save_pretrained

    with user_errors():
        if onnx is None and hub is None and transformer_lens is None:
            raise ValueError("give at least one target: --onnx OUT.onnx, --hub DIR and/or --transformer-lens DIR")
        for given, option in ((check is not None, "--check"), (tolerance is not None, "--tolerance"),
                              (allow_zero_eps, "--allow-zero-eps")):
            if given and onnx is None:
                raise ValueError(f"{option} applies to the ONNX export only; give --onnx OUT.onnx (or leave {option} out)")
        for given, option in ((lam is not None, "--lam"), (n_ctx is not None, "--n-ctx")):
            if given and transformer_lens is None:
                raise ValueError(f"{option} applies to the TransformerLens export only; give --transformer-lens DIR "
                                 f"(or leave {option} out)")
        if lam is not None:
            check_float(lam, "--lam", min=0.0, min_open=True)
        if n_ctx is not None:
            check_int(n_ctx, "--n-ctx", min=1)
        n_check = check_int(check if check is not None else DEFAULT_CHECK, "--check", min=0)
        if tolerance is not None:
            check_float(tolerance, "--tolerance", min=0)
            if n_check == 0:
                raise ValueError("--tolerance judges the ONNX check, which --check 0 skips")
    onnx_path = output_path(onnx, "--onnx")
    hub_path = output_path(hub, "--hub", kind="dir")
    tl_path = output_path(transformer_lens, "--transformer-lens", kind="dir")
    with user_errors():
        _distinct_outputs(model, onnx_path, hub_path, tl_path)
        m = load_any(model)
        tl = None
        if tl_path is not None:  # refuse (hardmax without --lam, post-LN, …) before anything is written
            from ..interop.transformer_lens import to_transformer_lens

            tl = _with_options(lambda: to_transformer_lens(m, lam=lam, n_ctx=n_ctx))
        if onnx_path is not None:
            from ..interop.onnx_export import (
                check_inputs_memory,
                check_onnx,
                export_onnx,
                preflight,
            )

            preflight(m, allow_zero_eps=allow_zero_eps)  # refuse before anything is written
            if n_check:
                check_inputs_memory(m, n_check, "--check")
        if hub_path is not None:
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
            export_onnx(m, onnx_path, allow_zero_eps=allow_zero_eps)
            console.print(f"wrote {onnx_path}")
    if onnx_path is not None and n_check:
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


def _distinct_outputs(model: Path, onnx: Path | None, hub: Path | None, tl: Path | None = None) -> None:
    """Refuse outputs that would overwrite the model being exported or each other."""
    src = model.resolve()
    hub_files = set() if hub is None else {(hub / n).resolve() for n in ("config.json", "model.safetensors",
                                                                         "source_net.safetensors")}
    if onnx is not None:
        dst = onnx.resolve()
        if dst == src or (src.is_dir() and src in dst.parents and dst.name in ("config.json", "model.safetensors",
                                                                              "source_net.safetensors")):
            raise ValueError(f"--onnx {onnx} would overwrite the model {model}; give another path")
        if dst in hub_files:
            raise ValueError(f"--onnx {onnx} is a file of the --hub directory {hub}; give another path")
    if hub is not None and (hub.resolve() == src or src in hub_files):
        raise ValueError(f"--hub {hub} would overwrite the model {model}; give another directory")
    if tl is not None:
        from ..interop.transformer_lens import TL_FILES

        tl_files = {(tl / n).resolve() for n in TL_FILES}
        if tl.resolve() == src or src in tl_files:
            raise ValueError(f"--transformer-lens {tl} would overwrite the model {model}; give another directory")
        if hub is not None and tl.resolve() == hub.resolve():
            raise ValueError(f"--transformer-lens {tl} is the --hub directory; give another directory")
        if onnx is not None and onnx.resolve() in tl_files:
            raise ValueError(f"--onnx {onnx} is a file of the --transformer-lens directory {tl}; give another path")
