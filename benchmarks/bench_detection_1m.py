"""The detection regression on 1,000,000 rows (50,000 entities x 2,500 periods, an unbalanced random draw):
outcome on mu_hat, lap, mu_hat x lap, absorb(entity_num period_num), cluster(entity_num).

lapbias.estimate.reghdfe (pyfixest plus reghdfe's bookkeeping: singletons, mobility groups, _cons, df) against
plain pyfixest feols on the same data, each in its own process so that the peak resident memory (ru_maxrss) of
each is its own. Data generation is not timed. Writes benchmarks/results/detection_1m.md (`--smoke --out FILE`:
20,000 rows into FILE, the test suite's smoke test).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe, write_report  # noqa: E402

N, ENTITIES, PERIODS = 1_000_000, 50_000, 2_500
OUT = Path(__file__).resolve().parent / "results" / "detection_1m.md"


def make_panel() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"entity_num": rng.integers(1, ENTITIES + 1, N), "period_num": rng.integers(1, PERIODS + 1, N),
                          "mu_hat": rng.choice([-1.0, 1.0], N), "lap": rng.uniform(0, 1, N)})
    frame["outcome"] = 0.1 * frame["mu_hat"] * frame["lap"] + rng.normal(0, 1, N)
    return frame


def fit_once(method: str, frame: pd.DataFrame) -> float:
    if method == "lapbias":
        from lapbias.estimate import reghdfe

        fit = reghdfe(frame, "outcome", ["mu_hat", "lap", "c.mu_hat#c.lap"], absorb=["entity_num", "period_num"],
                      vce="cluster", cluster=["entity_num"])
        return float(fit.coef["c.mu_hat#c.lap"])
    import pyfixest as pf

    fit = pf.feols("outcome ~ mu_hat + lap + mu_hat:lap | entity_num + period_num", data=frame,
                   vcov={"CRV1": "entity_num"})
    return float(fit.coef()["mu_hat:lap"])


def measure(method: str) -> dict:
    """Two fits in one fresh process: the first pays numba's compilation of pyfixest's kernels (cold), the
    second is what every later regression of a session costs (warm)."""
    frame = make_panel()
    times = []
    for _ in range(2):
        start = time.perf_counter()
        beta3 = fit_once(method, frame)
        times.append(time.perf_counter() - start)
    return {"method": method, "cold": times[0], "warm": times[1],
            "peak_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6, "beta3": beta3}


def main(argv: list[str] | None = None) -> None:
    global N, ENTITIES, PERIODS
    parser = argparse.ArgumentParser()
    parser.add_argument("method", nargs="?", help=argparse.SUPPRESS)  # internal: one method in a child process
    parser.add_argument("--smoke", action="store_true", help="20,000 rows: checks that the benchmark runs")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if args.smoke:
        N, ENTITIES, PERIODS = 20_000, 1_000, 50
    if args.method:
        print(json.dumps(measure(args.method)))
        return
    rows = []
    for method in ("lapbias", "pyfixest"):
        if args.smoke:  # one process: the smoke test checks that the benchmark runs, not its memory
            rows.append(measure(method))
            continue
        out = subprocess.run([sys.executable, __file__, method], capture_output=True, text=True, check=True)
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    lines = [f"## Detection regression on {N:,} rows (issue 3)", "",
             f"Machine: {describe()}. {N:,} rows, {ENTITIES:,} entities x {PERIODS:,} periods (random, unbalanced), "
             "three regressors, two absorbed FEs, clustered by entity. Peak memory = the process's maximum resident "
             "set size, data included.", "",
             "| method | first fit in a process (cold) | later fits (warm) | peak memory | beta_3 |",
             "|---|---|---|---|---|"]
    lines += [f"| {r['method']} | {r['cold']:.2f} s | {r['warm']:.2f} s | {r['peak_gb']:.2f} GB | {r['beta3']:.8f} |"
              for r in rows]
    lines += ["", "Targets: at most 5 s and 2 GB for lapbias."]
    write_report(args.out, lines)


if __name__ == "__main__":
    main()
