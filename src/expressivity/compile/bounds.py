"""The round-off slacks of the compiler, in one place (float64; relative, as each says).

``regions`` may not import ``compile``: its copy of :data:`DOMAIN_SLACK`
(``regions.tolerances.COMPILE_DOMAIN_SLACK``) is kept equal by a test.
"""

from __future__ import annotations

DOMAIN_SLACK = 1e-9
"""An input may leave the compile domain [lo, hi] by DOMAIN_SLACK·(1 + max(|lo|, |hi|)) per
coordinate (a corner computed in float64 is still inside)."""

STATED_BOUND_RTOL = 1e-9
"""A compile record's softmax ``output_error`` may be below the bound recomputed from its net
and λ by this fraction of it (the same sum in another order), not more."""

M_SAFETY_REL = 1e-6
"""Slack on every interval bound of the big-M gadgets, relative to the bound …"""

M_SAFETY_LAYER = 1e-9
"""… plus this fraction of the layer's largest bound (for a piece whose bounds are ≈ 0)."""
