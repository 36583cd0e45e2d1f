"""Size of the calibration's tests on the clean model, and power on the planted one, by outcome redraws of a real
run's answers (calibrate/power.py `redrawn_panel`: the panel's firms, dates, arms and answers held, outcomes
redrawn with the trading-day shock shared by every firm on a date): for each clustering ([estimate] cluster), the
share of redraws in which each validation theta's nominal 5% test rejects, the placebo fails (nominal 10%), beta_3
is significantly negative, and the verdict's Mixed/invalid and "Contamination detected" shares, for the base and the
planted model; a theta's test reads the p the verdict reads (the wild cluster bootstrap's below 42 clusters). The verdict is the product's (simulate.tables, report.verdict.decide) with 999 wild draws.

    .venv/bin/python benchmarks/bench_calibration_size.py                       # the committed run, 300 redraws
    .venv/bin/python benchmarks/bench_calibration_size.py --pairs FILE --lap lap_mink_text --reps 100

Writes benchmarks/results/calibration_size.md (or --out).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_calibration_power import wilson  # noqa: E402
from machine import describe, write_report  # noqa: E402

from lapbias import simulate  # noqa: E402
from lapbias.calibrate.power import SIMULATION_WILD_REPS, redrawn_panel  # noqa: E402
from lapbias.config import EstimateConfig  # noqa: E402
from lapbias.report.verdict import BETA3, CONTAMINATION, MIXED, decide, term_row, theta_p  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PAIRS = ROOT / "benchmarks/results/calibration_run_pairs.csv"
OUT = ROOT / "benchmarks/results/calibration_size.md"
CLUSTERINGS = ("entity", "entity date")


def one_redraw(records: pd.DataFrame, seed: int, planted: bool, thresholds: EstimateConfig) -> dict:
    pre, post = redrawn_panel(records, seed, planted=planted)
    found = simulate.tables(pre, post, thresholds)
    verdict = decide(found["detection"], found["validation"], found["placebo"], found["power"], thresholds,
                     found["notes"])
    row = {"label": verdict.label, "failed": "; ".join(verdict.failed)}
    for half in ("high_lap", "low_lap"):
        theta = term_row(found["validation"], half, "ud")
        p = theta_p(theta, thresholds.wild_below_clusters) if theta is not None else math.nan
        row[f"{half}_rejects"] = bool(p < 0.05)  # the p the verdict reads: wild below 42 clusters
    row["placebo_fails"] = "placebo" in verdict.failed
    row["beta3_negative"] = "beta_3 negative" in verdict.failed
    beta3 = term_row(found["detection"], "pre", BETA3)
    row["t_beta3"] = float(beta3["t"]) if beta3 is not None else math.nan
    return row


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=Path, default=PAIRS)
    parser.add_argument("--lap", default="lap_mink", help="the pairs.csv column that is the LAP")
    parser.add_argument("--reps", type=int, default=300)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    try:
        pairs = pd.read_csv(args.pairs)
    except (OSError, ValueError, pd.errors.ParserError) as err:  # EmptyDataError, UnicodeDecodeError: ValueErrors
        raise SystemExit(f"--pairs {args.pairs}: {' '.join(str(err).split())} (a results/calibration/pairs.csv of "
                         "`lapbias calibrate`)")
    needed = ["model", "row_id", "entity_id", "target_date", "arm", "post", "direction", "mu_hat", "ud",
              "lap_recall", args.lap]
    missing = [column for column in needed if column not in pairs]
    if missing:
        raise SystemExit(f"--pairs {args.pairs}: no column(s) {missing} (a results/calibration/pairs.csv of "
                         "`lapbias calibrate`; --lap names the LAP column)")
    pairs = pairs.assign(lap=pairs[args.lap])
    lines = ["## Size of the calibration's tests by outcome redraws", "",
             f"Machine: {describe()}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. Answers of "
             f"`{args.pairs.relative_to(ROOT) if args.pairs.is_relative_to(ROOT) else args.pairs}`, LAP "
             f"`{args.lap}`, {args.reps} outcome redraws per row (calibrate/power.py `redrawn_panel`: firms, dates, "
             "arms and answers held; firm + trading-day shock shared on a date + noise redrawn), the product's "
             f"verdict with {SIMULATION_WILD_REPS} wild draws. Shares with 95% Wilson intervals.", "",
             "| model | clusters | theta high rejects (5%) | theta low rejects (5%) | placebo fails (10%) | "
             "beta_3 significantly negative (5%) | Mixed/invalid | Contamination detected | median t(beta_3) | "
             "failed parts of the Mixed verdicts |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for model, planted in (("base", False), ("planted", True)):
        records = pairs[pairs["model"] == model]
        if records.empty:
            continue
        for clustering in CLUSTERINGS:
            thresholds = EstimateConfig(wild_bootstrap_reps=SIMULATION_WILD_REPS, cluster=clustering)
            clock = time.time()
            rows = pd.DataFrame([one_redraw(records, seed, planted, thresholds) for seed in range(args.reps)])
            n = len(rows)
            mixed = rows[rows["label"] == MIXED]
            reasons = mixed["failed"].value_counts().to_dict()
            share = lambda flags: wilson(float(np.mean(flags)), n)  # noqa: E731
            lines.append(f"| {model} | {clustering} | {share(rows['high_lap_rejects'])} | "
                         f"{share(rows['low_lap_rejects'])} | {share(rows['placebo_fails'])} | "
                         f"{share(rows['beta3_negative'])} | {share(rows['label'] == MIXED)} | "
                         f"{share(rows['label'] == CONTAMINATION)} | "
                         f"{np.nanmedian(rows['t_beta3']):.2f} | "
                         + ", ".join(f"{k}: {v}" for k, v in reasons.items()) + " |")
            print(lines[-1], f"({time.time() - clock:.0f} s)", flush=True)
    write_report(args.out, lines)


if __name__ == "__main__":
    main()
