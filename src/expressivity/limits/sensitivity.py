"""Flip sensitivity (Hahn 2020, Lemma 5): measured ‖Δy_j^(k)‖ next to the bound from the weights.

For a string x of length n and a position i, x' is x with x_i replaced by another symbol.
Per layer k we measure, over strings and flipped positions i,

- ``other``   = max_{i, j≠i} ‖y_j^(k)(x) − y_j^(k)(x')‖   (Lemma 5: O(1/n) for soft attention),
- ``readout`` = max_{i≠r} ‖Δy_r^(k)‖ at the readout position r,
- ``flipped`` = max_i ‖Δy_i^(k)‖ (Lemma 5: O(1), no decay),
- ``output``  = max_{i≠r} ‖Δ output_r‖,

and put them next to :func:`.lemma5.lemma5_bound`, computed from the weights alone.
All flipped copies of a batch go through the model together: the (B, n) strings become a
(B·n, n) batch of flipped copies (split into as few chunks as the memory budget allows),
never a Python loop over positions. Measurement runs in float64 on a copy of the model.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from ..fileio import make_dir, write_json
from ..memory import check_memory
from ..rules import check_int, parse_lengths
from ..transformer import Transformer
from ..transformer.positions import require_position_table
from .encoder import TokenEncoder, as_encoder, encode_ids, layout, rows_per_pass
from .encoder import alphabet_size as alphabet_size_of
from .lemma5 import Lemma5Bound, lemma5_bound


@dataclass(frozen=True)
class FlipMeasurement:
    """Measured changes for one batch; arrays have one entry per layer k = 1..L."""

    n: int
    other: np.ndarray  # (L,) max_{i, j≠i} ‖Δy_j^(k)‖
    readout: np.ndarray  # (L,) max_{i≠r} ‖Δy_r^(k)‖
    flipped: np.ndarray  # (L,) max_i ‖Δy_i^(k)‖
    output: float | None  # max_{i≠r} ‖Δ output_r‖ (None when the model has no W_U)
    n_passes: int  # forward passes used (1 unless the memory budget forced chunks)


@dataclass(frozen=True)
class SensitivityRow:
    n: int
    layer: int  # k = 1..L
    measured_other: float
    bound_other: float | None
    measured_readout: float
    bound_readout: float | None
    measured_flipped: float
    bound_flipped: float | None
    output_change: float | None
    output_bound: float | None


@dataclass(frozen=True)
class SensitivityReport:
    """Rows per (n, layer); ``applicable``/``reason`` say whether Lemma 5 applies."""

    rows: tuple[SensitivityRow, ...]
    bounds: tuple[Lemma5Bound, ...]
    applicable: bool
    reason: str
    attention: str

    def table(self) -> list[dict]:
        return [r.__dict__.copy() for r in self.rows]

    def within_bound(self, rtol: float = 1e-9) -> bool:
        """measured_other ≤ bound_other·(1 + rtol) on every row (False when Lemma 5 does not apply)."""
        return self.applicable and all(r.measured_other <= r.bound_other * (1 + rtol) for r in self.rows)

    def as_dict(self) -> dict:
        """{"applicable", "reason", "rows"}: the report as JSON-ready data."""
        return {"applicable": self.applicable, "reason": self.reason, "rows": self.table()}

    def write_json(self, path) -> None:
        """:meth:`as_dict` written atomically to ``path`` (its directory made)."""
        make_dir(Path(path).parent, "--json")
        write_json(path, self.as_dict(), indent=1, sort_keys=False)

    def n_delta(self, layer: int) -> tuple[np.ndarray, np.ndarray]:
        """(n, n·measured_other) for one layer — flat for bounded-logit soft attention."""
        rows = [r for r in self.rows if r.layer == layer]
        n = np.array([r.n for r in rows], dtype=float)
        return n, n * np.array([r.measured_other for r in rows])


def flip_table(K: int) -> np.ndarray:
    """Flip map on symbol indices: a -> (a + 1) mod K."""
    return (np.arange(K) + 1) % K


@torch.no_grad()
def measure_flips(model, ids: np.ndarray, language=None, alphabet_size: int | None = None,
                  chunk: int | None = None, incremental: bool = True) -> FlipMeasurement:
    """Measure ‖Δy^(k)‖ for every string in ``ids`` (B, n) and every string position i.

    ``model``, ``language``, ``alphabet_size``: as for :func:`flip_sensitivity`;
    ``ids``: symbol indices over that alphabet. All B·n flipped copies (x_i -> x_i + 1 mod K) are built as one batch;
    ``chunk`` (flips per pass) defaults to all of them unless the memory budget
    (:func:`.encoder.rows_per_pass`) forces a split. ``incremental``: compute block 1 of all
    copies by exact rank-one softmax updates (:mod:`.incremental`; softmax, no padding)
    instead of full passes.
    """
    encoder, language = as_encoder(model, language, alphabet_size)
    cfg = encoder.transformer.cfg
    m64 = copy.deepcopy(encoder.transformer).to(torch.float64).eval()
    ids = np.asarray(ids)
    B, n = ids.shape
    lay = layout(encoder, n, language, table=incremental)
    positions = lay.positions
    enc = encode_ids(encoder, ids, language)
    inputs, key_mask, r = enc.inputs, enc.key_mask, lay.read
    T = inputs.shape[1]
    L = cfg.n_layers
    base_cache: dict = {}
    base_out = m64(_f64(inputs), key_mask=key_mask, cache=base_cache)
    base = _stream(base_cache, L)  # (L+1, B, T, d)
    flip = flip_table(alphabet_size_of(encoder, language))
    use_inc = incremental and cfg.attention == "softmax" and key_mask is None
    if use_inc:
        from .incremental import FirstBlock

        emb, rows = lay.table, torch.as_tensor(lay.rows)  # (V', T, d): every possible y^(0); symbol -> row
        expect = emb[rows[torch.as_tensor(ids)], positions[None, :]]  # (B, n, d)
        if not torch.allclose(base[0][:, positions], expect, rtol=0, atol=1e-12):
            raise ValueError("the input encoding is not position-wise: y^(0) of a string differs from "
                             "the per-symbol embeddings, so Lemma 5's setting (one changed input) does not hold")
        first = FirstBlock(m64, base[0])
        per_copy = B * cfg.n_heads * T * (T if L > 1 else 4 * max(cfg.d_head, cfg.d_model))
    else:
        per_copy = B * cfg.n_heads * T * T
    if chunk is None:
        chunk = rows_per_pass(per_copy, total=n)
    else:
        chunk = check_int(chunk, "chunk", min=1)
    other = torch.zeros(L, dtype=torch.float64)
    read = torch.zeros(L, dtype=torch.float64)
    flipped = torch.zeros(L, dtype=torch.float64)
    out_change = torch.zeros((), dtype=torch.float64)
    n_passes = 0
    for start in range(0, n, chunk):  # chunks only when memory demands it
        idx = np.arange(start, min(n, start + chunk))  # flipped string positions (c,)
        c = len(idx)
        tok = positions[torch.as_tensor(idx)]  # their token positions
        X = np.repeat(ids[:, None, :], c, axis=1)  # (B, c, n)
        X[:, np.arange(c), idx] = flip[X[:, np.arange(c), idx]]
        if use_inc:
            y0_new = emb[rows[torch.as_tensor(X[:, np.arange(c), idx])], tok[None, :]]  # (B, c, d)
            stream, out = _deeper(m64, first.flipped(tok, y0_new))  # (L, B, c, T, d)
        else:
            flipped_enc = encode_ids(encoder, X.reshape(B * c, n), language)
            inp, km = flipped_enc.inputs, flipped_enc.key_mask
            if key_mask is not None:
                km = key_mask.repeat_interleave(c, dim=0) if km is None else km
            cache: dict = {}
            out = m64(_f64(inp), key_mask=km, cache=cache)
            full = _stream(cache, L).reshape(L + 1, B, c, T, -1)
            diff0 = torch.linalg.vector_norm(full[0] - base[0][:, None], dim=-1)  # (B, c, T)
            off_i = torch.ones(c, T, dtype=torch.bool)
            off_i[torch.arange(c), tok] = False
            if diff0[:, off_i].numel() and float(diff0[:, off_i].max()) > 0:
                raise ValueError("the input encoding is not position-wise: a flip changed y^(0) at "
                                 "other positions, so Lemma 5's setting (one changed input) does not hold")
            stream = full[1:]
            out = out.reshape(B, c, T, -1) if out is not None else None
        n_passes += 1
        d = torch.linalg.vector_norm(stream - base[1:, :, None], dim=-1)  # (L, B, c, T)
        at_i = torch.zeros(c, T, dtype=torch.bool)
        at_i[torch.arange(c), tok] = True
        flipped = torch.maximum(flipped, d[..., at_i].amax(dim=(1, 2)))
        other = torch.maximum(other, d.masked_fill(at_i, 0.0).amax(dim=(1, 2, 3)))
        not_r = tok != r  # (c,)
        if not_r.any():
            read = torch.maximum(read, d[:, :, not_r, r].amax(dim=(1, 2)))
            if cfg.d_out is not None:
                d_out = out[:, not_r, r] - base_out[:, None, r]
                out_change = torch.maximum(out_change, torch.linalg.vector_norm(d_out, dim=-1).max())
    return FlipMeasurement(
        n=n, other=other.numpy(), readout=read.numpy(), flipped=flipped.numpy(),
        output=float(out_change) if cfg.d_out is not None else None, n_passes=n_passes,
    )


def _deeper(m64: Transformer, y1: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Blocks 2..L on y^(1) (B, c, T, d): the stream y^(1..L) (L, B, c, T, d) and the output."""
    B, c, T, d = y1.shape
    y = y1.reshape(B * c, T, d)
    stream = [y]
    out = m64.unembed(m64.run_blocks(y, 1, stream=stream))
    out = out.reshape(B, c, T, -1) if m64.cfg.d_out is not None else None
    return torch.stack(stream).reshape(len(stream), B, c, T, d), out


