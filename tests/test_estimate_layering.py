"""The estimation layer sits below the report (data -> signals -> panel -> estimate -> report): no module of
lapbias.estimate imports lapbias.report (or what sits above both: lapbias.simulate, lapbias.stages), and no two
estimate modules import each other (estimate/power.py and estimate/protocol.py did, through a function-level
import)."""

from __future__ import annotations

import ast
from pathlib import Path

import lapbias.estimate

ESTIMATE = Path(lapbias.estimate.__file__).resolve().parent
ABOVE = ("report", "simulate", "stages", "cli")


def imports(path: Path) -> set[str]:
    """Modules of lapbias a file imports, at any depth of its code, as dotted names relative to lapbias."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level == 1:  # from .x import y / from . import y: lapbias.estimate
                names = [f"estimate.{module}"] if module else [f"estimate.{a.name}" for a in node.names]
            elif node.level == 2:
                names = [module or node.names[0].name]
            elif module.startswith("lapbias."):
                names = [module.removeprefix("lapbias.")]
            else:
                continue
            found.update(names)
        elif isinstance(node, ast.Import):
            found.update(a.name.removeprefix("lapbias.") for a in node.names if a.name.startswith("lapbias."))
    return found


def test_estimate_does_not_import_the_layers_above_it():
    offending = {path.name: sorted(m for m in imports(path) if m.split(".")[0] in ABOVE)
                 for path in sorted(ESTIMATE.glob("*.py"))}
    assert not {name: found for name, found in offending.items() if found}


def test_no_import_circle_within_estimate():
    graph = {path.stem: {m.split(".")[1] for m in imports(path) if m.startswith("estimate.")}
             for path in ESTIMATE.glob("*.py")}
    circles = sorted((a, b) for a, targets in graph.items() for b in targets if a < b and a in graph.get(b, ()))
    assert not circles
