"""The 18 languages of the FLaRe benchmark as recognizers (Butoi et al. 2025, ICLR, Table 1).

"Training Neural Networks as Recognizers of Formal Languages" (Butoi, Khalighinejad, Svete,
Valvoda, Cotterell, DuSell; code rycolab/neural-network-recognizers, data rycolab/flare)
trains networks as binary classifiers of strings. Each language is registered as
``flare.<name>`` in :data:`expressivity.languages.REGISTRY` (kinds ``recognition`` and
``next_symbol``) and is a :class:`~.base.FlareLanguage`: an exact membership oracle, their
positive sampler (length-controlled from the DFA for the regular ones, :mod:`..regular.binning`),
their negatives (uniform strings and perturbed positives, :mod:`.perturb`), the exact
next-symbol sets, and log P(s) where they define one.

| class | languages |
|---|---|
| R (regular) | ``even_pairs``, ``repeat_01``, ``parity``, ``cycle_navigation``, ``modular_arithmetic_simple``, ``dyck_k_m`` (k = 2, m = 3), ``first`` |
| DCF | ``majority``, ``stack_manipulation``, ``marked_reversal`` |
| CF | ``unmarked_reversal`` |
| CS | ``marked_copy``, ``missing_duplicate_string``, ``odds_first``, ``binary_addition``, ``binary_multiplication``, ``compute_sqrt``, ``bucket_sort`` |

Definitions, alphabets and examples: :mod:`.regular`, :mod:`.strings`,
:mod:`.stack_manipulation`, :mod:`.arithmetic`; their splits: :mod:`.dataset`.
"""

from __future__ import annotations

from .arithmetic import ARITHMETIC
from .base import LEVELS, FlareDFALanguage, FlareLanguage
from .regular import REGULAR
from .stack_manipulation import StackManipulation
from .strings import STRINGS

FLARE: dict[str, type[FlareLanguage]] = {cls.name: cls for cls in (*REGULAR, *STRINGS, StackManipulation,
                                                                    *ARITHMETIC)}
ORDER = ("flare.even_pairs", "flare.repeat_01", "flare.parity", "flare.cycle_navigation",
         "flare.modular_arithmetic_simple", "flare.dyck_k_m", "flare.first", "flare.majority",
         "flare.stack_manipulation", "flare.marked_reversal", "flare.unmarked_reversal", "flare.marked_copy",
         "flare.missing_duplicate_string", "flare.odds_first", "flare.binary_addition",
         "flare.binary_multiplication", "flare.compute_sqrt", "flare.bucket_sort")  # their Table 1's order
assert set(ORDER) == set(FLARE) and len(ORDER) == 18
# their class → ours in languages.LEVELS (deterministic or not, context-free is one level there)
CHOMSKY = {"R": "regular", "DCF": "context-free", "CF": "context-free", "CS": "context-sensitive"}
PREFIX = "flare."


def unknown_flare(name: str) -> str:
    """The one-line error for an unknown ``flare.<name>``."""
    return f"unknown FLaRe language {name!r}; choose one of: {', '.join(ORDER)}"


__all__ = ["CHOMSKY", "FLARE", "LEVELS", "ORDER", "PREFIX", "FlareDFALanguage", "FlareLanguage", "unknown_flare"]
