"""Training loop and per-length evaluation.

Loss: soft cross-entropy against the task's target distributions on scored positions,
ℓ = −Σ_a p*(a) log q(a) averaged over scored positions (for recognition p* is the one-hot label).
A recognizer with ``cfg.aux`` adds its auxiliary losses (:mod:`.recognizers`: language
modelling, next-symbol prediction on the positives; Butoi et al. 2025).

Evaluation at each test length n (``eval_batch`` fresh strings, a seed independent of
training):

- ``ce_bits``: mean over strings of the mean over scored positions of −Σ_a p*(a) log₂ q(a);
- ``optimal_bits``: the same with q = p*, i.e. the entropy H(p*) of the generative process
  (0 for recognition), so ``excess_bits`` = ce − optimum = the mean KL(p* ‖ q) ≥ 0;
- ``accuracy``: recognition — argmax at CLS equals the label; classification and transduction
  (one-hot targets) — a scored position is right iff argmax q = the target, Delétang et al.'s
  accuracy (``per_position``: their per-token accuracy). Next-symbol — a position is right
  iff the predicted set {a : q(a) > δ} equals the support of p*, with δ = ½·min_{a∈supp p*} p*(a);
  ``per_string`` counts a string right iff all its positions are (Bhattamishra et al.),
  ``per_position`` averages positions.
- Dyck next-symbol runs also get closing-bracket accuracy by distance (Yao et al. 2021;
  :mod:`.bracket_distance`): ``close_accuracy`` and per-bin counts ``close_right_lo_hi``,
  ``close_count_lo_hi``.
- FLaRe recognition runs also get the negatives' cross-entropy by edit distance and by
  edit count (:func:`.recognizers.edit_metrics`: ``edit_ce_d``, ``edit_n_d``, ``edits_ce_k``,
  ``edits_n_k``).

Determinism: the model is initialised from ``seed`` and batches come from
``numpy.random.default_rng(seed)``; with an output directory the run checkpoints the model
(safetensors), the optimiser and the data-rng state, and resumes from them.

Faults: a training loss that is not finite (NaN/inf: the run diverged, e.g. lr too high)
stops the run at once; it is returned with ``status == "diverged"`` and no metrics (nothing
is evaluated on NaN weights), so a sweep records it and goes on. A checkpoint is two files,
each written to a temporary name and renamed; both carry the step and the run id, and a
resume refuses a pair that disagrees (a torn checkpoint) or that cannot be read, with a
one-line error that points at ``restart=True`` (``train --restart``). Before anything is
allocated the run's memory is estimated (:func:`memory_estimate`) and refused over the budget.
"""

from __future__ import annotations

import io
import json
import logging
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.torch import load_file

from ..fileio import (
    WriteError,
    check_output_path,
    make_dir,
    write_atomic,
    write_bytes_atomic,
    write_safetensors,
)
from ..memory import check_memory
from ..rules import check_bool
from ..runs.sinks import Sink, log_to
from ..transformer import Transformer, load_state, save_transformer
from . import bracket_distance, recognizers
from .config import RunConfig
from .devices import autocast, check_dtype, resolve_device, to_device
from .models import eval_memory_cells, memory_cells, memory_resized
from .models.construction import construction_name, get_construction
from .models.stack_rnn import STACK_CELL
from .models.tape_rnn import TAPE_CELL
from .optim import adam_step, clip_grad_norm, make_adam

