"""Power of the self-validation's design from MEASURED behaviour (python/lapbias/calibrate/power.py): the share of
simulated calibration panels whose verdict is "Contamination detected" when every (entity, target_date) pair answers
as a pair of the same arm answered in a real run, for the planted and for the base model, by panel design.

The behaviour is read from pairs files (results/calibration/pairs.csv of `lapbias calibrate`; by default
`DEFAULT_PAIRS`: the run at 120 exposed pairs on the panel's earlier draw with 8 post-cutoff months, the run of the
committed panel and pairs at 6 epochs (120 exposed pairs) and the run at 160 exposed pairs, both on the committed panel): per pair its
arm, Min-K% LAP, recall LAP, recalled direction ud, parsed forecast and realized direction. Each design
is simulated `reps` times through the protocol's regressions and the verdict rule as the report applies it,
thresholds unchanged. 95% Wilson intervals. Writes
benchmarks/results/calibration_power.md.

    python benchmarks/bench_calibration_power.py [reps] [--pairs FILE ...] [--lap lap_mink|lap_recall]
    python benchmarks/bench_calibration_power.py 200 --committed \
        --pairs benchmarks/results/calibration_run_pairs.csv benchmarks/results/calibration_run_seed2_pairs.csv \
        --out benchmarks/results/calibration_power_committed.md   # the committed design on both seeds' answers
    python benchmarks/bench_calibration_power.py 200 --committed \
        --pairs benchmarks/results/calibration_run6_pairs.csv benchmarks/results/calibration_run6_seed2_pairs.csv \
        --out benchmarks/results/calibration_power_6epochs.md   # the 6-epoch design on both seeds' answers
    python benchmarks/bench_calibration_power.py 200 --design 0 2 \
        --pairs benchmarks/results/calibration_run160_pairs.csv \
        --out benchmarks/results/calibration_power_160.md   # 37.5% and 50% exposed on that run's own answers
    python benchmarks/bench_calibration_power.py --smoke --out FILE
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pandas as pd
from statsmodels.stats.proportion import proportion_confint

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe, write_report  # noqa: E402

from lapbias.calibrate.power import Behaviour, Design, design_power  # noqa: E402
from lapbias.errors import ConfigError  # noqa: E402
from lapbias.estimate.bootstrap import threads  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "benchmarks/results/calibration_power.md"
RUN6 = REPO / "benchmarks/results/calibration_run6_pairs.csv"
"""pairs.csv of the design before, 6 epochs (`make demo-calibrate` on a fresh clone, seeds 2026, 120 exposed pairs,
37.5%), from which the grid was computed."""
RUN160 = REPO / "benchmarks/results/calibration_run160_pairs.csv"
"""pairs.csv of the run with 160 exposed pairs (50%) on the committed panel (`make demo-calibrate` on a fresh clone,
seeds 2026, 6 epochs), the design the power calculation on RUN6's answers favoured: its memory per pair was weaker."""
RUN120 = REPO / "benchmarks/results/calibration_run120_pairs.csv"
"""pairs.csv of the run at 120 exposed pairs (37.5%) on the panel's 8 + 8 month draw, from which the 12 post-cutoff
months were chosen."""
DEFAULT_PAIRS = [RUN120, RUN6, RUN160]
DESIGNS = [Design(), Design(post_periods=8), Design(exposed_share=0.5), Design(entities=60)]
"""The calibration panel (data/demo/make_calibrate_panel.py) as committed (12 post-cutoff months, 37.5% exposed), with
the 8 post-cutoff months it had before, with half of the pre-cutoff pairs exposed, and with 60 firms
(docs/calibrate.md)."""


def _cell(args) -> tuple[dict, float]:
    design, behaviour, reps = args
    start = time.process_time()
    return design_power(design, behaviour, reps), time.process_time() - start


def wilson(share: float, reps: int) -> str:
    low, high = proportion_confint(round(share * reps), reps, method="wilson")
    return f"{share:.1%} [{low:.1%}, {high:.1%}]"


