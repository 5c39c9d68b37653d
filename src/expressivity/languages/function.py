"""Function tasks: an exact map f from input strings to a class or an output string.

The tasks of the Chomsky-hierarchy benchmark (Delétang et al. 2023) are functions, not
languages: the model reads an input string s ∈ Σⁿ and must produce f(s).

- :class:`Classification`: f(s) ∈ {0, …, C−1} (parity check, modular arithmetic, …);
- :class:`Transduction`: f(s) is a string over an output alphabet Γ (reverse string,
  binary addition, …), read at ``output_length(n)`` positions after the input. Tasks whose
  output length varies with s (``terminated = True``) end it with an END class (the last
  class); positions after END are not scored.

Each task has

- ``output(s)``: the exact oracle, plain Python, written for clarity; ValueError when s is
  not a valid input of the task (e.g. a malformed arithmetic expression);
- ``sample_ids(rng, count, length)`` / ``sample(rng, count, length)``: inputs of exactly
  ``length`` symbols drawn from the task's input distribution (as in the benchmark), using
  only ``rng``; ``sample`` pairs each input with its output;
- ``outputs_ids(ids)``: the outputs of a batch of inputs, vectorised where it matters
  (default: the oracle on each string). Classification: (count,) ints; transduction:
  (count, output_length(n)) class ids, −1 on unscored positions;
- ``supports(length)``: whether inputs of that length exist (e.g. odd lengths only for
  modular arithmetic).

"Length" is always the number of input symbols n, as in the benchmark.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from .. import rules
from .base import ids_to_strings, strings_to_ids


class FunctionTask(ABC):
    """An exact function of the input string; see the module docstring."""

    name: str = "function"
    alphabet: str = ""  # input symbols, one character each
    kind: str = ""  # "classification" | "transduction": the only task kind it supports

    @abstractmethod
    def output(self, s: str):
        """f(s), exact; ValueError if s is not a valid input."""

    @abstractmethod
    def _sample_ids(self, rng: np.random.Generator, count: int, length: int) -> np.ndarray:
        """Inputs (count, length) as symbol indices."""

    def supports(self, length: int) -> bool:
        """Whether inputs of ``length`` symbols exist."""
        return length >= 1

    # ------------------------------------------------------------------ generic API
    def to_ids(self, strings: list[str] | str) -> np.ndarray:
        return strings_to_ids(self.alphabet, strings, self.name)

    def to_strings(self, ids: np.ndarray) -> list[str]:
        return ids_to_strings(self.alphabet, ids)

    def _check(self, count, length) -> None:
        if not isinstance(length, (int, np.integer)) or isinstance(length, bool) or length < 0:
            raise ValueError(f"{self.name}: length must be an int >= 0, got {length!r}")
        if not self.supports(int(length)):
            raise ValueError(f"{self.name}: there are no inputs of length {length}")
        if not isinstance(count, (int, np.integer)) or count < 0:
            raise ValueError(f"{self.name}: count must be an int >= 0, got {count!r}")

    def sample_ids(self, rng: np.random.Generator, count: int, length: int) -> np.ndarray:
        """``count`` inputs of exactly ``length`` symbols: ids (count, length)."""
        self._check(count, length)
        return self._sample_ids(rng, int(count), int(length))

    def sample(self, rng: np.random.Generator, count: int, length: int) -> list[tuple[str, object]]:
        """``count`` pairs (input, f(input)), inputs of exactly ``length`` symbols."""
        strings = self.to_strings(self.sample_ids(rng, count, length))
        return [(s, self.output(s)) for s in strings]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(alphabet={self.alphabet!r})"


class Classification(FunctionTask):
    """f(s) ∈ {0, …, n_classes − 1}, read at a CLS token after the input."""

    kind = "classification"
    n_classes: int = 2

    def outputs_ids(self, ids: np.ndarray) -> np.ndarray:
        """Classes of a batch of inputs: (count,) int64."""
        return np.array([self.output(s) for s in self.to_strings(ids)], dtype=np.int64)


class Transduction(FunctionTask):
    """f(s) a string over ``output_alphabet``, read at ``output_length(n)`` positions.

    With ``terminated`` the output is f(s) followed by END (class ``len(output_alphabet)``)
    and unscored positions up to ``output_length(n)``; otherwise |f(s)| = output_length(n).
    """

    kind = "transduction"
    output_alphabet: str = "01"
    terminated: bool = False

    @abstractmethod
    def output_length(self, length: int) -> int:
        """Number of output positions for inputs of ``length`` symbols."""

    @property
    def n_classes(self) -> int:
        return len(self.output_alphabet) + int(self.terminated)

    @property
    def end_index(self) -> int:
        """Class id of END (only for terminated tasks)."""
        return len(self.output_alphabet)

    def encode_outputs(self, outputs: list[str], length: int) -> np.ndarray:
        """Output strings -> class ids (count, output_length(length)), END appended when
        ``terminated``, −1 on the unscored positions after it."""
        m = self.output_length(length)
        out = np.full((len(outputs), m), -1, dtype=np.int64)
        for b, y in enumerate(outputs):
            row = list(strings_to_ids(self.output_alphabet, [y], self.name)[0]) if y else []
            if self.terminated:
                row.append(self.end_index)
            if len(row) > m:
                raise ValueError(f"{self.name}: output {y!r} does not fit in {m} positions")
            out[b, : len(row)] = row
        return out

    def outputs_ids(self, ids: np.ndarray) -> np.ndarray:
        """Targets of a batch of inputs: (count, output_length(n)) class ids, −1 = unscored."""
        return self.encode_outputs([self.output(s) for s in self.to_strings(ids)], ids.shape[1])


class DigitRearrangement(Transduction):
    """A transduction that rearranges s over the digits 0…vocab_size−1 into a string of the
    same length n (reverse string, odds first, bucket sort): inputs uniform over Σⁿ, output
    alphabet = input alphabet. Subclasses give the string oracle ``output(s)`` and its batch
    form ``rearrange_ids(ids)`` (B, n) → (B, n), written separately so each checks the other."""

    default_vocab_size = 2

    def __init__(self, vocab_size: int | None = None) -> None:
        size = self.default_vocab_size if vocab_size is None else vocab_size
        self.vocab_size = check_int(self.name, "vocab_size", size, 2, 10)
        self.alphabet = self.output_alphabet = "0123456789"[: self.vocab_size]

    def output_length(self, length: int) -> int:
        return length

    def rearrange_ids(self, ids: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _sample_ids(self, rng, count, length):
        return uniform_ids(rng, count, length, self.vocab_size)

    def outputs_ids(self, ids):
        return self.rearrange_ids(ids)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(vocab_size={self.vocab_size})"


def uniform_ids(rng: np.random.Generator, count: int, length: int, n_symbols: int) -> np.ndarray:
    """Uniform strings: ids (count, length) with entries in [0, n_symbols)."""
    return rng.integers(0, n_symbols, size=(count, length))


def check_int(name: str, param: str, value, lo: int, hi: int | None = None) -> int:
    """``value`` as an int in [lo, hi] by the shared rule (:func:`expressivity.rules.check_int`);
    the one-line ValueError names the task and the parameter."""
    return rules.check_int(value, f"{name}: {param}", min=lo, max=hi)
