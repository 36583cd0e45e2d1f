"""The wild cluster restricted bootstrap of beta_3 (estimate/wild.py) against pyfixest's `Feols.wildboottest` (the
`wildboottest` package) on the same panels: outcome on mu_hat, lap, mu_hat x lap, absorb(entity_num period_num),
clusters by entity, Webb weights, H0 beta_3 = 0 imposed.

Designs: the verdict Monte Carlo's few-cluster panel (8 entities x 150 days), its demo and paper-like shapes, the
paper's size (1,499 firms x 330 dates, 91,361 rows) and 1,000,000 rows (3,000 x 330). lapbias runs 9,999 draws (the
default); pyfixest is timed on 999 draws where it runs in minutes, and left out where the dense one-hot design it
builds, N x (K + E + T) doubles, and its G^2 loop of (K + E + T)^2 products cannot run here (the design's size is
stated). The two agree draw by draw (tests/test_wild_bootstrap.py); here the max difference of the t statistics
over the common draws is printed for the designs both run. Times are CPU seconds of this process (the machine is
shared); peak memory is the process's ru_maxrss. Data generation is not timed. Writes benchmarks/results/wild.md
(`--smoke --out FILE`: the two smallest designs into FILE).
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe, write_report  # noqa: E402

from lapbias.estimate.reghdfe import drop_singletons  # noqa: E402
from lapbias.estimate.wild import wild_cluster_bootstrap  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "wild.md"
TERMS = ["mu_hat", "lap", "c.mu_hat#c.lap"]
# name, entities, periods, share of cells observed, whether pyfixest runs
DESIGNS = [("8 entities x 150 days", 8, 150, 0.65, True), ("demo, 30 x 8", 30, 8, 1.0, True),
           ("paper-like, 300 x 40, 40% of cells", 300, 40, 0.4, True),
           ("paper scale, 1,499 x 330", 1_499, 330, 91_361 / (1_499 * 330), False),
           ("1,000,000 rows, 3,000 x 330", 3_000, 330, 1_000_000 / (3_000 * 330), False)]


def panel(entities: int, periods: int, coverage: float) -> pd.DataFrame:
    rng = np.random.default_rng(entities)
    cells = rng.uniform(size=(entities, periods)) < coverage
    entity, period = np.nonzero(cells)
    n = entity.size
    frame = pd.DataFrame({"entity_num": entity + 1, "period_num": period + 1,
                          "mu_hat": rng.choice([-1.0, 0.0, 1.0], n), "lap": rng.uniform(size=n)})
    frame["outcome"] = (0.2 * frame["mu_hat"] + rng.normal(size=entities)[entity] + rng.normal(size=periods)[period]
                        + rng.normal(size=n))
    return drop_singletons(frame, ["entity_num", "period_num"])[0]


def cpu(function):
    start = time.process_time()
    result = function()
    return result, time.process_time() - start


def pyfixest_wild(frame: pd.DataFrame, reps: int) -> np.ndarray:
    import pyfixest as pf

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = pf.feols("outcome ~ mu_hat + lap + x3 | entity_num + period_num",
                       data=frame.assign(x3=frame["mu_hat"] * frame["lap"]), vcov={"CRV1": "entity_num"})
        return fit.wildboottest(param="x3", reps=reps, weights_type="webb", bootstrap_type="11", seed=1,
                                return_bootstrapped_t_stats=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    designs = DESIGNS[:2] if args.smoke else DESIGNS
    rows = []
    small = panel(30, 8, 1.0)  # numba compiles pyfixest's demeaning kernel once per process: not timed
    wild_cluster_bootstrap(small, "outcome", TERMS, "c.mu_hat#c.lap", 99, 1)
    pyfixest_wild(small, 99)
    for name, entities, periods, coverage, with_pyfixest in designs:
        frame = panel(entities, periods, coverage)
        ours, seconds = cpu(lambda: wild_cluster_bootstrap(frame, "outcome", TERMS, "c.mu_hat#c.lap", 9_999, 1))
        width = 3 + entities + periods
        design_gb = len(frame) * width * 8 / 1e9
        if with_pyfixest:
            (summary, draws), theirs = cpu(lambda: pyfixest_wild(frame, 999))
            factor = float(summary["t value"]) / ours.t
            first = wild_cluster_bootstrap(frame, "outcome", TERMS, "c.mu_hat#c.lap", 999, 1)
            difference = float(np.max(np.abs(np.asarray(draws) / factor - first.draws)))
            pyfixest = f"{theirs:.2f} s | {difference:.1e}"
        else:
            pyfixest = f"not run: a dense one-hot design of {design_gb:.1f} GB and a {entities:,}^2 loop | —"
        rows.append(f"| {name} | {len(frame):,} | {entities:,} | {seconds:.2f} s | {ours.p_one_sided:.4f} | "
                    f"{pyfixest} |")
        print(rows[-1], flush=True)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
    write_report(args.out, [
        "## Wild cluster restricted bootstrap of beta_3", "",
        f"Machine: {describe()}. CPU seconds of one process (the cores are shared with other jobs: wall time is not "
        "reported). lapbias: estimate/wild.py, 9,999 draws, Webb weights, seed 1, both fixed effects partialled out; "
        "pyfixest: `Feols.wildboottest(param, reps=999, weights_type=\"webb\", bootstrap_type=\"11\", seed=1)`, "
        "which builds the one-hot design of both fixed effects (pyfixest 0.60.0, wildboottest 0.3.2). The last "
        "column compares the first 999 draws' t statistics (lapbias's with 999 draws and the same seed draw the same "
        "weights), scaled by the ratio of the two programs' CRV1 small-sample factors.", "",
        "| design | rows | clusters | lapbias, 9,999 draws | lapbias one-sided p | pyfixest, 999 draws | max abs "
        "difference of t* |", "|---|---|---|---|---|---|---|", *rows, "",
        f"Peak resident memory of the process: {peak:.2f} GB."])


if __name__ == "__main__":
    main(sys.argv[1:])