def _f64(x: torch.Tensor) -> torch.Tensor:
    return x.to(torch.float64) if x.is_floating_point() else x


def _stream(cache: dict, L: int) -> torch.Tensor:
    """y^(0..L) from a forward cache: (L + 1, B, T, d_model)."""
    return torch.stack([cache["hook_embed"]] + [cache[f"blocks.{k}.hook_resid_post"] for k in range(L)])


def flip_sensitivity(model, language=None, lengths=(8, 16, 32, 64, 128), n_strings: int = 4,
                     seed: int = 0, alphabet_size: int | None = None, chunk: int | None = None,
                     progress=None) -> SensitivityReport:
    """Measured flip sensitivity and Hahn's Lemma 5 bound per length n and layer k.

    ``model``: a token-id :class:`Transformer` (symbol a = token a; output read at the last
    position) or an :class:`~expressivity.constructions.base.Encoder` (``.transformer``,
    ``.encode(strings)``, ``.language``: constructions, compiled models, trained checkpoints).
    ``language``: a :class:`~expressivity.languages.base.Language` whose positive and
    negative strings are measured (half each when both exist); None → uniform strings over
    ``alphabet_size`` symbols (default: all token ids). Lengths without strings are skipped.
    ``progress(n)`` is called after each length.
    """
    encoder, language = as_encoder(model, language, alphabet_size)
    K = alphabet_size_of(encoder, language)
    cfg = encoder.transformer.cfg
    require_position_table(cfg, "flip_sensitivity")
    lengths = list(parse_lengths(lengths, "lengths"))
    if min(lengths) < 2:
        raise ValueError(f"lengths must be >= 2 (a flip needs another position), got {min(lengths)}")
    n_strings = check_int(n_strings, "n_strings", min=1)
    seed = check_int(seed, "seed", min=0)
    if chunk is not None:
        chunk = check_int(chunk, "chunk", min=1)
    for n in lengths:  # every length is checked before any is measured
        _check_size(encoder, n, n_strings)
    rng = np.random.default_rng(seed)
    rows, bounds = [], []
    applicable, reason = True, ""
    flip = flip_table(K)
    for n in lengths:
        ids = rng.integers(0, K, size=(n_strings, n)) if language is None else \
            language.sample_mixed_ids(rng, n_strings, n)
        if not len(ids):
            continue
        lay = layout(encoder, n, language)
        if cfg.positional != "none" and lay.n_tokens > cfg.n_ctx:
            raise ValueError(f"lengths: length {n} needs {lay.n_tokens} positions > n_ctx = {cfg.n_ctx}")
        meas = measure_flips(encoder, ids, language, chunk=chunk)
        # Lemma 5 maximises over every row of the table: the whole vocabulary for a token model
        pairs = [(int(lay.rows[a]), int(lay.rows[flip[a]])) for a in range(K)]
        bound = lemma5_bound(encoder.transformer, lay.table, pairs, flip_positions=lay.positions, readout=lay.read)
        bounds.append(bound)
        applicable, reason = bound.applicable, bound.reason
        for k in range(cfg.n_layers):
            ok = bound.applicable
            last = k == cfg.n_layers - 1
            rows.append(SensitivityRow(
                n=n, layer=k + 1,
                measured_other=float(meas.other[k]), bound_other=float(bound.other[k]) if ok else None,
                measured_readout=float(meas.readout[k]),
                bound_readout=float(bound.readout[k]) if ok else None,
                measured_flipped=float(meas.flipped[k]),
                bound_flipped=float(bound.flipped[k]) if ok else None,
                output_change=meas.output if last else None,
                output_bound=bound.output if (ok and last) else None,
            ))
        if progress is not None:
            progress(n)
    if not rows:
        raise ValueError(f"no strings of the requested lengths {lengths} exist in the language")
    return SensitivityReport(rows=tuple(rows), bounds=tuple(bounds), applicable=applicable,
                             reason=reason, attention=cfg.attention)


