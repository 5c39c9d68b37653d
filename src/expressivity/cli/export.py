"""`expressivity export`: a saved model into other tools' formats (ONNX, the hub layout)."""

from __future__ import annotations

from pathlib import Path

import typer

from . import app
from ._common import console, output_path, user_errors


@app.command("export")
def export_cmd(
    model: Path = typer.Argument(..., help="a model: .safetensors (compile/train output), a train output directory (any model kind) or a hub directory"),
    onnx: Path | None = typer.Option(None, "--onnx", help="write ONNX here (checked with onnxruntime)"),
    hub: Path | None = typer.Option(None, "--hub", help="write the hub layout here (config.json + model.safetensors)"),
    check: int = typer.Option(10_000, "--check", help="inputs on which onnxruntime is compared with our forward (0: skip)"),
    allow_zero_eps: bool = typer.Option(False, "--allow-zero-eps", help="export layer norm with eps = 0 to ONNX anyway"),
) -> None:
    """Export MODEL to ONNX (hardmax as an exact one-hot over ties) and/or the hub layout.

    ONNX takes transformers (every position encoding); the hub layout every model kind,
    recurrent training runs included (``expressivity export RUN_DIR --hub DIR``)."""
    from ..checks import check_int
    from ..interop import load_any, save_pretrained

    with user_errors():
        if onnx is None and hub is None:
            raise ValueError("give at least one target: --onnx OUT.onnx and/or --hub DIR")
        check_int(check, "--check", min=0)
    onnx_path = output_path(onnx, "--onnx")
    hub_path = output_path(hub, "--hub", kind="dir")
    with user_errors():
        m = load_any(model)
        if onnx_path is not None:
            from ..interop.onnx_export import check_onnx, export_onnx, preflight

            preflight(m, allow_zero_eps=allow_zero_eps)  # refuse before anything is written
        if hub_path is not None:
            save_pretrained(m, hub_path)
            console.print(f"wrote {hub_path}/ (config.json + model.safetensors)")
        if onnx_path is not None:
            export_onnx(m, onnx_path, allow_zero_eps=allow_zero_eps)
            console.print(f"wrote {onnx_path}")
            if check:
                console.print(check_onnx(m, onnx_path, n_inputs=check).line())
