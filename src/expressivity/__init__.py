"""expressivity: the theory of what transformers can and cannot compute, made executable.

Packages (imports point one way, see ARCHITECTURE in the README):
``transformer`` (the one model) ← ``cpwl`` (piecewise-linear math) ← ``compile`` (paper 1's
constructions) ← ``regions``; ``languages`` → ``train`` → ``constructions`` → ``limits``
(paper 2) → ``report`` → ``cli``.
"""

__version__ = "0.1.0"
