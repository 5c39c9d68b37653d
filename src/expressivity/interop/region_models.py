"""Any model file the region counters take, by what the file is: :func:`region_model`.

* torch weights (``.pt`` / ``.pth``, or a ``.safetensors`` file not written by expressivity)
  with their layers JSON: the ``nn.Sequential`` (:func:`.torch_in.torch_model`), or its
  compiled hardmax transformer;
* one of our ``.safetensors`` files: a compiled model or a plain transformer
  (:func:`.hub.load_saved`);
* a JSON network spec (maxout | relu | random, or a constructed family ``sawtooth`` /
  ``tent`` / ``serra``; ``expressivity.compile.spec``), optionally compiled. A family whose
  known number of pieces cannot be held in memory is refused before anything is counted.
"""

from __future__ import annotations

from pathlib import Path

from ..compile import compile_maxout
from ..compile.spec import parse_model_spec, read_spec
from ..regions.count import check_pieces_memory
from .hub import load_saved
from .torch_in import is_torch_weights, load_network, torch_model


def region_model(path: str | Path, compile_it: bool = False, layers: str | Path | None = None):
    """A model object that :func:`expressivity.regions.lower` accepts, read from ``path``;
    ``compile_it`` compiles a network (torch weights or JSON spec) to a hardmax transformer
    first; ``layers``: the layers JSON of torch weights (default beside them)."""
    path = Path(path)
    if is_torch_weights(path):  # a saved nn.Sequential (+ its layers JSON)
        if compile_it:
            net, domain = load_network(path, layers, need_domain=True)
            return compile_maxout(net, domain=domain)
        return torch_model(path, layers)
    if path.suffix == ".safetensors":
        return load_saved(path)
    if path.suffix != ".json":
        raise ValueError(f"MODEL must be a .safetensors or .json file, got {path.name}")
    data = read_spec(path, "MODEL")
    if "type" not in data:
        raise ValueError(f"MODEL {path}: a JSON model must be an object with a 'type' field")
    net, domain, pieces = parse_model_spec(data)
    if pieces is not None:
        kind = data["type"]
        label = {"sawtooth": f"{data.get('q', 2)}^{data.get('L', 1)}", "tent": f"2^{data.get('L', 1)}"}.get(kind, "")
        what = f"{label} ≈ {pieces:.3g}" if label else f"{pieces:.3g}"
        width = (max(net.widths) * max(net.ranks) if not compile_it  # compiled: z^(l), h^(l) per layer
                 else 2 * sum(net.widths) + 2 * max(net.widths) + max(net.ranks))
        check_pieces_memory(pieces, width, f"counting the {what} linear regions of {path.name}",
                            hint="use a smaller family (L, q or widths)")
    return compile_maxout(net, domain=domain) if compile_it else net
