"""2DYCK next-symbol cross-entropy of fixed-size models at growing n (Hahn 2020, §5).

Generative process of Dyck-2 (``expressivity.languages.get("dyck", k=2, p_open=p)``): at
stack depth 0 emit an opening bracket with probability p (each type p/2) or end (EOS) with
1 − p; at depth > 0 open with probability p (p/2 per type) or close the top bracket with
probability 1 − p. The optimal predictor knows the stack, so the *type* of a closing bracket
is certain for it.

Hahn's consequence of Lemma 5: a soft-attention transformer of fixed size cannot, for large
n, tell which bracket type closes next; the best it can do there is to split the closing mass
over ``)`` and ``]``, losing log 2 per closing event. With

- P_0 = the fraction of prefixes with a non-empty stack (depth > 0), estimated on the strings
  the model is scored on (the same lengths and sampler), and
- 1 − p = the closing probability at depth > 0,

the excess cross-entropy per symbol over the optimum is at least P_0·(1 − p)·log 2 nats,
i.e. P_0·(1 − p) bits, asymptotically in n. We report the exact per-position average of the
closing mass E[c_t] (= P_0·(1 − p) without a depth cap) as the bound, in bits. The LSTM is
trained on the same data for contrast (it is not subject to the lemma).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..languages import get as get_language
from ..memory import check_memory
from ..rules import check_float, check_int, parse_lengths


@dataclass(frozen=True)
class DyckCEConfig:
    """Training sweep for the Dyck-2 cross-entropy experiment."""

    lengths: tuple[int, ...] = (8, 16, 32, 64, 128)  # string lengths n (even)
    models: tuple[str, ...] = ("transformer", "lstm")
    steps: int = 400  # optimiser steps per (model, n)
    d_model: int = 32  # fixed model size (does not grow with n)
    layers: int = 2
    heads: int = 2
    batch_size: int = 32
    lr: float = 3e-3
    p_open: float = 0.5  # p of the generative process
    eval_batch: int = 128  # strings scored per length
    seed: int = 0

    def __post_init__(self) -> None:
        name = "DyckCEConfig."
        lengths = parse_lengths(self.lengths, name + "lengths")
        if any(n < 2 or n % 2 for n in lengths):
            raise ValueError(f"DyckCEConfig.lengths must be even ints >= 2 (Dyck words have even length), "
                             f"got {lengths}")
        models = self.models
        if isinstance(models, str):  # "transformer,lstm" or "lstm"
            models = tuple(m.strip() for m in models.split(",") if m.strip())
        if not isinstance(models, (tuple, list)):
            raise ValueError(f"DyckCEConfig.models must be names like ('transformer', 'lstm'), got {models!r:.40}")
        bad = [m for m in models if m not in ("transformer", "lstm")]
        if bad or not models:
            raise ValueError(f"DyckCEConfig.models must be a non-empty subset of ('transformer', 'lstm'), "
                             f"got {tuple(models)}")
        fields = {"lengths": lengths, "models": tuple(models)}
        for key in ("steps", "d_model", "layers", "heads", "batch_size", "eval_batch"):
            fields[key] = check_int(getattr(self, key), name + key, min=1)
        fields["seed"] = check_int(self.seed, name + "seed", min=0)
        fields["lr"] = check_float(self.lr, name + "lr", min=0.0, min_open=True)
        fields["p_open"] = check_float(self.p_open, name + "p_open")
        if not 0 < fields["p_open"] < 1:
            raise ValueError(f"DyckCEConfig.p_open must lie in (0, 1), got {self.p_open}")
        if fields["d_model"] % fields["heads"]:
            raise ValueError(f"DyckCEConfig.d_model ({self.d_model}) must be divisible by heads ({self.heads})")
        for key, value in fields.items():
            object.__setattr__(self, key, value)

    def bytes_needed(self, n: int) -> float:
        """Peak working set at length n: the sampler's (n/2 + 3, n + 1) completion table, the
        (B, n + 1, 5) target tables and one training step's (B, H, T, T) attention (×4 for autograd)."""
        T = n + 1
        B = max(self.batch_size, self.eval_batch)
        attention = 4 * 8.0 * B * self.heads * T * T if "transformer" in self.models else 0.0
        return 8.0 * (n // 2 + 3) * (n + 1) + 8.0 * 6 * B * T * (self.d_model + 5) + attention


QUICK = DyckCEConfig(lengths=(8, 16, 32), steps=150, d_model=16, eval_batch=64)  # ~1 minute


def config_from_options(quick: bool, lengths: str | None, steps: int | None, models: str, seed: int,
                        plot=None) -> DyckCEConfig:
    """``expressivity dyck-ce``'s config: QUICK (or the full default) with the options given;
    the --plot path and every length's memory are checked before the first model trains."""
    from dataclasses import replace

    from .plots import check_plot_path

    check_plot_path(plot)
    over: dict = {"seed": seed, "models": models}
    if lengths:
        over["lengths"] = parse_lengths(lengths, "--lengths")
    if steps is not None:
        over["steps"] = steps
    cfg = replace(QUICK if quick else DyckCEConfig(), **over)
    for n in cfg.lengths:
        check_memory(cfg.bytes_needed(n), f"dyck-ce at n = {n}", hint="use smaller --lengths")
    return cfg


@dataclass(frozen=True)
class DyckCERow:
    model: str
    n: int
    ce_bits: float  # per-symbol cross-entropy of the model
    optimal_bits: float  # per-symbol entropy of the optimal predictor
    excess_bits: float  # ce − optimal
    bound_bits: float  # P_0·(1 − p) (bits): Hahn's asymptotic lower bound on the excess
    P0: float  # fraction of prefixes with depth > 0
    p: float  # opening probability p of the process
    accuracy: float  # per-position next-symbol accuracy (support prediction)


def closing_mass(n: int, p_open: float = 0.5, count: int = 2000, seed: int = 0) -> tuple[float, float]:
    """(P_0, E[c_t]) over the n + 1 prefixes of positive length-n strings of Dyck-2.

    c_t = p*(closing bracket | prefix) from the generative process; without a depth cap
    E[c_t] = P_0·(1 − p).
    """
    n = check_int(n, "n", min=0)
    count = check_int(count, "count", min=1)
    seed = check_int(seed, "seed", min=0)
    lang = get_language("dyck", k=2, p_open=p_open)
    check_memory(8.0 * (n // 2 + 3) * (n + 1) + 8.0 * 8 * count * (n + 1), f"closing_mass at n = {n}",
                 hint="use a smaller n or count")
    rng = np.random.default_rng(seed)
    ids = lang.sample_ids(rng, count, n, True)
    table = lang.next_symbol_table(ids)  # (count, n + 1, 5)
    close = table[..., 1:4:2].sum(-1)  # ')' and ']' columns
    P0 = float((table[..., -1] == 0).mean())  # EOS impossible ⇔ depth > 0
    return P0, float(close.mean())


def dyck_ce(config: DyckCEConfig = QUICK, progress=None) -> list[DyckCERow]:
    """Train each model kind at each n (train and test length n) and report excess CE vs bound."""
    from ..train import RunConfig, train_run

    if not isinstance(config, DyckCEConfig):
        raise ValueError(f"config must be a DyckCEConfig (e.g. dyck_ce.QUICK), got {type(config).__name__}")
    for n in config.lengths:  # refuse before the first model trains
        check_memory(config.bytes_needed(n), f"dyck_ce at n = {n}", hint="use smaller lengths or a smaller batch")
    rows = []
    for model in config.models:
        for n in config.lengths:
            run = RunConfig(task="dyck", kind="next_symbol", task_params={"k": 2, "p_open": config.p_open},
                            model=model, layers=config.layers, heads=config.heads, d_model=config.d_model,
                            train_lengths=(n, n), test_lengths=(n,), steps=config.steps,
                            batch_size=config.batch_size, lr=config.lr, seed=config.seed,
                            eval_batch=config.eval_batch, accuracy="per_position")
            res = train_run(run)
            m = res.metrics[0]
            P0, mass = closing_mass(n, config.p_open, seed=config.seed)
            rows.append(DyckCERow(model=model, n=n, ce_bits=m["ce_bits"], optimal_bits=m["optimal_bits"],
                                  excess_bits=m["excess_bits"], bound_bits=mass, P0=P0, p=config.p_open,
                                  accuracy=m["accuracy"]))
            if progress is not None:
                progress(model, n)
    return rows
