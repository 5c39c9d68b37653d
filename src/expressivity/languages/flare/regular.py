"""FLaRe's regular languages (Butoi et al. 2025, Table 1, class R), each given by its DFA.

| name | language | alphabet | ours where the definition is the same |
|---|---|---|---|
| ``flare.even_pairs`` | ε and the strings whose first and last symbols agree (= an even number of ``01``/``10`` pairs) | ``01`` | ``even_pairs`` class 0 (n ≥ 1) |
| ``flare.repeat_01`` | (01)* | ``01`` | — (``tomita2`` is (10)*) |
| ``flare.parity`` | an odd number of 1s | ``01`` | ``parity`` (its DFA) |
| ``flare.cycle_navigation`` | moves ``<`` (left), ``=`` (stay), ``>`` (right) on a cycle of 5 from 0, then the final position as a digit | ``<=>01234`` | ``cycle_navigation`` (moves ``-0+``) |
| ``flare.modular_arithmetic_simple`` | d (o d)* ``=`` r: digits 0–4, o ∈ {+, −, ·}, evaluated **left to right** (no precedence) mod 5, r the value | ``01234+-*=`` | — (``modular_arithmetic`` gives · precedence) |
| ``flare.dyck_k_m`` | Dyck-(k, m): balanced brackets of k types, depth ≤ m (theirs: k = 2, m = 3) | ``()[]`` (k = 2) | ``dyck`` with ``max_depth=m`` (its DFA) |
| ``flare.first`` | the first symbol is 1 | ``01`` | ``first`` (its DFA) |

Examples: even_pairs ``0110`` in, ``01`` out; cycle_navigation ``>>=<1`` in (position 1), ``>0``
out; modular_arithmetic_simple ``1+2*3=4`` in ((1 + 2)·3 = 9 ≡ 4), ``1+2*3=2`` out.
"""

from __future__ import annotations

from ..dyck import PAIRS
from ..first import First
from ..function import check_int
from ..parity import Parity
from ..regular.automaton import DFA, stack_dfa
from .base import FlareDFALanguage

_MOD = 5  # FLaRe's modulus (cycle navigation, modular arithmetic)


class EvenPairs(FlareDFALanguage):
    name = "flare.even_pairs"
    alphabet = "01"
    flare_dir = "even-pairs"

    def _make_dfa(self):
        # 0: ε; 1: starts with 0, ends with 0; 2: starts 0, ends 1; 3: starts 1, ends 1; 4: starts 1, ends 0
        return DFA(self.alphabet, [[1, 3], [1, 2], [1, 2], [4, 3], [4, 3]], [True, True, False, True, False])


class Repeat01(FlareDFALanguage):
    name = "flare.repeat_01"
    alphabet = "01"
    flare_dir = "repeat-01"

    def _make_dfa(self):
        return DFA.from_partial(self.alphabet, {(0, "0"): 1, (1, "1"): 0}, [0], 2)


class FlareParity(FlareDFALanguage):
    name = "flare.parity"
    alphabet = "01"
    flare_dir = "parity"

    def _make_dfa(self):
        return Parity().dfa


class CycleNavigation(FlareDFALanguage):
    name = "flare.cycle_navigation"
    alphabet = "<=>01234"
    flare_dir = "cycle-navigation"

    def _make_dfa(self):
        moves = {}
        for i in range(_MOD):
            moves[(i, "<")], moves[(i, "=")], moves[(i, ">")] = (i - 1) % _MOD, i, (i + 1) % _MOD
            moves[(i, str(i))] = _MOD  # the final position, written as a digit
        return DFA.from_partial(self.alphabet, moves, [_MOD], _MOD + 1)


class ModularArithmeticSimple(FlareDFALanguage):
    name = "flare.modular_arithmetic_simple"
    alphabet = "01234+-*="
    flare_dir = "modular-arithmetic-simple"

    def _make_dfa(self):
        ops = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}
        start, value, after_op, check = 0, 1, 1 + _MOD, 1 + _MOD + 3 * _MOD  # state blocks
        final = check + _MOD
        moves = {}
        for d in range(_MOD):
            moves[(start, str(d))] = value + d
        for v in range(_MOD):
            for j, (op, f) in enumerate(ops.items()):
                moves[(value + v, op)] = after_op + 3 * v + j
                for d in range(_MOD):
                    moves[(after_op + 3 * v + j, str(d))] = value + f(v, d) % _MOD
            moves[(value + v, "=")] = check + v
            moves[(check + v, str(v))] = final
        return DFA.from_partial(self.alphabet, moves, [final], final + 1)


class DyckKM(FlareDFALanguage):
    name = "flare.dyck_k_m"
    flare_dir = "dyck-2-3"

    def __init__(self, k: int = 2, m: int = 3) -> None:
        self.k = check_int(self.name, "k", k, 1, len(PAIRS))
        self.m = check_int(self.name, "m", m, 1)
        self.alphabet = "".join(PAIRS[: self.k])
        self.flare_dir = f"dyck-{self.k}-{self.m}"
        self.tokens = {f"{side}{t}": PAIRS[t][j] for t in range(self.k) for j, side in enumerate("()")}
        super().__init__()

    def _make_dfa(self):
        return stack_dfa(list(PAIRS[: self.k]), self.m)

    def __repr__(self) -> str:
        return f"DyckKM(k={self.k}, m={self.m})"


class FlareFirst(FlareDFALanguage):
    name = "flare.first"
    alphabet = "01"
    flare_dir = "first"

    def _make_dfa(self):
        return First().dfa


REGULAR = (EvenPairs, Repeat01, FlareParity, CycleNavigation, ModularArithmeticSimple, DyckKM, FlareFirst)
