"""`lapbias leak CONFIG --replies FILE` on large replies files: 10^4, 10^5 and 10^6 replies (Variant A, six monthly
percent series over 1926-2025, ten repeated queries per series and month, replies "+2.41" or a narrative "about
2.4%"), each scored by the stage function (pipeline.score_replies) in a fresh process: CPU time, wall time, peak
memory. The series and replies are synthetic (seeded); what is measured is the reading, checking, parsing, scoring
and writing of every output (tables, probe panel, figures, report).

    python benchmarks/bench_leak_replies.py            # 10^4 and 10^5 replies
    python benchmarks/bench_leak_replies.py --million  # and 10^6

Writes benchmarks/results/leak_replies.md. CPU time is the measure (other jobs may share the cores: wall times are
upper bounds).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from machine import describe, write_report  # noqa: E402

SERIES = ("Mkt-RF", "SMB", "HML", "RMW", "CMA", "Mom")
CHILD = """
import json, resource, sys, time
from pathlib import Path
from lapbias.io import Layout
from lapbias.leak import config, parse, pipeline, replies as replies_file
root, replies = sys.argv[1], sys.argv[2]
cpu = time.process_time()
read = [parse.parse_value(text).status for text in replies_file.read(replies)["reply"]]
floor = time.process_time() - cpu
run = config.from_dict({"root": root, "leak": {"path": root + "/series.csv", "cutoff": "2024-12-31",
                                                "bootstrap_reps": 1000, "shuffle_reps": 1000}})
layout = Layout(Path(root))
layout.make_dirs()
wall, cpu = time.perf_counter(), time.process_time()
result = pipeline.score_replies(run, layout, replies)
print(json.dumps({"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu, "floor": floor,
                  "rows": len(result.panel),
                  "parsed": int((result.panel["status"] == "parsed").sum()),
                  "peak_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6}))
"""


def files(folder: Path, n: int) -> Path:
    """The series file and a replies file of n rows (draw = the repeat number of a series and month)."""
    rng = np.random.default_rng(0)
    months = pd.period_range("1926-01", "2025-12", freq="M")
    truth = {s: rng.normal(0.5, 4.0, len(months)).round(2) for s in SERIES}
    pd.concat([pd.DataFrame({"series": s, "date": months.strftime("%Y-%m-01"), "value": v, "unit": "percent"})
               for s, v in truth.items()]).to_csv(folder / "series.csv", index=False)
    cells = len(SERIES) * len(months)
    index = np.arange(n)
    series, month, draw = index % len(SERIES), (index // len(SERIES)) % len(months), index // cells
    values = np.array([truth[SERIES[s]][m] for s, m in zip(series, month)]) + rng.normal(0, 1, n).round(2)
    narrative = rng.random(n) < 0.2
    path = folder / f"replies_{n}.jsonl"
    with path.open("w") as handle:
        for i in range(n):
            reply = f"In that month it was about {values[i]:.1f}%." if narrative[i] else f"{values[i]:+.2f}"
            handle.write(json.dumps({"series": SERIES[series[i]], "date": str(months[month[i]]), "variant": "A",
                                     "prompt": "What was the monthly return ...?", "reply": reply,
                                     "draw": int(draw[i]), "truncated": False}) + "\n")
    return path


def measure(folder: Path, path: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(folder), str(path)], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONPATH": str(HERE.parent / "python")})
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    arguments = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    arguments.add_argument("--million", action="store_true", help="also 10^6 replies (several GB of memory)")
    sizes = (10_000, 100_000) + ((1_000_000,) if arguments.parse_args().million else ())
    load_start = os.getloadavg()
    rows = []
    for n in sizes:
        with tempfile.TemporaryDirectory() as folder:
            result = measure(Path(folder), files(Path(folder), n))
            print(n, result, flush=True)
            rows.append((n, result))
    load_end = os.getloadavg()
    lines = ["## NumLeak: scoring large replies files (`lapbias leak --replies`)", "",
             f"Machine: {describe()}; load average {load_start[0]:.1f} / {load_start[1]:.1f} (1 / 5 min) when the "
             f"run started, {load_end[0]:.1f} / {load_end[1]:.1f} when it ended (other jobs share these cores: wall "
             "times are upper bounds, CPU times are the measure). `pipeline.score_replies` (the stage of `lapbias "
             "leak --replies`) in a fresh process per size: synthetic Variant-A replies of six monthly series over "
             "1926-2025 (7,200 series-months, repeated as draws), 1,000 bootstrap and factor-shuffle draws, every "
             "output written (summary, probe panel parquet and dta, figures, report). Baseline in the same process: "
             "reading the file and parsing each reply alone (replies.read, parse.parse_value), the work no scoring "
             "can skip.", "",
             "| replies | CPU | wall | peak memory | CPU per 10^4 replies | baseline: read and parse only, CPU | "
             "parsed |", "|---|---|---|---|---|---|---|"]
    for n, r in rows:
        lines.append(f"| {n:,} | {r['cpu']:.1f} s | {r['wall']:.1f} s | {r['peak_gb']:.2f} GB | "
                     f"{r['cpu'] / n * 1e4:.1f} s | {r['floor']:.1f} s | {r['parsed']:,} of {r['rows']:,} |")
    lines += ["", "The per-period work of a replies file (the period's window, its date words, whether it is famous) "
              "is done once per distinct period, not once per reply; what grows with the file is reading, checking "
              "and parsing each reply (one Python step per reply) and the probe panel."]
    write_report(HERE / "results" / "leak_replies.md", lines)


if __name__ == "__main__":
    main()
