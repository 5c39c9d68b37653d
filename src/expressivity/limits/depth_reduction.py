"""Constructive depth reduction (Hahn 2020, Theorem 1 / Lemma 4) for a concrete hardmax model.

Binary inputs x ∈ {0,1}^n, restriction ρ ∈ {0,1,*}^n (here ρ_i = −1 means *). Block by
block ℓ = 1..L we keep, for every token position t, the set S_t ⊆ {i : ρ_i = *} of free
inputs that y_t^(ℓ−1) depends on (a "c-transformer" with c = max_t |S_t|; at the start
S_t = {t}). For block ℓ:

- **Stage 1** — fix every free input that more than c/(η·C) activations depend on
  (C = current free fraction). At most η·C·n inputs can be that popular.
- **Items.** Enumerate every value of every activation: item (t, w) for each assignment w of
  S_t, obtained by running the model (other free bits set to 0 — irrelevant by induction).
  Head h at a query item (t, z) scores key item (t', w) by a = λ·q·k.
- **Stage 2** — the event X_{h,t,z} ("the head still looks far"): its top-k key items with
  pairwise disjoint free dependencies, greedily in score order. If one of them gets *fixed*
  (all of S_t' set to w) the head can only attend to keys that score at least as high —
  whose items all come earlier in the order — so it depends on a bounded set. An item listed
  by more than 2^c·k·H events is fixed outright (Hahn's Stage 2), bounding the dependency
  degree between events.
- **Stage 3** — a random restriction: each free input stays free with prob. 1 − q, else is
  fixed to 0 or 1 (q/2 each). Instead of the Lovász Local Lemma we run Moser–Tardos: while
  some event X_{h,t,z} holds (none of its k items fixed to its value), resample the
  variables of one such event; restart if more than (1 + δ)·q of the inputs got fixed
  (the Chernoff event X_0).
- **Collapse** — exact dependency update under the new ρ: with M = max_{t'} min_w a(t', w),
  the head at (t, z) can only attend to keys t' with max_w a(t', w) ≥ M (ties included:
  the project's hardmax splits evenly over tied maxima), so
  S_t ← S_t ∪ ⋃_{h, z} ⋃_{t' candidate} S_{t'}. This is sound for any ρ; the stages only make
  it small.

After the last block, the output (read at position r) depends only on S_r. If some free input
lies outside S_r, flipping it changes the parity but not the output: a verified PARITY
counterexample.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from ..memory import check_memory
from ..rules import check_float, check_int
from ..transformer.positions import require_position_table
from .encoder import alphabet_size, as_encoder, as_transformer, layout, rows_per_pass
from .restriction import fixed_length_inputs, hardmax_copy, model_outputs, require_hard_attention

SAME_OUTPUT_ATOL = 1e-9
"""Two float64 outputs count as the same when they differ by at most this: the hardmax forward pass
sums the same terms in an input-dependent order, so equal outputs may differ by round-off (~1e-15)."""


@dataclass(frozen=True)
class ReductionConfig:
    """Parameters of the three stages."""

    eta: float = 0.1  # η: Stage 1/2 budget (fraction of free inputs each stage may fix)
    k: int = 4  # top-k disjoint key items per event (Stage 2/3)
    q: float = 0.4  # Stage 3: each free input is fixed with probability q
    delta: float = 0.5  # Stage 3: restart if more than (1 + δ)·q·F inputs got fixed
    c_cap: int = 6  # enumerate at most 2^c_cap values per activation (extra inputs are fixed)
    max_items: int = 4096  # cap on Σ_t 2^|S_t| (memory: H·items² scores); bits of the largest S_t are fixed
    max_resamples: int = 20_000  # Moser–Tardos resampling steps per attempt
    restarts: int = 20  # Moser–Tardos attempts
    brute_force_max: int = 12  # verify by enumerating all completions when F ≤ this

    def __post_init__(self) -> None:
        name = "ReductionConfig."
        eta = check_float(self.eta, name + "eta")
        if not 0 < eta < 0.5:
            raise ValueError(f"ReductionConfig.eta must lie in (0, 0.5), got {self.eta}")
        q = check_float(self.q, name + "q")
        if not 0 < q < 1:
            raise ValueError(f"ReductionConfig.q must lie in (0, 1), got {self.q}")
        ints = {"k": check_int(self.k, name + "k", min=1),
                "c_cap": check_int(self.c_cap, name + "c_cap", min=1, max=10),
                "max_items": check_int(self.max_items, name + "max_items", min=2),
                "max_resamples": check_int(self.max_resamples, name + "max_resamples", min=1),
                "restarts": check_int(self.restarts, name + "restarts", min=1),
                # verification enumerates 2^F completions: 2^20 strings is the most we run
                "brute_force_max": check_int(self.brute_force_max, name + "brute_force_max", min=0, max=20)}
        floats = {"eta": eta, "q": q, "delta": check_float(self.delta, name + "delta", min=0.0, min_open=True)}
        for key, value in {**ints, **floats}.items():
            object.__setattr__(self, key, value)


@dataclass(frozen=True)
class LayerLog:
    layer: int  # block ℓ = 1..L
    c: int  # max |S_t| entering the block
    free_start: int
    free_after_stage1: int
    free_after_stage2: int
    free_after_stage3: int
    resamples: int  # Moser–Tardos resampling steps used
    c_after: int  # max |S_t| after the block


@dataclass(frozen=True)
class DepthReductionResult:
    n: int
    rho: np.ndarray  # (n,) −1 = free, else the fixed bit
    n_free: int
    dependency: tuple[int, ...]  # free inputs the output may depend on (S_r)
    layers: tuple[LayerLog, ...]
    verified: bool  # output is a function of the dependency bits (checked)
    n_checked: int  # completions checked (all 2^F when F is small)
    counterexample: dict | None  # PARITY: x, x_prime, output, output_prime, output_gap, flipped
    note: str = ""
    extra: dict = field(default_factory=dict)


def _bits(s: int) -> np.ndarray:
    """All assignments of s bits: (2^s, s)."""
    return (np.arange(1 << s)[:, None] >> np.arange(s)) & 1


class _Items:
    """All values of all activations y_t: item p = (pos[p], assignment of S_t)."""

    def __init__(self, dep: np.ndarray, rho: np.ndarray) -> None:
        T = dep.shape[0]
        base = np.where(rho < 0, 0, rho)
        pos, ids, var_rows = [], [], []
        for t in range(T):  # setup over positions: sizes differ per position
            S = np.flatnonzero(dep[t])
            A = _bits(len(S))  # (2^s, s)
            X = np.repeat(base[None], len(A), axis=0)
            X[:, S] = A
            ids.append(X)
            pos.append(np.full(len(A), t))
            var_rows.append([(S, a) for a in A])
        self.pos = np.concatenate(pos)  # (P,)
        self.ids = np.concatenate(ids)  # (P, n) one completion realising each item
        self.vars = [v for rows in var_rows for v in rows]  # (S, values) per item
        self.T = T

    def consistent(self, rho: np.ndarray) -> np.ndarray:
        """Items whose assignment agrees with ρ on the fixed bits: (P,) bool."""
        fixed = rho >= 0
        return np.array([bool(np.all(~fixed[S] | (rho[S] == w))) for S, w in self.vars])


@torch.no_grad()
def _scores(t, encoder, items: _Items, layer: int) -> torch.Tensor:
    """a[h, p, p'] = λ·s_p·q(item p)·k(item p') for block ``layer`` (Attention.pair_scores; unmasked)."""
    cfg = t.cfg
    m64 = t  # caller passes a float64 copy
    P = len(items.pos)
    chunk = rows_per_pass(3 * items.T ** 2 * max(cfg.n_heads, 1), total=4096)  # strings per pass
    rows = []
    for s0 in range(0, P, chunk):
        x = fixed_length_inputs(encoder, items.ids[s0:s0 + chunk]).inputs
        y = m64.run_blocks(m64.embed(x.to(torch.float64) if x.is_floating_point() else x), 0, stop=layer)  # (b, T, d)
        rows.append(y[torch.arange(len(y)), torch.as_tensor(items.pos[s0:s0 + chunk])])
    block = m64.blocks[layer]
    at = block.attn
    q, k, _ = at.project(block.attn_input(torch.cat(rows))).transpose(0, 2).unbind(1)  # (H, P, e) each
    pos = torch.as_tensor(items.pos)
    m = (pos + 1).double() if cfg.causal else torch.full((len(pos),), float(items.T), dtype=torch.float64)
    return at.pair_scores(q, k, m)  # (H, P, P); m: keys each query item sees


def reduction_setup(model, n, config=None, as_hardmax: bool = False):
    """(transformer, encoder, layout, config, n) for :func:`depth_reduction`, every precondition
    checked: hard attention, a binary alphabet, 2 ≤ n within n_ctx, a :class:`ReductionConfig`,
    and the (T, n) dependency sets within the memory budget. Callers may run it first to refuse
    bad input before other work."""
    if config is not None and not isinstance(config, ReductionConfig):
        raise ValueError(f"config must be a ReductionConfig (or None), got {type(config).__name__}")
    cfg_r = config or ReductionConfig()
    t = as_transformer(model)
    if as_hardmax:
        t = hardmax_copy(t)
    require_hard_attention(t, "depth_reduction")
    require_position_table(t.cfg, "depth_reduction")
    encoder, _ = as_encoder(model, alphabet_size=2)
    K = alphabet_size(encoder)
    if K != 2:
        raise ValueError(f"depth_reduction works over a binary alphabet; the encoder has "
                         f"{K} symbols (on the command line: --no-constructive)")
    n = check_int(n, "n", min=2)
    lay = layout(encoder, n, table=False)
    T = lay.n_tokens
    if t.cfg.positional != "none" and T > t.cfg.n_ctx:
        raise ValueError(f"n = {n} needs {T} positions > n_ctx = {t.cfg.n_ctx}")
    # dependency sets (T, n) as bool and float64 (the collapse), items: ≤ max_items strings of T tokens
    check_memory(9.0 * T * n + 8.0 * cfg_r.max_items * T * (t.cfg.d_model + 3 * t.cfg.n_heads),
                 f"depth_reduction at n = {n}", hint="use a smaller n")
    return t, encoder, lay, cfg_r, n


def depth_reduction(model, n: int, config: ReductionConfig | None = None, seed: int = 0,
                    as_hardmax: bool = False) -> DepthReductionResult:
    """Run Stages 1–3 and the collapse for every block of a hardmax model over {0, 1}^n.

    Returns the restriction ρ, its free inputs, the inputs the output depends on, per-layer
    logs, a verification of the dependency claim and, when possible, a verified PARITY
    counterexample. ValueError when the model is not hard attention or not binary.
    """
    t, encoder, lay, cfg_r, n = reduction_setup(model, n, config, as_hardmax)
    seed = check_int(seed, "seed", min=0)
    T = lay.n_tokens
    import copy
    m64 = copy.deepcopy(t).to(torch.float64).eval()
    rng = np.random.default_rng(seed)
    rho = np.full(n, -1)
    dep = np.zeros((T, n), dtype=bool)
    dep[lay.positions.numpy(), np.arange(n)] = True  # S_t = {x_i} at the token holding x_i
    H = t.cfg.n_heads
    logs = []
    ties = 0.0
    for layer in range(t.cfg.n_layers):
        free0 = int((rho < 0).sum())
        c = int(dep.sum(1).max())
        # ---- Stage 1: fix inputs feeding more than c/(ηC) activations
        C = max(free0, 1) / n
        popular = (dep.sum(0) > c / (cfg_r.eta * C)) & (rho < 0)
        _fix(rho, dep, np.flatnonzero(popular), rng.integers(0, 2, size=int(popular.sum())))
        # enumeration cap: activations with more than c_cap free inputs lose the extra ones
        for tt in np.flatnonzero(dep.sum(1) > cfg_r.c_cap):
            S = np.flatnonzero(dep[tt])
            extra = rng.permutation(S)[: len(S) - cfg_r.c_cap]
            _fix(rho, dep, extra, rng.integers(0, 2, size=len(extra)))
        while (2 ** dep.sum(1)).sum() > cfg_r.max_items:  # memory cap: shrink the largest S_t
            S = np.flatnonzero(dep[int(dep.sum(1).argmax())])
            _fix(rho, dep, S[rng.integers(len(S)):][:1], rng.integers(0, 2, size=1))
        free1 = int((rho < 0).sum())
        c = int(dep.sum(1).max())
        items = _Items(dep, rho)
        a = _scores(m64, encoder, items, layer).numpy()  # (H, P, P)
        allowed = np.ones((len(items.pos),) * 2, dtype=bool)
        if t.cfg.causal:
            allowed = items.pos[None, :] <= items.pos[:, None]
        ties = max(ties, _tie_fraction(a, allowed, items))
        # ---- Stage 2: fix the items listed by too many (> 2^c·k·H) events
        tau = (2 ** c) * cfg_r.k * H
        events = _events(a, allowed, items, rho, cfg_r.k)
        counts = np.bincount(np.array([p for ev in events for p in ev], dtype=np.int64), minlength=len(items.pos))
        for p_top in np.argsort(-counts):
            if counts[p_top] <= tau:
                break
            S, w = items.vars[p_top]
            if np.all((rho[S] < 0) | (rho[S] == w)):  # still realisable: fix it
                _fix(rho, dep, S, w)
        free2 = int((rho < 0).sum())
        # ---- Stage 3: random restriction, Moser–Tardos resampling
        events = _events(a, allowed, items, rho, cfg_r.k)
        X, used = _moser_tardos(events, items, rho, cfg_r, rng)
        V = np.flatnonzero(rho < 0)
        newly = V[X[V] >= 0]
        _fix(rho, dep, newly, X[newly])
        free3 = int((rho < 0).sum())
        # ---- collapse: exact dependency update under ρ
        dep = _collapse(a, allowed, items, rho, dep)
        logs.append(LayerLog(layer + 1, c, free0, free1, free2, free3, used, int(dep.sum(1).max())))
    r = lay.read
    S_out = np.flatnonzero(dep[r])
    verified, n_checked = _verify(m64, encoder, rho, S_out, cfg_r, rng)
    cex = _parity_counterexample(m64, encoder, rho, S_out, rng) if verified else None
    F = int((rho < 0).sum())
    note = ""
    if ties > 0:
        note = (f"attention ties: for {ties:.0%} of (head, query value) pairs the maximal score is "
                "attained at several positions, and hardmax averages over them (averaging hard "
                "attention) — outside Theorem 1's unique-hard-attention assumption, so restrictions "
                "need not cut the dependence")
    elif F == 0:
        note = "every input got fixed: n is too small for the chosen k, q, c_cap"
    elif len(S_out) >= F:
        note = ("the output still depends on every free input: the heads' maxima are spread over "
                "many keys, or n is too small for the chosen k, q")
    return DepthReductionResult(n=n, rho=rho.copy(), n_free=F, dependency=tuple(int(i) for i in S_out),
                                layers=tuple(logs), verified=verified, n_checked=n_checked,
                                counterexample=cex, note=note, extra={"tie_fraction": ties})


def _tie_fraction(a: np.ndarray, allowed: np.ndarray, items: _Items) -> float:
    """Fraction of (head, query item) whose top score is attained at ≥ 2 key positions."""
    sc = np.where(allowed[None], a, -np.inf)  # (H, P, P)
    top = sc.max(-1, keepdims=True)
    tol = 1e-12 * (1.0 + np.abs(top))
    at_top = sc >= top - tol  # (H, P, P)
    T = items.T
    per_pos = np.zeros(at_top.shape[:2] + (T,), dtype=bool)
    h_idx, p_idx, k_idx = np.nonzero(at_top)
    per_pos[h_idx, p_idx, items.pos[k_idx]] = True
    return float((per_pos.sum(-1) >= 2).mean())


def _fix(rho: np.ndarray, dep: np.ndarray, idx, values) -> None:
    idx = np.asarray(idx, dtype=np.int64)
    if idx.size == 0:
        return
    rho[idx] = np.asarray(values, dtype=np.int64)
    dep[:, idx] = False


def _events(a: np.ndarray, allowed: np.ndarray, items: _Items, rho: np.ndarray, k: int) -> list[list[int]]:
    """Unsatisfied events X_{h,t,z}: for each head and ρ-consistent query item, its top-k key
    items with pairwise disjoint free dependencies (greedy in score order). Events already
    satisfied (a listed item is fully fixed to its value) are dropped."""
    cons = items.consistent(rho)
    free = rho < 0
    masks = [int(sum(1 << int(i) for i in S if free[i])) for S, _ in items.vars]
    H = a.shape[0]
    events = []
    key_ok = allowed & cons[None, :]
    scores = np.where(key_ok[None], a, -np.inf)  # (H, P, P)
    scan = min(scores.shape[-1], 32 * k)  # greedy look-ahead (bounded: keeps the events local)
    order = np.argsort(-scores, axis=-1, kind="stable")
    for h in range(H):
        for p in np.flatnonzero(cons):
            chosen, used = [], 0
            for p2 in order[h, p, :scan]:  # the top items only: later ones cannot rank in the top k
                if not key_ok[p, p2]:
                    break
                m = masks[p2]
                if m == 0:  # fully fixed item among the top ones: satisfied
                    chosen = None
                    break
                if m & used:
                    continue
                chosen.append(int(p2))
                used |= m
                if len(chosen) == k:
                    break
            if chosen:
                events.append(chosen)
    return events


def _moser_tardos(events, items: _Items, rho: np.ndarray, cfg_r: ReductionConfig,
                  rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """X (n,): −1 free, 0/1 fixed, avoiding every event and X_0; raises ValueError on failure."""
    n = len(rho)
    V = np.flatnonzero(rho < 0)
    q = cfg_r.q
    # event e, item m: the free variables of the item and the values that satisfy it
    E = len(events)
    width = max((len(items.vars[p][0]) for ev in events for p in ev), default=1)
    kk = max((len(ev) for ev in events), default=1)
    var = np.full((E, kk, max(width, 1)), -1, dtype=np.int64)
    val = np.zeros_like(var)
    item_valid = np.zeros((E, kk), dtype=bool)
    for e, ev in enumerate(events):
        for m, p in enumerate(ev):
            S, w = items.vars[p]
            keep = rho[S] < 0
            var[e, m, : keep.sum()] = S[keep]
            val[e, m, : keep.sum()] = w[keep]
            item_valid[e, m] = True
    ev_vars = [np.unique(var[e][var[e] >= 0]) for e in range(E)]

    def draw(size):
        u = rng.random(size)
        return np.where(u < q / 2, 0, np.where(u < q, 1, -1))

    total = 0
    for _ in range(cfg_r.restarts):
        X = np.full(n, -1)
        X[V] = draw(len(V))
        for _step in range(cfg_r.max_resamples):
            if E == 0:
                break
            got = np.where(var >= 0, X[np.maximum(var, 0)] == val, True).all(-1) & item_valid  # (E, k)
            bad = np.flatnonzero(~got.any(-1))
            if len(bad) == 0:
                break
            e = bad[rng.integers(len(bad))]
            X[ev_vars[e]] = draw(len(ev_vars[e]))
            total += 1
        else:
            continue
        if (X[V] >= 0).sum() <= (1 + cfg_r.delta) * q * max(len(V), 1):
            return X, total
    raise ValueError(
        "Moser–Tardos found no restriction avoiding all events (Stage 3): the model's attention "
        "maxima are too spread (e.g. many exactly tied scores — averaging hard attention) for "
        f"k = {cfg_r.k}, q = {cfg_r.q}; increase k or q")


def _collapse(a: np.ndarray, allowed: np.ndarray, items: _Items, rho: np.ndarray,
              dep: np.ndarray) -> np.ndarray:
    """Exact S_t after the block: keys t' with max_w a ≥ M = max_t' min_w a (per head, query item)."""
    cons = items.consistent(rho)
    T = dep.shape[0]
    pos = torch.as_tensor(items.pos)
    A = torch.as_tensor(a)
    ok = torch.as_tensor(allowed & cons[None, :])[None]  # (1, P, P)
    idx = pos[None, None, :].expand_as(A)
    hi = torch.full((A.shape[0], A.shape[1], T), -np.inf, dtype=A.dtype).scatter_reduce(
        2, idx, A.masked_fill(~ok, -np.inf), "amax")  # (H, P, T)
    lo = torch.full((A.shape[0], A.shape[1], T), np.inf, dtype=A.dtype).scatter_reduce(
        2, idx, A.masked_fill(~ok, np.inf), "amin")
    M = torch.where(torch.isfinite(lo), lo, torch.tensor(-np.inf, dtype=A.dtype)).amax(-1, keepdim=True)
    tol = 1e-9 * (1.0 + float(A[torch.isfinite(A)].abs().max()))
    cand = (hi >= M - tol) & torch.isfinite(hi)  # (H, P, T)
    cand = cand & torch.as_tensor(cons)[None, :, None]
    cand_pos = torch.zeros(T, T, dtype=torch.float64).index_add_(0, pos, cand.any(0).double()) > 0  # (T, T)
    free = rho < 0
    dep_f = dep & free[None, :]
    reach = cand_pos.numpy().astype(np.float64) @ dep_f.astype(np.float64) > 0  # (T, n)
    return dep_f | reach


def _verify(m64, encoder, rho: np.ndarray, S_out: np.ndarray, cfg_r: ReductionConfig,
            rng: np.random.Generator) -> tuple[bool, int]:
    """Output(x) == Output(x with every free bit outside S_out set to 0), over all completions
    when F ≤ brute_force_max, else over 512 random ones."""
    free = np.flatnonzero(rho < 0)
    F = len(free)
    if F <= cfg_r.brute_force_max:
        A = _bits(F)
    else:
        A = rng.integers(0, 2, size=(512, F))
    X = np.repeat(np.where(rho < 0, 0, rho)[None], len(A), axis=0)
    X[:, free] = A
    Y = X.copy()
    outside = np.setdiff1d(free, S_out)
    Y[:, outside] = 0
    out_x, out_y = model_outputs(m64, encoder, X), model_outputs(m64, encoder, Y)
    return bool(np.allclose(out_x, out_y, rtol=0, atol=SAME_OUTPUT_ATOL)), len(A)


def _parity_counterexample(m64, encoder, rho, S_out, rng) -> dict | None:
    """x, x' agreeing on ρ, differing in one free bit outside S_out (so in parity), same output."""
    outside = np.setdiff1d(np.flatnonzero(rho < 0), S_out)
    if len(outside) == 0:
        return None
    x = np.where(rho < 0, rng.integers(0, 2, size=len(rho)), rho)
    i = int(outside[0])
    xp = x.copy()
    xp[i] ^= 1
    out = model_outputs(m64, encoder, np.stack([x, xp]))
    gap = float(np.max(np.abs(out[0] - out[1])))
    if not gap <= SAME_OUTPUT_ATOL:
        return None
    return {"x": x.tolist(), "x_prime": xp.tolist(), "flipped": i, "output": out[0].tolist(),
            "output_prime": out[1].tolist(), "output_gap": gap, "parity": int(x.sum() % 2), "parity_prime": int(xp.sum() % 2)}
