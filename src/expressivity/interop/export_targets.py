"""The targets of ``expressivity export`` checked before anything is loaded or written:
options refused without their target, outputs that would overwrite the model being exported
or each other."""

from __future__ import annotations

from pathlib import Path

from ..rules import check_float, check_int


def check_export_options(onnx, hub, transformer_lens, *, lam, n_ctx, check, tolerance, allow_zero_eps: bool,
                         default_check: int = 10_000) -> int:
    """Refuse an option given without its target (--check, --tolerance, --allow-zero-eps need
    --onnx; --lam, --n-ctx need --transformer-lens) and out-of-range values; the ONNX check's
    input count (``check``, else ``default_check``)."""
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
    n_check = check_int(check if check is not None else default_check, "--check", min=0)
    if tolerance is not None:
        check_float(tolerance, "--tolerance", min=0)
        if n_check == 0:
            raise ValueError("--tolerance judges the ONNX check, which --check 0 skips")
    return n_check


def check_distinct_outputs(model: Path, onnx: Path | None, hub: Path | None, tl: Path | None = None) -> None:
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
        from .transformer_lens import TL_FILES

        tl_files = {(tl / n).resolve() for n in TL_FILES}
        if tl.resolve() == src or src in tl_files:
            raise ValueError(f"--transformer-lens {tl} would overwrite the model {model}; give another directory")
        if hub is not None and tl.resolve() == hub.resolve():
            raise ValueError(f"--transformer-lens {tl} is the --hub directory; give another directory")
        if onnx is not None and onnx.resolve() in tl_files:
            raise ValueError(f"--onnx {onnx} is a file of the --transformer-lens directory {tl}; give another path")