def _check_size(encoder, n: int, n_strings: int) -> None:
    """Refuse a length the model cannot take (positions beyond n_ctx, beyond a construction's
    max_length) or whose smallest pass (one flipped copy of each string) exceeds the memory
    budget, before anything is allocated."""
    cfg = encoder.transformer.cfg
    if isinstance(encoder, TokenEncoder):
        T = n + len(encoder.prefix) + len(encoder.suffix)
        if cfg.positional != "none" and T > cfg.n_ctx:
            raise ValueError(f"lengths: length {n} needs {T} positions > n_ctx = {cfg.n_ctx}")
    else:
        check = getattr(encoder, "_check_length", None)
        if check is not None:
            check(n, "lengths")
        T = encoder.tokens(n) if callable(getattr(encoder, "tokens", None)) else n + 2
    L, H, d = cfg.n_layers, cfg.n_heads, cfg.d_model
    # base pass and one flipped copy per string: (B, H, T, T) scores ×3, the stream (L+1, B, T, d) ×3
    need = 8.0 * n_strings * T * (2 * 3 * H * T + 3 * (L + 1) * d + 2 * (cfg.d_mlp or 1))
    check_memory(need, f"flip_sensitivity at n = {n} ({n_strings} string(s))",
                 hint="use smaller lengths or fewer strings (n_strings)")
