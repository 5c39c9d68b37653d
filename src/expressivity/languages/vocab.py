"""Tokenisation: symbols of an alphabet plus the special tokens PAD, BOS, EOS, CLS.

Token ids: PAD = 0, BOS = 1, EOS = 2, CLS = 3, then the alphabet's symbols in order (4, 5, …).
:func:`token_layout` is the one writer of a batch's token layout (fixed tokens around the
string's): the tasks (s CLS, BOS s, s EOS CLS^m), the hand-built constructions (BOS^k s CLS)
and the limits' token-id adapter (any prefix and suffix) all write through it.
Torch appears in ``languages`` only at the task boundary: here (token tensors) and in
:mod:`.tasks` (the batches a task hands to training); the languages themselves are numpy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

PAD, BOS, EOS_TOKEN, CLS = 0, 1, 2, 3
SPECIALS = ("<pad>", "<bos>", "<eos>", "<cls>")


def token_layout(tokens, prefix=(), suffix=()) -> np.ndarray:
    """prefix, t_1 … t_n, suffix for each row of token ids ``tokens`` (B, n): an int64 array
    (B, len(prefix) + n + len(suffix)), e.g. ``token_layout(vocab.ids_of(ids), suffix=(CLS,))``.

    >>> token_layout(np.array([[4, 5], [5, 5]]), prefix=(BOS,), suffix=(CLS,)).tolist()
    [[1, 4, 5, 3], [1, 5, 5, 3]]
    """
    tokens = np.asarray(tokens, dtype=np.int64)
    if tokens.ndim != 2:
        raise ValueError(f"token_layout: tokens must be (batch, length), got shape {tokens.shape}")
    B, n, k = len(tokens), tokens.shape[1], len(prefix)
    out = np.empty((B, k + n + len(suffix)), dtype=np.int64)  # filled in place: fewer numpy calls than concatenating
    out[:, :k] = prefix
    out[:, k:k + n] = tokens
    out[:, k + n:] = suffix
    return out


@dataclass(frozen=True)
class Vocab:
    """Token ids for ``alphabet`` (one-character symbols) and the four special tokens."""

    alphabet: str

    def __post_init__(self) -> None:
        if len(set(self.alphabet)) != len(self.alphabet) or not self.alphabet:
            raise ValueError(f"Vocab.alphabet must be non-empty distinct symbols, got {self.alphabet!r}")

    @property
    def tokens(self) -> tuple[str, ...]:
        return SPECIALS + tuple(self.alphabet)

    def __len__(self) -> int:
        return len(SPECIALS) + len(self.alphabet)

    def ids_of(self, symbol_ids: np.ndarray) -> np.ndarray:
        """Alphabet indices -> token ids (shift by the number of specials)."""
        return np.asarray(symbol_ids) + len(SPECIALS)

    def encode(self, strings: list[str], bos: bool = False, eos: bool = False, cls: bool = False) -> torch.Tensor:
        """Strings -> LongTensor (B, T), right-padded with PAD; optional BOS / EOS / CLS.

        Order: [BOS] s_1 … s_n [EOS] [CLS] <pad>…
        """
        index = {c: i + len(SPECIALS) for i, c in enumerate(self.alphabet)}
        rows = []
        for s in strings:
            try:
                row = [index[c] for c in s]
            except KeyError as exc:
                raise ValueError(f"symbol {exc.args[0]!r} is not in the alphabet {self.alphabet!r}") from None
            rows.append(([BOS] if bos else []) + row + ([EOS_TOKEN] if eos else []) + ([CLS] if cls else []))
        T = max((len(r) for r in rows), default=0)
        out = torch.full((len(rows), T), PAD, dtype=torch.long)
        for b, r in enumerate(rows):
            out[b, : len(r)] = torch.tensor(r, dtype=torch.long)
        return out

    def decode(self, ids: torch.Tensor) -> list[str]:
        """LongTensor (B, T) -> strings (special tokens dropped)."""
        shift = len(SPECIALS)
        return ["".join(self.alphabet[i - shift] for i in row if i >= shift) for row in ids.tolist()]
