"""lapboot's fast path (issue 30): the Stata bootstrap's draws computed by the lapbias kernel through Stata's Python
(ado/_lapbias_pyboot.ado -> lapbias.estimate.lapboot_kernel.write_draws), against the kernel alone in the same run.
The bridge reads the pool lapboot saved (.dta), runs the Python engine's pairs bootstrap and writes the draws (.dta):
its cost beyond the kernel is the two files. Same random paper-scale panel as bench_bootstrap.py (91,361 rows over
1,499 entities x 330 dates), 10,000 draws, pairs and entity resampling; the draws must equal the kernel's.
Stata's own cost per reghdfe draw (the fallback loop) cannot be measured here (no Stata): lapboot measures it on the
user's machine, by one regression on the whole sample, and states the expected time before the first draw.

    python benchmarks/bench_lapboot.py                      # writes benchmarks/results/lapboot.md
    python benchmarks/bench_lapboot.py --smoke --out FILE   # tiny sizes
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyreadstat

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_bootstrap import make_panel, simd  # noqa: E402
from machine import describe, write_report  # noqa: E402

from lapbias.estimate import lapboot_kernel  # noqa: E402
from lapbias.estimate.bootstrap import pairs_bootstrap  # noqa: E402

B, SEED = 10_000, 1
DESIGN, SMOKE = (91_361, 1_499, 330), (2_000, 100, 20)
OUT = Path(__file__).resolve().parent / "results" / "lapboot.md"


def clocks() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    rows, entities, periods = SMOKE if args.smoke else DESIGN
    draws = 20 if args.smoke else B
    frame = make_panel(rows, entities, periods)
    pool = frame.rename(columns={"outcome": "ret", "mu_hat": "forecast", "lap": "mink", "entity_num": "firm",
                                 "period_num": "day"})
    load = os.getloadavg()
    pairs_bootstrap(frame, 0.0, B=2, seed=SEED, progress=False)  # warm-up: loads the compiled kernels
    lines = ["## lapboot's fast path: the Stata bootstrap through the lapbias kernel (issue 30)", "",
             f"Machine: {describe()}, SIMD {simd()}; load average {load[0]:.1f} / {load[1]:.1f} (1 / 5 min) when the "
             "run started (other jobs share these cores: wall times are upper bounds, CPU time is the process's). "
             f"{draws:,} draws of beta_3, seed {SEED}, a random unbalanced panel of {len(frame):,} rows over "
             f"{entities:,} entities x {periods} dates (bench_bootstrap.py's paper-scale design). Baseline in the same "
             "run: the kernel alone (estimate/bootstrap.py pairs_bootstrap on the data in memory).", "",
             "| resampling | kernel alone: wall / CPU | lapboot's fast path (read pool .dta, kernel, write draws .dta): "
             "wall / CPU | the two files' CPU cost (fast path - kernel) | draws equal |", "|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as folder:
        pool_path, draws_path = Path(folder) / "pool.dta", Path(folder) / "draws.dta"
        pyreadstat.write_dta(pool, str(pool_path))
        for resample in ("obs", "entity"):
            wall, cpu = clocks()
            kernel = pairs_bootstrap(frame, 0.0, B=draws, seed=SEED, resample=resample, progress=False).draws
            kernel_wall, kernel_cpu = (a - b for a, b in zip(clocks(), (wall, cpu)))
            wall, cpu = clocks()
            lapboot_kernel.write_draws(str(pool_path), str(draws_path), "ret forecast mink firm day", resample, draws,
                                       SEED)
            bridge_wall, bridge_cpu = (a - b for a, b in zip(clocks(), (wall, cpu)))
            written = pyreadstat.read_dta(str(draws_path))[0]["beta3"].to_numpy()
            equal = bool(np.array_equal(written, kernel, equal_nan=True))
            lines.append(f"| {resample} | {kernel_wall:.1f} s / {kernel_cpu:.1f} s | {bridge_wall:.1f} s / "
                         f"{bridge_cpu:.1f} s | {bridge_cpu - kernel_cpu:+.2f} s | {equal} |")
    lines += ["", f"Run {time.strftime('%H:%M UTC on %Y-%m-%d', time.gmtime())}; load average "
              f"{os.getloadavg()[0]:.1f} when it ended. CPU time counts both kernel threads (about twice the wall time "
              "on two idle cores). Stata's fallback (reghdfe on each "
              "draw, the draw as frequency weights) is not measured here; the desk review estimated of order 0.1 s "
              "per draw for a full reghdfe call (15-60 minutes for 10,000 draws), and lapboot prints its own "
              "measurement before the first draw."]
    write_report(args.out, lines)


if __name__ == "__main__":
    main()
