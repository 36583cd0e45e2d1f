"""The package's shape (ARCHITECTURE.md): imports run with the data flow only, no import circles, a thin command
line, and code and documents that cite papers and protocol steps, never a tracker number or a path outside the
repository (a user's clone has neither)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "python" / "lapbias"
LAYERS = {"errors": 0, "config": 1, "io": 2, "stage": 3, "data": 4, "llm": 4, "approximation": 5, "signals": 5,
          "panel": 6, "freshness": 7, "estimate": 7, "report": 8, "cost": 8, "leak": 9, "ess": 9, "calibrate": 9, "simulate": 9,
          "stages": 10, "cli": 11, "__init__": 12}
"""The data flow, lowest first: a module imports only from its own layer or below (its own package included)."""


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports() -> dict[str, set[str]]:
    modules = {_module(p): p for p in PACKAGE.rglob("*.py")}
    edges = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
                target = ".".join(base + [node.module] if node.module else base) if node.level else node.module
                for alias in node.names:
                    found.add(f"{target}.{alias.name}" if f"{target}.{alias.name}" in modules else target)
            elif isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names}
        edges[name] = {m for m in found if m in modules and m != name}
    return edges


def _layer(module: str) -> int:
    parts = module.split(".")
    return LAYERS[parts[1] if len(parts) > 1 else "__init__"]


def test_every_module_has_a_layer():
    assert {m.split(".")[1] for m in _imports() if "." in m} <= set(LAYERS)


def test_imports_run_with_the_data_flow():
    upward = [f"{a} -> {b}" for a, targets in _imports().items() for b in targets if _layer(b) > _layer(a)]
    assert not upward, upward


def test_no_import_circles():
    edges, circles = _imports(), []

    def reach(start, node, seen):
        for nxt in edges[node]:
            if nxt == start:
                circles.append(start)
            elif nxt not in seen:
                seen.add(nxt)
                reach(start, nxt, seen)

    for module in edges:
        reach(module, module, set())
    assert not circles, sorted(set(circles))


def test_the_command_line_is_thin():
    assert len((PACKAGE / "cli.py").read_text(encoding="utf-8").splitlines()) < 250


def _documents():
    for folder in ("python", "ado", "do", "docs"):
        yield from (p for p in (ROOT / folder).rglob("*") if p.is_file() and p.suffix in
                    (".py", ".ado", ".do", ".sthlp", ".md", ".toml", ".c", ".pkg"))
    yield ROOT / "README.md"


@pytest.mark.parametrize("pattern, what", [(r"issue[- ]?#?\d+", "a tracker number"),
                                           (r"\.\./shared|/work/shared", "a path outside the repository")])
def test_code_and_documents_cite_papers_not_trackers(pattern, what):
    found = [f"{path.relative_to(ROOT)}:{number}" for path in _documents()
             for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
             if re.search(pattern, line, re.IGNORECASE)]
    assert not found, f"{what} in {found[:10]} ({len(found)} lines)"
