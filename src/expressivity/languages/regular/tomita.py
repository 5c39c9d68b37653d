"""The seven Tomita grammars (Tomita 1982; as used by Bhattamishra et al. 2020), alphabet ``01``.

| name | language | example in / out |
|---|---|---|
| ``tomita1`` | 1* | ``111`` in, ``101`` out |
| ``tomita2`` | (10)* | ``1010`` in, ``1001`` out |
| ``tomita3`` | no maximal run of an odd number of 1s is directly followed by a maximal run of an odd number of 0s | ``1100``, ``100`` in; ``10``, ``11101`` out |
| ``tomita4`` | no ``000`` substring | ``1001`` in, ``10001`` out |
| ``tomita5`` | even number of 0s and even number of 1s | ``0110`` in, ``011`` out |
| ``tomita6`` | #₀ − #₁ ≡ 0 (mod 3) | ``000``, ``01`` in; ``0`` out |
| ``tomita7`` | 0*1*0*1* | ``0110`` in, ``1010`` out |

ε is in every Tomita language. Each is a :class:`~.dfa.DFALanguage`: exact membership by its
DFA, uniform fixed-length positives and negatives, and the DFA generative process for
next-symbol prediction (end with probability ``p_end`` in accepting states). Length n = the
number of bits; lengths without positives (e.g. odd n for Tomita 2) or without negatives
(n ≤ 2 for Tomita 4) are reported by ``supports``.
"""

from __future__ import annotations

from .dfa import DFALanguage

_DEAD = -1  # placeholder replaced by the index of the dead state


def _table(rows: list[tuple[int, int]]) -> list[list[int]]:
    """Transitions (on 0, on 1) per state; _DEAD entries go to an added absorbing state."""
    dead = len(rows)
    return [[dead if q == _DEAD else q for q in row] for row in rows] + [[dead, dead]]


class Tomita1(DFALanguage):
    name = "tomita1"
    alphabet = "01"
    delta = _table([(_DEAD, 0)])
    accepting = [True, False]


class Tomita2(DFALanguage):
    name = "tomita2"
    alphabet = "01"
    delta = _table([(_DEAD, 1), (0, _DEAD)])  # 0: after (10)*, 1: after (10)*1
    accepting = [True, False, False]


class Tomita3(DFALanguage):
    name = "tomita3"
    alphabet = "01"
    # 0: even 1-run (or 0s after one); 1: odd 1-run; 2: even 0-run after an odd 1-run;
    # 3: odd 0-run after an odd 1-run (a 1 now would seal the forbidden pattern)
    delta = _table([(0, 1), (3, 0), (3, 1), (2, _DEAD)])
    accepting = [True, True, True, False, False]


class Tomita4(DFALanguage):
    name = "tomita4"
    alphabet = "01"
    delta = _table([(1, 0), (2, 0), (_DEAD, 0)])  # state = number of trailing 0s
    accepting = [True, True, True, False]


class Tomita5(DFALanguage):
    name = "tomita5"
    alphabet = "01"
    delta = [[1, 2], [0, 3], [3, 0], [2, 1]]  # state = 2·(#₁ mod 2) + (#₀ mod 2)
    accepting = [True, False, False, False]


class Tomita6(DFALanguage):
    name = "tomita6"
    alphabet = "01"
    delta = [[1, 2], [2, 0], [0, 1]]  # state = (#₀ − #₁) mod 3
    accepting = [True, False, False]


class Tomita7(DFALanguage):
    name = "tomita7"
    alphabet = "01"
    delta = _table([(0, 1), (2, 1), (2, 3), (_DEAD, 3)])  # state = blocks of 0*1*0*1* entered
    accepting = [True, True, True, True, False]


TOMITA = {cls.name: cls for cls in (Tomita1, Tomita2, Tomita3, Tomita4, Tomita5, Tomita6, Tomita7)}
