"""Run every benchmarks/bench_*.py and assemble benchmarks/RESULTS.md from their benchmarks/results/*.md.

Each benchmark prints its numbers and writes one Markdown section (with its own baseline, measured in the same
run, and the machine it ran on). Performance is measured here, never asserted in tests.

    python benchmarks/run_all.py            # all benchmarks
    python benchmarks/run_all.py bootstrap  # only those whose file name contains "bootstrap"
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


def main(selection: list[str]) -> int:
    scripts = sorted(p for p in HERE.glob("bench_*.py") if not selection or any(s in p.name for s in selection))
    failed = []
    for script in scripts:
        print(f"== {script.name}", flush=True)
        if subprocess.call([sys.executable, str(script)], cwd=HERE.parent) != 0:
            failed.append(script.name)
    sections = [p.read_text(encoding="utf-8").strip() for p in sorted(RESULTS.glob("*.md"))]
    text = "# Benchmark results\n\nWritten by `python benchmarks/run_all.py` from `benchmarks/results/*.md`; each " \
           "section names its machine and its baseline, measured in the same run.\n\n" + "\n\n".join(sections) + "\n"
    (HERE / "RESULTS.md").write_text(text, encoding="utf-8")
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
