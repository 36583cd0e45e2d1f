"""Power of the self-validation's design, by simulation (python/lapbias/calibrate/power.py): the share of simulated
planted models whose verdict is "Contamination detected", on the committed calibration panel
(data/demo/calibrate_panel.csv: its outcomes, entities and monthly periods) and on the demo panel, by number of
exposed pre-cutoff pairs and forecast hit rate of the exposed pairs; every panel goes through the protocol's
regressions and verdict rule. 95% Wilson intervals. Writes benchmarks/results/calibration_power.md.

    python benchmarks/bench_calibration_power.py [reps]        # default 400 per cell
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

from lapbias.calibrate import load  # noqa: E402
from lapbias.calibrate.experiment import pairs_with_outcomes  # noqa: E402
from lapbias.calibrate.power import PlantedBehaviour, design_power  # noqa: E402
from lapbias.data.validate import validate_file  # noqa: E402
from lapbias.estimate.bootstrap import threads  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "benchmarks/results/calibration_power.md"
PANELS = {"calibration panel (40 firms x 4 + 2 months, monthly FE)": ("data/demo/calibrate_panel.csv", "month"),
          "demo panel (30 firms x 4 + 4 common dates, daily FE)": ("data/demo/demo_panel.csv", "day")}
GRID = [(n, hit) for n in (40, 60, 80) for hit in (0.75, 0.9, 1.0)]


def _cell(args) -> tuple[dict, float]:
    panel, frequency, n, hit, reps, seed = args
    run, _ = load(REPO / "data/demo/calibrate.toml")
    run = run.replace(data={"path": str(REPO / panel)}, study={"frequency": frequency})
    pairs = pairs_with_outcomes(run)
    rows = validate_file(run.data.path, run).frame[["entity_id", "target_date", "outcome"]]
    start = time.process_time()
    result = design_power(pairs, rows, pd.Timestamp(run.study.cutoff_date), n, PlantedBehaviour(hit_rate=hit), reps,
                          seed, frequency)
    return result, time.process_time() - start


def wilson(share: float, reps: int) -> str:
    low, high = proportion_confint(round(share * reps), reps, method="wilson")
    return f"{share:.1%} [{low:.1%}, {high:.1%}]"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("reps", nargs="?", type=int, default=400)
    parser.add_argument("--smoke", action="store_true", help="5 panels per cell, two cells")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    reps = 5 if args.smoke else args.reps
    grid = GRID[4:6] if args.smoke else GRID
    jobs = [(panel, frequency, n, hit, reps, 0) for panel, frequency in PANELS.values() for n, hit in grid
            if not (panel == "data/demo/demo_panel.csv" and n > 40)]  # the demo panel has 118 pre-cutoff pairs
    names = {v: k for k, v in PANELS.items()}
    if args.smoke:  # in this process: a pool forked from a process that already runs threads (a test) can hang
        done = [_cell(job) for job in jobs]
    else:
        with ProcessPoolExecutor(min(len(jobs), threads())) as pool:
            done = list(pool.map(_cell, jobs))
    behaviour = PlantedBehaviour()
    lines = ["## Self-validation: power of the design (simulation)", "",
             f"Machine: {describe()}. {reps} simulated planted models per cell (python/lapbias/calibrate/power.py): "
             f"exposed pre-cutoff pairs drawn as the calibration draws them (half up, half down), recall LAP "
             f"U{behaviour.lap_exposed} on exposed pairs and U{behaviour.lap_unexposed} elsewhere, the recalled "
             f"direction right on {behaviour.recall_accuracy:.0%} of exposed pairs, each exposed row's forecast the "
             "realized direction with the hit rate below, every other forecast up or down at random; the panel's "
             "own outcomes, entities and periods; the protocol's regressions and verdict rule "
             "(lapbias.simulate.verdict). 95% Wilson intervals. The placebo is a one-sided test at 10%: "
             "about one simulated model in ten fails it by chance, which bounds every cell near 90%. \"placebo "
             "informative\": its minimum detectable share (power.csv placebo_mde_share, median given) at most "
             "[estimate] detectable_share (0.37), which \"Contamination detected\" requires unless its power "
             "cannot be stated (b1 <= 0 or no post-cutoff standard error: report.verdict.placebo_power); \"only "
             "the placebo's power missing\": beta_3 significant, validation present, placebo passed but "
             "uninformative.", "",
             "| panel | exposed pairs | hit rate | Contamination detected | placebo informative | placebo MDE share "
             "(median) | only the placebo's power missing | Mixed/invalid | Underpowered | CPU s |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for (panel, frequency, n, hit, reps_, _), (result, seconds) in zip(jobs, done):
        lines.append(f"| {names[(panel, frequency)]} | {n} | {hit:.2f} | {wilson(result['p_contamination'], reps_)} | "
                     f"{result['p_placebo_informative']:.1%} (power unstated: {result['p_placebo_power_unstated']:.1%}) | "
                     f"{result['placebo_mde_share_median']:.2f} | "
                     f"{result['p_only_placebo_uninformative']:.1%} | "
                     f"{result.get('share Mixed/invalid', 0):.1%} | {result.get('share Underpowered', 0):.1%} | "
                     f"{seconds:.0f} |")
    write_report(args.out, lines)


if __name__ == "__main__":
    main()
