"""Where a run trains: ``RunConfig.device`` and ``RunConfig.dtype`` resolved against this machine.

``device``: ``auto`` (CUDA when present, else MPS, else the CPU; the environment variable
``EXPRESSIVITY_DEVICE`` overrides what ``auto`` means, which is how ``reproduce --device``
reaches its units) | ``cpu`` | ``cuda`` | ``cuda:N`` | ``mps``. The device is *where* a run
trains, not *what* it is: it never enters the run id, so a run checkpointed on a GPU resumes on
a CPU as the same run (checkpoints are written from CPU copies and read with ``map_location``).

``dtype``: ``float32`` (default) | ``bfloat16`` — the transformer's forward pass and loss
under ``torch.autocast`` (weights, gradients and Adam stay float32). bfloat16 is numbers, not
place: it enters the run id (``float32`` is left out, so older ids do not move). It needs an
accelerator, or a CPU with native bfloat16 (AVX512-BF16 / AMX).

Bad input is one line naming the option and what this machine has
(``--device cuda: no CUDA device here; present: cpu``).
"""

from __future__ import annotations

import os
import re
from contextlib import AbstractContextManager, nullcontext

import torch

DEVICE_ENV = "EXPRESSIVITY_DEVICE"  # what "auto" resolves to, when set (reproduce --device)
DTYPES: tuple[str, ...] = ("float32", "bfloat16")
_DEVICE_RE = re.compile(r"^(auto|cpu|mps|cuda(:\d+)?)$")


def check_device_name(name, option: str = "--device") -> str:
    """``name`` if it is one of auto | cpu | cuda | cuda:N | mps (syntax only, not presence)."""
    if not isinstance(name, str) or not _DEVICE_RE.match(name.strip()):
        raise ValueError(f"{option} must be auto, cpu, cuda, cuda:N or mps, got {name!r}; present here: "
                         f"{', '.join(present_devices())}")
    return name.strip()


def _mps_available() -> bool:
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def present_devices() -> list[str]:
    """The devices this machine can train on: cpu, cuda:0 … cuda:N−1, mps."""
    out = ["cpu"]
    if torch.cuda.is_available():
        out += [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    if _mps_available():
        out.append("mps")
    return out


def resolve_device(name: str = "auto", option: str = "--device") -> torch.device:
    """The torch.device of ``name`` on this machine; a one-line ValueError naming ``option``
    and the present devices for an unknown or absent one."""
    name = check_device_name(name, option)
    if name == "auto":
        env = os.environ.get(DEVICE_ENV, "").strip()
        if env and env != "auto":
            return resolve_device(env, f"{option} (from {DEVICE_ENV}={env})")
        if torch.cuda.is_available():
            return torch.device("cuda", torch.cuda.current_device())
        return torch.device("mps") if _mps_available() else torch.device("cpu")
    have = present_devices()
    if name == "cpu":
        return torch.device("cpu")
    if name == "mps":
        if not _mps_available():
            raise ValueError(f"{option} mps: no Apple MPS device here; present: {', '.join(have)}")
        return torch.device("mps")
    if not torch.cuda.is_available():
        raise ValueError(f"{option} {name}: no CUDA device here; present: {', '.join(have)}")
    index = int(name.split(":")[1]) if ":" in name else torch.cuda.current_device()
    if index >= torch.cuda.device_count():
        raise ValueError(f"{option} {name}: this machine has {torch.cuda.device_count()} CUDA device(s); "
                         f"present: {', '.join(have)}")
    return torch.device("cuda", index)


def cpu_has_bfloat16() -> bool:
    """Whether this CPU computes bfloat16 natively (oneDNN's test: AVX512-BF16 or AMX)."""
    probe = getattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", None)
    try:
        return bool(probe()) if probe is not None else False
    except Exception:  # noqa: BLE001 — a build without oneDNN
        return False


def check_dtype(dtype: str, device: torch.device, option: str = "--dtype") -> str:
    """``dtype`` if this ``device`` can run it (bfloat16: an accelerator or a bfloat16 CPU)."""
    if dtype not in DTYPES:
        raise ValueError(f"{option} must be one of {', '.join(DTYPES)}, got {dtype!r}")
    if dtype == "bfloat16" and device.type == "cpu" and not cpu_has_bfloat16():
        raise ValueError(f"{option} bfloat16: this CPU has no native bfloat16 (AVX512-BF16 / AMX); use "
                         f"--dtype float32, or --device cuda / mps (present: {', '.join(present_devices())})")
    return dtype


def autocast(dtype: str, device: torch.device) -> AbstractContextManager:
    """``torch.autocast`` to ``dtype`` on ``device`` (nothing for float32)."""
    if dtype == "float32":
        return nullcontext()
    return torch.autocast(device_type=device.type, dtype=getattr(torch, dtype))


def to_device(batch: dict, device: torch.device) -> dict:
    """A task batch with its tensors on ``device`` (the sampler draws on the CPU, from numpy,
    so every device sees the same strings)."""
    if device.type == "cpu":
        return batch
    return {k: v.to(device, non_blocking=True) if isinstance(v, torch.Tensor) else v for k, v in batch.items()}
