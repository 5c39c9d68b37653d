"""The region counters' inputs as the command line gives them (``expressivity regions``):
vectors as comma-separated numbers, inputs as ``.npy`` files (never unpickled), the one
domain the options name, and options that do not apply to MODEL or to that domain refused
(never ignored).

MODEL is either a ``.safetensors`` file written by ``save_transformer`` / ``expressivity
compile`` (a compiled model is read at token 0, like ``CompiledModel.evaluate``; a plain hardmax transformer
at every token of ``--n-tokens`` copies of x) or a JSON spec: the network specs of
``expressivity compile`` (maxout | relu | random) or a constructed family
``{"type": "sawtooth", "q": 3, "L": 4}`` | ``{"type": "tent", "L": 5}`` |
``{"type": "serra", "widths": [3, 4]}``, or a torch ``nn.Sequential``'s state dict (``.pt`` /
``.safetensors``) with its layer-shapes JSON (``--layers``, see ``expressivity.interop.torch_in``). Vectors are comma-separated: ``--segment 0 1`` or
``--segment=-1,0 1,0`` (use ``=`` for values starting with ``-``). ``--through A.npy B.npy C.npy``
counts on the plane through three inputs (``Plane.through``; any shape, e.g. (C, H, W)).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..regions import Box, Plane, Segment, domain_from_spec, lower
from ..transformer import Transformer
from .torch_in import is_torch_weights


def parse_vector(text: str, what: str) -> np.ndarray:
    """A vector from comma-separated numbers ``text`` (errors name ``what``)."""
    try:
        return np.array([float(t) for t in text.split(",")], dtype=np.float64)
    except ValueError:
        raise ValueError(f"{what}: expected comma-separated numbers, got {text!r}") from None


def read_npy(path: Path, what: str) -> np.ndarray:
    """One input from a .npy file (numbers only: never unpickled)."""
    if path.suffix != ".npy":
        raise ValueError(f"{what}: expected a .npy file, got {path.name}")
    if not path.is_file():
        raise ValueError(f"{what}: {path} does not exist")
    try:
        arr = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise ValueError(f"{what}: {path} is not a numeric .npy array ({' '.join(str(exc).split())[:120]})") from None
    if not isinstance(arr, np.ndarray) or arr.dtype.kind not in "biuf":
        raise ValueError(f"{what}: {path} must hold real numbers, got dtype {getattr(arr, 'dtype', type(arr))}")
    return arr


def domain_from_options(m, kw: dict, *, domain, segment, through, plane, bounds, lo, hi):
    """The one domain the options give (--domain JSON, --segment, --through, --plane or --box)."""
    if domain is not None:
        try:
            spec = json.loads(domain)
        except json.JSONDecodeError as exc:
            raise ValueError(f"--domain: not JSON ({exc.msg} at character {exc.pos})") from None
        return domain_from_spec(spec)
    if segment is not None:
        return Segment(parse_vector(segment[0], "segment A"), parse_vector(segment[1], "segment B"))
    if through is not None:
        return Plane.through(*(read_npy(p, f"--through {'ABC'[i]}") for i, p in enumerate(through)))
    if plane is not None:
        return Plane(parse_vector(plane[0], "plane O"), parse_vector(plane[1], "plane U"), parse_vector(plane[2], "plane V"),
                     parse_vector(bounds or "-1,1,-1,1", "--bounds"))
    d = lower(m, **kw).in_dim
    return Box(np.full(d, -1.0 if lo is None else lo), np.full(d, 1.0 if hi is None else hi))


def describe_model_file(path: Path) -> str:
    """What MODEL is, for an error: torch weights, a JSON network spec or one of our models."""
    if is_torch_weights(path):
        return "torch weights"
    return "a JSON network spec" if path.suffix == ".json" else "an expressivity .safetensors model"


def is_plain_transformer(m) -> bool:
    """A transformer that is not a compiled model (it reads x at every token)."""
    return isinstance(m, Transformer)


def check_options_apply(model: Path, layers, compile_it: bool, *, plane, bounds, box: bool, lo, hi, plot, color_by) -> None:
    """Refuse an option that does not apply to MODEL or to the chosen domain (never ignore it)."""
    torch_weights = is_torch_weights(model)
    if layers is not None and not torch_weights:
        raise ValueError(f"--layers does not apply: it gives the layer shapes of torch weights (.pt / .pth, or a "
                         f".safetensors not written by expressivity), and {model.name} is {describe_model_file(model)}")
    if compile_it and model.suffix == ".safetensors" and not torch_weights:
        raise ValueError(f"--compile does not apply: it compiles a network (a JSON spec or torch weights), and "
                         f"{model.name} is a transformer already")
    if bounds is not None and plane is None:
        raise ValueError("--bounds does not apply: it bounds the (α, β) rectangle of --plane")
    for name, value in (("--lo", lo), ("--hi", hi)):
        if value is not None and not box:
            raise ValueError(f"{name} does not apply: it bounds --box (give the domain's own bounds with --domain)")
    if color_by is not None and plot is None:
        raise ValueError("--color-by does not apply: it colours the --plot picture")


def region_job(model: Path, layers, compile_it: bool, *, segment, plane, through, bounds, box: bool, domain, lo,
               hi, n_tokens, plot, color_by, stream: bool = False):
    """``expressivity regions``' options checked and resolved: (the model, the one domain they
    name, its registered counter, the count's keywords (``n_tokens``), the plot's colouring).
    The --plot path is checked first, as a writable file; ``--stream`` needs a domain whose
    counter streams (a box or a slice) and no --plot."""
    from ..fileio import check_output_path
    from ..regions.count import counter_for, drawn_domains
    from .region_models import region_model

    if stream and plot is not None:
        raise ValueError("--stream does not apply with --plot: a streamed count keeps no cells to draw; "
                         "drop --stream for the picture")
    if plot is not None:
        check_output_path(plot, "--plot")
    chosen = sum(x is not None and x is not False for x in (segment, plane, through, box or None, domain))
    if chosen != 1:
        raise ValueError("give exactly one of --segment A B, --plane O U V, --through A B C, --box, --domain JSON")
    if plot is not None and plot.suffix.lower() != ".png":
        raise ValueError(f"--plot {plot}: writes a PNG image; give a path ending in .png")
    check_options_apply(model, layers, compile_it, plane=plane, bounds=bounds, box=box, lo=lo, hi=hi, plot=plot,
                        color_by=color_by)
    color_by = color_by or "linear"
    if color_by not in ("linear", "activation"):
        raise ValueError(f"--color-by must be 'linear' or 'activation', got {color_by!r}")
    m = region_model(model, compile_it, layers)
    if n_tokens is not None and not is_plain_transformer(m):
        raise ValueError(f"--n-tokens does not apply: it sets the copies of x for a plain transformer MODEL, "
                         f"and {model.name} is {describe_model_file(model)}")
    kw = {"n_tokens": n_tokens} if n_tokens is not None else {}
    dom = domain_from_options(m, kw, domain=domain, segment=segment, through=through, plane=plane, bounds=bounds,
                              lo=lo, hi=hi)
    counter = counter_for(dom)
    if stream and not counter.streams:
        raise ValueError(f"--stream does not apply to a {type(dom).__name__} domain: it streams the d-D counter "
                         f"(--box, or a box / slice --domain)")
    if plot is not None and counter.plot is None:
        raise ValueError(f"--plot: no picture is registered for a {type(dom).__name__} domain; domains with "
                         f"one: {', '.join(drawn_domains())} (--plane, --through, --box or --domain)")
    return m, dom, counter, kw, color_by
