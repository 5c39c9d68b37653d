"""``expressivity export`` as one call: load the model, refuse what cannot be exported before
anything is written, write the targets asked for (the hub layout, TransformerLens, ONNX), then
compare onnxruntime with our forward on ``n_check`` inputs (:func:`.onnx_export.check_onnx`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path


def export_model(model: Path, *, onnx: Path | None, hub: Path | None, tl: Path | None, lam, n_ctx,
                 n_check: int, tolerance, allow_zero_eps: bool, say: Callable[[str], None] = print):
    """Export ``model`` to the targets given (None: not asked); ``say`` gets one line per file
    written. Returns the ONNX check (None without ``onnx`` or with ``n_check == 0``)."""
    from . import load_any
    from .export_targets import check_distinct_outputs

    check_distinct_outputs(model, onnx, hub, tl)
    m = load_any(model)
    exported = None
    if tl is not None:  # refuse (hardmax without --lam, post-LN, …) before anything is written
        from .transformer_lens import to_transformer_lens

        exported = _with_options(lambda: to_transformer_lens(m, lam=lam, n_ctx=n_ctx))
    if onnx is not None:
        from .onnx_export import check_inputs_memory, preflight

        preflight(m, allow_zero_eps=allow_zero_eps)
        if n_check:
            check_inputs_memory(m, n_check, "--check")
    if hub is not None:
        from . import save_pretrained

        save_pretrained(m, hub)
        say(f"wrote {hub}/ (config.json + model.safetensors)")
    if exported is not None:
        _save_transformer_lens(exported, tl, say)
    if onnx is None:
        return None
    from .onnx_export import check_onnx, export_onnx

    export_onnx(m, onnx, allow_zero_eps=allow_zero_eps)
    say(f"wrote {onnx}")
    return check_onnx(m, onnx, n_inputs=n_check, tolerance=tolerance) if n_check else None


def _save_transformer_lens(exported, tl: Path, say) -> None:
    from .transformer_lens import LOAD_WITH_TL

    exported.save(tl)
    bound = f", error bound {exported.error_bound:.3g} against the model (σ_λ, λ = {exported.lam:g})" if exported.lam else ""
    say(f"wrote {tl}/ (TransformerLens: tl_config.json + model.safetensors{bound}); load it with "
        f"expressivity.interop.transformer_lens.load_transformer_lens({str(tl)!r}) or, TransformerLens alone, with:")
    say(LOAD_WITH_TL.replace("DIR", str(tl)))


def disagreement(result, onnx: Path) -> str:
    """The one-line error of an ONNX check that failed."""
    what = (f"{result.nonfinite} outputs are NaN or inf" if result.nonfinite else
            f"they differ by {result.max_abs_error:.3g}, over the tolerance {result.tolerance:.3g}")
    return (f"--check: onnxruntime and our forward disagree on {onnx} ({what}); the file is left there for "
            "inspection: please report it")


def _with_options(export):
    """``export()`` with the API's argument names in its errors given as the CLI's options."""
    try:
        return export()
    except ValueError as exc:
        msg = str(exc).replace("pass lam=… (shell: expressivity export MODEL --transformer-lens DIR --lam LAM)",
                               "give --lam LAM")
        raise ValueError(msg.replace("pass a smaller n_ctx", "give a smaller --n-ctx")) from None
