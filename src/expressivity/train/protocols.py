"""Named length-generalisation protocols of the field.

- ``deletang`` (Delétang et al. 2023, ICLR): train on lengths drawn uniformly from 1–40 in
  batches of 128 (their ``UniformCurriculum`` and batch size), Adam with lr 1e-3 (the
  RunConfig default, as in their example); test at every length 41–500; accuracy per
  position (their per-token accuracy, argmax against the target); score = mean accuracy over
  the test lengths, and the reported number is the best score over seeds
  (:func:`best_of_seeds` on the runs of :func:`seed_configs`). Steps and the strings per test
  length are left to the caller (their example trains 10 000 steps and tests 512 strings per
  length; use ``steps=``, ``eval_batch=``).
- ``bhattamishra`` (Bhattamishra et al. 2020, EMNLP): their character-prediction task, so a
  language gets ``kind="next_symbol"`` (their code, ``src/model.py``: a sigmoid per symbol
  thresholded at ½ against the set of valid next symbols, our set {a : q(a) > δ} = supp p*);
  train on lengths 2–50, test bins 51–100 and 101–150 (their generator's ``lower_window 2
  upper_window 50 bins 2 len_incr 50``); a string counts as correct only if every position
  is right.
- ``yao`` (Yao et al. 2021, ACL, §6, on Hewitt et al. 2020's Dyck-(k, m) data): next-symbol
  prediction on Dyck-(k, D), k = 8 by default (they use k = 8, 32, 128: ``task_params={"k": 32}``),
  D = ``max_depth`` = 3 by default; the length windows are Hewitt et al.'s for that D (their
  configs ``emnlp2020/experiments/*_m3_*``: train 1–84, test 85–168; ``*_m5_*``: train 1–180,
  test 181–360), batch size 10 (theirs); the metric is closing-bracket accuracy binned by the
  distance to the matching open bracket (:mod:`.bracket_distance`), reported per bin by
  :func:`protocol_score`. Another D needs explicit ``train_lengths`` and ``test_lengths``.
- ``flare`` (Butoi et al. 2025, ICLR, FLaRe; rycolab/neural-network-recognizers): binary
  recognition of the ``flare.*`` languages (any language works), trained on lengths 0–40 and
  tested at every length 0–500 (their training and test splits' ranges); their model sizes
  for a budget of 64 000 parameters — 5 layers; a causal transformer of d_model 32, 8 heads,
  d_mlp 128; an Elman RNN of 79 and an LSTM of 40 hidden units (``get_architecture_args.py``
  on a binary alphabet); gradient clipping at 5; Adam at lr 1e-3. Loss options are
  ``aux=()`` (their "rec"), ``("lm",)``, ``("next_symbol",)`` or both (:mod:`.recognizers`).
  Not carried over: their dropout (0.1) and init scale, early stopping and learning-rate
  decay on a validation split, learning rates and batch sizes drawn per run, and the
  coefficients of the aux losses drawn from [0.01, 10] (ours: 1 unless given); their score
  columns, mean (inductive bias) and max (expressivity) test accuracy over 10 runs, are
  :func:`flare_scores` over seeds. Every batch holds one length, half positives and half
  FLaRe negatives of that length; lengths without both (e.g. even lengths of marked copy,
  which their uniform negatives do cover) are neither trained nor tested.
- ``quick``: a CPU-minute sized smoke version (train 2–12, test 14–40 step 2; 300 steps of
  batch 64, d_model 32, lr 3e-3, 16 strings per test length): an LSTM solves PARITY in it.

``preset(name, task, **overrides) -> RunConfig``: any RunConfig field can be overridden; a
function task (one kind only: classification or transduction) gets its kind unless one is
given, so a sweep grid can list Chomsky-hierarchy tasks of both kinds under one preset.
``seed_configs(cfg, n)``: the same run with seeds 0..n−1; ``best_of_seeds(results)``: the run
with the best score among runs that differ only in their seed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from ..languages import kinds_of
from .bracket_distance import distance_scores
from .config import RunConfig


@dataclass(frozen=True)
class Protocol:
    name: str
    train_lengths: tuple[int, int]
    test_lengths: tuple[int, ...]
    bins: tuple[tuple[int, int], ...]  # test-length bins for summaries
    accuracy: str  # per_string | per_position (next-symbol tasks)
    defaults: tuple[tuple[str, object], ...] = ()
    tasks: tuple[str, ...] = ()  # the tasks the protocol is for (empty: any)
    task_params: tuple[tuple[str, object], ...] = ()  # default language parameters
    depth_windows: tuple[tuple[int, tuple[int, int], tuple[int, int]], ...] = ()  # D -> train, test windows
    model_defaults: tuple[tuple[str, tuple[tuple[str, object], ...]], ...] = ()  # model -> its sizes

    def windows(self, task_params: dict) -> tuple[tuple[int, int], tuple[int, ...]]:
        """(train_lengths, test_lengths) for language parameters ``task_params``."""
        if not self.depth_windows:
            return self.train_lengths, self.test_lengths
        D = task_params.get("max_depth")
        for depth, train, test in self.depth_windows:
            if depth == D:
                return train, tuple(range(test[0], test[1] + 1))
        known = ", ".join(f"D = {d}: train {a}-{b}, test {c}-{e}" for d, (a, b), (c, e) in self.depth_windows)
        raise ValueError(f"preset {self.name!r} has length windows for max_depth {known}; for max_depth = {D!r} "
                         "give train_lengths and test_lengths")


YAO_WINDOWS = ((3, (1, 84), (85, 168)), (5, (1, 180), (181, 360)))  # Hewitt et al. 2020's configs, D = m
# Butoi et al.'s sizes for 64 000 parameters and 5 layers (their get_architecture_args.py, binary alphabet)
FLARE_SIZES = (("transformer", (("d_model", 32), ("heads", 8), ("d_mlp", 128), ("causal", True))),
               ("rnn", (("d_model", 79), ("heads", 1))), ("lstm", (("d_model", 40),)))  # heads: unused, 79 is prime


PROTOCOLS: dict[str, Protocol] = {
    "deletang": Protocol("deletang", (1, 40), tuple(range(41, 501)), ((41, 500),), "per_position",
                         (("batch_size", 128),)),
    "bhattamishra": Protocol("bhattamishra", (2, 50), tuple(range(51, 151)), ((51, 100), (101, 150)), "per_string",
                             (("kind", "next_symbol"),)),
    "yao": Protocol("yao", (1, 84), tuple(range(85, 169)), ((85, 168), (181, 360)), "per_position",
                    (("kind", "next_symbol"), ("batch_size", 10)), tasks=("dyck",),
                    task_params=(("k", 8), ("max_depth", 3)), depth_windows=YAO_WINDOWS),
    "flare": Protocol("flare", (0, 40), tuple(range(0, 501)), ((0, 40), (41, 500)), "per_string",
                      (("kind", "recognition"), ("layers", 5), ("grad_clip", 5.0), ("batch_size", 32)),
                      model_defaults=FLARE_SIZES),
    "quick": Protocol("quick", (2, 12), tuple(range(14, 41, 2)), ((14, 40),), "per_string",
                      (("steps", 300), ("eval_batch", 16), ("d_model", 32), ("batch_size", 64), ("lr", 3e-3))),
}


def get_protocol(name: str) -> Protocol:
    if name not in PROTOCOLS:
        raise ValueError(f"unknown preset {name!r}; choose one of {sorted(PROTOCOLS)}")
    return PROTOCOLS[name]


def preset(name: str, task: str, **overrides) -> RunConfig:
    """RunConfig for ``task`` under protocol ``name``; ``overrides`` replace any field."""
    p = get_protocol(name)
    if p.tasks and task not in p.tasks:
        raise ValueError(f"preset {name!r} is for the task(s) {list(p.tasks)}, got task {task!r}")
    task_params = dict(p.task_params)
    given = overrides.get("task_params")
    if given is not None and not isinstance(given, Mapping):
        raise ValueError(f"task_params must be a mapping of language parameters, got {given!r}")
    task_params.update(given or {})
    fields = dict(p.defaults)
    fields.update(dict(dict(p.model_defaults).get(overrides.get("model", "transformer"), ())))
    train, test = (p.train_lengths, p.test_lengths) if {"train_lengths", "test_lengths"} <= set(overrides) \
        else p.windows(task_params)
    fields.update(task=task, train_lengths=train, test_lengths=test, accuracy=p.accuracy, protocol=p.name)
    if "kind" not in overrides:  # a function task has one kind (classification | transduction)
        kinds = kinds_of(task)
        if len(kinds) == 1:
            fields["kind"] = kinds[0]
    fields.update(overrides)
    if fields.get("kind") == "next_symbol" and "causal" not in overrides:
        fields.pop("causal", None)  # a next_symbol transformer is causal anyway
    fields["task_params"] = task_params
    return RunConfig.from_dict(fields)


def protocol_score(rows: list[dict], protocol: str | None = None) -> dict[str, float]:
    """Mean accuracy over test lengths, overall and per bin of the protocol; for Dyck
    next-symbol rows also the closing-bracket accuracy, overall and per distance bin
    (``close_accuracy``, ``close_lo_hi``: :func:`.bracket_distance.distance_scores`)."""
    if not rows:
        return {}
    out = {"mean_accuracy": sum(r["accuracy"] for r in rows) / len(rows)}
    if protocol in PROTOCOLS:
        for lo, hi in PROTOCOLS[protocol].bins:
            sel = [r["accuracy"] for r in rows if lo <= r["length"] <= hi]
            if sel:
                out[f"accuracy_{lo}_{hi}"] = sum(sel) / len(sel)
    return out | distance_scores(rows)


def seed_configs(cfg: RunConfig, n: int) -> list[RunConfig]:
    """``cfg`` with seeds 0, 1, …, n − 1 (a protocol's "best of n seeds")."""
    from ..rules import check_int

    n = check_int(n, "n (seeds)", min=1, max=10_000)
    return [replace(cfg, seed=s) for s in range(n)]


def best_of_seeds(results: Iterable) -> object:
    """The RunResult with the highest score among runs that differ only in the seed (NaN
    scores — diverged runs — lose); ValueError if the runs differ in anything else."""
    results = list(results)
    if not results:
        raise ValueError("best_of_seeds needs at least one run result")

    def key(r) -> str:
        return replace(r.config, seed=0).to_json()

    if len({key(r) for r in results}) > 1:
        raise ValueError("best_of_seeds: the runs differ in more than the seed; group them by config first")
    return max(results, key=lambda r: -math.inf if math.isnan(r.score) else r.score)


_TRANSFORMER_ONLY = {"heads": "--heads", "positional": "--positional", "layer_norm": "--layer-norm",
                     "ln_eps": "--ln-eps", "log_length_scaling": "--log-length-scaling"}
_CONSTRUCTION_FIXES = {"layers": "--layers", "heads": "--heads", "d_model": "--d-model", "positional": "--positional",
                       "layer_norm": "--layer-norm", "ln_eps": "--ln-eps"}  # a construction fixes its architecture


def refuse_unused(cfg, given: dict) -> None:
    """An option that the run does not use is refused, not ignored (it would also change the
    run id of an otherwise identical run)."""
    if cfg.model != "transformer":
        unused = [opt for key, opt in _TRANSFORMER_ONLY.items() if given.get(key) is not None]
        if unused:
            raise ValueError(f"{', '.join(unused)} appl{'ies' if len(unused) == 1 else 'y'} to transformers only; "
                             f"a {cfg.model} has no attention or layer norm (leave {'it' if len(unused) == 1 else 'them'} out)")
    if cfg.init != "random":
        unused = [opt for key, opt in _CONSTRUCTION_FIXES.items() if given.get(key) is not None]
        if unused:
            raise ValueError(f"{', '.join(unused)}: a run with --init {cfg.init} takes the construction's architecture, "
                             "so these sizes are not used (leave them out; --init-param sets the construction's)")


def run_config_from_options(options: dict):
    """``expressivity train``'s RunConfig from its ``options`` (:data:`.options.TRAIN`; a RunConfig
    field's ``None``: not given; with ``--preset`` the preset's fields, :func:`preset`) and the
    device it trains on; each option is checked naming it (``--train-lengths`` …), and one the run
    does not use is refused (:func:`refuse_unused`)."""
    from ..rules import parse_length_range, parse_lengths, parse_params
    from .config import MAX_TEST_LENGTHS
    from .devices import check_dtype, resolve_device
    from .options import FIELDS

    given = {k: options[k] for k in FIELDS}
    fields = {k: v for k, v in given.items() if v is not None}
    where = resolve_device(options["device"], "--device")  # absent or unknown: one line naming what is here
    if given["dtype"] is not None:
        check_dtype(given["dtype"], where, "--dtype")
    fields["device"] = options["device"]
    if options["init_param"]:
        fields["init_params"] = parse_params(options["init_param"], "--init-param")
    if options["train_lengths"] is not None:
        fields["train_lengths"] = parse_length_range(options["train_lengths"], "--train-lengths")
    if options["test_lengths"] is not None:
        fields["test_lengths"] = parse_lengths(options["test_lengths"], "--test-lengths", max_count=MAX_TEST_LENGTHS)
    fields["task_params"] = parse_params(options["param"], "--param")
    task, preset_name = options["task"], options["preset"]
    cfg = preset(preset_name, task, **fields) if preset_name else RunConfig.from_dict({"task": task, **fields})
    refuse_unused(cfg, given)
    return cfg, where
