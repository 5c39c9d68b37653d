"""Torch models in: a saved ``nn.Sequential`` of Linear/ReLU/Maxout for ``compile`` and ``regions``.

A state dict does not say where the ReLUs are, so the weights come with a small JSON of the
layer shapes (by default beside them: ``net.pt`` → ``net.json``)::

    {"layers": [{"linear": [2, 8]}, "relu", {"linear": [8, 8]}, "relu", {"linear": [8, 1]}],
     "domain": {"lo": -1, "hi": 1}}

``{"linear": [in, out]}`` is ``nn.Linear(in, out)`` (``"bias": false`` for none);
``{"conv2d": [in, out, kernel], "stride": 1, "padding": 0, "dilation": 1, "groups": 1}`` is
``nn.Conv2d`` (``conv1d``, ``conv3d`` alike; ``"bias": false`` for none), ``{"batchnorm2d": C}``
``nn.BatchNorm2d(C)`` (1d/3d alike; its running statistics are in the weights),
``{"maxpool2d": kernel, "stride": …, "padding": …}`` / ``{"avgpool2d": …}`` the pools (1d/3d
alike), ``{"leaky_relu": slope}``, ``{"hardtanh": [lo, hi]}``, ``"relu6"`` and ``"flatten"``
the modules of those names — a conv net for ``regions`` (traced; not for ``compile``), whose
input shape without the batch goes in a top-level ``"input_shape": [C, H, W]``;
``{"maxout": [in, out, rank]}`` is our :class:`Maxout` module, h_i = max_{j<rank} (W_ij·x +
b_ij) (weight (out, rank, in), bias (out, rank)); ``"relu"`` and ``"identity"`` have no
weights. The Sequential's state-dict keys are then ``"0.weight"``, ``"0.bias"``,
``"2.weight"``, … (the module index in the list). ``domain`` (numbers or
per-coordinate lists, as in the compile spec) is needed by ``compile`` only.

The weights are a *plain* state dict (names → tensors) in a ``.pt`` file, read with
``torch.load(..., weights_only=True)`` — a pickled model, optimizer or anything that is not
names → tensors is refused, never unpickled with ``weights_only=False`` — or in a
``.safetensors`` file. :func:`save_sequential` writes both files for a Sequential.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import nn

from ..cpwl import MaxoutNetwork, from_relu_mlp
from ..cpwl.relu import sequential_steps
from ..fileio import read_json, write_atomic, write_json, write_safetensors
from ..rules import as_real_array
from ..transformer import safetensors_metadata

SUFFIXES = (".pt", ".pth", ".safetensors")


class Maxout(nn.Module):
    """A maxout layer as a torch module: h_i(x) = max_{j < rank} (W[i, j]·x + b[i, j]).

    ``weight`` (out, rank, in) and ``bias`` (out, rank) are the W, b of
    :class:`~expressivity.cpwl.MaxoutLayer`, so the conversion is exact. Save a Sequential that
    holds it with :func:`save_sequential` (layers JSON entry ``{"maxout": [in, out, rank]}``)."""

    def __init__(self, in_features: int, out_features: int, rank: int, dtype: torch.dtype | None = None) -> None:
        super().__init__()
        for name, n in (("in_features", in_features), ("out_features", out_features), ("rank", rank)):
            if not isinstance(n, int) or isinstance(n, bool) or n < 1:
                raise ValueError(f"Maxout {name} must be a positive int, got {n!r}")
        self.in_features, self.out_features, self.rank = in_features, out_features, rank
        self.weight = nn.Parameter(torch.empty(out_features, rank, in_features, dtype=dtype))
        self.bias = nn.Parameter(torch.zeros(out_features, rank, dtype=dtype))
        with torch.no_grad():
            self.weight.uniform_(-in_features ** -0.5, in_features ** -0.5)  # nn.Linear's scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (torch.einsum("...d,mpd->...mp", x, self.weight) + self.bias).amax(-1)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, rank={self.rank}"
_OURS = "expressivity."  # metadata "format" prefix of our own safetensors files


def is_torch_weights(path: str | Path) -> bool:
    """Whether ``path`` looks like torch weights for :func:`load_sequential`: a ``.pt``/``.pth``
    file, or a ``.safetensors`` file not written by expressivity (no ``expressivity.*`` format)."""
    p = Path(path)
    if p.suffix in (".pt", ".pth"):
        return True
    if p.suffix != ".safetensors" or not p.is_file():
        return False
    try:
        meta = safetensors_metadata(p)
    except ValueError:  # not a safetensors file: let the model loader say so
        return False
    return not str(meta.get("format", "")).startswith(_OURS)


def default_layers_path(weights: str | Path) -> Path:
    """``net.pt`` → ``net.json`` (where :func:`save_sequential` writes the layer shapes)."""
    return Path(weights).with_suffix(".json")


def load_state_dict(path: str | Path) -> dict[str, torch.Tensor]:
    """A plain state dict (str → Tensor) from ``.pt``/``.pth`` (weights_only) or ``.safetensors``."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"weights file {p} does not exist")
    if p.suffix == ".safetensors":
        from safetensors.torch import load_file

        try:
            state = load_file(str(p))
        except Exception as exc:  # safetensors raises its own error types
            raise ValueError(f"weights file {p} is not a safetensors file: {' '.join(str(exc).split())}") from None
    elif p.suffix in (".pt", ".pth"):
        try:
            state = torch.load(p, map_location="cpu", weights_only=True)
        except Exception as exc:  # UnpicklingError (a pickled object), RuntimeError (not a zip), EOFError, …
            raise ValueError(f"weights file {p} is not a plain state dict: torch.load(weights_only=True) refused "
                             f"it ({type(exc).__name__}); save model.state_dict(), not the model") from None
    else:
        raise ValueError(f"weights file {p}: expected one of {', '.join(SUFFIXES)}, got {p.suffix or 'no suffix'}")
    if not isinstance(state, dict) or not state:
        raise ValueError(f"weights file {p} is not a plain state dict (names → tensors); "
                         f"got {type(state).__name__}{' (empty)' if isinstance(state, dict) else ''}")
    for key, value in state.items():
        if not isinstance(key, str) or not isinstance(value, torch.Tensor):
            raise ValueError(f"weights file {p} is not a plain state dict (names → tensors): entry {key!r} is "
                             f"a {type(value).__name__} (save model.state_dict() alone, not a checkpoint dict)")
    return state


