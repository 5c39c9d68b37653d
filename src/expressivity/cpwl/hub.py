"""A :class:`~expressivity.cpwl.MaxoutNetwork` as tensors, and in the hub layout (kind
``network``): ``config.json``'s ``network`` record says which tensors there are (depth,
whether there is a read-out y = A·h + c), ``model.safetensors`` holds them in float64 —
``layers.k.W`` (width, rank, in), ``layers.k.b`` (width, rank), ``readout.A``, ``readout.c``.
A compiled model's source network is stored the same way (its file or
``source_net.safetensors``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from ..pretrained import CONFIG_NAME, WEIGHTS_NAME, read_tensors
from ..rules import check_int
from .maxout import MaxoutNetwork


def net_record(net: MaxoutNetwork) -> dict:
    """What says which tensors hold ``net``: its depth and whether it has a readout."""
    return {"depth": net.depth, "readout": net.readout is not None}


def net_tensors(net: MaxoutNetwork) -> dict[str, torch.Tensor]:
    """``net``'s weights as float64 tensors (names in the module docstring)."""
    t: dict[str, torch.Tensor] = {}
    for k, layer in enumerate(net.layers):
        t[f"layers.{k}.W"] = torch.tensor(np.asarray(layer.W, dtype=np.float64))
        t[f"layers.{k}.b"] = torch.tensor(np.asarray(layer.b, dtype=np.float64))
    if net.readout is not None:
        t["readout.A"] = torch.tensor(np.asarray(net.readout[0], dtype=np.float64))
        t["readout.c"] = torch.tensor(np.asarray(net.readout[1], dtype=np.float64))
    return t


def net_from_tensors(rec, tensors: dict[str, torch.Tensor], where: str, path: str,
                     what: str = "source_net") -> MaxoutNetwork:
    """The network of :func:`net_record` ``rec`` (read at ``where``, named ``what``) and
    :func:`net_tensors` (read from ``path``), checked: exactly the tensors the record names,
    float64, shapes that chain and finite values (``MaxoutNetwork.from_weights``)."""
    if not isinstance(rec, dict) or set(rec) != {"depth", "readout"}:
        raise ValueError(f"{where}: {what} must be an object with exactly depth and readout, got {rec!r}")
    depth = check_int(rec["depth"], f"{where}: {what}.depth", min=1)
    if not isinstance(rec["readout"], bool):
        raise ValueError(f"{where}: {what}.readout must be true or false, got {rec['readout']!r}")
    names = {f"layers.{k}.{w}" for k in range(depth) for w in "Wb"} | ({"readout.A", "readout.c"} if rec["readout"] else set())
    missing, extra = sorted(names - set(tensors)), sorted(set(tensors) - names)
    if missing or extra:
        raise ValueError(f"{path}: does not match {what} (depth {depth}, readout {rec['readout']}): "
                         + (f"missing {missing[:4]}" if missing else f"unexpected {extra[:4]}"))
    for key in sorted(tensors):
        if tensors[key].dtype != torch.float64:
            raise ValueError(f"{path}: tensor {key} has dtype {tensors[key].dtype}, expected torch.float64")
    a = {k: v.numpy() for k, v in tensors.items()}
    try:
        return MaxoutNetwork.from_weights([(a[f"layers.{k}.W"], a[f"layers.{k}.b"]) for k in range(depth)],
                                          (a["readout.A"], a["readout.c"]) if rec["readout"] else None)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def network_records(net: MaxoutNetwork) -> tuple[dict, dict]:
    return ({"transformer": None, "channels": None, "network": net_record(net)}, {WEIGHTS_NAME: net_tensors(net)})


def network_from_config(config: dict, d: Path) -> MaxoutNetwork:
    """The network of a hub directory of kind ``network`` (its record and tensors checked)."""
    where = d / CONFIG_NAME
    if config["transformer"] is not None or config["channels"] is not None:
        raise ValueError(f"{where}: a network has no transformer or channels (both must be null)")
    return net_from_tensors(config["network"], read_tensors(d / WEIGHTS_NAME), str(where), str(d / WEIGHTS_NAME),
                            what="network")
