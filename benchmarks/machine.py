"""The machine a benchmark ran on, for the header of its results section, and the writing of that section."""

from __future__ import annotations

import os
import platform
from pathlib import Path

from lapbias.signals.timing import cpu_model


def describe() -> str:
    return f"{os.cpu_count()} cores ({cpu_model()}), Python {platform.python_version()}, {platform.system()}"


def write_report(path: Path, lines: list[str]) -> None:
    """Print a benchmark's markdown section and write it to path (its folder created)."""
    print("\n".join(lines))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