def read_layers(path: str | Path) -> tuple[list, tuple[np.ndarray, np.ndarray] | None]:
    """The layer list and the optional domain ``(lo, hi)`` of a layers JSON file."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"layers file {p} does not exist (the JSON of layer shapes that goes with the weights; "
                         "see docs/compile.md)")
    data = read_json(p, "layers file")
    if not isinstance(data, dict) or not isinstance(data.get("layers"), list) or not data["layers"]:
        raise ValueError(f"layers file {p}: expected an object with a non-empty 'layers' list")
    unknown = sorted(set(data) - {"layers", "domain", "input_shape"})
    if unknown:
        raise ValueError(f"layers file {p}: unknown fields {unknown} (allowed: layers, domain, input_shape)")
    domain = None
    if data.get("domain") is not None:
        dom = data["domain"]
        if not isinstance(dom, dict) or set(dom) - {"lo", "hi"}:
            raise ValueError(f"layers file {p}: domain must be {{\"lo\": …, \"hi\": …}}, got {dom!r}")
        lo = as_real_array(dom.get("lo", -1.0), "domain lo")
        hi = as_real_array(dom.get("hi", 1.0), "domain hi")
        domain = (lo, hi)
    return data["layers"], domain


def build_sequential(layers: list, dtype: torch.dtype = torch.float64) -> nn.Sequential:
    """``[{"linear": [in, out]}, "relu", {"maxout": [in, out, rank]}, …]`` → an ``nn.Sequential``
    (weights uninitialised)."""
    mods: list[nn.Module] = []
    width = None

    def shape_of(i: int, entry: dict, kind: str, names: str) -> list[int]:
        shape = entry[kind]
        n = names.count(",") + 1
        if (not isinstance(shape, list) or len(shape) != n
                or not all(isinstance(k, int) and not isinstance(k, bool) and k >= 1 for k in shape)):
            raise ValueError(f"layers[{i}]: {kind} needs [{names}] with positive ints, got {shape!r}")
        if width is not None and shape[0] != width:
            raise ValueError(f"layers[{i}]: {kind} has {shape[0]} inputs but the previous layer has {width} outputs")
        return shape

    weighted = False
    for i, entry in enumerate(layers):
        if entry == "relu":
            mods.append(nn.ReLU())
        elif entry == "identity":
            mods.append(nn.Identity())
        elif entry in ("flatten", "relu6"):
            mods.append(nn.Flatten() if entry == "flatten" else nn.ReLU6())
        elif isinstance(entry, dict) and any(k in _CONV_LIKE for k in entry):
            mods.append(_conv_like(i, entry, dtype))
            weighted = weighted or any(k.startswith("conv") for k in entry)
            width = None  # the flattened width after a conv or pool: not tracked
        elif isinstance(entry, dict) and "linear" in entry and set(entry) <= {"linear", "bias"}:
            shape = shape_of(i, entry, "linear", "in, out")
            bias = entry.get("bias", True)
            if not isinstance(bias, bool):
                raise ValueError(f"layers[{i}]: bias must be true or false, got {bias!r}")
            mods.append(nn.Linear(shape[0], shape[1], bias=bias, dtype=dtype))
            width, weighted = shape[1], True
        elif isinstance(entry, dict) and set(entry) == {"maxout"}:
            shape = shape_of(i, entry, "maxout", "in, out, rank")
            mods.append(Maxout(*shape, dtype=dtype))
            width, weighted = shape[1], True
        else:
            raise ValueError(f"layers[{i}]: expected {{\"linear\": [in, out]}}, {{\"maxout\": [in, out, rank]}}, "
                             f"{{\"conv2d\": [in, out, kernel]}}, a pool or batchnorm entry, \"relu\", \"relu6\", "
                             f"\"flatten\" or \"identity\", got {entry!r}")
    if not weighted:
        raise ValueError("layers: no linear, maxout or conv layer (input dimension unknown)")
    return nn.Sequential(*mods)


_CONV_LIKE = ("conv1d", "conv2d", "conv3d", "batchnorm1d", "batchnorm2d", "batchnorm3d", "maxpool1d", "maxpool2d",
              "maxpool3d", "avgpool1d", "avgpool2d", "avgpool3d", "leaky_relu", "hardtanh")
_CONV_OPTIONS = {"conv": ("stride", "padding", "dilation", "groups", "bias"), "batchnorm": (),
                 "maxpool": ("stride", "padding", "dilation"), "avgpool": ("stride", "padding"), "leaky_relu": (),
                 "hardtanh": ()}


def _conv_like(i: int, entry: dict, dtype) -> nn.Module:
    """One conv / batchnorm / pool / leaky_relu / hardtanh entry of a layers list → its module."""
    kinds = [k for k in entry if k in _CONV_LIKE]
    if len(kinds) != 1:
        raise ValueError(f"layers[{i}]: one layer per entry, got {kinds}")
    kind = kinds[0]
    family = kind.rstrip("123d") if kind[-2:] in ("1d", "2d", "3d") else kind
    allowed = _CONV_OPTIONS[family]
    extra = sorted(set(entry) - {kind, *allowed})
    if extra:
        raise ValueError(f"layers[{i}]: unknown fields {extra} for {kind} (allowed: {', '.join(allowed) or 'none'})")

    def ints(v, what, n=None):
        vals = v if isinstance(v, list) else [v]
        if (not vals or not all(isinstance(k, int) and not isinstance(k, bool) and k >= 0 for k in vals)
                or (n is not None and len(vals) != n)):
            raise ValueError(f"layers[{i}]: {kind} {what} must be {'[' + ', '.join(['int'] * n) + ']' if n else 'a non-negative int or list'}, got {v!r}")
        return v

    opts = {k: (entry[k] if k == "bias" else tuple(entry[k]) if isinstance(entry[k], list) else entry[k])
            for k in allowed if k in entry}
    for k, v in opts.items():
        if k == "bias":
            if not isinstance(v, bool):
                raise ValueError(f"layers[{i}]: bias must be true or false, got {v!r}")
        else:
            ints(list(v) if isinstance(v, tuple) else v, k)
    try:
        if family == "conv":
            cin, cout, k = ints(entry[kind], "shape", 3)
            return getattr(nn, "Conv" + kind[-2:])(cin, cout, k, dtype=dtype, **opts)
        if family == "batchnorm":
            return getattr(nn, "BatchNorm" + kind[-2:])(ints(entry[kind], "channels"), dtype=dtype)
        if family in ("maxpool", "avgpool"):
            cls = getattr(nn, ("MaxPool" if family == "maxpool" else "AvgPool") + kind[-2:])
            return cls(ints(entry[kind], "kernel"), **opts)
        if family == "leaky_relu":
            slope = entry[kind]
            if not isinstance(slope, (int, float)) or isinstance(slope, bool) or not np.isfinite(slope):
                raise ValueError(f"layers[{i}]: leaky_relu needs a finite slope, got {slope!r}")
            return nn.LeakyReLU(float(slope))
        lohi = entry[kind]
        if (not isinstance(lohi, list) or len(lohi) != 2 or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                                    and np.isfinite(v) for v in lohi) or lohi[0] >= lohi[1]):
            raise ValueError(f"layers[{i}]: hardtanh needs [lo, hi] with lo < hi, got {lohi!r}")
        return nn.Hardtanh(float(lohi[0]), float(lohi[1]))
    except ValueError as exc:
        if str(exc).startswith(f"layers[{i}]"):
            raise
        raise ValueError(f"layers[{i}]: {kind} {entry!r} is not a valid module ({' '.join(str(exc).split())[:120]})") from None
    except (TypeError, RuntimeError) as exc:  # torch's own argument checks (groups not dividing in, …)
        raise ValueError(f"layers[{i}]: {kind} {entry!r} is not a valid module ({' '.join(str(exc).split())[:120]})") from None


def load_sequential(weights: str | Path, layers: str | Path | None = None,
                    ) -> tuple[nn.Sequential, tuple[np.ndarray, np.ndarray] | None]:
    """The saved ``nn.Sequential`` (float64, eval mode) and the domain of its layers JSON.

    ``layers`` defaults to :func:`default_layers_path`. The state dict must match the layers
    exactly (same keys and shapes) and hold finite real numbers.
    """
    layers_path = Path(layers) if layers is not None else default_layers_path(weights)
    entries, domain = read_layers(layers_path)
    mlp = build_sequential(entries)
    state = load_state_dict(weights)
    want = mlp.state_dict()
    missing, extra = sorted(set(want) - set(state)), sorted(set(state) - set(want))
    if missing or extra:
        raise ValueError(f"weights file {weights} does not match {layers_path}: "
                         f"missing {missing[:4]}, unexpected {extra[:4]}")
    for key, value in state.items():
        if tuple(value.shape) != tuple(want[key].shape):
            raise ValueError(f"weights file {weights}: {key} has shape {tuple(value.shape)}, "
                             f"{layers_path} says {tuple(want[key].shape)}")
        if key.endswith("num_batches_tracked") and not value.is_floating_point() and not value.is_complex():
            continue  # BatchNorm's step counter (an int)
        if value.is_complex() or not value.is_floating_point():
            raise ValueError(f"weights file {weights}: {key} must hold real floats, got {value.dtype}")
        as_real_array(value, f"weights {key}")  # NaN / inf refused
    with torch.no_grad():
        mlp.load_state_dict({k: v if k.endswith("num_batches_tracked") else v.to(torch.float64)
                             for k, v in state.items()}, strict=True)
    shape = read_json(layers_path, "layers file").get("input_shape")
    if shape is not None:
        if (not isinstance(shape, list) or not shape
                or not all(isinstance(k, int) and not isinstance(k, bool) and k >= 1 for k in shape)):
            raise ValueError(f"layers file {layers_path}: input_shape must be a list of positive ints, got {shape!r}")
        mlp.input_shape = tuple(shape)  # read by regions.lower_torch when no input_shape is given
    return mlp.eval(), domain


def load_network(weights: str | Path, layers: str | Path | None = None, need_domain: bool = False,
                 ) -> tuple[MaxoutNetwork, tuple[np.ndarray, np.ndarray] | None]:
    """:func:`load_sequential` then the exact conversion to a :class:`MaxoutNetwork`."""
    mlp, domain = load_sequential(weights, layers)
    if need_domain and domain is None:
        where = Path(layers) if layers is not None else default_layers_path(weights)
        raise ValueError(f"layers file {where} has no domain; compiling needs one: add "
                         '"domain": {"lo": -1, "hi": 1} (numbers or per-coordinate lists)')
    return network_of(mlp), domain


def network_of(mlp: nn.Sequential) -> MaxoutNetwork:
    """The exact :class:`MaxoutNetwork` of a Sequential of Linear/ReLU/Maxout/Identity.

    Linear maps fold into the next layer's pieces — Maxout(W, b) after x ↦ A x + c has the
    pieces W_ij A, W_ij c + b_ij, and ReLU(A x + c) = max(A x + c, 0) is rank 2 — and the
    Linear maps after the last of them are the read-out. Without a Maxout this is
    :func:`~expressivity.cpwl.from_relu_mlp`."""
    if not any(isinstance(m, Maxout) for m in mlp):
        return from_relu_mlp(mlp)
    A = c = None  # the affine map x ↦ A x + c since the last nonlinearity (None: the identity)
    layers: list[tuple[np.ndarray, np.ndarray]] = []
    for idx, kind, W, b in sequential_steps(mlp, maxout=Maxout):
        if kind == "linear":
            A, c = (W, b) if A is None else (W @ A, W @ c + b)
            continue
        if kind == "relu":
            if A is None and not layers:
                raise ValueError(f"module {idx}: ReLU must follow a Linear or Maxout layer")
            if A is None:  # ReLU right after a Maxout: max(h, 0) of its outputs
                A, c = np.eye(layers[-1][0].shape[0]), np.zeros(layers[-1][0].shape[0])
            W = np.stack([np.eye(A.shape[0]), np.zeros((A.shape[0], A.shape[0]))], axis=1)  # (m, 2, m)
            b = np.zeros((A.shape[0], 2))
        if A is not None:
            W, b = np.einsum("mpk,kd->mpd", W, A), np.einsum("mpk,k->mp", W, c) + b
        layers.append((W, b))
        A = c = None
    return MaxoutNetwork.from_weights(layers, (A, c) if A is not None else None)


def torch_model(weights: str | Path, layers: str | Path | None = None):
    """What ``regions`` counts for torch weights: the Sequential itself when it is Linear/ReLU
    (the counters read it directly), else its exact MaxoutNetwork (:func:`network_of`)."""
    mlp, _ = load_sequential(weights, layers)
    return network_of(mlp) if any(isinstance(m, Maxout) for m in mlp) else mlp


def load_source(path: str | Path, layers: str | Path | None = None, need_domain: bool = False,
                ) -> tuple[MaxoutNetwork, tuple[np.ndarray, np.ndarray] | None]:
    """The network to compile or verify against: torch weights (+ layers JSON) when
    :func:`is_torch_weights`, else a JSON network spec (:func:`expressivity.compile.load_spec`)."""
    if is_torch_weights(path):
        return load_network(path, layers, need_domain=need_domain)
    if layers is not None:
        raise ValueError(f"--layers goes with torch weights (.pt or .safetensors), not with {Path(path).name}")
    from ..compile import load_spec

    return load_spec(path)


def layers_of(mlp: nn.Sequential) -> list:
    """The layers JSON list of a Sequential of Linear/ReLU/Maxout/Identity."""
    if not isinstance(mlp, nn.Sequential):
        raise ValueError(f"model must be a torch.nn.Sequential of Linear/ReLU, got {type(mlp).__name__}")
    out: list = []
    for i, mod in enumerate(mlp):
        for base in (nn.Linear, nn.ReLU, nn.Identity, Maxout):
            if isinstance(mod, base) and type(mod) is not base and type(mod).forward is not base.forward:
                raise ValueError(f"model: module {i} ({type(mod).__name__}) subclasses {base.__name__} with its own "
                                 f"forward: its weights alone do not say what it computes; refused")
        if isinstance(mod, nn.Linear):
            entry: dict = {"linear": [mod.in_features, mod.out_features]}
            if mod.bias is None:
                entry["bias"] = False
            out.append(entry)
        elif isinstance(mod, Maxout):
            out.append({"maxout": [mod.in_features, mod.out_features, mod.rank]})
        elif isinstance(mod, nn.ReLU):
            out.append("relu")
        elif isinstance(mod, nn.Identity):
            out.append("identity")
        elif type(mod) in (nn.Flatten, nn.ReLU6):
            if type(mod) is nn.Flatten and (mod.start_dim, mod.end_dim) != (1, -1):
                raise ValueError(f"model: module {i} (Flatten) must flatten dims 1..-1 to be saved")
            out.append("flatten" if type(mod) is nn.Flatten else "relu6")
        elif type(mod) is nn.LeakyReLU:
            out.append({"leaky_relu": float(mod.negative_slope)})
        elif type(mod) is nn.Hardtanh:
            out.append({"hardtanh": [float(mod.min_val), float(mod.max_val)]})
        elif type(mod) in (nn.Conv1d, nn.Conv2d, nn.Conv3d):
            if mod.padding_mode != "zeros" or isinstance(mod.padding, str) or len(set(mod.kernel_size)) != 1:
                raise ValueError(f"model: module {i} ({type(mod).__name__}) needs a square kernel, number padding "
                                 "and padding_mode='zeros' to be saved")
            entry = {type(mod).__name__.lower(): [mod.in_channels, mod.out_channels, mod.kernel_size[0]],
                     "stride": list(mod.stride), "padding": list(mod.padding), "dilation": list(mod.dilation),
                     "groups": mod.groups}
            if mod.bias is None:
                entry["bias"] = False
            out.append(entry)
        elif type(mod) in (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d):
            if not (mod.affine and mod.track_running_stats):
                raise ValueError(f"model: module {i} ({type(mod).__name__}) must have affine=True and running "
                                 "statistics to be saved")
            out.append({type(mod).__name__.lower(): mod.num_features})
        elif type(mod) in (nn.MaxPool1d, nn.MaxPool2d, nn.MaxPool3d, nn.AvgPool1d, nn.AvgPool2d, nn.AvgPool3d):
            name = type(mod).__name__.lower()
            if getattr(mod, "ceil_mode", False) or not isinstance(mod.kernel_size, int):
                raise ValueError(f"model: module {i} ({type(mod).__name__}) needs an int kernel and ceil_mode=False "
                                 "to be saved")
            entry = {name: mod.kernel_size, "stride": mod.stride, "padding": mod.padding}
            if name.startswith("max"):
                entry["dilation"] = mod.dilation
            out.append(entry)
        else:
            raise ValueError(f"model: module {i} ({type(mod).__name__}) is not Linear, ReLU, Maxout, Identity or a "
                             "conv-net module (Conv, BatchNorm, MaxPool, AvgPool, Flatten, LeakyReLU, ReLU6, Hardtanh)")
    return out


def save_sequential(mlp: nn.Sequential, weights: str | Path, domain: tuple | None = None,
                    layers: str | Path | None = None, input_shape: tuple | None = None) -> tuple[Path, Path]:
    """Write ``mlp.state_dict()`` to ``weights`` (.pt or .safetensors) and its layers JSON
    (default beside it; ``input_shape``: one input's shape, e.g. (1, 8, 8) for a conv net);
    returns both paths."""
    entries = layers_of(mlp)
    w = Path(weights)
    if w.suffix not in SUFFIXES:
        raise ValueError(f"weights: expected a path ending in {', '.join(SUFFIXES)}, got {w.name}")
    lpath = Path(layers) if layers is not None else default_layers_path(w)
    doc: dict = {"layers": entries}
    if input_shape is not None:
        shape = [int(k) for k in input_shape]
        if not shape or any(k < 1 for k in shape) or shape != list(input_shape):
            raise ValueError(f"input_shape must be a tuple of positive ints, got {input_shape!r}")
        doc["input_shape"] = shape
    if domain is not None:
        lo, hi = domain
        doc["domain"] = {"lo": np.asarray(lo, dtype=np.float64).tolist(), "hi": np.asarray(hi, dtype=np.float64).tolist()}
    state = {k: v.detach().contiguous().cpu() for k, v in mlp.state_dict().items()}
    if w.suffix == ".safetensors":
        write_safetensors(w, state)
    else:
        write_atomic(w, lambda tmp: torch.save(state, tmp))
    write_json(lpath, doc)
    return w, lpath
