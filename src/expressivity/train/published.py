"""Published per-task scores of the benchmarks we reproduce, read from ``train/data/*.json``.

``deletang`` — Delétang et al. 2023, "Neural Networks and the Chomsky Hierarchy" (ICLR 2023,
arXiv 2207.02098), Table 2: the score of each model on each task, in percent,

    score = 1/(M − N) · Σ_{ℓ = N+1}^{M} A(x, y),   N = 40, M = 500,

where A(x, y) is the per-sequence accuracy (the fraction of output tokens whose argmax is the
target), maximised over 10 seeds and 3 learning rates (and, for the Transformer, over five
positional encodings). Every number in the file names the source it was read in; a cell no
source gave is ``None``, never guessed (see the file's ``missing`` note).

``published(name) -> PublishedTable``; ``COMPARISONS`` lists the valid names.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources

from .. import checks

COMPARISONS: dict[str, str] = {"deletang": "deletang2023.json"}  # name → file in train/data/


@dataclass(frozen=True)
class PublishedTask:
    name: str  # our task name (expressivity.languages.REGISTRY)
    level: str  # the paper's level code, e.g. R | DCF | CS
    paper_name: str  # the task's name in the paper
    scores: dict[str, float | None]  # model → score in percent (None: not available)
    sources: dict[str, str]  # model → key of PublishedTable.sources


@dataclass(frozen=True)
class PublishedTable:
    name: str
    paper: str
    short: str  # e.g. "Delétang et al. 2023"
    arxiv: str
    table: str
    metric: str
    models: tuple[str, ...]  # our model names, in the paper's column order
    levels: dict[str, str]  # level code → name
    sources: dict[str, str]  # source key → where the numbers were read
    missing: str
    tasks: dict[str, PublishedTask]  # in the paper's row order

    def score(self, task: str, model: str) -> float | None:
        """The published score (percent) of ``model`` on ``task``; None if not available."""
        return self.tasks[task].scores.get(model) if task in self.tasks else None

    def citation(self, short: bool = False) -> str:
        return f"{self.short if short else self.paper}, {self.table} (arXiv {self.arxiv})"


def published(name: str) -> PublishedTable:
    """The published table ``name`` (one of :data:`COMPARISONS`)."""
    checks.check_choice(name, "comparison", COMPARISONS)
    return _load(name)


@cache
def _load(name: str) -> PublishedTable:
    text = resources.files(__package__).joinpath("data", COMPARISONS[name]).read_text(encoding="utf-8")
    d = json.loads(text)
    models = tuple(d["models"])
    tasks = {}
    for task, t in d["tasks"].items():
        scores = {m: (None if t["scores"].get(m) is None else float(t["scores"][m])) for m in models}
        unknown = set(t["sources"]) - set(models) or set(t["sources"].values()) - set(d["sources"])
        if unknown or any((scores[m] is None) == (m in t["sources"]) for m in models):
            raise ValueError(f"{COMPARISONS[name]}: task {task}: every number needs a known source and "
                             f"every source a number")
        tasks[task] = PublishedTask(task, t["level"], t["paper_name"], scores, dict(t["sources"]))
    return PublishedTable(d["name"], d["paper"], d["short"], d["arxiv"], d["table"], d["metric"], models,
                          dict(d["levels"]), dict(d["sources"]), d["missing"], tasks)
