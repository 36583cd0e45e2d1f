"""The machine a benchmark ran on, for the header of its results section."""

from __future__ import annotations

import os
import platform


def describe() -> str:
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            model = next(line.split(":", 1)[1].strip() for line in handle if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{os.cpu_count()} cores ({model}), Python {platform.python_version()}, {platform.system()}"