log = logging.getLogger(__name__)

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
    status: str = "done"  # done | diverged (non-finite training loss; metrics empty)
    diverged_at: int | None = None  # the step whose loss was not finite

    @property
    def score(self) -> float:
        """Mean accuracy over test lengths (Delétang et al.'s score); NaN without metrics."""
        acc = [m["accuracy"] for m in self.metrics if m["accuracy"] is not None and math.isfinite(m["accuracy"])]
        return float(np.mean(acc)) if acc else float("nan")

    def run_row(self) -> dict:
        """This run as a row of the store's ``runs`` table (:class:`expressivity.runs.store.FinishedRun`):
        status done | diverged, the diverged reason as its error."""
        cfg = self.config
        diverged = self.status == "diverged"
        reason = (f"diverged: the training loss was not finite at step {self.diverged_at} (lr too high?)"
                  if diverged else None)
        return {"run_id": cfg.run_id, "label": cfg.label(), "config": cfg.to_json(),
                "status": "diverged" if diverged else "done", "error": reason, "final_loss": self.final_loss,
                "n_params": self.n_params, "duration": self.duration, "score": self.score}

    def metric_rows(self) -> list[dict]:
        """One row of the store's ``results`` table per test length: the metrics (and any further
        numbers, e.g. closing-bracket counts) with the run's id, task, kind, model, seed, config."""
        cfg = self.config
        same = {"run_id": cfg.run_id, "task": cfg.task, "kind": cfg.kind, "model": cfg.model, "seed": cfg.seed,
                "config": cfg.to_json()}
        return [{**m, **same} for m in self.metrics]


