"""Published per-task scores of the benchmarks we reproduce, read from ``train/data/*.json``.

``deletang`` — Delétang et al. 2023, "Neural Networks and the Chomsky Hierarchy" (ICLR 2023,
arXiv 2207.02098), Table 2: the score of each model on each task, in percent,

    score = 1/(M − N) · Σ_{ℓ = N+1}^{M} A(x, y),   N = 40, M = 500,

where A(x, y) is the per-sequence accuracy (the fraction of output tokens whose argmax is the
target), maximised over 10 seeds and 3 learning rates (and, for the Transformer, over five
positional encodings). Every number in the file names the source it was read in; a cell no
source gave is ``None``, never guessed (see the file's ``missing`` note).

``published(name) -> PublishedTable``; ``COMPARISONS`` lists the shipped names. A researcher with
the paper at hand can complete a table without touching the package: copy the shipped file, fill
its ``null`` cells (each with a key of ``sources`` saying where it was read) and pass the file's
path instead of the name (``results --compare ./table.json``); it is checked as strictly as the
shipped one (:func:`parse_table`).

``flare`` — Butoi et al. 2025, "Training Neural Networks as Recognizers of Formal Languages"
(ICLR 2025, arXiv 2411.07107), Table 2: per FLaRe language and model (transformer, RNN,
LSTM), accuracy in [0, 1] on their test split — ``inductive_bias`` (the mean over 10 runs)
and ``expressivity`` (the max) — and ``perfect``, whether the expressivity score is perfect
(their Figure 1). A table of this layout (``"layout": "recognizers"``) is a
:class:`RecognizerTable` (:func:`parse_recognizer_table`), with the same rules: every number
or fact names its source, a missing one is ``null``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources

from ..fileio import read_text_file
from ..rules import check_choice

COMPARISONS: dict[str, str] = {"deletang": "deletang2023.json", "flare": "butoi2025.json"}  # name → file in train/data/


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


def is_table_path(name: str) -> bool:
    """Whether ``name`` names a table file (``*.json``) rather than a shipped table."""
    return str(name).lower().endswith(".json")


def published(name: str, what: str = "comparison") -> PublishedTable | RecognizerTable:
    """The published table ``name``: one of :data:`COMPARISONS`, or the path of a ``.json`` file
    in the same layout (e.g. the shipped table with more cells filled); ``what`` names the
    argument in errors."""
    if is_table_path(name):
        return _parse_any(read_text_file(name, what), str(name))
    check_choice(name, what, COMPARISONS)
    return _load(name)


@cache
def _load(name: str) -> PublishedTable | RecognizerTable:
    text = resources.files(__package__).joinpath("data", COMPARISONS[name]).read_text(encoding="utf-8")
    return _parse_any(text, COMPARISONS[name])


def _parse_any(text: str, label: str) -> PublishedTable | RecognizerTable:
    try:
        layout = json.loads(text).get("layout") if text.lstrip().startswith("{") else None
    except json.JSONDecodeError:
        layout = None
    return parse_recognizer_table(text, label) if layout == "recognizers" else parse_table(text, label)


_TOP = {"name": str, "paper": str, "short": str, "arxiv": str, "table": str, "metric": str, "models": list,
        "levels": dict, "sources": dict, "missing": str, "tasks": dict}
_TASK = {"level": str, "paper_name": str, "scores": dict, "sources": dict}


def _fields(d, spec: dict, where: str) -> None:
    if not isinstance(d, dict):
        raise ValueError(f"{where} must be a JSON object")
    for key, kind in spec.items():
        if key not in d:
            raise ValueError(f"{where} has no {key!r}")
        if not isinstance(d[key], kind):
            raise ValueError(f"{where}: {key!r} must be a JSON {'array' if kind is list else kind.__name__}")


def parse_table(text: str, label: str) -> PublishedTable:
    """A :class:`PublishedTable` from its JSON text, with one-line errors naming ``label`` and
    the place: unknown tasks (not in :data:`expressivity.languages.REGISTRY`) or models (not in
    :data:`expressivity.train.MODELS`), level codes not in ``levels``, a score that is not a
    number in [0, 100], a number without a known source or a source without a number."""
    from ..languages import REGISTRY
    from .config import MODELS

    try:
        d = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{label} is not valid JSON ({exc.msg}, line {exc.lineno})") from None
    _fields(d, _TOP, label)
    models = tuple(d["models"])
    bad = [m for m in models if m not in MODELS]
    if bad or not models or len(set(models)) != len(models):
        raise ValueError(f"{label}: 'models' must list distinct model names of: {', '.join(sorted(MODELS))}"
                         + (f" (unknown: {', '.join(map(str, bad))})" if bad else ""))
    tasks = {}
    for task, t in d["tasks"].items():
        where = f"{label}: task {task!r}"
        if task not in REGISTRY:
            raise ValueError(f"{where} is not a task of expressivity.languages.REGISTRY")
        _fields(t, _TASK, where)
        if t["level"] not in d["levels"]:
            raise ValueError(f"{where}: level {t['level']!r} is not one of 'levels': {', '.join(d['levels'])}")
        if set(t["scores"]) - set(models):
            raise ValueError(f"{where}: scores of models not in 'models': {', '.join(set(t['scores']) - set(models))}")
        scores = {}
        for m in models:
            v = t["scores"].get(m)
            ok = v is None or (isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 100)
            if not ok:
                raise ValueError(f"{where}: the {m} score must be a number in [0, 100] (percent) or null, not {v!r}")
            scores[m] = None if v is None else float(v)
        unknown = set(t["sources"]) - set(models) or set(t["sources"].values()) - set(d["sources"])
        if unknown or any((scores[m] is None) == (m in t["sources"]) for m in models):
            raise ValueError(f"{where}: every number needs a known source and every source a number")
        tasks[task] = PublishedTask(task, t["level"], t["paper_name"], scores, dict(t["sources"]))
    if not tasks:
        raise ValueError(f"{label}: 'tasks' is empty")
    return PublishedTable(d["name"], d["paper"], d["short"], d["arxiv"], d["table"], d["metric"], models,
                          dict(d["levels"]), dict(d["sources"]), d["missing"], tasks)


@dataclass(frozen=True)
class RecognizerCell:
    """One FLaRe language × model: published scores (accuracy in [0, 1]) and ``perfect``."""

    scores: dict[str, float | None]  # column (inductive_bias | expressivity) → accuracy or None
    perfect: bool | None  # their Figure 1: perfect length generalization (None: not available)


@dataclass(frozen=True)
class RecognizerTable:
    name: str
    paper: str
    short: str
    arxiv: str
    table: str
    metric: str
    models: tuple[str, ...]
    columns: dict[str, str]  # column → what it is
    levels: dict[str, str]
    sources: dict[str, str]
    missing: str
    tasks: dict[str, dict[str, RecognizerCell]]  # language → model → cell, in the paper's row order
    task_levels: dict[str, str]  # language → level code
    paper_names: dict[str, str]
    cell_sources: dict[str, dict[str, str]]  # language → "column/model" or "perfect" → source key

    def cell(self, task: str, model: str) -> RecognizerCell | None:
        return self.tasks.get(task, {}).get(model)

    def citation(self, short: bool = False) -> str:
        return f"{self.short if short else self.paper}, {self.table} (arXiv {self.arxiv})"


_RTOP = {"name": str, "paper": str, "short": str, "arxiv": str, "table": str, "metric": str, "models": list,
         "columns": dict, "levels": dict, "sources": dict, "missing": str, "tasks": dict}
_RTASK = {"level": str, "paper_name": str, "scores": dict, "perfect": dict, "sources": dict}


def parse_recognizer_table(text: str, label: str) -> RecognizerTable:
    """A :class:`RecognizerTable` from JSON, with one-line errors naming ``label`` and the
    place: tasks not in the registry, models not in :data:`expressivity.train.MODELS`, scores
    outside [0, 1], ``perfect`` not true/false/null, a number or fact without a known source."""
    from ..languages import REGISTRY
    from .config import MODELS

    try:
        d = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{label} is not valid JSON ({exc.msg}, line {exc.lineno})") from None
    _fields(d, _RTOP, label)
    models = tuple(d["models"])
    if not models or any(m not in MODELS for m in models) or len(set(models)) != len(models):
        raise ValueError(f"{label}: 'models' must list distinct model names of: {', '.join(sorted(MODELS))}")
    tasks, levels, names, cell_sources = {}, {}, {}, {}
    for task, t in d["tasks"].items():
        where = f"{label}: task {task!r}"
        if task not in REGISTRY:
            raise ValueError(f"{where} is not a task of expressivity.languages.REGISTRY")
        _fields(t, _RTASK, where)
        if t["level"] not in d["levels"]:
            raise ValueError(f"{where}: level {t['level']!r} is not one of 'levels': {', '.join(d['levels'])}")
        if set(t["scores"]) - set(d["columns"]):
            raise ValueError(f"{where}: score columns must be among {', '.join(d['columns'])}")
        needed = set()
        cells = {}
        for m in models:
            scores = {}
            for col in d["columns"]:
                v = (t["scores"].get(col) or {}).get(m)
                if not (v is None or (isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1)):
                    raise ValueError(f"{where}: the {col} score of {m} must be an accuracy in [0, 1] or null, not {v!r}")
                scores[col] = None if v is None else float(v)
                if v is not None:
                    needed.add(f"{col}/{m}")
            perfect = t["perfect"].get(m)
            if perfect not in (True, False, None):
                raise ValueError(f"{where}: perfect of {m} must be true, false or null, not {perfect!r}")
            if perfect is not None:
                needed.add("perfect")
            cells[m] = RecognizerCell(scores, perfect)
        given = set(t["sources"])
        if needed - given or given - needed or set(t["sources"].values()) - set(d["sources"]):
            raise ValueError(f"{where}: every number and fact needs a known source (keys 'COLUMN/MODEL' or 'perfect') "
                             "and every source a number or fact")
        tasks[task], levels[task], names[task], cell_sources[task] = cells, t["level"], t["paper_name"], dict(t["sources"])
    if not tasks:
        raise ValueError(f"{label}: 'tasks' is empty")
    return RecognizerTable(d["name"], d["paper"], d["short"], d["arxiv"], d["table"], d["metric"], models,
                           dict(d["columns"]), dict(d["levels"]), dict(d["sources"]), d["missing"], tasks, levels,
                           names, cell_sources)
