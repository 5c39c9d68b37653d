"""Many runs at once: runs that differ only in seed and optimiser settings trained as ONE batched model.

``train_many(configs)`` groups its runs (:func:`group_configs`) and trains each group of R
runs as one model whose every parameter is stacked, θ ∈ ℝ^{R × shape}
(``torch.func.stack_module_state``), run for all R at once by ``vmap(functional_call(…))``:
one kernel per layer for R runs instead of R small ones. Nothing is shared between runs but
the kernels; each run keeps

- its own data stream: run r draws its length and batch from ``default_rng(seed_r)`` exactly
  as :func:`~.loop.train_run` does; the R batches (of R lengths) are right-padded with PAD to
  the longest (of their length bucket, ``buckets``), with the loss mask off on the padding
  and, for the transformer, a key mask (the recurrent models read causally, so padding after a
  row's end changes none of its outputs; their written-out losses step only the runs still
  read at each step, the runs ordered longest first: packed steps, models/_runs.active_runs);
- its own loss ℓ_r, gradient ∇θ_r ℓ_r (the stacked loss is Σ_r ℓ_r, and ∂/∂θ_r of it is
  ∂ℓ_r/∂θ_r), gradient clipping by its own norm ‖∇θ_r‖ (clip_r / (‖·‖ + 10⁻⁶), at most 1: torch's
  ``clip_grad_norm_``), and its own Adam (moments, step count, learning rate lr_r; torch's
  update, β = (0.9, 0.999), ε = 10⁻⁸);
- its own divergence: a run whose loss is not finite stops there (status ``diverged``), the
  others go on; its own step count (a group may mix resumed and fresh runs, or runs of
  different lengths of training).

So each run's result equals ``train_run(config)`` alone up to float round-off
(tests/test_train_many.py checks every model kind), and each run is stored, checkpointed
(``out_dirs[i]``, the same files as ``train_run``'s, written at its own ``checkpoint_every``)
and resumed as its own run — by ``train_run`` or by ``train_many``, on any device.

What may differ inside a group (:data:`FREE_FIELDS`): seed, lr, grad_clip, steps,
checkpoint_every, protocol. Everything else (task, model, sizes, lengths, batch size,
evaluation, device, dtype) must agree; runs fine-tuned from a construction or with auxiliary
losses train alone. Groups are never mixed silently: :func:`group_configs` says which runs go
together, and ``max_runs`` caps a group (memory grows with R).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch.func import functional_call, stack_module_state, vmap

from ..fileio import check_output_path
from ..languages.vocab import PAD
from ..memory import check_memory
from ..rules import check_bool, check_choice, check_int
from . import recognizers
from .config import RunConfig
from .devices import autocast
from .loop import (
    RunResult,
    _save_checkpoint,
    check_run_memory,
    draw_length,
    finish_run,
    make_optimizer,
    memory_estimate,
    open_run,
    run_device,
    soft_cross_entropy,
    train_run,
)
from .optim import CLIP_EPS

FREE_FIELDS: tuple[str, ...] = ("seed", "lr", "grad_clip", "steps", "checkpoint_every", "protocol")
ADAM_BETAS, ADAM_EPS = (0.9, 0.999), 1e-8  # torch.optim.Adam's defaults (what train_run uses)
CPU_GROUP_WORK = 2048  # batch_size × d_model up to which grouping pays on the CPU (worth_grouping)
# models whose R-run written-out loss with packed steps pays at a larger step on the CPU: at the
# quick size (batch 64 × d_model 64) R = 8 / 32 at once measured 1.2–1.7× / 1.3–2.1× the loop
# (stop 38, three runs; docs/benchmarks.md); the lstm (0.8–1.4×) and the transformer (0.8×) keep
# CPU_GROUP_WORK, and at the full size (128 × 256) no model gains clearly (0.98–1.29×, stop 37)
CPU_GROUP_WORK_BY_MODEL = {"rnn": 4096, "stack_rnn": 4096, "stack_lstm": 4096, "tape_rnn": 4096}
AUTO_CPU_BUCKETS = 4  # most length buckets per step on the CPU (padding costs arithmetic there), ≥ 8 runs each; 1 on accelerators


@dataclass(frozen=True)
class RunFailure:
    """A run of :func:`train_many` (``on_error="return"``) that could not start: its error."""

    config: RunConfig
    error: str
    status: str = "error"


def group_key(cfg: RunConfig) -> str | None:
    """What runs must share to train as one batched model (the config less :data:`FREE_FIELDS`,
    plus the device); None for a run that trains alone (a construction's, or with aux losses)."""
    if not isinstance(cfg, RunConfig):
        raise ValueError(f"configs must be RunConfigs, got {type(cfg).__name__}")
    if cfg.init != "random" or cfg.aux:
        return None
    d = cfg.to_dict()
    for name in FREE_FIELDS:
        d.pop(name, None)
    d["device"] = cfg.device
    return json.dumps(d, sort_keys=True)


def worth_grouping(cfg: RunConfig) -> bool:
    """Whether grouping ``cfg`` with others is expected to pay where it trains: always on an
    accelerator (a small model's step is bound by kernel launches: R runs cost about one); on
    the CPU only for a run whose step is mostly per-call overhead, batch_size × d_model ≤
    :data:`CPU_GROUP_WORK` (bench/many_bench.py: R = 32 at once is 1.4–3× the one-at-a-time
    loop there, and ≤ 1× above it, where one run already keeps a core busy with arithmetic), or
    ≤ its model's :data:`CPU_GROUP_WORK_BY_MODEL` (the recurrent models whose packed R-run loss
    still gains at the quick size)."""
    from .devices import resolve_device

    try:
        on_cpu = resolve_device(cfg.device).type == "cpu"
    except ValueError:
        return False  # a device this machine lacks: each run fails on its own, with its error
    return not on_cpu or cfg.batch_size * cfg.d_model <= CPU_GROUP_WORK_BY_MODEL.get(cfg.model, CPU_GROUP_WORK)


def group_configs(configs: Sequence[RunConfig], max_runs: int | None = None) -> list[list[RunConfig]]:
    """The configs split into groups that can train as one model: same :func:`group_key`, in
    order of first appearance, each at most ``max_runs`` long; a run that cannot share is a
    group of its own."""
    if isinstance(configs, RunConfig) or not isinstance(configs, (list, tuple)):
        raise ValueError(f"configs must be a list of RunConfig, got {type(configs).__name__}")
    if max_runs is not None:
        max_runs = check_int(max_runs, "max_runs (runs per group)", min=1, max=10**6)
    groups: dict[str, list[RunConfig]] = {}
    out: list[list[RunConfig]] = []
    for cfg in configs:
        key = group_key(cfg)
        if key is None:
            out.append([cfg])
            continue
        group = groups.get(key)
        if group is None or (max_runs is not None and len(group) >= max_runs):
            group = groups[key] = []
            out.append(group)
        group.append(cfg)
    return out


def train_many(configs: Sequence[RunConfig], out_dirs: Sequence[str | Path | None] | None = None, *,
               restart: bool = False, fit: bool = False, max_runs: int | None = None,
               on_step: Callable[[RunConfig, int, float], None] | None = None,
               buckets: int | None = None, on_error: str = "raise") -> list[RunResult]:
    """Train every config, each group of compatible runs as one batched model (module
    docstring); the RunResults in the order of ``configs``.

    ``out_dirs``: one checkpoint directory (or None) per config; ``restart``, ``fit`` as for
    :func:`~.loop.train_run`; ``max_runs``: the most runs per group; ``on_step(cfg, step,
    loss)`` after every optimiser step of every run; ``buckets``: each step's R batches go
    through the model in up to this many calls, grouped by length (:func:`length_buckets`), so
    that short batches are not padded to the longest — None: up to :data:`AUTO_CPU_BUCKETS` of
    at least 8 runs on the CPU, where padding is paid in arithmetic, 1 on an accelerator, where
    a call's launches cost more than its padding. ``on_error``: ``"raise"`` — a run that
    cannot start (a corrupt or foreign checkpoint, an unwritable directory) raises;
    ``"return"`` — it gets a :class:`RunFailure` in its place and the others train (what a
    sweep's or reproduce's unit does, so that such a run fails alone)."""
    check_choice(on_error, "on_error", ("raise", "return"))
    configs = list(configs) if isinstance(configs, (list, tuple)) else configs
    groups = group_configs(configs, max_runs)  # checks the configs
    ids = [c.run_id for c in configs]
    if len(set(ids)) != len(ids):
        raise ValueError(f"train_many: configs must be distinct runs; repeated run ids "
                         f"{sorted({i for i in ids if ids.count(i) > 1})}")
    if out_dirs is None:
        outs: list[Path | None] = [None] * len(configs)
    else:
        if isinstance(out_dirs, (str, Path)) or len(out_dirs) != len(configs):
            raise ValueError("out_dirs must give one directory (or None) per config")
        outs = [None if d is None else check_output_path(d, "out_dirs", kind="dir") for d in out_dirs]
        named = [str(d) for d in outs if d is not None]
        if len(set(named)) != len(named):
            raise ValueError("out_dirs: each run needs its own directory")
    restart, fit = check_bool(restart, "restart"), check_bool(fit, "fit")
    if buckets is not None:
        buckets = check_int(buckets, "buckets (model calls per step)", min=1, max=10**6)
    if on_step is not None and not callable(on_step):
        raise ValueError(f"on_step must be callable, got {type(on_step).__name__}")
    where = {c.run_id: i for i, c in enumerate(configs)}
    results: list[RunResult | None] = [None] * len(configs)
    for group in groups:
        index = [where[c.run_id] for c in group]
        if len(group) == 1:
            cfg = group[0]
            step_fn = None if on_step is None else (lambda s, v, c=cfg: on_step(c, s, v))
            try:
                got = [train_run(cfg, outs[index[0]], on_step=step_fn, restart=restart, fit=fit)]
            except (ValueError, OSError) as exc:
                if on_error == "raise":
                    raise
                got = [RunFailure(cfg, f"{type(exc).__name__}: {exc}")]
        else:
            got = _train_group(group, [outs[i] for i in index], restart, fit, on_step, buckets, on_error)
        for i, r in zip(index, got):
            results[i] = r
    return results  # type: ignore[return-value]


def group_unit(cfg_dicts: list[dict], out_dir: str | None = None, threads: int = 1, restart: bool = False,
               device: str = "auto", fit: bool = False) -> list[RunResult]:
    """A work unit's body (``sweep``, ``reproduce``): train these configs (``to_dict()`` form;
    the device travels beside them, not being part of a config's dict) as one batched model;
    their RunResults in order (a :class:`RunFailure` for a run that could not start: it fails
    alone). ``out_dir``: each run checkpoints in ``out_dir/<run_id>``.
    Progress (:func:`expressivity.runs.report_progress`) is the least-advanced run's."""
    from ..runs import report_progress

    torch.set_num_threads(threads)
    cfgs = [RunConfig.from_dict({**d, "device": device}) for d in cfg_dicts]
    outs = None if out_dir is None else [str(Path(out_dir) / c.run_id) for c in cfgs]
    done = {c.run_id: 0.0 for c in cfgs}

    def on_step(cfg, step, loss):
        done[cfg.run_id] = step / cfg.steps
        if step % 50 == 0:
            report_progress(min(done.values()))

    return train_many(cfgs, outs, restart=restart, fit=fit, on_step=on_step, on_error="return")


def check_group_memory(cfgs: Sequence[RunConfig], task=None) -> None:
    """Refuse a group whose R runs' training memory (R × one run's, :func:`~.loop.memory_estimate`)
    is over the budget; evaluation runs one run at a time."""
    task = task or cfgs[0].make_task()
    est = memory_estimate(cfgs[0], task)
    check_memory(len(cfgs) * (est["training"] + est["parameters"]),
                        f"{len(cfgs)} runs at once (training at length {cfgs[0].train_lengths[1]})",
                        hint="train fewer runs per group (max_runs, --max-group) or each alone (--no-group)")


def _pad_batches(batches: list[dict], device: torch.device) -> tuple[torch.Tensor, ...]:
    """R batches of lengths T_r → inputs (R, B, T), targets (R, B, T, C), mask (R, B, T) and the
    real-token mask (R, B, T), right-padded with PAD / 0 / False to T = max T_r."""
    T = max(b["input"].shape[1] for b in batches)

    def pad(t: torch.Tensor, value) -> torch.Tensor:
        extra = T - t.shape[1]
        if not extra:
            return t
        spec = (0, 0) * (t.dim() - 2) + (0, extra)
        return F.pad(t, spec, value=value)

    inputs = torch.stack([pad(b["input"], PAD) for b in batches])
    target = torch.stack([pad(b["output"], 0.0) for b in batches])
    mask = torch.stack([pad(b["mask"], False) for b in batches])
    lengths = torch.tensor([b["input"].shape[1] for b in batches])
    real = (torch.arange(T)[None, :] < lengths[:, None])[:, None, :].expand(inputs.shape)
    return tuple(t.to(device, non_blocking=True) for t in (inputs, target, mask, real)) + (bool((lengths < T).any()),)


class _Stack:
    """The trainable state of the runs still training, row j = run ``rows[j]``: stacked
    parameters, Adam's moments and step counts."""

    def __init__(self, models: list[torch.nn.Module], opts: list[torch.optim.Adam], rows: list[int],
                 steps_done: list[int]) -> None:
        self.rows = list(rows)
        params, self.buffers = stack_module_state([models[i] for i in rows])
        self.names = list(params)
        self.params = {k: v.detach() for k, v in params.items()}
        self.m1, self.m2 = {}, {}
        for k in self.names:
            first, second = [], []
            for i in rows:
                p = dict(models[i].named_parameters())[k]
                state = opts[i].state.get(p, {})
                first.append(state["exp_avg"].to(p.device) if "exp_avg" in state else torch.zeros_like(p))
                second.append(state["exp_avg_sq"].to(p.device) if "exp_avg_sq" in state else torch.zeros_like(p))
            self.m1[k], self.m2[k] = torch.stack(first).detach(), torch.stack(second).detach()
        self.t = np.array([steps_done[i] for i in rows], dtype=np.float64)  # Adam's step per row

    def keep(self, keep: list[int]) -> None:
        """Keep rows ``keep`` (positions into ``rows``), drop the rest."""
        idx = torch.tensor(keep, dtype=torch.long, device=next(iter(self.params.values())).device)
        for d in (self.params, self.m1, self.m2, self.buffers):
            for k in d:
                d[k] = d[k].index_select(0, idx)
        self.rows = [self.rows[j] for j in keep]
        self.t = self.t[keep]

    def write_back(self, j: int, model: torch.nn.Module, opt: torch.optim.Adam) -> None:
        """Row j's parameters into ``model`` and its Adam state into ``opt`` (torch's layout, so
        a checkpoint of it resumes under train_run)."""
        with torch.no_grad():
            for k, p in model.named_parameters():
                p.copy_(self.params[k][j])
                where = p.device if opt.defaults.get("fused") else "cpu"  # where torch's Adam keeps it
                opt.state[p] = {"step": torch.tensor(float(self.t[j]), dtype=torch.float32, device=where),
                                "exp_avg": self.m1[k][j].clone(), "exp_avg_sq": self.m2[k][j].clone()}


def length_buckets(lengths: Sequence[int], k: int, longest_first: bool = False) -> list[list[int]]:
    """Rows 0..R−1 split into at most ``k`` buckets of about equal size by their sequence
    length T_r (shortest first), so each bucket pads only to its own longest row; k = 1: all
    rows in their order. ``longest_first``: each bucket's rows longest first (k = 1 too), so
    that the runs still stepped at every step are a prefix (the written-out losses' packed
    steps, :func:`~.models._runs.active_runs`)."""
    k = max(1, min(k, len(lengths)))
    if k == 1 and not longest_first:
        return [list(range(len(lengths)))]  # rows in their order: the stacked state as it is
    order = sorted(range(len(lengths)), key=lambda j: (lengths[j], j))
    size = -(-len(order) // k)
    buckets = [order[i:i + size] for i in range(0, len(order), size)]
    if longest_first:  # longest first, ties in row order (rows in their order when all are equal)
        buckets = [sorted(js, key=lambda j: (-lengths[j], j)) for js in buckets]
    return buckets


def _train_group(cfgs: list[RunConfig], outs: list[Path | None], restart: bool, fit: bool,
                 on_step: Callable | None, buckets: int | None = None, on_error: str = "raise") -> list:
    t0 = time.perf_counter()
    task = cfgs[0].make_task()
    for c in cfgs:
        check_run_memory(c, task)
    check_group_memory(cfgs, task)
    device = run_device(cfgs[0])
    R = len(cfgs)
    train_lengths = task.valid_lengths(range(cfgs[0].train_lengths[0], cfgs[0].train_lengths[1] + 1))
    models = [recognizers.build(c, task).to(device) for c in cfgs]
    opts = [make_optimizer(m, c.lr, device) for m, c in zip(models, cfgs)]
    rngs = [np.random.default_rng(c.seed) for c in cfgs]
    step_now, losses = [0] * R, [[] for _ in range(R)]
    failed: dict[int, RunFailure] = {}
    for i in range(R):
        try:
            step_now[i], losses[i] = open_run(outs[i], cfgs[i], models[i], opts[i], rngs[i], restart)
        except (ValueError, OSError) as exc:  # e.g. a corrupt checkpoint: that run fails, alone
            if on_error == "raise":
                raise
            failed[i] = RunFailure(cfgs[i], f"{type(exc).__name__}: {exc}")
    resumed = list(step_now)
    diverged: list[int | None] = [None] * R
    live = [i for i in range(R) if step_now[i] < cfgs[i].steps and i not in failed]
    stack = _Stack(models, opts, live, step_now) if live else None
    base = models[0]
    with_mask = cfgs[0].model == "transformer"
    n_buckets = buckets if buckets is not None else (
        1 if device.type != "cpu" else max(1, min(AUTO_CPU_BUCKETS, R // 8)))  # ≥ 8 runs a call
    dtype = cfgs[0].dtype
    b1, b2 = ADAM_BETAS

    def forward(p, b, x, km):
        return functional_call(base, (p, b), (x,), {"key_mask": km} if km is not None else {})

    batched = vmap(forward, in_dims=(0, 0, 0, 0))
    batched_nomask = vmap(lambda p, b, x: forward(p, b, x, None), in_dims=(0, 0, 0))
    written_out = hasattr(base, "runs_loss_and_grads") and dtype == "float32"
    while stack is not None and stack.rows:
        rows = stack.rows
        batches = []
        for i in rows:
            n = draw_length(rngs[i], train_lengths)
            batches.append(task.sample_batch(rngs[i], cfgs[i].batch_size, n))
        buckets_now = length_buckets([b["input"].shape[1] for b in batches], n_buckets, longest_first=written_out)
        written = written_out and _written_out_step(base, stack, batches, buckets_now, device)
        if written:
            per_run, grads = written
        else:
            params = {k: v.requires_grad_(True) for k, v in stack.params.items()}
            per_run = _modules_losses(batched, batched_nomask, with_mask, dtype, params, stack.buffers, batches,
                                      buckets_now, device)
        values = per_run.detach().cpu().double().numpy()
        finite = np.isfinite(values)
        if finite.any():
            chosen = torch.from_numpy(finite).to(device)
            if written:  # each row's gradient is its own run's; a diverged row's is dropped with it
                grads = {k: torch.where(chosen.view((-1,) + (1,) * (g.dim() - 1)), g, 0) for k, g in grads.items()}
            else:
                grads = dict(zip(stack.names, torch.autograd.grad(per_run[chosen].sum(),
                                                                  [params[k] for k in stack.names])))
            _update(stack, grads, [cfgs[i] for i in rows], b1, b2)
        for k in stack.names:
            stack.params[k] = stack.params[k].detach()
        keep = []
        for j, i in enumerate(rows):
            losses[i].append(float(values[j]))
            if not finite[j]:
                diverged[i] = step_now[i] + 1  # stops here, its last good checkpoint kept
                continue
            step_now[i] += 1
            if on_step is not None:
                on_step(cfgs[i], step_now[i], float(values[j]))
            s, c = step_now[i], cfgs[i]
            if outs[i] is not None and (s % c.checkpoint_every == 0 or s == c.steps):
                stack.write_back(j, models[i], opts[i])
                _save_checkpoint(outs[i], c, models[i], opts[i], rngs[i], s, losses[i])
            if s < c.steps:
                keep.append(j)
            else:
                stack.write_back(j, models[i], opts[i])
        if len(keep) < len(rows):
            stack.keep(keep)
    return [failed[i] if i in failed else
            finish_run(cfgs[i], task, models[i], outs[i], losses[i], diverged[i], resumed[i], t0, fit=fit)
            for i in range(R)]


def _modules_losses(batched, batched_nomask, with_mask: bool, dtype: str, params: dict, buffers: dict,
                    batches: list[dict], buckets: list[list[int]], device: torch.device) -> torch.Tensor:
    """Each row's loss (R,), in row order, through the modules under vmap, bucket by bucket
    (autograd takes the gradient back to the whole stack)."""
    parts, order = [], []
    for js in buckets:
        inputs, target, mask, real, padded = _pad_batches([batches[j] for j in js], device)
        p_js, b_js = _bucket_rows(params, js, device), _bucket_rows(buffers, js, device)
        with autocast(dtype, device):
            if with_mask and padded:
                logits = batched(p_js, b_js, inputs, real)
            else:
                logits = batched_nomask(p_js, b_js, inputs)
        logits = logits.float()  # (R_bucket, B, T, C)
        parts.append(soft_cross_entropy(logits, target, mask).sum((1, 2)) / mask.sum((1, 2)))
        order += js
    return _row_order(torch.cat(parts), order, device)


def _written_out_step(base, stack: _Stack, batches: list[dict], buckets: list[list[int]],
                      device: torch.device) -> tuple[torch.Tensor, dict[str, torch.Tensor]] | None:
    """Each row's loss (R,) and each parameter's gradient (stacked, row r its own run's) by the
    model's written-out loss of R runs (``runs_loss_and_grads``), bucket by bucket; None where
    it does not apply."""
    parts, order, grads = [], [], None
    for js in buckets:
        inputs, target, mask, _, _ = _pad_batches([batches[j] for j in js], device)
        out = base.runs_loss_and_grads(_bucket_rows(stack.params, js, device), inputs, target, mask)
        if out is None:
            return None
        parts.append(out[0])
        order += js
        if js == list(range(len(stack.rows))):  # one bucket: every row, in order
            grads = out[1]
            break
        if grads is None:
            grads = {k: torch.zeros_like(v) for k, v in stack.params.items()}
        idx = torch.tensor(js, dtype=torch.long, device=device)
        for k, g in out[1].items():
            grads[k].index_copy_(0, idx, g)
    return _row_order(torch.cat(parts), order, device), grads


def _bucket_rows(stacked: dict[str, torch.Tensor], js: list[int], device: torch.device) -> dict[str, torch.Tensor]:
    """Rows ``js`` of every stacked tensor (all of them as they are when ``js`` is every row in order)."""
    if js == list(range(len(js))) and all(v.shape[0] == len(js) for v in stacked.values()):
        return stacked
    idx = torch.tensor(js, dtype=torch.long, device=device)
    return {k: v.index_select(0, idx) for k, v in stacked.items()}


def _row_order(per_run: torch.Tensor, order: list[int], device: torch.device) -> torch.Tensor:
    """Per-bucket losses concatenated in ``order`` → back in row order."""
    if order == list(range(len(order))):
        return per_run
    return per_run[torch.tensor(np.argsort(order), dtype=torch.long, device=device)]


@torch.no_grad()
def _update(stack: _Stack, grads: dict[str, torch.Tensor], cfgs: list[RunConfig], b1: float, b2: float) -> None:
    """Per-row gradient clipping and Adam step (torch's formulas, one learning rate per row)."""
    dev = grads[stack.names[0]].device
    R = len(cfgs)
    norm = torch.zeros(R, dtype=torch.float32, device=dev)
    for g in grads.values():
        norm += g.float().pow(2).reshape(R, -1).sum(1)
    norm = norm.sqrt()
    clip = torch.tensor([c.grad_clip for c in cfgs], dtype=torch.float32, device=dev)
    coef = torch.where(clip > 0, (clip / (norm + CLIP_EPS)).clamp(max=1.0), torch.ones_like(clip))
    stack.t += 1
    lr = np.array([c.lr for c in cfgs], dtype=np.float64)
    step_size = torch.tensor(lr / (1 - b1 ** stack.t), dtype=torch.float32, device=dev)
    bc2_sqrt = torch.tensor(np.sqrt(1 - b2 ** stack.t), dtype=torch.float32, device=dev)
    for k in stack.names:
        g, p = grads[k], stack.params[k]
        shape = (R,) + (1,) * (g.dim() - 1)
        g = g * coef.view(shape)
        m1, m2 = stack.m1[k], stack.m2[k]
        m1.lerp_(g, 1 - b1)
        m2.mul_(b2).addcmul_(g, g, value=1 - b2)
        denom = (m2.sqrt() / bc2_sqrt.view(shape)).add_(ADAM_EPS)
        p.sub_(step_size.view(shape) * (m1 / denom))


__all__ = ["FREE_FIELDS", "RunFailure", "check_group_memory", "group_configs", "group_key", "group_unit", "length_buckets",
           "train_many",
           "worth_grouping"]
