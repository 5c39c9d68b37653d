"""Language and Task base classes: exact membership, samplers, a generative process.

A :class:`Language` L ⊆ Σ* over a finite alphabet Σ (a string of one-character symbols) has

- ``accepts(s)``: exact membership s ∈ L;
- ``sample(rng, count, length, positive)``: strings of exactly ``length`` symbols, all in L
  (positive) or all outside L (negative: half near-misses — one edit away from a positive
  string — and half drawn uniformly from the negatives);
- a *generative process for positives*: a Markov chain over a small state (parity bit,
  depth and stack, ...) that emits one symbol of Σ ∪ {EOS} per step and ends at EOS. It only
  ends in L, so every generated string is positive. ``next_symbol_distribution(prefix)`` is
  p*(· | prefix), the optimal next-symbol distribution, and ``generate`` samples the process
  exactly. A model's cross-entropy on next-symbol prediction is reported next to
  H(p*), its optimum.

Strings are handled internally as integer arrays ``ids`` of shape (count, n) with
ids[b, t] = index of the symbol in ``alphabet``; index |Σ| stands for EOS in distributions.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from ..memory import check_memory
from ..rules import check_int

EOS = "$"  # end-of-string symbol in next-symbol distributions (never in an alphabet)


class Language(ABC):
    """A formal language with a generative process for its positive strings."""

    name: str = "language"
    alphabet: str = ""

    def __init_subclass__(cls, **kwargs) -> None:
        """Every ``accepts`` refuses a non-string with a ValueError (never AttributeError)."""
        super().__init_subclass__(**kwargs)
        if "accepts" in cls.__dict__:
            cls.accepts = _checked_accepts(cls.__dict__["accepts"])

    # ------------------------------------------------------------------ to implement
    @abstractmethod
    def accepts(self, s: str) -> bool:
        """Exact membership s ∈ L."""

    @abstractmethod
    def accepts_ids(self, ids: np.ndarray) -> np.ndarray:
        """Vectorised membership: ids (count, n) -> bool (count,)."""

    @abstractmethod
    def _sample_positive_ids(self, rng: np.random.Generator, count: int, length: int) -> np.ndarray:
        """Positive strings of the given length as ids (count, length)."""

    @abstractmethod
    def _initial_state(self, count: int) -> Any:
        """State of the generative process before the first symbol, for ``count`` strings."""

    @abstractmethod
    def _probs(self, state: Any) -> np.ndarray:
        """p*(· | state): (count, |Σ| + 1), last column = EOS."""

    @abstractmethod
    def _advance(self, state: Any, sym: np.ndarray) -> Any:
        """State after emitting symbol indices sym (count,) (EOS never passed); may update
        ``state`` in place — callers never reuse a state after advancing it."""

    def supports(self, length: int, positive: bool) -> bool:
        """Whether L ∩ Σ^length (positive) or Σ^length \\ L (negative) is non-empty."""
        return length >= 0

    def _near_miss_ids(self, rng: np.random.Generator, pos: np.ndarray) -> np.ndarray:
        """Negatives one edit away from the positives ``pos`` (count, n).

        Default: substitute one random position by another symbol; strings that stay
        positive are retried, then replaced by uniform negatives.
        """
        out = pos.copy()
        todo = np.arange(len(pos))
        for _ in range(8):
            if len(todo) == 0 or pos.shape[1] == 0:
                break
            cand = _substitute(rng, pos[todo], len(self.alphabet))
            bad = self.accepts_ids(cand)
            out[todo[~bad]] = cand[~bad]
            todo = todo[bad]
        if len(todo):
            out[todo] = self._uniform_negative_ids(rng, len(todo), pos.shape[1])
        return out

    # ------------------------------------------------------------------ generic API
    @property
    def eos_index(self) -> int:
        return len(self.alphabet)

    def to_ids(self, strings: list[str] | str) -> np.ndarray:
        """Strings of one common length -> ids (count, n); ValueError on foreign symbols."""
        return strings_to_ids(self.alphabet, strings, self.name)

    def to_strings(self, ids: np.ndarray) -> list[str]:
        """ids (count, n) -> list of strings."""
        return ids_to_strings(self.alphabet, ids)

    def accepts_batch(self, strings: list[str]) -> np.ndarray:
        """Vectorised membership for strings of one common length -> bool (count,)."""
        return self.accepts_ids(self.to_ids(strings))

    def _check_length(self, length: int, positive: bool) -> None:
        if not isinstance(length, (int, np.integer)) or length < 0:
            raise ValueError(f"{self.name}: length must be an int >= 0, got {length!r}")
        if not self.supports(int(length), positive):
            kind = "positive" if positive else "negative"
            raise ValueError(f"{self.name}: there are no {kind} strings of length {length}")

    def sample_ids(self, rng: np.random.Generator, count: int, length: int, positive: bool) -> np.ndarray:
        """Like :meth:`sample` but returns ids (count, length)."""
        _check_rng(rng, f"{self.name}: rng")
        self._check_length(length, positive)
        count = check_int(count, f"{self.name}: count", min=0)
        # ids, a candidate copy and the membership scratch (int64), plus the sampler's own tables
        check_memory(3 * 8.0 * count * length, f"{self.name}: {count} strings of length {length}",
                     hint="use a smaller count or length")
        if positive:
            return self._sample_positive_ids(rng, count, length)
        n_near = count // 2 if self.supports(length, True) else 0
        near = self._near_miss_ids(rng, self._sample_positive_ids(rng, n_near, length)) if n_near else \
            np.zeros((0, length), dtype=np.int64)
        rand = self._uniform_negative_ids(rng, count - n_near, length)
        out = np.concatenate([near, rand])
        return out[rng.permutation(count)]

    def sample(self, rng: np.random.Generator, count: int, length: int, positive: bool) -> list[str]:
        """``count`` strings of exactly ``length`` symbols, all in L (positive) or all not in L.

        Negatives: ⌊count/2⌋ near-misses (one-symbol edits of positives, language-specific
        edits such as swapped bracket types), the rest uniform over Σ^length \\ L.
        Raises ValueError when no such string exists (e.g. odd-length Dyck positives).
        """
        return self.to_strings(self.sample_ids(rng, count, length, positive))

    def sample_mixed_ids(self, rng: np.random.Generator, count: int, length: int) -> np.ndarray:
        """``count`` strings of ``length`` symbols as ids (count, length): ⌈count/2⌉ members
        then the rest non-members when both exist at this length, all of the one class that
        exists otherwise, none ((0, length)) when neither does."""
        count = check_int(count, f"{self.name}: count", min=0)
        has_pos, has_neg = self.supports(length, True), self.supports(length, False)
        n_pos = ((count + 1) // 2 if has_neg else count) if has_pos else 0
        n_neg = count - n_pos if has_neg else 0
        parts = [self.sample_ids(rng, c, length, positive) for positive, c in ((True, n_pos), (False, n_neg)) if c]
        return np.concatenate(parts) if parts else np.zeros((0, length), dtype=np.int64)

    def sample_mixed(self, rng: np.random.Generator, count: int, length: int) -> list[str]:
        """:meth:`sample_mixed_ids` as strings."""
        return self.to_strings(self.sample_mixed_ids(rng, count, length))

    def _uniform_negative_ids(self, rng: np.random.Generator, count: int, length: int) -> np.ndarray:
        """Uniform over Σ^length \\ L by rejection (negatives are at least ~half of Σ^n here)."""
        out = np.zeros((count, length), dtype=np.int64)
        todo = np.arange(count)
        while len(todo):
            cand = rng.integers(0, len(self.alphabet), size=(len(todo), length))
            ok = ~self.accepts_ids(cand)
            out[todo[ok]] = cand[ok]
            todo = todo[~ok]
        return out

    # ------------------------------------------------------------ generative process
    def next_symbol_table(self, ids: np.ndarray) -> np.ndarray:
        """p*(· | x_<t) for t = 0..n along each string: (count, n + 1, |Σ| + 1).

        Row t is the distribution after the first t symbols (row 0: empty prefix).
        """
        count, n = ids.shape
        state = self._initial_state(count)
        table = np.empty((count, n + 1, len(self.alphabet) + 1))
        for t in range(n + 1):  # the process is a recurrence over positions
            table[:, t] = self._probs(state)
            if t < n:
                state = self._advance(state, ids[:, t])
        return table

    def next_symbol_distribution(self, prefix: str) -> dict[str, float]:
        """p*(a | prefix) for a ∈ Σ ∪ {EOS}; ValueError if the prefix has probability 0."""
        ids = self.to_ids([prefix])
        table = self.next_symbol_table(ids)[0]  # (n + 1, |Σ| + 1)
        if len(prefix) and (table[np.arange(len(prefix)), ids[0]] <= 0).any():
            raise ValueError(f"{self.name}: prefix {prefix!r} has probability 0 under the generative process")
        return {a: float(p) for a, p in zip(self.alphabet + EOS, table[-1])}

    def generate(self, rng: np.random.Generator, count: int, max_length: int = 1000) -> list[str]:
        """Sample ``count`` strings from the generative process (strings still running at
        ``max_length`` are cut there; the cut is a stopping time, so transition frequencies
        stay those of the process)."""
        state = self._initial_state(count)
        live = np.ones(count, dtype=bool)
        rows: list[np.ndarray] = []
        lengths = np.zeros(count, dtype=np.int64)
        for _ in range(max_length):
            if not live.any():
                break
            p = self._probs(state)  # (count, K + 1)
            p = np.where(live[:, None], p, np.concatenate([p[:, :-1], np.zeros((count, 1))], axis=1))
            total = p.sum(axis=1, keepdims=True)  # finished strings idle on the EOS-free process
            idle = np.r_[np.ones(p.shape[1] - 1), 0.0] / (p.shape[1] - 1)  # (only EOS left: any symbol)
            p = np.where(total > 0, p / np.where(total > 0, total, 1.0), idle)
            u = rng.random(count)[:, None]
            sym = (u > np.cumsum(p, axis=1)).sum(axis=1).clip(max=p.shape[1] - 1)
            ended = live & (sym == self.eos_index)
            live &= ~ended
            sym = np.where(ended, p[:, :-1].argmax(axis=1), sym)  # any symbol; these rows are done
            rows.append(sym)
            lengths += live
            state = self._advance(state, sym)
        if not rows:
            return [""] * count
        ids = np.stack(rows, axis=1)
        strings = self.to_strings(ids)
        return [s[:k] for s, k in zip(strings, lengths)]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(alphabet={self.alphabet!r})"


def _checked_accepts(accepts):
    def checked(self, s):
        if not isinstance(s, str):
            raise ValueError(f"{self.name}.accepts: expected a str, got {type(s).__name__}")  # noqa: TRY004
        return accepts(self, s)

    checked.__doc__, checked.__name__, checked.__qualname__ = accepts.__doc__, accepts.__name__, accepts.__qualname__
    return checked


def _check_rng(rng, name: str) -> None:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"{name} must be a numpy Generator (np.random.default_rng(seed)), got {type(rng).__name__}")


def _checked_sample_batch(sample_batch):
    def checked(self, generator, batch_size, length):
        _check_rng(generator, f"{self.name}: generator")
        batch_size = check_int(batch_size, f"{self.name}: batch_size", min=1)
        length = check_int(length, f"{self.name}: length", min=0)
        return sample_batch(self, generator, batch_size, length)

    checked.__doc__, checked.__name__ = sample_batch.__doc__, sample_batch.__name__
    checked.__qualname__ = sample_batch.__qualname__
    return checked


def strings_to_ids(alphabet: str, strings: list[str] | str, name: str = "strings") -> np.ndarray:
    """Strings of one common length over ``alphabet`` -> symbol indices (count, n).

    Any one-character Unicode symbols work (code points are looked up with a sorted table).
    ValueError names the foreign symbols or the mixed lengths.
    """
    if isinstance(strings, str):
        strings = [strings]
    lengths = {len(s) for s in strings}
    if len(lengths) > 1:
        raise ValueError(f"{name}: to_ids needs strings of one length, got lengths {sorted(lengths)}")
    n = lengths.pop() if lengths else 0
    codes = np.array([ord(c) for c in alphabet], dtype=np.int64)
    order = np.argsort(codes)
    raw = np.frombuffer("".join(strings).encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
    pos = np.searchsorted(codes[order], raw).clip(max=len(codes) - 1)
    found = codes[order][pos] == raw
    if not found.all():
        bad = sorted({chr(c) for c in raw[~found]})
        raise ValueError(f"{name}: symbols {bad} are not in the alphabet {alphabet!r}")
    return order[pos].reshape(len(strings), n)


def ids_to_strings(alphabet: str, ids: np.ndarray) -> list[str]:
    """Symbol indices (count, n) -> strings over ``alphabet``."""
    ids = np.asarray(ids)
    count, n = ids.shape
    codes = np.array([ord(c) for c in alphabet], dtype=np.uint32)
    text = codes[ids].tobytes().decode("utf-32-le")  # (count · n) characters
    return [text[i * n:(i + 1) * n] for i in range(count)]


def _substitute(rng: np.random.Generator, ids: np.ndarray, n_symbols: int) -> np.ndarray:
    """Replace one random position of each row by a different random symbol."""
    out = ids.copy()
    rows = np.arange(len(ids))
    pos = rng.integers(0, ids.shape[1], size=len(ids))
    shift = rng.integers(1, n_symbols, size=len(ids))
    out[rows, pos] = (ids[rows, pos] + shift) % n_symbols
    return out


class Task(ABC):
    """A supervised task on a language: ``sample_batch(generator, batch_size, length)``.

    Returns ``{"input": LongTensor (B, T), "output": FloatTensor (B, T, C), "mask":
    BoolTensor (B, T)}``: output[b, t] is the target distribution over C classes at
    position t, mask marks the scored positions.
    """

    name: str
    kind: str
    language: Language
    n_outputs: int

    def __init_subclass__(cls, **kwargs) -> None:
        """Every ``sample_batch`` checks generator, batch_size (≥ 1) and length (an int ≥ 0)."""
        super().__init_subclass__(**kwargs)
        if "sample_batch" in cls.__dict__ and not getattr(cls.__dict__["sample_batch"], "__isabstractmethod__", False):
            cls.sample_batch = _checked_sample_batch(cls.__dict__["sample_batch"])

    @abstractmethod
    def sample_batch(self, generator: np.random.Generator, batch_size: int, length: int) -> dict:
        ...

    @abstractmethod
    def valid_length(self, length: int) -> bool:
        """Whether batches of this string length can be drawn."""

    def n_tokens(self, length: int) -> int:
        """Sequence length T of a batch of strings of ``length`` symbols (n + 1: CLS or BOS)."""
        return length + 1

    def valid_lengths(self, lengths) -> list[int]:
        return [int(n) for n in lengths if self.valid_length(int(n))]
