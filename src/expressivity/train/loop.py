"""Training loop and per-length evaluation.

Loss: soft cross-entropy against the task's target distributions on scored positions,
ℓ = −Σ_a p*(a) log q(a) averaged over scored positions (for recognition p* is the one-hot label).

Evaluation at each test length n (``eval_batch`` fresh strings, a seed independent of
training):

- ``ce_bits``: mean over strings of the mean over scored positions of −Σ_a p*(a) log₂ q(a);
- ``optimal_bits``: the same with q = p*, i.e. the entropy H(p*) of the generative process
  (0 for recognition), so ``excess_bits`` = ce − optimum = the mean KL(p* ‖ q) ≥ 0;
- ``accuracy``: recognition — argmax at CLS equals the label. Next-symbol — a position is right
  iff the predicted set {a : q(a) > δ} equals the support of p*, with δ = ½·min_{a∈supp p*} p*(a);
  ``per_string`` counts a string right iff all its positions are (Bhattamishra et al.),
  ``per_position`` averages positions.

Determinism: the model is initialised from ``seed`` and batches come from
``numpy.random.default_rng(seed)``; with an output directory the run checkpoints the model
(safetensors), the optimiser and the data-rng state, and resumes from them.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file

from ..transformer import Transformer, load_transformer, save_transformer
from .config import RunConfig
from .models import build_model

LOG2E = 1.0 / math.log(2.0)


@dataclass(frozen=True)
class RunResult:
    config: RunConfig
    metrics: tuple[dict, ...]  # one dict per test length: length, accuracy, ce_bits, optimal_bits, excess_bits, n_strings
    final_loss: float  # mean training loss (nats) over the last 10% of steps
    duration: float  # seconds
    n_params: int
    resumed_from: int = 0  # step the run resumed from (0 = fresh)
    extra: dict = field(default_factory=dict)

    @property
    def score(self) -> float:
        """Mean accuracy over test lengths (Delétang et al.'s score)."""
        return float(np.mean([m["accuracy"] for m in self.metrics]))


def soft_cross_entropy(logits: torch.Tensor, target: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """−Σ_a p*(a) log q(a) per position: (B, T); logits, target (B, T, C)."""
    logq = F.log_softmax(logits, dim=-1)
    return -(target * logq.masked_fill(target == 0, 0.0)).sum(-1) * mask


def train_run(cfg: RunConfig, out_dir: str | Path | None = None,
              on_step: Callable[[int, float], None] | None = None,
              on_eval: Callable[[int, int], None] | None = None) -> RunResult:
    """Train one run and evaluate it per test length (see the module docstring).

    ``on_step(step, loss)`` is called after every optimiser step, ``on_eval(done, total)``
    after every evaluated test length (progress bars).
    """
    t0 = time.perf_counter()
    task = cfg.make_task()
    train_lengths = task.valid_lengths(range(cfg.train_lengths[0], cfg.train_lengths[1] + 1))
    model = build_model(cfg, len(task.vocab), task.n_outputs)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    rng = np.random.default_rng(cfg.seed)
    losses: list[float] = []
    start = 0
    out = Path(out_dir) if out_dir is not None else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "config.json").write_text(json.dumps(cfg.to_dict(), indent=1))
        start, losses = _load_checkpoint(out, cfg, model, opt, rng)
    resumed_from = start

    model.train()
    for step in range(start, cfg.steps):
        n = int(rng.choice(train_lengths))
        batch = task.sample_batch(rng, cfg.batch_size, n)
        logits = model(batch["input"])  # (B, T, C)
        mask = batch["mask"]
        loss = soft_cross_entropy(logits, batch["output"], mask).sum() / mask.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if cfg.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        losses.append(loss.item())
        if on_step is not None:
            on_step(step + 1, losses[-1])
        if out is not None and ((step + 1) % cfg.checkpoint_every == 0 or step + 1 == cfg.steps):
            _save_checkpoint(out, cfg, model, opt, rng, step + 1, losses)

    metrics = evaluate(model, cfg, task, on_length=on_eval)
    tail = losses[-max(1, len(losses) // 10):] if losses else [float("nan")]
    n_params = sum(p.numel() for p in model.parameters())
    result = RunResult(cfg, tuple(metrics), float(np.mean(tail)), time.perf_counter() - t0, n_params, resumed_from)
    if out is not None:
        (out / "metrics.json").write_text(json.dumps(list(metrics), indent=1))
    return result


@torch.no_grad()
def evaluate(model: torch.nn.Module, cfg: RunConfig, task=None,
             on_length: Callable[[int, int], None] | None = None) -> list[dict]:
    """Per-test-length metrics of ``model`` (see the module docstring)."""
    task = task or cfg.make_task()
    rng = np.random.default_rng([cfg.seed, 7])  # evaluation data independent of training
    was_training = model.training
    model.eval()
    rows = []
    lengths = task.valid_lengths(cfg.test_lengths)
    for i, n in enumerate(lengths):
        batch = task.sample_batch(rng, cfg.eval_batch, n)
        rows.append(batch_metrics(model(batch["input"]), batch, task.kind, cfg.accuracy) | {"length": n})
        if on_length is not None:
            on_length(i + 1, len(lengths))
    model.train(was_training)
    return rows


def batch_metrics(logits: torch.Tensor, batch: dict, kind: str, accuracy: str = "per_string") -> dict:
    """accuracy, ce_bits, optimal_bits, excess_bits for one batch (see module docstring)."""
    target = batch["output"].double()  # (B, T, C)
    mask = batch["mask"]  # (B, T)
    logq = F.log_softmax(logits.double(), dim=-1)
    ce = soft_cross_entropy(logits.double(), target, mask) * LOG2E  # (B, T) bits
    ent = -(target * torch.log(target.clamp_min(1e-300))).sum(-1) * mask * LOG2E
    per_string = mask.sum(1).clamp_min(1)
    ce_s, ent_s = ce.sum(1) / per_string, ent.sum(1) / per_string  # (B,)
    if kind == "recognition":
        right = (logq.argmax(-1) == target.argmax(-1)) | ~mask  # (B, T)
    else:
        support = target > 0
        delta = 0.5 * torch.where(support, target, torch.inf).amin(-1, keepdim=True)
        right = ((logq.exp() > delta) == support).all(-1) | ~mask
    if accuracy == "per_string" or kind == "recognition":
        acc = right.all(1).double().mean()
    else:
        acc = ((right & mask).sum(1) / per_string).mean()
    return {"accuracy": float(acc), "ce_bits": float(ce_s.mean()), "optimal_bits": float(ent_s.mean()),
            "excess_bits": float((ce_s - ent_s).mean()), "n_strings": len(ce_s)}


# ------------------------------------------------------------------------- checkpoints
def _atomic(path: Path, write: Callable[[Path], None]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    write(tmp)
    os.replace(tmp, path)


def _save_checkpoint(out: Path, cfg, model, opt, rng, step: int, losses: list[float]) -> None:
    if isinstance(model, Transformer):
        _atomic(out / "model.safetensors", lambda p: save_transformer(
            model, p, extra={"run_config": cfg.to_json(), "step": str(step)}))
    else:
        state = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
        _atomic(out / "model.safetensors", lambda p: save_file(
            state, str(p), metadata={"run_config": cfg.to_json(), "step": str(step)}))
    trainer = {"run_id": cfg.run_id, "step": step, "optimizer": opt.state_dict(),
               "rng": rng.bit_generator.state, "losses": losses}
    _atomic(out / "trainer.pt", lambda p: torch.save(trainer, p))


def _load_checkpoint(out: Path, cfg, model, opt, rng) -> tuple[int, list[float]]:
    """Restore model, optimiser and data rng from ``out`` if it holds this run's checkpoint."""
    trainer_path, model_path = out / "trainer.pt", out / "model.safetensors"
    if not (trainer_path.is_file() and model_path.is_file()):
        return 0, []
    trainer = torch.load(trainer_path, weights_only=False)
    if trainer.get("run_id") != cfg.run_id:
        raise ValueError(f"{out} holds a checkpoint of a different run; use another --out")
    state = load_transformer(model_path).state_dict() if isinstance(model, Transformer) else load_file(str(model_path))
    with torch.no_grad():
        model.load_state_dict(state)
    opt.load_state_dict(trainer["optimizer"])
    rng.bit_generator.state = trainer["rng"]
    return int(trainer["step"]), list(trainer["losses"])
