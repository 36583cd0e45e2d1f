"""The machine a benchmark ran on, for the header of its results section."""

from __future__ import annotations

import os
import platform

from lapbias.cost import cpu_model


def describe() -> str:
    return f"{os.cpu_count()} cores ({cpu_model()}), Python {platform.python_version()}, {platform.system()}"
