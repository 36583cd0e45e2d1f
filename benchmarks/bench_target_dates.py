"""`lapbias validate` on large panels whose target dates are derived from the text dates on an exchange calendar
([data] target_date_from = "text_date", data/target_dates.py), against the same file with a target_date column
(no derivation), measured in the same run: 10^5 and 10^6 rows of news-style text dates (dates from 1995 to 2024,
a quarter of them with a time of day, some after the close, some with a UTC offset), 2,000 entities, XNYS.

    python benchmarks/bench_target_dates.py

Writes benchmarks/results/target_dates.md. CPU time is the measure (other jobs may share the cores: wall times are
upper bounds); the peak resident memory of each run is measured in a fresh process.
"""

from __future__ import annotations

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

SIZES = (100_000, 1_000_000)
CHILD = """
import json, resource, sys, time
from lapbias.config import from_dict
from lapbias.data.validate import validate_file
path, derive = sys.argv[1], sys.argv[2] == "1"
values = {"study": {"cutoff": "2015-06-30"}}
if derive:
    values["data"] = {"target_date_from": "text_date"}
config = from_dict(values)
wall, cpu = time.perf_counter(), time.process_time()
result = validate_file(path, config)
print(json.dumps({"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu, "rows": len(result.frame),
                  "peak_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6,
                  "notes": result.notes[:1]}))
"""


def panel(n: int, with_target: bool) -> pd.DataFrame:
    """n rows: entity, name, text, text_date (date, date-time or UTC date-time), outcome; with_target adds the
    target_date column (the next calendar day) for the baseline."""
    rng = np.random.default_rng(0)
    days = pd.Timestamp("1995-01-01") + pd.to_timedelta(rng.integers(0, 30 * 365, n), unit="D")
    minutes = rng.integers(0, 24 * 60, n)
    kind = rng.choice(["date", "time", "utc"], n, p=[0.75, 0.2, 0.05])
    stamp = days + pd.to_timedelta(minutes, unit="m")
    text_date = np.where(kind == "date", days.strftime("%Y-%m-%d"),
                         np.where(kind == "time", stamp.strftime("%Y-%m-%dT%H:%M:%S"),
                                  stamp.strftime("%Y-%m-%dT%H:%M:%SZ")))
    entity = rng.integers(0, 2000, n)
    frame = pd.DataFrame({"row_id": [f"r{i}" for i in range(n)], "entity_id": [f"E{e}" for e in entity],
                          "entity_name": [f"Firm {e}" for e in entity], "text": [f"headline {i}" for i in range(n)],
                          "text_date": text_date, "outcome": rng.normal(size=n).round(4)})
    if with_target:
        frame.insert(5, "target_date", (days + pd.Timedelta(days=1)).strftime("%Y-%m-%d"))
    return frame


def measure(path: Path, derive: bool) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(path), "1" if derive else "0"], capture_output=True,
                         text=True, check=True, env={**os.environ, "PYTHONPATH": str(HERE.parent / "python")})
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    load_start = os.getloadavg()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for n in SIZES:
            derived_csv, column_csv = Path(folder) / f"derive_{n}.csv", Path(folder) / f"column_{n}.csv"
            panel(n, False).to_csv(derived_csv, index=False)
            panel(n, True).to_csv(column_csv, index=False)
            derived, column = measure(derived_csv, True), measure(column_csv, False)
            print(n, derived, column, flush=True)
            rows.append((n, derived, column))
    load_end = os.getloadavg()
    lines = ["## Target dates from the text dates (validate, [data] target_date_from)", "",
             f"Machine: {describe()}; load average {load_start[0]:.1f} / {load_start[1]:.1f} (1 / 5 min) when the "
             f"run started, {load_end[0]:.1f} / {load_end[1]:.1f} when it ended (other jobs share these cores: wall "
             "times are upper bounds, CPU times are the measure). `validate_file` on a CSV of news-style text dates "
             "(1995-2024; 75% dates, 20% local date-times, 5% UTC date-times), 2,000 entities, XNYS calendar; "
             "baseline in the same run: the same rows with a target_date column (no derivation). Each run in a fresh "
             "process.", "",
             "| rows | derived: CPU | wall | peak memory | target_date column: CPU | wall | peak memory | "
             "derivation's share of CPU |",
             "|---|---|---|---|---|---|---|---|"]
    for n, derived, column in rows:
        share = (derived["cpu"] - column["cpu"]) / derived["cpu"]
        lines.append(f"| {n:,} | {derived['cpu']:.1f} s | {derived['wall']:.1f} s | {derived['peak_gb']:.2f} GB | "
                     f"{column['cpu']:.1f} s | {column['wall']:.1f} s | {column['peak_gb']:.2f} GB | {share:.0%} |")
    kept = ", ".join(f"{derived['rows']:,}" for _, derived, _ in rows)
    lines += ["", f"Rows kept: {kept} (every row: each text date "
              "resolves on the calendar). The derivation is one vectorized search of the calendar's closing times "
              "(no loop per row); what it adds to `validate` is parsing the times of day and building the calendar."]
    write_report(HERE / "results" / "target_dates.md", lines)


if __name__ == "__main__":
    main()
