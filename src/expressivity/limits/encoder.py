"""How strings get into a model, once for every analysis in ``limits/``.

Every analysis takes an :class:`~expressivity.constructions.base.Encoder` — anything with
``.transformer``, ``.language`` and ``.encode(strings) -> Encoded(inputs, key_mask, read)``:
constructions (hand-built and compiled), trained checkpoints (:mod:`.trained`) and, for a
plain token-id :class:`Transformer`, the one adapter :class:`TokenEncoder` (symbol a of the
string → token ``symbols[a]``, optional fixed prefix/suffix tokens, output read at
``readout``). :func:`as_encoder` turns what the user passed into one of these.

What the analyses share lives here too, once:

- :func:`encode_ids` — symbol-index arrays (N, n) → :class:`Encoded`;
- :func:`layout` — where the string sits (token positions, found by :func:`symbol_positions`
  from the encodings of the K constant strings), the number of tokens T, the read position,
  and the table of every possible layer-0 vector y^(0) Lemma 5 maximises over. For a
  :class:`TokenEncoder` that table is W_E[v] + W_pos[t] for **every token v of the
  vocabulary** (R^(0) in Hahn's bound is a max over all inputs the model can be given, not only
  over the language's alphabet); for other encoders it is the K constant strings' y^(0);
- :func:`rows_per_pass` — the one batching rule: rows (strings, flipped copies, query blocks)
  per forward pass so that their float64 attention scores stay within :data:`SCORE_BUDGET`.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace

import numpy as np
import torch

from ..constructions.base import Encoded
from ..languages import Language, token_layout
from ..memory import chunk_rows
from ..model_kinds import kind_of, register
from ..rules import check_int
from ..transformer import Transformer

SCORE_BUDGET = 1 << 24  # bytes of float64 attention scores per forward pass (16 MB: stays cache-friendly)


def rows_per_pass(scores_per_row: float, total: int | None = None) -> int:
    """Rows per pass so that ``rows × scores_per_row`` float64 score entries fit :data:`SCORE_BUDGET`
    (≥ 1; ≤ ``total``): memory O(T²) per row, never O(N·T²)."""
    return chunk_rows(8.0 * scores_per_row, total=total, budget=SCORE_BUDGET)


_HOLD_A_TRANSFORMER = ("compiled", "construction", "trained", "encoder")  # kinds with a .transformer
_ENCODERS = ("construction", "trained", "encoder")  # kinds with their own .encode(strings)


def as_transformer(model) -> Transformer:
    """The model itself if it is a :class:`Transformer`, else its ``.transformer`` (an Encoder)."""
    kind = kind_of(model, default=None)
    if kind == "transformer":
        return model
    if kind in _HOLD_A_TRANSFORMER and kind_of(model.transformer, default=None) == "transformer":
        return model.transformer
    raise ValueError(f"model: expected a Transformer or a construction (an object with .transformer), "
                     f"got {type(model).__name__} {model!r:.40}")


def is_encoder(model) -> bool:
    """True for an Encoder (its own ``.encode(strings)``), False for a plain Transformer."""
    return kind_of(model, default=None) in _ENCODERS


@dataclass(frozen=True, eq=False)
class TokenEncoder:
    """A plain token-id :class:`Transformer` as an Encoder.

    Symbol a ∈ {0..K−1} at string position i becomes token ``symbols[a]`` at token position
    len(prefix) + i; ``prefix``/``suffix`` are fixed token ids (e.g. a CLS token); the output
    is read at token position ``readout`` (negative: from the end). ``symbols`` defaults to
    0..K−1 with K = |alphabet| of ``language`` (None: uniform strings, K = d_vocab).
    """

    transformer: Transformer
    language: Language | None = None
    symbols: tuple[int, ...] | None = None  # token id of each symbol
    prefix: tuple[int, ...] = ()  # fixed tokens before the string
    suffix: tuple[int, ...] = ()  # fixed tokens after the string
    readout: int = -1  # token position of the output
    _ids: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        t = self.transformer
        if not isinstance(t, Transformer):
            raise ValueError(f"TokenEncoder.transformer must be a Transformer, got {type(t).__name__}")
        V = t.cfg.d_vocab
        if V is None:
            raise ValueError("a continuous-input Transformer needs an encoder: pass a construction "
                             "object with .encode(strings)")
        _check_language(self.language)
        symbols = self.symbols
        if symbols is None:
            symbols = tuple(range(len(self.language.alphabet) if self.language is not None else V))
        for name, ids in (("symbols", symbols), ("prefix", self.prefix), ("suffix", self.suffix)):
            ids = tuple(check_int(i, f"TokenEncoder.{name}", min=0) for i in ids)
            bad = [i for i in ids if i >= V]
            if bad:
                raise ValueError(f"TokenEncoder.{name}: token ids {bad} are outside the model's vocabulary [0, {V})")
            object.__setattr__(self, name, ids)
        if len(self.symbols) < 2:
            raise ValueError(f"TokenEncoder.symbols needs >= 2 token ids (flipping needs 2 symbols), "
                             f"got {self.symbols}")
        if self.language is not None and len(self.symbols) != len(self.language.alphabet):
            raise ValueError(f"TokenEncoder.symbols: {len(self.symbols)} token ids for the "
                             f"{len(self.language.alphabet)} symbols of {self.language.name}")
        object.__setattr__(self, "readout", check_int(self.readout, "TokenEncoder.readout"))
        object.__setattr__(self, "_ids", np.asarray(self.symbols, dtype=np.int64))

    @property
    def K(self) -> int:
        return len(self.symbols)

    def encode(self, strings: list[str]) -> Encoded:
        if self.language is None:
            raise ValueError("TokenEncoder without a language encodes symbol indices (encode_ids), not strings")
        return self.encode_ids(self.language.to_ids(list(strings)))

    def encode_ids(self, ids: np.ndarray) -> Encoded:
        """Symbol indices (N, n) → token ids (N, T), read at ``readout``."""
        ids = np.asarray(ids, dtype=np.int64)
        N, n = ids.shape
        T = n + len(self.prefix) + len(self.suffix)
        if not -T <= self.readout < T:
            raise ValueError(f"TokenEncoder.readout = {self.readout} is not a token position of a "
                             f"length-{n} input ({T} tokens)")
        x = torch.as_tensor(token_layout(self._ids[ids], self.prefix, self.suffix))
        return Encoded(x, None, torch.full((N,), self.readout % T, dtype=torch.long))


register("encoder", TokenEncoder)


def _check_language(language) -> None:
    if language is not None and not isinstance(language, Language):
        raise ValueError(f"language: expected a Language (e.g. languages.get('parity')) or None, "
                         f"got {type(language).__name__} {language!r:.40}")


def as_encoder(model, language=None, alphabet_size: int | None = None):
    """(encoder, language) an analysis works on. An Encoder passes through; ``language``
    (default: the encoder's own) must be over its alphabet. A plain token-id Transformer
    becomes a :class:`TokenEncoder` over ``language`` (or ``alphabet_size`` symbols 0..K−1,
    default all token ids; ``language`` None then: uniform strings)."""
    _check_language(language)
    if isinstance(model, TokenEncoder):
        if language is None or language is model.language:
            return model, model.language
        model = replace(model, language=language, symbols=None if model.language is None and model.K != len(
            language.alphabet) else model.symbols)
        return model, language
    if is_encoder(model):
        as_transformer(model)
        own = getattr(model, "language", None)
        if language is None:
            if own is None:
                raise ValueError("language: a construction needs a language (its alphabet defines the flips)")
            return model, own
        if own is not None and not set(language.alphabet) <= set(own.alphabet):
            raise ValueError(f"language: its alphabet {language.alphabet!r} is not the model's "
                             f"{own.alphabet!r}; pass a language over the model's alphabet (or None)")
        return model, language
    t = as_transformer(model)
    if t.cfg.d_vocab is None:
        raise ValueError("a continuous-input Transformer needs an encoder: pass a construction "
                         "object with .encode(strings)")
    if language is not None:
        K = len(language.alphabet)
    else:
        K = check_int(alphabet_size, "alphabet_size", min=2) if alphabet_size is not None else t.cfg.d_vocab
    if K > t.cfg.d_vocab:
        raise ValueError(f"alphabet of {K} symbols but the model has d_vocab = {t.cfg.d_vocab}")
    return TokenEncoder(t, language, tuple(range(K))), language


def alphabet_size(encoder, language=None) -> int:
    """K: the number of symbols strings are drawn from (``language``: default the encoder's)."""
    language = language if language is not None else encoder.language
    K = len(language.alphabet) if language is not None else encoder.K
    if K < 2:
        raise ValueError("flipping needs an alphabet of at least 2 symbols")
    return K


def encode_ids(encoder, ids: np.ndarray, language=None) -> Encoded:
    """Symbol indices (N, n) over ``language``'s alphabet (default: the encoder's) → :class:`Encoded`."""
    if isinstance(encoder, TokenEncoder):  # ids are symbol indices whatever the language
        return encoder.encode_ids(ids)
    language = language if language is not None else encoder.language
    return encoder.encode(language.to_strings(np.asarray(ids)))


def constant_strings(K: int, n: int) -> np.ndarray:
    """The K constant strings a^n as symbol indices: (K, n)."""
    return np.repeat(np.arange(K)[:, None], n, axis=1)


def symbol_positions(x: torch.Tensor, n: int) -> torch.Tensor:
    """Token positions holding the string: those where the encodings (inputs or embeddings)
    x (K, T[, d]) of the K constant strings differ. (n,) long; ValueError unless exactly n."""
    diff = x[1:] != x[:1]
    if diff.dim() == 3:
        diff = diff.any(-1)
    positions = torch.nonzero(diff.any(0)).flatten()
    if positions.numel() != n:
        raise ValueError(f"could not locate the {n} string positions in the construction's encoding "
                         f"(found {positions.numel()} positions that depend on the symbol)")
    return positions


@dataclass(frozen=True)
class Layout:
    """Where a length-n string sits in what the transformer reads."""

    positions: torch.Tensor  # (n,) token position of each string symbol
    n_tokens: int  # T
    read: int  # token position whose output is read
    table: torch.Tensor  # (V', T, d) float64: every possible y^(0) row (see :func:`layout`)
    rows: np.ndarray  # (K,) row of ``table`` holding symbol a


def layout(encoder, n: int, language=None, table: bool = True) -> Layout:
    """The :class:`Layout` of length-n strings over ``language`` (default: the encoder's), from
    the encodings of the K constant strings. ``table=False`` skips the y^(0) table (and the
    float64 copy of the model it needs)."""
    K = alphabet_size(encoder, language)
    enc = encode_ids(encoder, constant_strings(K, n), language)
    read = torch.as_tensor(enc.read).flatten()
    if read.numel() and bool((read != read[0]).any()):
        raise ValueError("the construction reads different positions for strings of one length")
    r, T = int(read[0]) if read.numel() else -1, enc.inputs.shape[1]
    t = as_transformer(encoder)
    if isinstance(encoder, TokenEncoder):  # rows: the symbols' token ids in the full-vocabulary table
        positions = symbol_positions(enc.inputs, n)
        emb = token_embedding_table(t, T) if table else torch.zeros(0)
        return Layout(positions, T, r, emb, encoder._ids)
    emb = embed64(t, enc.inputs)  # (K, T, d)
    return Layout(symbol_positions(emb, n), T, r, emb if table else torch.zeros(0), np.arange(K))


def token_embedding_table(model: Transformer, n: int) -> torch.Tensor:
    """Every possible y^(0) of a token-id model: (V, n, d) with [v, t] = W_E[v] + W_pos[t]
    (the model's own ``embed`` of token v at every position t, in float64)."""
    V = model.W_E.shape[0]
    return embed64(model, torch.arange(V)[:, None].expand(V, n))


def embed64(t: Transformer, inputs: torch.Tensor) -> torch.Tensor:
    """y^(0) of ``inputs`` computed in float64 (on a copy of the model)."""
    m64 = copy.deepcopy(t).to(torch.float64)
    x = inputs if not inputs.is_floating_point() else inputs.to(torch.float64)
    return m64.embed(x).detach()
