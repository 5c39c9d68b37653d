"""ReLU MLP (torch ``nn.Sequential`` of Linear/ReLU) → MaxoutNetwork.

ReLU(w·x + b) = max(w·x + b, 0·x + 0) is a rank-2 maxout unit. Consecutive Linear layers
compose into one affine map; a final Linear becomes the read-out.
"""

from __future__ import annotations

import numpy as np

from ..rules import as_real_array
from .maxout import MaxoutNetwork


def linear_weights(mod, name: str = "Linear") -> tuple[np.ndarray, np.ndarray]:
    """An ``nn.Linear`` as float64 numpy: W (out, in), b (out,) (zeros when it has no bias).

    Complex or NaN/inf weights are refused (never cast), naming ``name.weight``."""
    W = as_real_array(mod.weight, f"{name}.weight")
    b = as_real_array(mod.bias, f"{name}.bias") if mod.bias is not None else np.zeros(W.shape[0])
    return W, b


def sequential_steps(mlp, maxout: type | None = None) -> list[tuple[int, str, np.ndarray | None, np.ndarray | None]]:
    """The one walk over ``nn.Sequential(Linear, ReLU, …)``: (module index, "linear", W, b) or
    (index, "relu", None, None) per module, Identity/Flatten skipped; anything else (not
    piecewise linear in the supported set) is refused naming the module.

    ``maxout``: a module type whose ``weight`` (out, rank, in) and ``bias`` (out, rank) are a
    maxout layer (``expressivity.interop.Maxout``); its modules give (index, "maxout", W, b)."""
    from torch import nn  # torch only at this boundary

    if not isinstance(mlp, nn.Sequential):
        raise ValueError(f"mlp must be a torch.nn.Sequential of Linear/ReLU, got {type(mlp).__name__}")
    steps = []
    for idx, mod in enumerate(mlp):
        for base in (nn.Linear, nn.ReLU, nn.Identity, nn.Flatten):
            if isinstance(mod, base) and type(mod) is not base and type(mod).forward is not base.forward:
                raise ValueError(f"module {idx} ({type(mod).__name__}) subclasses nn.{base.__name__} with its own "
                                 f"forward: refused, not read as nn.{base.__name__}")
        if isinstance(mod, nn.Linear):
            steps.append((idx, "linear", *linear_weights(mod, f"module {idx} (Linear)")))
        elif isinstance(mod, nn.ReLU):
            steps.append((idx, "relu", None, None))
        elif maxout is not None and isinstance(mod, maxout):
            steps.append((idx, "maxout", as_real_array(mod.weight, f"module {idx} (Maxout).weight"),
                          as_real_array(mod.bias, f"module {idx} (Maxout).bias")))
        elif not isinstance(mod, (nn.Identity, nn.Flatten)):
            allowed = "Linear, ReLU, Maxout, Identity" if maxout is not None else "Linear, ReLU, Identity"
            raise ValueError(f"module {idx} ({type(mod).__name__}) is not piecewise linear in the supported set; "
                             f"allowed: {allowed}")
    return steps


def from_relu_mlp(mlp) -> MaxoutNetwork:
    """Convert ``nn.Sequential(Linear, ReLU, …, Linear)`` exactly (float64)."""
    A: np.ndarray | None = None  # pending affine map since the last ReLU: x ↦ A x + c
    c: np.ndarray | None = None
    layers: list[tuple[np.ndarray, np.ndarray]] = []
    for idx, kind, W, b in sequential_steps(mlp):
        if kind == "linear":
            if A is None:
                A, c = W, b
            else:
                A, c = W @ A, W @ c + b
        else:
            if A is None:
                raise ValueError(f"module {idx}: ReLU must follow a Linear layer")
            m, d = A.shape
            W3 = np.zeros((m, 2, d))
            W3[:, 0, :] = A
            b2 = np.zeros((m, 2))
            b2[:, 0] = c
            layers.append((W3, b2))
            A = c = None
    if not layers:
        raise ValueError("empty network: the Sequential has no ReLU layer")
    readout = (A, c) if A is not None else None
    return MaxoutNetwork.from_weights(layers, readout)
