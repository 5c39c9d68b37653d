"""expressivity: the theory of what transformers can and cannot compute, made executable.

Packages (imports point one way, see ARCHITECTURE in the README):
``transformer`` (the one model) ← ``cpwl`` (piecewise-linear math) ← ``compile`` (paper 1's
constructions) ← ``regions``; ``languages`` → ``train`` → ``constructions`` → ``limits``
(paper 2) → ``report`` → ``cli``.
"""

__version__ = "0.1.0"

import logging as _logging

# Long runs log progress (one INFO line per finished unit, run or claim) to "expressivity.*"
# loggers; a program shows them by configuring logging (the command line does). Until then
# nothing is printed, not even warnings through logging's last-resort handler.
_logging.getLogger(__name__).addHandler(_logging.NullHandler())
