"""Hard attention, Theorem 1 (Hahn 2020, §4): random restrictions and depth reduction.

A restriction ρ ∈ {0, 1, *}^n fixes some inputs and leaves the positions marked * free. The
theorem: for any fixed hard-attention transformer there are restrictions leaving ≥ C·n inputs
free under which the output depends on only a *bounded* number c of inputs — so it cannot
decide PARITY (or 2DYCK), whose membership depends on every free input.

Two tools:

- :func:`dependence_under_restriction` (empirical): draw random ρ with round(C·n) free
  positions and count the free inputs the output still depends on (a free input counts when
  changing it changes the output for at least one of several random completions — all
  flips of all completions in one batch). PARITY and 2DYCK depend on all free inputs.
- :func:`depth_reduction` (constructive, binary alphabet): the three stages of the depth-
  reduction lemma, block by block, on a concrete hardmax :class:`Transformer`, tracking for
  each position t the set S_t of free inputs its activation y_t^(ℓ) depends on. See
  :mod:`.depth_reduction` for the stages; this module holds batched evaluation. Strings get
  into the model through :mod:`.encoder` (an Encoder, or a plain token-id model wrapped in a
  :class:`~.encoder.TokenEncoder`; a bare Transformer reads symbols 0/1 as tokens 0/1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..constructions.base import Encoded
from ..rules import check_float, check_int, parse_lengths
from ..transformer import Transformer
from .encoder import alphabet_size, as_encoder, as_transformer, encode_ids, layout, rows_per_pass


def require_hard_attention(t: Transformer, what: str) -> None:
    """ValueError naming the failing assumption when the model is not hard attention."""
    if t.cfg.attention != "hardmax":
        raise ValueError(
            f"{what} needs hard attention: Theorem 1 assumes every head attends to an argmax "
            f"position, but this model uses attention={t.cfg.attention!r} (soft attention mixes "
            "all positions, so restrictions cannot cut the dependence). Use the soft-attention "
            "analysis (`sensitivity`, Lemma 5), or pass as_hardmax=True to evaluate the same "
            "weights with hardmax")


def hardmax_copy(t: Transformer) -> Transformer:
    """The same weights evaluated with hardmax attention."""
    out = Transformer(t.cfg.as_hardmax(), t.channels)
    out.load_state_dict(t.state_dict())
    return out


def fixed_length_inputs(encoder, ids: np.ndarray) -> Encoded:
    """:func:`.encoder.encode_ids`, refusing a padded encoding: restrictions fix positions, so
    every string must be read without a key mask."""
    enc = encode_ids(encoder, ids)
    if enc.key_mask is not None and not bool(enc.key_mask.all()):
        raise ValueError("the construction pads its input; restrictions need fixed-length inputs")
    return enc


@torch.no_grad()
def model_outputs(t: Transformer, encoder, ids: np.ndarray, batch: int | None = None) -> np.ndarray:
    """Output vector of ``t`` at the read position for each string ``ids`` (N, n) as
    ``encoder`` encodes it: (N, d_out or d_model). Evaluated in batches of ``batch`` strings
    (default: :func:`.encoder.rows_per_pass` for the (B, H, T, T) scores, pattern and a
    temporary)."""
    if not len(ids):
        return np.zeros((0, 1))
    if batch is None:
        T = fixed_length_inputs(encoder, ids[:1]).inputs.shape[1]
        batch = rows_per_pass(3 * T * T * max(t.cfg.n_heads, 1), total=4096)
    outs = []
    dtype = next(t.parameters()).dtype
    for s in range(0, len(ids), batch):
        enc = fixed_length_inputs(encoder, ids[s:s + batch])
        x = enc.inputs
        y = t(x.to(dtype) if x.is_floating_point() else x)  # (b, T, d)
        outs.append(y[torch.arange(len(y)), enc.read].detach().to(torch.float64).numpy())
    return np.concatenate(outs)


def random_restriction(rng: np.random.Generator, n: int, C: float, K: int = 2) -> np.ndarray:
    """ρ (n,) with exactly round(C·n) free positions (−1 = *) and uniform fixed symbols."""
    _check_rng(rng)
    n = check_int(n, "n", min=1)
    K = check_int(K, "K (alphabet size)", min=2)
    C = _check_C(C)
    rho = rng.integers(0, K, size=n)
    free = rng.choice(n, size=max(1, round(C * n)), replace=False)
    rho[free] = -1
    return rho


def _check_rng(rng) -> None:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy Generator (np.random.default_rng(seed)), got {type(rng).__name__}")


def _check_C(C) -> float:
    C = check_float(C, "C (fraction of free inputs)")
    if not 0 < C <= 1:
        raise ValueError(f"C (fraction of free inputs) must lie in (0, 1], got {C}")
    return C


def dyck_restriction(n: int, frac: float = 0.2) -> np.ndarray:
    """Hahn's 2DYCK restriction over ``()[]``: the first ⌊frac·n⌋ symbols '(' (index 0), the last
    ⌊frac·n⌋ ')' (index 1), the middle free. ``frac`` ∈ [0, 0.5] (the two ends cannot overlap)."""
    n = check_int(n, "n", min=0)
    frac = check_float(frac, "frac", min=0.0, max=0.5)
    a = int(frac * n)
    rho = np.full(n, -1)
    rho[:a] = 0
    rho[n - a:] = 1
    return rho


def influential_free_inputs(f, rho: np.ndarray, completions: np.ndarray, K: int = 2,
                            tol: float = 1e-9) -> np.ndarray:
    """Free positions whose change (symbol a -> a+1 mod K) changes f for some completion.

    ``f``: ids (N, n) -> values (N, ...). ``completions`` (m, n): full strings agreeing with ρ.
    All m·(F + 1) strings are evaluated in one call. Returns a bool mask (n,).
    """
    free = np.flatnonzero(rho < 0)
    m, n = completions.shape
    F = len(free)
    X = np.repeat(completions[:, None, :], F + 1, axis=1)  # (m, F+1, n)
    rows = np.arange(1, F + 1)
    X[:, rows, free] = (X[:, rows, free] + 1) % K
    vals = np.asarray(f(X.reshape(m * (F + 1), n)), dtype=np.float64).reshape(m, F + 1, -1)
    changed = (np.abs(vals[:, 1:] - vals[:, :1]) > tol).any(axis=(0, 2))  # (F,)
    mask = np.zeros(n, dtype=bool)
    mask[free[changed]] = True
    return mask


def complete(rng: np.random.Generator, rho: np.ndarray, m: int, K: int = 2) -> np.ndarray:
    """m uniform completions of ρ: (m, n)."""
    X = rng.integers(0, K, size=(m, len(rho)))
    fixed = rho >= 0
    X[:, fixed] = rho[fixed]
    return X


@dataclass(frozen=True)
class DependenceRow:
    n: int
    free: int  # |{i : ρ(i) = *}|
    dependent: float  # mean over restrictions of #free inputs the output depends on
    dependent_max: int
    reference: str  # "model", "parity", "dyck2"


def dependence_under_restriction(model, n_values, C: float = 0.5, n_restrictions: int = 4,
                                 n_completions: int = 8, seed: int = 0, as_hardmax: bool = False,
                                 references: bool = True,
                                 progress=None) -> list[DependenceRow]:
    """Empirical Theorem 1: dependency count of the output on free inputs vs n.

    For each n: ``n_restrictions`` random ρ with round(C·n) free inputs; a free input counts
    when changing it changes the output for one of ``n_completions`` random completions.
    References (closed form, checked on the same restrictions): PARITY depends on every free
    bit; 2DYCK under Hahn's restriction ('(' ×0.2n … ')' ×0.2n) on every free symbol —
    witnessed on completions whose free middle is itself a Dyck-2 word.
    """
    t = as_transformer(model)
    if as_hardmax:
        t = hardmax_copy(t)
    require_hard_attention(t, "dependence_under_restriction")
    n_values = parse_lengths(n_values, "n_values")
    C = _check_C(C)
    n_restrictions = check_int(n_restrictions, "n_restrictions", min=1)
    n_completions = check_int(n_completions, "n_completions", min=1)
    seed = check_int(seed, "seed", min=0)
    encoder, _ = as_encoder(model, alphabet_size=2)
    K = alphabet_size(encoder)
    for n in n_values:  # every length is checked before any is measured
        if n < 1:
            raise ValueError(f"n_values: lengths must be >= 1, got {n}")
        T = layout(encoder, n, table=False).n_tokens
        if t.cfg.positional != "none" and T > t.cfg.n_ctx:
            raise ValueError(f"n_values: n = {n} needs {T} positions > n_ctx = {t.cfg.n_ctx}")
    rng = np.random.default_rng(seed)
    rows: list[DependenceRow] = []
    f = lambda ids: model_outputs(t, encoder, ids)
    for n in n_values:
        counts, free_counts, par = [], [], []
        for _ in range(n_restrictions):
            rho = random_restriction(rng, n, C, K)
            comp = complete(rng, rho, n_completions, K)
            counts.append(int(influential_free_inputs(f, rho, comp, K).sum()))
            free_counts.append(int((rho < 0).sum()))
            if references and K == 2:
                par.append(int(influential_free_inputs(lambda x: x.sum(1) % 2, rho, comp, 2).sum()))
        F = int(np.mean(free_counts))
        rows.append(DependenceRow(n, F, float(np.mean(counts)), int(max(counts)), "model"))
        if references:
            if par:
                rows.append(DependenceRow(n, F, float(np.mean(par)), int(max(par)), "parity"))
            rows.append(_dyck_reference(rng, n, n_completions))
        if progress is not None:
            progress(n)
    return rows


def _dyck_reference(rng: np.random.Generator, n: int, m: int) -> DependenceRow:
    """2DYCK under Hahn's restriction: free-symbol influence on membership, on member completions."""
    from ..languages import get as get_language
    dyck = get_language("dyck", k=2)
    n_even = n - n % 2
    rho = dyck_restriction(n_even)
    F = int((rho < 0).sum())
    if F < 2 or F % 2:
        rho[np.flatnonzero(rho < 0)[:F % 2]] = 0  # keep an even free middle (rarely needed)
        F = int((rho < 0).sum())
    mid = dyck.sample_ids(rng, m, F, True)  # balanced Dyck-2 middles
    comp = np.repeat(rho[None], m, axis=0)
    comp[:, rho < 0] = mid
    K = len(dyck.alphabet)
    mask = influential_free_inputs(lambda x: dyck.accepts_ids(x).astype(float), rho, comp, K)
    return DependenceRow(n_even, F, float(mask.sum()), int(mask.sum()), "dyck2")
