"""`expressivity export`: a saved model into other tools' formats (ONNX, the hub layout,
TransformerLens)."""

from __future__ import annotations

from types import SimpleNamespace

from ..interop.options import DEFAULT_CHECK, EXPORT
from . import app
from ._common import console, fail, output_path
from .options import with_options


@app.command("export")
@with_options(EXPORT)
def export_cmd(**given) -> None:
    """Export MODEL to ONNX (hardmax as an exact one-hot over ties), the hub layout and/or TransformerLens.

    ONNX takes transformers (every position encoding); the hub layout every model kind,
    recurrent training runs included (``expressivity export RUN_DIR --hub DIR``);
    TransformerLens softmax transformers and hardmax compiled models with --lam. The ONNX
    check exits with code 1 when onnxruntime and our forward differ by more than the tolerance
    or an output is not finite."""
    from ..interop.export_targets import check_export_options
    from ..interop.exporting import disagreement, export_model

    o = SimpleNamespace(**given)
    n_check = check_export_options(o.onnx, o.hub, o.transformer_lens, lam=o.lam, n_ctx=o.n_ctx, check=o.check,
                                   tolerance=o.tolerance, allow_zero_eps=o.allow_zero_eps, default_check=DEFAULT_CHECK)
    onnx_path = output_path(o.onnx, "--onnx")
    result = export_model(o.model, onnx=onnx_path, hub=output_path(o.hub, "--hub", kind="dir"),
                          tl=output_path(o.transformer_lens, "--transformer-lens", kind="dir"), lam=o.lam,
                          n_ctx=o.n_ctx, n_check=n_check, tolerance=o.tolerance, allow_zero_eps=o.allow_zero_eps,
                          say=lambda line: console.print(line, highlight=False, soft_wrap=True, markup=False))
    if result is not None:
        console.print(result.line(), highlight=False, soft_wrap=True)
        if not result.ok:
            fail(disagreement(result, onnx_path), code=1)
