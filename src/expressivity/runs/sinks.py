"""Metric sinks: where a training run also logs its numbers (TensorBoard, Weights & Biases).

A sink is anything with ``log(step, scalars)`` and ``close()`` (:class:`Sink`). A run opens
its sinks from their specs (strings, so they travel to a sweep's worker processes):

* ``tensorboard:DIR`` — event files under ``DIR/<run name>/`` through
  ``torch.utils.tensorboard`` (needs the ``tensorboard`` package: ``pip install
  'expressivity[tensorboard]'``);
* ``wandb`` or ``wandb:PROJECT`` — one W&B run per training run (``pip install
  'expressivity[wandb]'``; ``WANDB_MODE=offline`` writes it locally, ``wandb sync`` uploads).

``expressivity.train.train_run(cfg, sinks=...)`` calls ``log`` with the training loss about
100 times per run (every ``max(1, steps // 100)`` steps), and after evaluation with each test
length's metrics at the last step (``accuracy/n=41``, ``ce_bits/n=41``, ``excess_bits/n=41`` …)
and their means (``eval/mean_accuracy`` …). Non-finite values are left out.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from ..fileio import check_output_path
from ..rules import missing_extra

KINDS = ("tensorboard", "wandb")


@runtime_checkable
class Sink(Protocol):
    """Receives a run's scalars: ``log(step, {"loss": 0.3, "accuracy/n=41": 0.9})``."""

    def log(self, step: int, scalars: Mapping[str, float]) -> None: ...

    def close(self) -> None: ...


def parse_sink(spec: str, option: str = "--log") -> tuple[str, str | None]:
    """``"tensorboard:DIR"`` → ("tensorboard", DIR); ``"wandb[:PROJECT]"`` → ("wandb", PROJECT)."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"{option}: expected tensorboard:DIR or wandb[:PROJECT], got {spec!r}")
    kind, _, arg = spec.strip().partition(":")
    if kind not in KINDS:
        raise ValueError(f"{option} {spec}: unknown sink {kind!r}; expected tensorboard:DIR or wandb[:PROJECT]")
    if kind == "tensorboard" and not arg:
        raise ValueError(f"{option} {spec}: give the event directory, e.g. tensorboard:runs/tb")
    if kind == "wandb" and arg and not re.fullmatch(r"[A-Za-z0-9_.\-]{1,128}", arg):
        raise ValueError(f"{option} {spec}: a W&B project name is letters, digits, '.', '_' and '-'")
    return kind, arg or None


def _missing(package: str, extra: str, option: str, spec: str) -> ImportError:
    return missing_extra(package, extra, f"{option} {spec}")


def check_sinks(specs: Sequence[str], option: str = "--log") -> list[str]:
    """Check sink specs before any work starts: syntax, the package each needs, a writable
    TensorBoard directory. Returns them unchanged (a list)."""
    if isinstance(specs, str):
        specs = [specs]
    out = []
    for spec in specs:
        kind, arg = parse_sink(spec, option)
        if kind == "tensorboard":
            try:
                import tensorboard  # noqa: F401
            except ImportError:
                raise _missing("tensorboard", "tensorboard", option, spec) from None
            check_output_path(arg, option, kind="dir")
        else:
            try:
                import wandb  # noqa: F401
            except ImportError:
                raise _missing("wandb", "wandb", option, spec) from None
        out.append(spec)
    return out


class TensorBoardSink:
    """Scalars into TensorBoard event files under ``directory`` (``torch.utils.tensorboard``)."""

    def __init__(self, directory: str | Path, config: Mapping | None = None) -> None:
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError:
            raise _missing("tensorboard", "tensorboard", "--log", f"tensorboard:{directory}") from None
        self.directory = Path(directory)
        self._writer = SummaryWriter(log_dir=str(self.directory))
        if config:
            self._writer.add_text("config", "\n".join(f"    {k}: {v}" for k, v in config.items()), 0)

    def log(self, step: int, scalars: Mapping[str, float]) -> None:
        for key, value in scalars.items():
            if value is not None and math.isfinite(float(value)):
                self._writer.add_scalar(key, float(value), int(step))

    def close(self) -> None:
        self._writer.flush()
        self._writer.close()


class WandbSink:
    """One Weights & Biases run (``WANDB_MODE=offline`` keeps it on disk)."""

    def __init__(self, name: str, project: str | None = None, config: Mapping | None = None,
                 group: str | None = None) -> None:
        try:
            import wandb
        except ImportError:
            raise _missing("wandb", "wandb", "--log", "wandb") from None
        self._run = wandb.init(project=project or "expressivity", name=name, group=group,
                               config=dict(config or {}), reinit="create_new")

    def log(self, step: int, scalars: Mapping[str, float]) -> None:
        clean = {k: float(v) for k, v in scalars.items() if v is not None and math.isfinite(float(v))}
        if clean:
            self._run.log(clean, step=int(step))

    def close(self) -> None:
        self._run.finish()


def open_sinks(specs: Sequence[str] | str | None, name: str, config: Mapping | None = None,
               group: str | None = None) -> list[Sink]:
    """The sinks of ``specs`` for one run called ``name`` (a TensorBoard subdirectory, a W&B run name)."""
    if not specs:
        return []
    if isinstance(specs, str):
        specs = [specs]
    sinks: list[Sink] = []
    try:
        for spec in specs:
            kind, arg = parse_sink(spec)
            if kind == "tensorboard":
                sinks.append(TensorBoardSink(Path(arg) / name, config))
            else:
                sinks.append(WandbSink(name, arg, config, group))
    except BaseException:
        close_sinks(sinks)
        raise
    return sinks


def log_to(sinks: Sequence[Sink], step: int, scalars: Mapping[str, float]) -> None:
    for s in sinks:
        s.log(step, scalars)


def close_sinks(sinks: Sequence[Sink]) -> None:
    for s in sinks:
        try:
            s.close()
        except Exception:  # noqa: BLE001 — a sink that fails to close must not lose the run
            pass
