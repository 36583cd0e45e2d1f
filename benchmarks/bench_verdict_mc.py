"""Verdict-level Monte Carlo (issue 11 item 6): the share of simulated panels given each verdict label.

Scenarios (DGP: python/lapbias/estimate/simulate.py; noise set so that a paper-sized interaction has the paper's
expected t statistic, 4.86): no contamination (beta_3 = 0, validation pattern present: the hardest null);
paper-sized interaction (beta_3 x SD(LAP) = 37% of the standalone LLM effect); LAP without numerical variation;
no contamination with 5x the noise (a weak signal); the model that almost always answers "unknown" (issue 11
item 5's example: LAP between 0.001 and 0.02, no recall). Shapes: the demo's (30 entities x 8 periods) and a paper-like
one (300 entities x 40 dates, 40% of cells observed). Requirements: "Contamination detected" <= 5% without
contamination, >= 80% with a paper-sized interaction; "Underpowered" where LAP does not vary. 95% Wilson intervals.
Writes benchmarks/results/verdict_mc.md.

    python benchmarks/bench_verdict_mc.py [reps_demo] [reps_paper_like]
"""

from __future__ import annotations

import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
from statsmodels.stats.proportion import proportion_confint

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe  # noqa: E402

from lapbias.estimate.simulate import DEMO, PAPER_LIKE, PAPER_SHARE, simulate, verdict  # noqa: E402
from lapbias.report.verdict import CONTAMINATION, MIXED, NO_EVIDENCE, UNDERPOWERED  # noqa: E402

LABELS = [CONTAMINATION, NO_EVIDENCE, UNDERPOWERED, MIXED]


def _labels(seeds: range, shape, share: float, flat_lap: bool, noise_factor: float,
            unknown: bool) -> tuple[list[str], float]:
    np.seterr(all="ignore")
    start = time.process_time()
    labels = [verdict(*simulate(seed, shape, share, flat_lap, noise_factor, unknown)).label for seed in seeds]
    return labels, time.process_time() - start


def run(shape, share: float, reps: int, flat_lap: bool = False, noise_factor: float = 1.0,
        unknown: bool = False) -> tuple[pd.Series, float]:
    """Labels of seeds 0..reps-1 (each panel depends only on its seed, so the split over processes does not change
    them) and the CPU seconds they took."""
    chunks = [range(first, min(first + 50, reps)) for first in range(0, reps, 50)]
    with ProcessPoolExecutor(len(os.sched_getaffinity(0))) as pool:
        done = list(pool.map(_labels, chunks, *([x] * len(chunks) for x in (shape, share, flat_lap, noise_factor,
                                                                             unknown))))
    labels = pd.Series([label for chunk, _ in done for label in chunk])
    return labels.value_counts().reindex(LABELS, fill_value=0), sum(seconds for _, seconds in done)


def cell(count: int, reps: int) -> str:
    low, high = proportion_confint(count, reps, method="wilson")
    return f"{count / reps:.1%} [{low:.1%}, {high:.1%}]"


def main(reps_demo: int, reps_paper: int) -> None:
    few = max(reps_demo // 10, 5)
    scenarios = [(DEMO, "no contamination", 0.0, reps_demo, False, 1.0, False, "Contamination <= 5%"),
                 (DEMO, "paper-sized interaction", PAPER_SHARE, reps_demo, False, 1.0, False, "Contamination >= 80%"),
                 (DEMO, "LAP without variation", PAPER_SHARE, few, True, 1.0, False, "Underpowered"),
                 (DEMO, "no contamination, 5x noise", 0.0, few, False, 5.0, False, "Underpowered"),
                 (DEMO, "almost always \"unknown\" (LAP in [0.001, 0.02], no recall)", 0.0, few, False, 1.0, True,
                  "Underpowered (validation); No evidence only on a spurious high-LAP theta (~2.5%)"),
                 (PAPER_LIKE, "no contamination", 0.0, reps_paper, False, 1.0, False, "Contamination <= 5%"),
                 (PAPER_LIKE, "paper-sized interaction", PAPER_SHARE, reps_paper, False, 1.0, False,
                  "Contamination >= 80%")]
    rows = []
    for shape, name, share, reps, flat, noise, unknown, target in scenarios:
        counts, seconds = run(shape, share, reps, flat, noise, unknown)
        rows.append(f"| {shape.name} | {name} | {reps} | " + " | ".join(cell(int(counts[label]), reps)
                                                                          for label in LABELS)
                    + f" | {target} | {seconds / reps:.2f} s |")
        print(rows[-1], flush=True)
    header = ("| shape | scenario | panels | " + " | ".join(LABELS) + " | requirement | CPU time per panel |\n"
              "|---|---|---|" + "---|" * len(LABELS) + "---|---|")
    text = (f"## Verdict-level Monte Carlo (issue 11)\n\nMachine: {describe()}. Each panel: pre- and post-cutoff "
            "samples with entity and period effects, the validation, detection and placebo regressions, the power of "
            "the detection test and the report's rule (python/lapbias/estimate/simulate.py); seeds 0..panels-1. "
            "Share of panels given each label with a 95% Wilson interval. Noise set so that a paper-sized "
            "interaction (beta_3 x SD(LAP) = 37% of the standalone LLM effect) has the paper's expected t "
            f"statistic (4.86); max_mde_share = 0.37.\n\n{header}\n" + "\n".join(rows) + "\n\n"
            "The null keeps the validation pattern (recall of the realized shock on high-LAP rows), so only the size "
            "of the one-sided beta_3 test, the low-LAP validation test and the placebo stand between it and "
            "\"Contamination detected\" (expected 0.05 x 0.95 x 0.90 = 4.3%). The paper-sized rate is capped near "
            "0.95 x 0.90 = 85.5% by the low-LAP validation test (5% false positives) and the placebo (10%), whatever "
            "the signal. The realized t of a paper-sized beta_3 is a little below 4.86 (about 4.3-4.8: the noise "
            "formula ignores the degrees of freedom the fixed effects absorb and the cluster correction), which makes "
            "the test slightly harder than the paper's. A LAP confined to a narrow range but varying is not "
            "underpowered per SD of LAP (se(beta_3) x SD(LAP) does not depend on LAP's spread when mu_hat is "
            "independent of it), so the MDE flags a LAP without numerical variation and a signal 5x weaker than the "
            "paper's; the model that almost always answers \"unknown\" (LAP in [0.001, 0.02], no recall) is "
            "flagged by its null high-LAP theta (protocol Step 3: the detection test has little power). With "
            "beta_3 = 0 the t statistic of beta_3 does not depend on the noise level (the other terms are partialled "
            "out exactly), so the 5x-noise scenario has the null's significant draws on the same seeds: a "
            "significant beta_3 is still reported; only the non-significant ones turn from \"No evidence\" to "
            "\"Underpowered\".\n")
    out = Path(__file__).resolve().parent / "results" / "verdict_mc.md"
    out.write_text(text, encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:]]
    np.seterr(all="ignore")
    main(*(args + [200, 60][len(args):]))
