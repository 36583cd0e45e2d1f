"""Pairs bootstrap speed (issue 17), in one run on one machine, random unbalanced two-way-FE panels:
- "paper scale": 91,361 rows (the paper's sample size) over 1,499 entities x 330 dates, 10,000 draws;
- "paper scale + small entities": the same plus 300 entities of one to three rows (singleton levels in every draw);
- "1M rows": 1,000,000 rows over 3,000 entities x 330 dates (about one row per entity-date: a daily panel of 3,000
  firms), 10,000 draws;
each with pairs ("obs") and entity-cluster resampling.
Baselines in the same run, in the same process: (1) the previous kernel, the numba per-draw kernel that lapbias runs
alone where the C lane kernel is not compiled (estimate/bootstrap_kernel.py; DESIGNS gives how many draws it is timed
on, extrapolated to 10,000), with the largest difference between its draws and lapbias's; (2) the naive loop
(materialise each resampled DataFrame, pyfixest feols with singletons dropped), timed on NAIVE_DRAWS draws and
extrapolated, beta_3 of those draws compared with lapbias's.
Peak memory = the process's maximum resident set size (data included) after lapbias's own runs, before the baselines,
each design in its own process.

    python benchmarks/bench_bootstrap.py                      # writes benchmarks/results/bootstrap.md
    python benchmarks/bench_bootstrap.py --smoke --out FILE   # tiny sizes (the test suite's smoke test)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe, write_report  # noqa: E402

from lapbias.estimate import bootstrap_lanes as lanes  # noqa: E402
from lapbias.estimate.bootstrap import draw_weights, pairs_bootstrap, threads  # noqa: E402

B, SEED = 10_000, 1
DESIGNS = {  # name: (rows, entities, periods, small entities, draws of lapbias, of the previous kernel, naive draws)
    "paper scale": (91_361, 1_499, 330, 0, B, B, 20),
    "paper scale + small entities": (91_361, 1_499, 330, 300, B, B, 20),
    "1M rows": (1_000_000, 3_000, 330, 0, B, 1_000, 3),
}
SMOKE = {"paper scale": (2_000, 100, 20, 0, 20, 8, 2), "paper scale + small entities": (2_000, 100, 20, 10, 20, 8, 2),
         "1M rows": (4_000, 400, 20, 0, 10, 4, 1)}
OUT = Path(__file__).resolve().parent / "results" / "bootstrap.md"


def make_panel(rows: int, entities: int, periods: int, small: int = 0) -> pd.DataFrame:
    """Random unbalanced panel; `small` more entities of one to three rows each (real panels have them: firms that
    enter late or are rarely covered), whose draws have singleton levels."""
    rng = np.random.default_rng(0)
    sizes = rng.integers(1, 4, small)
    entity = np.concatenate([rng.integers(1, entities + 1, rows), entities + 1 + np.repeat(np.arange(small), sizes)])
    n = entity.size
    frame = pd.DataFrame({"entity_num": entity, "period_num": rng.integers(1, periods + 1, n),
                          "mu_hat": rng.choice([-1.0, 0.0, 1.0], n), "lap": rng.uniform(0, 1, n)})
    frame["outcome"] = 0.2 * frame["mu_hat"] * frame["lap"] + rng.normal(0, 1, n)
    return frame


def simd() -> str:
    """Which clone of the C kernel this CPU runs (target_clones in estimate/_bootstrap_lanes.c)."""
    flags = next((line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags")), "")
    flags = set(flags.split())
    if {"avx512f", "avx512dq", "avx512vl", "avx512bw"} <= flags:
        return "AVX-512 (x86-64-v4 clone of the C kernel)"
    return "AVX2 (x86-64-v3 clone of the C kernel)" if {"avx2", "fma"} <= flags else "baseline x86-64 clone"


def naive(frame: pd.DataFrame, n_draws: int, resample: str) -> tuple[np.ndarray, float]:
    import pyfixest as pf

    entity = pd.factorize(frame["entity_num"])[0]
    out, seconds = [], 0.0
    warnings.simplefilter("ignore")  # pyfixest: fixef_tol spelling notice, "singleton fixed effect(s) dropped"
    for b in range(n_draws):
        start = time.perf_counter()
        weights = draw_weights(len(frame), entity, 1, SEED, resample, first=b)[:, 0]
        drawn = frame.loc[np.repeat(frame.index.to_numpy(), weights.astype(int))]
        fit = pf.feols("outcome ~ mu_hat + lap + mu_hat:lap | entity_num + period_num", data=drawn,
                       fixef_rm="singleton", fixef_tol=1e-14, vcov="iid")
        out.append(fit.coef()["mu_hat:lap"])
        seconds += time.perf_counter() - start
    return np.array(out), seconds


def timed(frame: pd.DataFrame, draws: int, resample: str) -> tuple[np.ndarray, float]:
    start = time.perf_counter()
    result = pairs_bootstrap(frame, 0.0, B=draws, seed=SEED, resample=resample, progress=False).draws
    return result, time.perf_counter() - start


def measure(name: str, smoke: bool) -> dict:
    """One design in this process: lapbias (pairs, then entity resampling; one untimed warm-up call compiles or
    loads the kernels), then the previous kernel (the C kernel switched off), then the naive loop on the first draws."""
    rows, entities, periods, small, draws, previous_draws, naive_draws = (SMOKE if smoke else DESIGNS)[name]
    frame = make_panel(rows, entities, periods, small)
    if lanes.UNAVAILABLE:
        raise RuntimeError(lanes.UNAVAILABLE)
    pairs_bootstrap(frame, 0.0, B=2, seed=SEED, progress=False)
    result = {"name": name, "rows": len(frame), "entities": frame["entity_num"].nunique(),
              "periods": frame["period_num"].nunique(), "draws": draws, "previous_draws": previous_draws,
              "naive_draws": naive_draws}
    fast = {}
    for resample in ("obs", "entity"):
        fast[resample], result[f"{resample}_seconds"] = timed(frame, draws, resample)
        result[f"{resample}_unidentified"] = int(np.isnan(fast[resample]).sum())
    result["peak_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6  # before the baselines
    lanes.UNAVAILABLE = "switched off: the previous kernel's timing"
    try:
        for resample in ("obs", "entity"):
            previous, result[f"{resample}_previous_seconds"] = timed(frame, previous_draws, resample)
            result[f"{resample}_previous_diff"] = float(np.max(np.abs(fast[resample][:previous_draws] - previous)))
    finally:
        lanes.UNAVAILABLE = ""
    naive(frame.head(min(rows, 2_000)), 1, "obs")  # warm-up: pyfixest compiles its kernels on the first fit
    for resample in ("obs", "entity"):
        reference, result[f"{resample}_naive_seconds"] = naive(frame, naive_draws, resample)
        result[f"{resample}_naive_diff"] = float(np.max(np.abs(fast[resample][:naive_draws] - reference)))
    return result


def per_10k(seconds: float, draws: int) -> str:
    how = "measured" if draws == B else f"{seconds:.1f} s on {draws:,} draws, extrapolated"
    return f"{seconds / draws * B:,.1f} s ({how})"


def row(r: dict, resample: str) -> str:
    full = r[f"{resample}_seconds"] / r["draws"] * B
    previous = r[f"{resample}_previous_seconds"] / r["previous_draws"] * B
    naive_full = r[f"{resample}_naive_seconds"] / r["naive_draws"] * B
    return (f"| {r['name']} | {resample} | {r['rows']:,} | {r['entities']:,} x {r['periods']} "
            f"| {per_10k(r[f'{resample}_seconds'], r['draws'])} "
            f"| {per_10k(r[f'{resample}_previous_seconds'], r['previous_draws'])} | {previous / full:.1f}x "
            f"| {r[f'{resample}_previous_diff']:.1e} "
            f"| {per_10k(r[f'{resample}_naive_seconds'], r['naive_draws'])} | {naive_full / full:,.0f}x "
            f"| {r[f'{resample}_naive_diff']:.1e} | {r['peak_gb']:.2f} GB |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: checks that the benchmark runs")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--only", nargs="*", help="design names to run (default: all)")
    parser.add_argument("--design", help=argparse.SUPPRESS)  # internal: one design in a child process
    args = parser.parse_args(argv)
    if args.design:
        print(json.dumps(measure(args.design, args.smoke)))
        return
    load_before = os.getloadavg()
    results, failures = [], []
    for name in DESIGNS:
        if args.smoke:  # one process: the smoke test checks that the benchmark runs, not its memory
            results.append(measure(name, smoke=True))
            continue
        if args.only and name not in args.only:
            continue
        out = subprocess.run([sys.executable, __file__, "--design", name], capture_output=True, text=True)
        if out.returncode:
            failures.append(f"{name}: failed, {(out.stderr.strip().splitlines() or ['no message'])[-1]}")
            continue
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    load = os.getloadavg()
    lines = [
        "## Pairs bootstrap (issue 17)", "",
        f"Machine: {describe()}, SIMD {simd()}; load average {load_before[0]:.1f} / {load_before[1]:.1f} "
        f"(1 / 5 min) when the run started, {load[0]:.1f} / {load[1]:.1f} when it ended (other jobs share these "
        f"cores: times are upper bounds). {B:,} draws of beta_3, seed {SEED}, entity and period FE, random unbalanced "
        f"panels; lapbias runs its draws in {threads()} threads. Baselines in the same run: the "
        "previous kernel (numba, one draw at a time: what lapbias runs where the C kernel is not compiled) and the "
        "naive loop (materialise each draw, pyfixest feols).", "",
        "| design | resampling | rows | entities x periods | lapbias, 10,000 draws | previous kernel, 10,000 draws "
        "| speed-up | max abs beta_3 difference to the previous kernel | naive pyfixest loop, 10,000 draws "
        "| speed-up | max abs beta_3 difference on the naive draws | peak memory of lapbias (data included) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
        *[row(r, resample) for r in results for resample in ("obs", "entity")],
        *[f"\n{line}" for line in failures],
        "", "Targets (issue 17): paper scale at most 10 s and 2 GB on 2 cores; 1,000,000 rows at most 60 s.",
    ]
    write_report(args.out, lines)


if __name__ == "__main__":
    main()