def behaviour_table(behaviours: list[Behaviour]) -> list[str]:
    """Per model and arm: pairs, LAP mean and SD, the gap from the never-exposed arm in pooled SDs, parse and hit
    rates, mean ud x direction."""
    lines = ["| model | arm | pairs | LAP mean | LAP SD | gap from never exposed (SD) | parse rate | hit rate | "
             "ud x truth |", "|---|---|---|---|---|---|---|---|---|"]
    for behaviour in behaviours:
        summary = behaviour.summary()
        never = summary.loc["never"]
        for arm, row in summary.iterrows():
            pooled = ((row["lap_sd"] ** 2 + never["lap_sd"] ** 2) / 2) ** 0.5
            gap = "—" if arm == "never" else f"{(row['lap_mean'] - never['lap_mean']) / pooled:+.2f}"
            lines.append(f"| {behaviour.name} | {arm} | {row['pairs']:.0f} | {row['lap_mean']:.3g} | "
                         f"{row['lap_sd']:.3g} | {gap} | {row['parse_rate']:.1%} | {row['hit_rate']:.1%} | "
                         f"{row['ud_x_truth']:+.3f} |")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("reps", nargs="?", type=int, default=200)
    parser.add_argument("--pairs", type=Path, nargs="+", default=DEFAULT_PAIRS,
                        help="pairs.csv files of `lapbias calibrate`")
    parser.add_argument("--lap", default="lap_mink", help="the LAP column the calibration uses")
    parser.add_argument("--committed", action="store_true", help="the committed design only")
    parser.add_argument("--design", type=int, nargs="+", choices=range(len(DESIGNS)), metavar="INDEX",
                        help="these designs of DESIGNS only (0 = the committed one)")
    parser.add_argument("--smoke", action="store_true", help="2 panels, the committed design only")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if args.committed and args.design:
        parser.error("--committed is --design 0: give one of them")
    reps = 2 if args.smoke else args.reps
    chosen = [0] if args.smoke or args.committed else args.design or range(len(DESIGNS))
    designs = [DESIGNS[index] for index in chosen]
    files = args.pairs[:1] if args.smoke else args.pairs
    behaviours = []
    for path in files:
        try:
            pairs = pd.read_csv(path)
            models = list(dict.fromkeys(pairs["model"].astype(str)))
            pairs["model"] = pairs["model"].astype(str) + f" ({path.stem})"
            # only the planted model was shown the exposed pairs' outcomes: the base model's (and a shuffled
            # control's) arms are pooled in the simulation (calibrate/power.py simulated_panel)
            behaviours += [Behaviour.from_pairs(pairs, f"{model} ({path.stem})", args.lap, planted=model == "planted")
                           for model in models]
        except (OSError, ValueError, KeyError, pd.errors.ParserError, ConfigError) as err:
            # UnicodeDecodeError and pandas' EmptyDataError are ValueErrors
            reason = " ".join(str(err).split())  # pandas' tokenizer errors span lines
            raise SystemExit(f"--pairs {path}: {reason} (a results/calibration/pairs.csv of `lapbias calibrate`)")
    jobs = [(design, behaviour, reps) for design in designs for behaviour in behaviours]
    if args.smoke:  # in this process: a pool forked from a process that already runs threads (a test) can hang
        done = [_cell(job) for job in jobs]
    else:
        with ProcessPoolExecutor(min(len(jobs), threads())) as pool:
            done = list(pool.map(_cell, jobs))
    sources = ", ".join(f"`{p.relative_to(REPO) if p.is_relative_to(REPO) else p.name}`" for p in files)
    title = ("the committed design" if args.committed else "the design" if len(designs) == len(DESIGNS)
             else "; ".join(design.describe() for design in designs))
    title += f", {reps} panels per cell" if args.committed or args.design else ""
    lines = [f"## Self-validation: power of {title} from measured behaviour", "",
             f"Machine: {describe()}. Behaviour measured per pair in {sources} (LAP: `{args.lap}`), below. "
             f"{reps} simulated panels per cell (python/lapbias/calibrate/power.py): the calibration panel's "
             "data-generating process at the design's size, every pair answering as a measured pair of its arm, "
             "firm by firm (each simulated firm answers as one measured firm: a block bootstrap); exposed pairs keep "
             "whether their forecast and recalled direction were right relative to the simulated outcome, "
             "never-exposed and post-cutoff pairs answer as measured; the protocol's regressions and verdict rule with the "
             "defaults (999 wild bootstrap draws per panel below 42 clusters). 95% Wilson intervals. The placebo is "
             "a one-sided test at 10%: about one panel in ten fails it by chance, which bounds every cell near 90%.",
             "", *behaviour_table(behaviours), "",
             "| design | model | Contamination detected | validation pattern | placebo passes | median t(beta_3) | "
             "median t(b1) | Mixed/invalid | Underpowered | CPU s |", "|---|---|---|---|---|---|---|---|---|---|"]
    for (design, behaviour, reps_), (result, seconds) in zip(jobs, done):
        lines.append(f"| {design.describe()} | {behaviour.name} | {wilson(result['p_contamination'], reps_)} | "
                     f"{result['p_validation']:.1%} | {result['p_placebo_passes']:.1%} | "
                     f"{result['t_beta3_median']:.2f} | {result['t_b1_median']:.2f} | "
                     f"{result.get('share Mixed/invalid', 0):.1%} | {result.get('share Underpowered', 0):.1%} | "
                     f"{seconds:.0f} |")
    write_report(args.out, lines)


if __name__ == "__main__":
    main()
