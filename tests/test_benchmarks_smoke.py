"""Every CPU benchmark runs at a reduced size and writes its Markdown table (issue 17, item 4). Nothing about
time is asserted (benchmarks/RESULTS.md holds the measurements); the tables go to a temporary file, never to
benchmarks/results/."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def load(name: str):
    sys.path.insert(0, str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(f"smoke_{name}", BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name, header", [
    ("bench_bootstrap", "| design | resampling |"),
    ("bench_detection_1m", "| method | first fit"),
    ("bench_minkprob_throughput", "| method | seconds | scored tokens/s"),
    ("bench_generation", "| method | seconds | answers/s"),
    ("bench_measures", "| stage | median seconds"),
])
def test_benchmark_runs_and_writes_its_table(tmp_path, name, header):
    out = tmp_path / "section.md"
    real = sorted((BENCHMARKS / "results").glob("*.md"))
    before = {p: p.read_bytes() for p in real}
    load(name).main(["--smoke", "--out", str(out)])
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("## ") and any(line.startswith("Machine: ") for line in lines)
    table = [line for line in lines if line.startswith("| ")]
    assert table[0].startswith(header) and len(table) >= 3  # header and at least two measured rows
    assert {p: p.read_bytes() for p in real} == before  # the real results are untouched
