"""`expressivity export`: a saved model into other tools' formats (ONNX, the hub layout)."""

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
    check: int | None = typer.Option(None, "--check", help=f"inputs on which onnxruntime is compared with our forward "
                                     f"(with --onnx; default {DEFAULT_CHECK:,}; 0: skip)"),
    tolerance: float | None = typer.Option(None, "--tolerance", help="largest |onnxruntime − ours| the check accepts "
                                           "(with --onnx; default 1e-9 in float64, 1e-4 in float32, × max(1, max |output|))"),
    allow_zero_eps: bool = typer.Option(False, "--allow-zero-eps", help="export layer norm with eps = 0 to ONNX anyway"),
) -> None:
    """Export MODEL to ONNX (hardmax as an exact one-hot over ties) and/or the hub layout.

    ONNX takes transformers (every position encoding); the hub layout every model kind,
    recurrent training runs included (``expressivity export RUN_DIR --hub DIR``). The ONNX
    check exits with code 1 when onnxruntime and our forward differ by more than the tolerance
    or an output is not finite."""
    from ..checks import check_float, check_int
    from ..interop import load_any, save_pretrained

    with user_errors():
        if onnx is None and hub is None:
            raise ValueError("give at least one target: --onnx OUT.onnx and/or --hub DIR")
        for given, option in ((check is not None, "--check"), (tolerance is not None, "--tolerance"),
                              (allow_zero_eps, "--allow-zero-eps")):
            if given and onnx is None:
                raise ValueError(f"{option} applies to the ONNX export only; give --onnx OUT.onnx (or leave {option} out)")
        n_check = check_int(check if check is not None else DEFAULT_CHECK, "--check", min=0)
        if tolerance is not None:
            check_float(tolerance, "--tolerance", min=0)
            if n_check == 0:
                raise ValueError("--tolerance judges the ONNX check, which --check 0 skips")
    onnx_path = output_path(onnx, "--onnx")
    hub_path = output_path(hub, "--hub", kind="dir")
    with user_errors():
        _distinct_outputs(model, onnx_path, hub_path)
        m = load_any(model)
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


def _distinct_outputs(model: Path, onnx: Path | None, hub: Path | None) -> None:
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