def soft_cross_entropy(logits: torch.Tensor, target: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """−Σ_a p*(a) log q(a) per position: (B, T); logits, target (B, T, C)."""
    logq = F.log_softmax(logits, dim=-1)
    return -(target * logq.masked_fill(target == 0, 0.0)).sum(-1) * mask


def training_loss(model: torch.nn.Module, batch: dict) -> torch.Tensor:
    """The soft cross-entropy of ``model`` on ``batch`` averaged over its scored positions
    (Σ_{b,t} mask · CE / Σ mask): the model's own ``scored_loss`` where it has one (the recurrent
    models: the read-out at the scored positions only, the same value to float round-off), else
    :func:`soft_cross_entropy` of its logits (float32)."""
    scored = getattr(model, "scored_loss", None)
    if scored is not None:
        return scored(batch["input"], batch["output"], batch["mask"])
    mask = batch["mask"]
    return soft_cross_entropy(model(batch["input"]).float(), batch["output"], mask).sum() / mask.sum()


def loss_and_gradients(cfg: RunConfig, task, model: torch.nn.Module, batch: dict, device: torch.device) -> float:
    """One step's training loss (:func:`training_loss`, plus ``cfg.aux``'s losses), its gradient
    added to the parameters' ``.grad`` when it is finite (nothing is done with a non-finite one:
    the run has diverged). A model's own ``loss_and_grads`` (the rnn: forward and backward
    written out, no autograd graph) takes the place of ``training_loss`` and ``backward`` where
    it applies: float32 and no aux losses."""
    direct = getattr(model, "loss_and_grads", None) if cfg.dtype == "float32" and not cfg.aux else None
    if direct is not None:
        return direct(batch["input"], batch["output"], batch["mask"]).item()
    with autocast(cfg.dtype, device):
        loss = training_loss(model, batch)
    if cfg.aux:
        loss = loss + recognizers.aux_loss(cfg, task, model, batch)
    value = loss.item()
    if math.isfinite(value):
        loss.backward()
    return value


def train_run(cfg: RunConfig, out_dir: str | Path | None = None,
              on_step: Callable[[int, float], None] | None = None,
              on_eval: Callable[[int, int], None] | None = None, *, restart: bool = False,
              fit: bool = False, sinks: Sequence[Sink] = ()) -> RunResult:
    """Train one run and evaluate it per test length (see the module docstring).

    ``on_step(step, loss)`` is called after every optimiser step, ``on_eval(done, total)``
    before the first and after every evaluated test length (progress bars). ``restart``:
    discard a checkpoint of this run in ``out_dir`` (e.g. a corrupt one) and start afresh.
    ``fit``: also evaluate the trained model the same way at every training length (fresh
    strings): does it fit its training range? The rows go to ``result.extra["train_range"]``,
    not to the metrics (nor the store's results). ``sinks`` (:mod:`expressivity.runs.sinks`,
    e.g. TensorBoard) get the loss every ``max(1, steps // 100)`` steps and each test length's
    metrics at the last step; the caller opens and closes them.
    """
    if not isinstance(cfg, RunConfig):
        raise ValueError(f"cfg must be a RunConfig, got {type(cfg).__name__}")
    for name, fn in (("on_step", on_step), ("on_eval", on_eval)):
        if fn is not None and not callable(fn):
            raise ValueError(f"{name} must be callable, got {type(fn).__name__}")
    restart, fit = check_bool(restart, "restart"), check_bool(fit, "fit")
    sinks = _check_sinks(sinks)
    t0 = time.perf_counter()
    out = None if out_dir is None else check_output_path(out_dir, "out_dir", kind="dir")
    task = cfg.make_task()
    check_run_memory(cfg, task)
    train_lengths = task.valid_lengths(range(cfg.train_lengths[0], cfg.train_lengths[1] + 1))
    device = run_device(cfg)
    model = recognizers.build(cfg, task).to(device)  # build_model (seeded, on the CPU), aux heads when cfg.aux
    opt = make_optimizer(model, cfg.lr, device)
    rng = np.random.default_rng(cfg.seed)
    start, losses = open_run(out, cfg, model, opt, rng, restart)
    resumed_from = start

    model.train()
    params = list(model.parameters())
    diverged_at = None
    log_every = max(1, cfg.steps // 100)
    for step in range(start, cfg.steps):
        n = draw_length(rng, train_lengths)
        batch = to_device(task.sample_batch(rng, cfg.batch_size, n), device)
        opt.zero_grad(set_to_none=True)
        value = loss_and_gradients(cfg, task, model, batch, device)
        if not math.isfinite(value):  # diverged: stop, keep the last good checkpoint
            diverged_at = step + 1
            losses.append(value)
            break
        optimizer_step(params, opt, cfg.grad_clip)
        losses.append(value)
        if on_step is not None:
            on_step(step + 1, losses[-1])
        if (step + 1) % log_every == 0 or step + 1 == cfg.steps:
            log.debug("%s step %d/%d loss %.4f", cfg.run_id, step + 1, cfg.steps, value)
            log_to(sinks, step + 1, {"train/loss": value})
        if out is not None and ((step + 1) % cfg.checkpoint_every == 0 or step + 1 == cfg.steps):
            _save_checkpoint(out, cfg, model, opt, rng, step + 1, losses)

    return finish_run(cfg, task, model, out, losses, diverged_at, resumed_from, t0, on_eval, fit, sinks=sinks)


def draw_length(rng: np.random.Generator, lengths: Sequence[int]) -> int:
    """One training length, uniform over ``lengths``: the draw of ``rng.choice(lengths)`` (the
    same integers(0, len) underneath, so the same stream) without its list-to-array cost."""
    return int(lengths[int(rng.integers(len(lengths)))])


def make_optimizer(model: torch.nn.Module, lr: float, device: torch.device) -> torch.optim.Adam:
    """torch.optim.Adam (β = (0.9, 0.999), ε = 10⁻⁸, learning rate ``lr``) over ``model``'s
    parameters: :class:`~.optim.LeanAdam`, torch's fused kernel called directly, where it has
    one (CPU, CUDA), else its foreach path; the same update either way."""
    return make_adam(model.parameters(), lr, device)


def optimizer_step(params: torch.nn.Module | Sequence[torch.Tensor], opt: torch.optim.Optimizer,
                   grad_clip: float) -> None:
    """Clip the gradient of ``params`` (a model's parameters, or the model) to norm ``grad_clip``
    (g ← g · min(1, clip / (‖g‖ + 10⁻⁶)), all parameters as one vector; none for ``grad_clip`` ≤
    0; :func:`~.optim.clip_grad_norm`), then take ``opt``'s step (:func:`~.optim.adam_step`)."""
    if grad_clip > 0:
        clip_grad_norm(list(params.parameters()) if isinstance(params, torch.nn.Module) else params, grad_clip)
    adam_step(opt)


def run_device(cfg: RunConfig) -> torch.device:
    """The torch.device ``cfg`` trains on here (:mod:`.devices`), its dtype checked against it."""
    device = resolve_device(cfg.device)
    check_dtype(cfg.dtype, device)
    return device


def open_run(out: Path | None, cfg: RunConfig, model, opt, rng, restart: bool) -> tuple[int, list[float]]:
    """The run's directory made ready: another run's checkpoint refused, this run's discarded
    (``restart``) or loaded into ``model`` / ``opt`` / ``rng``; config.json written. Returns
    (step to start from, the losses so far)."""
    if out is None:
        return 0, []
    _check_checkpoint_owner(out, cfg)  # before anything is written into the directory
    if restart:
        clear_checkpoint(out)
    make_dir(out, "out_dir")
    start, losses = _load_checkpoint(out, cfg, model, opt, rng)
    write_atomic(out / "config.json", lambda p: p.write_text(json.dumps(cfg.to_dict(), indent=1)))
    return start, losses


def finish_run(cfg: RunConfig, task, model, out: Path | None, losses: list[float], diverged_at: int | None,
               resumed_from: int, t0: float, on_eval=None, fit: bool = False,
               metrics: list[dict] | None = None, sinks: Sequence[Sink] = ()) -> RunResult:
    """The RunResult of a trained (or diverged) run, evaluated per test length unless
    ``metrics`` are given; metrics.json written to ``out``."""
    n_params = sum(p.numel() for p in model.parameters())
    if diverged_at is not None:
        result = RunResult(cfg, (), float("nan"), time.perf_counter() - t0, n_params, resumed_from,
                           status="diverged", diverged_at=diverged_at)
        if out is not None:
            write_atomic(out / "metrics.json", lambda p: p.write_text(json.dumps(
                {"status": "diverged", "diverged_at": diverged_at, "loss": str(losses[-1])}, indent=1)))
        return result
    if metrics is None:
        metrics = evaluate_lengths(model, cfg, task, on_length=on_eval)
    _log_metrics(sinks, cfg, metrics)
    extra = {}
    if fit:
        train_lengths = task.valid_lengths(range(cfg.train_lengths[0], cfg.train_lengths[1] + 1))
        extra["train_range"] = evaluate_lengths(model, replace(cfg, test_lengths=tuple(train_lengths)), task)
    tail = losses[-max(1, len(losses) // 10):] if losses else [float("nan")]
    result = RunResult(cfg, tuple(metrics), float(np.mean(tail)), time.perf_counter() - t0, n_params, resumed_from,
                       extra)
    if out is not None:
        write_atomic(out / "metrics.json", lambda p: p.write_text(json.dumps(list(metrics), indent=1)))
    return result


def _check_sinks(sinks) -> tuple:
    if sinks is None:
        return ()
    if not isinstance(sinks, (list, tuple)):
        raise ValueError(f"sinks must be a list of sinks (expressivity.runs.sinks), got {type(sinks).__name__}")
    bad = [type(s).__name__ for s in sinks if not isinstance(s, Sink)]
    if bad:
        raise ValueError(f"sinks: each needs log(step, scalars) and close(), got {sorted(set(bad))}")
    return tuple(sinks)


_LOGGED = ("accuracy", "ce_bits", "excess_bits")


def _log_metrics(sinks, cfg: RunConfig, metrics) -> None:
    """Each test length's metrics, and their means, at the last step."""
    for m in metrics:
        log.debug("%s n=%d accuracy %s ce_bits %s", cfg.run_id, m["length"], m["accuracy"], m["ce_bits"])
    if not sinks:
        return
    scalars: dict[str, float] = {}
    for key in _LOGGED:
        vals = [m[key] for m in metrics if m.get(key) is not None and math.isfinite(m[key])]
        scalars.update({f"{key}/n={m['length']}": m[key] for m in metrics if m.get(key) is not None})
        if vals:
            scalars[f"eval/mean_{key}"] = float(np.mean(vals))
    log_to(sinks, cfg.steps, scalars)


def memory_estimate(cfg: RunConfig, task=None) -> dict[str, float]:
    """Rough peak bytes of a run: ``{"training": …, "evaluation": …, "parameters": …}``.

    float32 throughout; training keeps every layer's activations for the backward pass
    (attention: batch × heads × T² scores and weights; MLP: batch × T × (8·d_model +
    2·d_mlp)); evaluation holds one layer's at a time at the longest test length; parameters
    count ×4 (weights, gradients, two Adam moments). A run from a construction counts with the
    construction's sizes in float64. An estimate to refuse hopeless runs up
    front, not a promise (the true peak is usually lower).
    """
    f = 4.0
    task = task or cfg.make_task()
    d_vocab, d_out = len(task.vocab), task.n_outputs
    d, d_mlp, L, H = cfg.d_model, cfg.d_mlp or 4 * cfg.d_model, cfg.layers, cfg.heads
    t_train, t_test = task.n_tokens(cfg.train_lengths[1]), task.n_tokens(max(cfg.test_lengths))
    n_ctx = cfg.max_length + 2
    learned = cfg.positional == "learned"
    if cfg.init != "random":  # the construction's sizes, float64
        tc = get_construction(construction_name(cfg.init), cfg.init_params).transformer.cfg
        d, d_mlp, L, H, f = tc.d_model, tc.d_mlp, tc.n_layers, tc.n_heads, 8.0
        learned, n_ctx = tc.positional == "learned", min(n_ctx, tc.n_ctx)
    if cfg.model == "transformer":
        params = L * (4 * d * d + 2 * d * d_mlp) + (d_vocab + d_out) * d + (n_ctx * d if learned else 0)

        def acts(batch: int, t: int, layers: int, grad: bool = True) -> float:  # one layer's scores either way
            return layers * batch * (3 * H * t * t + t * (8 * d + 2 * d_mlp)) * f
    else:
        params = L * 8 * d * d + (d_vocab + d_out) * d
        def memory(K: int) -> float:  # stack / tape and its moved copies per step
            return {"stack_rnn": 4 * K * STACK_CELL,
                    "stack_lstm": 4 * K * STACK_CELL + 6 * d,  # + the LSTM's c_t and gates
                    "tape_rnn": 6 * K * TAPE_CELL}.get(cfg.model, 0)

        def acts(batch: int, t: int, layers: int, grad: bool = True) -> float:
            # with autograd every step's memory is kept; under no_grad only the current one (its cells at evaluation)
            return layers * batch * (t * (10 * d + memory(memory_cells(cfg))) if grad
                                     else t * 10 * d + 2 * memory(eval_memory_cells(cfg))) * f
    lengths_list = (cfg.train_lengths[1] - cfg.train_lengths[0] + 1) * 40.0
    training = acts(cfg.batch_size, t_train, L) + cfg.batch_size * t_train * d_out * 4 * f + lengths_list
    evaluation = acts(cfg.eval_batch, t_test, 1, grad=False) + cfg.eval_batch * t_test * d_out * 6 * 8.0
    return {"training": training, "evaluation": evaluation, "parameters": 4 * params * f}


def check_run_memory(cfg: RunConfig, task=None) -> None:
    """Refuse (ValueError with the estimate) a run whose :func:`memory_estimate` is over
    :func:`expressivity.memory.memory_budget`."""
    est = memory_estimate(cfg, task)
    phase = "training" if est["training"] >= est["evaluation"] else "evaluation"
    hint = ("use shorter train lengths or a smaller batch size" if phase == "training"
            else "use shorter test lengths or a smaller eval batch")
    if cfg.model == "transformer":
        hint += " (attention memory grows with length²)"
    check_memory(est[phase] + est["parameters"], f"this run ({phase} at length "
                        f"{(cfg.train_lengths[1] if phase == 'training' else max(cfg.test_lengths))})", hint=hint)


@torch.no_grad()
def evaluate_lengths(model: torch.nn.Module, cfg: RunConfig, task=None,
             on_length: Callable[[int, int], None] | None = None) -> list[dict]:
    """Per-test-length metrics of ``model`` (see the module docstring)."""
    if not isinstance(cfg, RunConfig):
        raise ValueError(f"cfg must be a RunConfig, got {type(cfg).__name__}")
    if not isinstance(model, torch.nn.Module):
        raise ValueError(f"model must be a torch.nn.Module (ids (B, T) -> logits), got {type(model).__name__}")
    task = task or cfg.make_task()
    rng = np.random.default_rng([cfg.seed, 7])  # evaluation data independent of training
    was_training = model.training
    model.eval()
    rows = []
    lengths = task.valid_lengths(cfg.test_lengths)
    n_ctx = getattr(getattr(model, "cfg", None), "n_ctx", None)
    if isinstance(model, Transformer) and model.cfg.positional == "learned" and lengths and max(lengths) + 2 > n_ctx:
        raise ValueError(f"test_lengths: the model's context is n_ctx = {n_ctx} positions, too short for "
                         f"length {max(lengths)} (+2 for BOS/CLS); test at most length {n_ctx - 2}")
    if on_length is not None:
        on_length(0, len(lengths))
    by_distance = bracket_distance.applies(task)
    device = next(iter(model.parameters()), torch.empty(0)).device
    for i, n in enumerate(lengths):
        batch = task.sample_batch(rng, cfg.eval_batch, n)
        with autocast(cfg.dtype, device), memory_resized(model, cfg.eval_memory_size and eval_memory_cells(cfg)):
            logits = model(batch["input"].to(device))
        logits = on_cpu(logits)
        row = batch_metrics(logits, batch, task.kind, cfg.accuracy) | {"length": n}
        if by_distance:
            row |= bracket_distance.closing_bracket_metrics(logits, batch)
        row |= recognizers.edit_metrics(task, logits, batch)  # FLaRe negatives: CE by edit distance
        rows.append(row)
        if on_length is not None:
            on_length(i + 1, len(lengths))
    model.train(was_training)
    return rows


def on_cpu(logits: torch.Tensor) -> torch.Tensor:
    """Logits on the CPU for the metrics (float64 there: MPS has none), bfloat16 as float32."""
    logits = logits.detach().cpu()
    return logits.float() if logits.dtype in (torch.bfloat16, torch.float16) else logits


def batch_metrics(logits: torch.Tensor, batch: dict, kind: str, accuracy: str = "per_string") -> dict:
    """accuracy, ce_bits, optimal_bits, excess_bits for one batch (see module docstring)."""
    target = batch["output"].double()  # (B, T, C)
    mask = batch["mask"]  # (B, T)
    logq = F.log_softmax(logits.double(), dim=-1)
    ce = soft_cross_entropy(logits.double(), target, mask) * LOG2E  # (B, T) bits
    ent = -(target * torch.log(target.clamp_min(1e-300))).sum(-1) * mask * LOG2E
    per_string = mask.sum(1).clamp_min(1)
    ce_s, ent_s = ce.sum(1) / per_string, ent.sum(1) / per_string  # (B,)
    if kind in ("recognition", "classification", "transduction"):  # one-hot targets: argmax (Delétang et al.)
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
CHECKPOINT_FILES = ("model.safetensors", "trainer.pt")


def _save_checkpoint(out: Path, cfg, model, opt, rng, step: int, losses: list[float]) -> None:
    """Both halves are written in full under temporary names before either is renamed, and
    both carry ``step`` and the run id, so a reader can tell a torn pair. Every byte goes
    through Python's file writes (torch's and safetensors' own writers raise RuntimeError on a
    full disk), so an OS error is one :class:`~expressivity.fileio.WriteError` naming the path."""
    meta = {"run_config": cfg.to_json(), "run_id": cfg.run_id, "step": str(step)}
    tmp_model = out / f".model.safetensors.{os.getpid()}.tmp"
    tmp_trainer = out / f".trainer.pt.{os.getpid()}.tmp"
    try:
        if isinstance(model, Transformer):
            save_transformer(model, tmp_model, extra=meta, finite=False)  # a diverging run's last state
        else:
            write_safetensors(tmp_model, model.state_dict(), meta)
        trainer = {"run_id": cfg.run_id, "step": step, "optimizer": opt.state_dict(),
                   "rng": rng.bit_generator.state, "losses": losses}
        buf = io.BytesIO()
        torch.save(trainer, buf)
        write_bytes_atomic(tmp_trainer, buf.getvalue())
        os.replace(tmp_model, out / "model.safetensors")
        os.replace(tmp_trainer, out / "trainer.pt")
    except OSError as exc:
        reason = getattr(exc, "reason", None) or exc.strerror or str(exc)
        raise WriteError(exc.errno, f"cannot write the checkpoint in {out}: {reason}", reason) from None
    finally:
        for tmp in (tmp_model, tmp_trainer):
            try:
                tmp.unlink(missing_ok=True)
            except OSError:
                pass


def clear_checkpoint(out: str | Path) -> None:
    """Remove the checkpoint files (and metrics.json) of a run directory: a fresh start."""
    out = Path(out)
    for name in (*CHECKPOINT_FILES, "metrics.json"):
        (out / name).unlink(missing_ok=True)


def _restart_hint(out: Path) -> str:
    return f"rerun with --restart (restart=True) to train this run from scratch in {out}"


def _model_meta(path: Path) -> dict:
    from ..transformer.io import safetensors_metadata

    try:
        return safetensors_metadata(path)
    except ValueError:  # a damaged file: say what to do about it
        raise ValueError(f"checkpoint {path} is not a readable safetensors file (truncated or "
                         f"corrupt); {_restart_hint(path.parent)}") from None


def _check_checkpoint_owner(out: Path, cfg: RunConfig) -> None:
    """Refuse a directory that holds a readable checkpoint of another run (never overwritten)."""
    model_path = out / "model.safetensors"
    if not out.is_dir() or not model_path.is_file():
        return
    try:
        meta = _model_meta(model_path)
    except ValueError:
        return  # unreadable: _load_checkpoint says so (and --restart discards it)
    owner = meta.get("run_id")
    if owner is None and "run_config" in meta:
        try:
            owner = RunConfig.from_dict(json.loads(meta["run_config"])).run_id
        except (ValueError, TypeError):
            owner = "?"
    if owner is not None and owner != cfg.run_id:
        raise ValueError(f"--out {out} holds the checkpoint of another run ({owner}, this run is "
                         f"{cfg.run_id}); give another --out")


def _load_checkpoint(out: Path, cfg, model, opt, rng) -> tuple[int, list[float]]:
    """Restore model, optimiser and data rng from ``out`` if it holds this run's checkpoint.

    One-line ValueErrors for a missing half, an unreadable file, another run's checkpoint and
    a torn pair (the two halves from different steps)."""
    trainer_path, model_path = out / "trainer.pt", out / "model.safetensors"
    have = [p.is_file() for p in (model_path, trainer_path)]
    if not any(have):
        return 0, []
    if not all(have):
        missing = trainer_path if have[0] else model_path
        raise ValueError(f"checkpoint in {out} is incomplete ({missing.name} is missing); {_restart_hint(out)}")
    meta = _model_meta(model_path)
    try:
        trainer = torch.load(trainer_path, weights_only=True, map_location="cpu")  # any device's checkpoint
        if not isinstance(trainer, dict) or not {"run_id", "step", "optimizer", "rng", "losses"} <= set(trainer):
            raise ValueError("not a trainer state")
    except Exception:  # torch raises many types for a damaged pickle
        raise ValueError(f"checkpoint {trainer_path} is not readable (truncated or corrupt); "
                         f"{_restart_hint(out)}") from None
    if trainer.get("run_id") != cfg.run_id:
        raise ValueError(f"--out {out} holds the checkpoint of another run ({trainer.get('run_id')}, "
                         f"this run is {cfg.run_id}); give another --out")
    if str(meta.get("step")) != str(trainer["step"]):
        raise ValueError(f"checkpoint in {out} is torn: model.safetensors is from step {meta.get('step')}, "
                         f"trainer.pt from step {trainer['step']}; {_restart_hint(out)}")
    try:
        state = load_file(str(model_path))
    except Exception:
        raise ValueError(f"checkpoint {model_path} is not readable (truncated or corrupt); "
                         f"{_restart_hint(out)}") from None
    try:
        load_state(model, state, f"checkpoint {model_path}")  # names, shapes, dtypes, finite
    except ValueError as exc:
        raise ValueError(f"{exc}; {_restart_hint(out)}") from None
    try:
        opt.load_state_dict(trainer["optimizer"])
        rng.bit_generator.state = trainer["rng"]
        step, losses = int(trainer["step"]), [float(x) for x in trainer["losses"]]
    except Exception:  # shapes or keys that do not fit this run's model
        raise ValueError(f"checkpoint in {out} does not fit this run's model (wrong tensors or shapes); "
                         f"{_restart_hint(out)}") from None
    if not 0 < step <= cfg.steps or len(losses) != step:
        raise ValueError(f"checkpoint in {out} is inconsistent (step {step}, {len(losses)} losses, run of "
                         f"{cfg.steps} steps); {_restart_hint(out)}")
    return step, losses
