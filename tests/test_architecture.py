"""The import rules of the layout (README "Layout"): every import of one of our packages by
another must be an allowed edge, so a back-edge (e.g. ``transformer`` importing ``compile``)
fails here. A new package must be given its rule below."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "expressivity"

# package -> the packages it may import (the leaves ``rules``, ``fileio``, ``memory`` and
# ``pretrained`` are importable by every package)
ALLOWED: dict[str, set[str]] = {
    # the three bottom leaves: input rules, files (paths, atomic writes, the one safetensors
    # writer and JSON reader, the file-mode rule) and the memory / chunking budget
    "rules": set(),
    "fileio": set(),
    "memory": set(),
    # listing: a table as text (columns, rows, notes), built by the library, drawn by the CLI
    "listing": set(),
    # pretrained: the hub layout's mechanics (save_pretrained / from_pretrained as methods of every
    # model kind, local directories or huggingface_hub); a leaf above rules, fileio and model_kinds
    "pretrained": {"model_kinds"},
    # model_kinds: what kind of model this is (kind_of), asked by regions, interop and limits
    "model_kinds": set(),
    # lazy: a package's public names imported on first use (so their options.py import no torch)
    "lazy": set(),
    # choices: the transformer's named choices (attention, layer norm, position encoding), torch-free
    "choices": set(),
    # logs: the package's log lines (one handler on the expressivity logger), for CLI and scripts
    "logs": set(),
    "transformer": set(),
    "cpwl": set(),
    "languages": set(),
    "compile": {"cpwl", "transformer"},
    "regions": {"cpwl", "transformer"},
    # runs: work units, the one results store and the run driver — below train and report,
    # which both use them (README "Layout"); it knows no model, language or claim.
    "runs": set(),
    "train": {"languages", "transformer", "constructions", "runs"},  # constructions: fine-tuning from one
    "constructions": {"transformer", "compile", "cpwl", "languages"},
    "limits": {"transformer", "languages", "constructions", "train"},
    "report": {"transformer", "cpwl", "compile", "regions", "languages", "train", "constructions", "limits",
               "runs"},
    "interop": {"transformer", "cpwl", "compile", "regions", "languages", "constructions", "limits", "train"},
    "cli": {"transformer", "cpwl", "compile", "regions", "languages", "train", "constructions", "limits",
            "report", "interop", "runs"},
    "__main__": {"cli"},  # `python -m expressivity`: the command line only
}
BOTTOM = {"rules", "fileio", "memory", "model_kinds", "listing", "lazy", "choices", "logs"}  # import nothing of ours at all
LEAVES = BOTTOM | {"pretrained"}  # importable from everywhere


def _package_of(path: Path) -> str:
    rel = path.relative_to(SRC).parts
    return rel[0] if len(rel) > 1 else rel[0].removesuffix(".py")


def _imported_packages(path: Path) -> set[str]:
    rel = path.relative_to(SRC).parts
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[1] for a in node.names if a.name.startswith("expressivity.")}
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                if node.module and node.module.startswith("expressivity."):
                    out.add(node.module.split(".")[1])
                elif node.module == "expressivity":
                    out |= {a.name for a in node.names}
                continue
            base = list(rel[:-1])[: len(rel) - node.level]
            parts = base + (node.module.split(".") if node.module else [])
            if parts:
                out.add(parts[0])
            else:  # "from .. import x" at the top package
                out |= {a.name for a in node.names}
    return out - {"__init__", "__version__"}


def _edges() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for path in SRC.rglob("*.py"):
        pkg = _package_of(path)
        if pkg == "__init__":
            continue
        edges.setdefault(pkg, set()).update(_imported_packages(path) - {pkg})
    return edges


def test_every_package_has_a_rule():
    missing = sorted(set(_edges()) - set(ALLOWED))
    assert not missing, f"packages without an import rule in tests/test_architecture.py: {missing}"


@pytest.mark.parametrize("pkg", sorted(BOTTOM))
def test_bottom_leaves_import_nothing_of_ours(pkg):
    got = sorted(_edges().get(pkg, set()))
    assert not got, f"{pkg} is a bottom leaf (README \"Layout\") but imports {got}"


def test_pretrained_imports_only_bottom_leaves():
    got = sorted(_edges().get("pretrained", set()) - BOTTOM)
    assert not got, f"pretrained is a leaf above {sorted(BOTTOM)} only, but imports {got}"


def test_checks_is_gone():
    """checks.py was split into rules, fileio and memory (issue 24): no module comes back."""
    assert not (SRC / "checks.py").exists()


@pytest.mark.parametrize("pkg", sorted(ALLOWED))
def test_imports_point_one_way(pkg):
    got = _edges().get(pkg, set()) - LEAVES
    back = sorted(got - ALLOWED[pkg])
    assert not back, f"{pkg} imports {back}: not allowed by the layout (allowed: {sorted(ALLOWED[pkg])})"


def test_the_checker_sees_a_back_edge(tmp_path, monkeypatch):
    """The rule must be able to fail: a fake module in ``transformer`` importing ``compile``."""
    fake = SRC / "transformer" / "_fake_back_edge_for_test.py"
    fake.write_text("from ..compile import compile_maxout\n")
    try:
        assert "compile" in _edges()["transformer"]
    finally:
        fake.unlink()
