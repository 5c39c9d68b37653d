"""Optional dependencies of the interop formats: a missing one is a one-line error that
names the extra to install."""

from __future__ import annotations

import importlib

EXTRAS = {"onnx": "onnx", "onnxruntime": "onnx", "transformer_lens": "tl"}


def need(module: str):
    """``import module``, or ValueError: "… needs <module>: pip install 'expressivity[extra]'"."""
    try:
        return importlib.import_module(module)
    except ImportError:
        extra = EXTRAS.get(module.split(".")[0], module)
        raise ValueError(f"this export needs the optional package {module.split('.')[0]}, which is not installed: "
                         f"pip install 'expressivity[{extra}]'") from None
