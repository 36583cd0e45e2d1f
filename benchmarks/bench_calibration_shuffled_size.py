"""Size of the detection test under the "shuffled" control's null, on the planted answers of the committed 8-epoch
run (calibration_run_pairs.csv; --pairs calibration_run6_pairs.csv for the 6-epoch run the control first permuted):
the Min-K% LAP permuted over the pre-cutoff pairs many times (the control permutes it
once), each time the detection regression of protocol Step 4 (outcome on mu_hat, LAP and mu_hat x LAP, entity and
monthly period effects, entity clusters; the same estimate as the run's: the unpermuted draw reproduces its t), and
the share of permutations whose one-sided p of beta_3 is below 5% and 10%, and the randomization p of the measured
t (the share of permuted t at or above it, with the measured draw counted: (k + 1) / (n + 1)). A shuffled run with a
uniform permutation fails its expectation (p < 0.05) by chance in that share of draws, so one shuffled run passes
about 94% of the time whatever the test's size; the permutation distribution is the control's evidence. Writes benchmarks/results/calibration_shuffled_size.md.

    python benchmarks/bench_calibration_shuffled_size.py [permutations] [--pairs FILE] [--out FILE]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyfixest as pf
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe, write_report  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "benchmarks/results/calibration_shuffled_size.md"
RUN = REPO / "benchmarks/results/calibration_run_pairs.csv"


def detection_t(frame: pd.DataFrame, lap: np.ndarray) -> float:
    """t statistic of beta_3 on mu_hat x LAP (protocol Step 4) with `lap` as the LAP column."""
    fit = pf.feols("outcome ~ mu_hat * lap | entity_id + period", data=frame.assign(lap=lap),
                   vcov={"CRV1": "entity_id"})
    return float(fit.tidy().loc["mu_hat:lap", "t value"])


def one_sided_p(t: np.ndarray | float, clusters: int) -> np.ndarray | float:
    """One-sided p of beta_3 > 0 from its CRV1 t: Student t with G - 1 degrees of freedom, as reghdfe's clustered
    test and the run's detection table."""
    return stats.t.sf(t, clusters - 1)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("permutations", nargs="?", type=int, default=1000)
    parser.add_argument("--pairs", type=Path, default=RUN)
    parser.add_argument("--model", default="planted")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    try:
        pairs = pd.read_csv(args.pairs)
        frame = pairs[(pairs["model"] == args.model) & (pairs["post"] == 0)].dropna(subset=["mu_hat", "lap_mink"])
    except (OSError, ValueError, KeyError, pd.errors.ParserError) as err:
        reason = f"no column(s) {err}" if isinstance(err, KeyError) else " ".join(str(err).split())
        raise SystemExit(f"--pairs {args.pairs}: {reason} (a results/calibration/pairs.csv of `lapbias calibrate`)")
    if frame["lap_mink"].nunique() < 2 or frame["mu_hat"].nunique() < 2:
        raise SystemExit(f"--pairs {args.pairs}: model {args.model!r} has no pre-cutoff rows with varying mu_hat and "
                         "lap_mink: beta_3 is not identified")
    frame = frame.copy()
    frame["period"] = pd.to_datetime(frame["target_date"]).dt.to_period("M").astype(str)
    clusters = frame["entity_id"].nunique()
    lap = frame["lap_mink"].to_numpy(float)
    rng = np.random.default_rng(2026)
    start = time.process_time()
    observed = detection_t(frame, lap)
    t = np.array([detection_t(frame, rng.permutation(lap)) for _ in range(args.permutations)])
    p = one_sided_p(t, clusters)

    def share(level: float) -> str:
        k = int((p < level).sum())
        low, high = proportion_confint(k, len(p), method="wilson")
        return f"{k / len(p):.1%} [{low:.1%}, {high:.1%}]"

    write_report(args.out, [
        "## Self-validation: size of the detection test under the shuffled control's null", "",
        f"Machine: {describe()}. `{args.pairs.name}`, model `{args.model}`: {len(frame)} pre-cutoff rows, {clusters} "
        f"entity clusters. The Min-K% LAP permuted over the pre-cutoff rows {args.permutations} times (seed 2026); "
        "each time the detection regression (entity and monthly period effects, entity clusters); one-sided p from "
        f"t with {clusters - 1} degrees of freedom. 95% Wilson intervals.", "",
        "| quantity | value |", "|---|---|",
        f"| t of beta_3, LAP as measured | {observed:.2f} |",
        f"| permuted: mean t (SD) | {t.mean():.2f} ({t.std():.2f}) |",
        f"| permuted: share one-sided p < 0.05 | {share(0.05)} |",
        f"| permuted: share one-sided p < 0.10 | {share(0.10)} |",
        f"| randomization p of the measured t ((k + 1) / (n + 1), k permuted t >= it) | "
        f"{(int((t >= observed).sum()) + 1) / (len(t) + 1):.4f} ({int((t >= observed).sum())} of {len(t)}) |",
        f"| CPU s | {time.process_time() - start:.0f} |"])


if __name__ == "__main__":
    main()
