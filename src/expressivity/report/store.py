"""The report's view of the one results store (:class:`expressivity.runs.store.Store`).

:class:`Store` is the training :class:`~expressivity.train.ResultStore` (so the training
claims' runs land in the same ``runs``/``results`` tables the ``results`` command reads) plus
judged claims: one row per (claim id, budget) of this code version. Only judged results
("holds" / "violated") are stored; "not applicable" and "incomplete" are measured again next
time. The work units of split claims are stored by ``reproduce`` as each finishes
(``put_unit``), so an interrupted run resumes at unit granularity.
"""

from __future__ import annotations

from ..train.store import ResultStore
from .claims import Claim, ClaimSpec

STORED = ("holds", "violated")


class Store(ResultStore):
    """``Store(path, reset=False)``: get/put finished claims (and everything a ResultStore does)."""

    def get(self, spec: ClaimSpec, size: str) -> tuple[Claim, bytes | None] | None:
        hit = self.get_claim(spec.id, size)
        return None if hit is None else (Claim.from_json(hit[0]), hit[1])

    def put(self, spec: ClaimSpec, claim: Claim, figure: bytes | None) -> bool:
        """Store a judged claim; returns False (and stores nothing) unless it holds or is violated."""
        if claim.status not in STORED:
            return False
        self.put_claim(spec.id, claim.size, claim.status, claim.to_json(), figure)
        return True

    def count(self, size: str | None = None) -> int:
        return self.count_claims(size)
