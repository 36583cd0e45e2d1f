"""Verdict-level Monte Carlo: the share of simulated panels given each verdict label, scenario by scenario.

Scenarios (DGP: python/lapbias/estimate/simulate.py; noise set so that a paper-sized interaction has the paper's
expected t statistic, 4.86): no contamination with the validation pattern (the hardest null); a paper-sized
interaction (beta_3 x SD(LAP) = 37% of the standalone LLM effect), also with 1.8x the noise (the upper-bound rule);
beta_3 = -37% (accuracy falling with LAP: LAP proxies for something else); a clean model (no recall, no
contamination); LAP without numerical variation; a recall LAP constant to six digits (0.3 +- 2e-6); 5x the noise; the
model that almost always answers "unknown"; no contamination with 8 and 15 heterogeneous entity clusters (unbalanced,
heteroskedastic AR(1) errors, persistent forecasts, LAP correlated with the entity effect) -- there the verdict reads
the wild cluster bootstrap, and the same tables are also judged by the CRV1 t tests alone (wild_below_clusters = 0)
for comparison. Shapes: the demo's (30 entities x 8 periods: 30 clusters, so the wild bootstrap is read), 8 and 15
entities x 150 days, and a paper-like one (300 entities x 40 dates, 40% of cells: CRV1). Thresholds: the defaults
(max_mde_share 0.20, detectable_share 0.37, min_lap_gap 0.05, wild_below_clusters 42), the wild bootstrap with 999
draws (B + 1 = 1,000, so 5% and 10% of B + 1 are whole numbers of draws, and 1,000 panels take minutes, not hours).
95% Wilson intervals. Writes benchmarks/results/verdict_mc.md after each scenario.

    python benchmarks/bench_verdict_mc.py [panels] [panels_paper_like]
"""

from __future__ import annotations

import os

# one BLAS thread per worker process (set before numpy loads it): the matrices are small, and one process per core
# already uses the cores
os.environ["OPENBLAS_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = "1"

import sys  # noqa: E402
import time  # noqa: E402
from concurrent.futures import ProcessPoolExecutor  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from statsmodels.stats.proportion import proportion_confint  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe  # noqa: E402

from lapbias.config import EstimateConfig  # noqa: E402
from lapbias.estimate.simulate import (DEMO, FEW_15, FEW_8, PAPER_LIKE, PAPER_SHARE, simulate,  # noqa: E402
                                       tables)
from lapbias.report.verdict import (CONTAMINATION, LABELS, MIXED, NO_EVIDENCE, NO_EVIDENCE_UNTESTED,  # noqa: E402
                                    UNDERPOWERED, decide)

THRESHOLDS = EstimateConfig(wild_bootstrap_reps=999)
CRV1_ONLY = THRESHOLDS.model_copy(update={"wild_below_clusters": 0})
SHORT = {CONTAMINATION: "Contamination", NO_EVIDENCE: "No evidence", NO_EVIDENCE_UNTESTED: "No evidence (LAP untested)",
         UNDERPOWERED: "Underpowered", MIXED: "Mixed/invalid"}


def _panels(seeds: range, shape, share: float, lap_design: str, noise_factor: float, recall: bool
            ) -> tuple[list[dict], float]:
    np.seterr(all="ignore")
    start, out = time.process_time(), []
    for seed in seeds:
        found = tables(*simulate(seed, shape, share, lap_design, noise_factor, recall), THRESHOLDS)
        args = (found["detection"], found["validation"], found["placebo"], found["power"])
        verdict = decide(*args, THRESHOLDS, found["notes"])
        crv1 = decide(*args, CRV1_ONLY, found["notes"])
        power = dict(zip(found["power"]["quantity"], found["power"]["value"]))
        out.append({"label": verdict.label, "placebo_failed": verdict.failed == ["placebo"],
                    "crv1_label": crv1.label, "crv1_placebo_failed": crv1.failed == ["placebo"],
                    "lcb_share": 2 * power["beta3_share"] - power["ucb_share"]})
    return out, time.process_time() - start


def run(shape, share: float, panels: int, lap_design: str = "uniform", noise_factor: float = 1.0,
        recall: bool = True) -> tuple[pd.DataFrame, float]:
    """One row per panel, seeds 0..panels-1 (each panel depends only on its seed, so the split over processes does
    not change it), and the CPU seconds the panels took."""
    chunks = [range(first, min(first + 25, panels)) for first in range(0, panels, 25)]
    with ProcessPoolExecutor(len(os.sched_getaffinity(0))) as pool:
        done = list(pool.map(_panels, chunks, *([x] * len(chunks) for x in (shape, share, lap_design, noise_factor,
                                                                             recall))))
    return pd.DataFrame([row for chunk, _ in done for row in chunk]), sum(seconds for _, seconds in done)


def cell(count: int, panels: int) -> str:
    low, high = proportion_confint(count, panels, method="wilson")
    return f"{count / panels:.1%} [{low:.1%}, {high:.1%}]"


SCENARIOS = [
    # shape, scenario, share, LAP design, noise factor, recall, requirement
    (DEMO, "no contamination", 0.0, "uniform", 1.0, True, "Contamination <= 5%"),
    (DEMO, "paper-sized interaction", PAPER_SHARE, "uniform", 1.0, True, "Contamination >= 80%"),
    (DEMO, "beta_3 = -37% (accuracy falls with LAP)", -PAPER_SHARE, "uniform", 1.0, True, "never No evidence"),
    (DEMO, "clean model (no recall, no contamination)", 0.0, "uniform", 1.0, False,
     "cleared (No evidence (LAP untested)) in most panels"),
    (DEMO, "recall LAP constant to six digits (0.3 +- 2e-6)", 0.0, "six_digits", 1.0, True, "never No evidence"),
    (FEW_8, "no contamination", 0.0, "uniform", 1.0, True, "Contamination <= 5% (upper Wilson bound <= 7%)"),
    (FEW_15, "no contamination", 0.0, "uniform", 1.0, True, "Contamination <= 5% (upper Wilson bound <= 7%)"),
    (DEMO, "paper-sized interaction, 1.8x noise", PAPER_SHARE, "uniform", 1.8, True,
     "No evidence only where the test had power and the upper bound is <= 20%"),
    (DEMO, "no contamination, 5x noise", 0.0, "uniform", 5.0, True, "Underpowered"),
    (DEMO, "LAP without variation (0.3 + 1e-9 U)", PAPER_SHARE, "flat", 1.0, True, "Underpowered"),
    (DEMO, "almost always \"unknown\" (LAP in [0.001, 0.02], no recall)", 0.0, "unknown", 1.0, False,
     "never No evidence"),
    (PAPER_LIKE, "no contamination", 0.0, "uniform", 1.0, True, "Contamination <= 5%"),
    (PAPER_LIKE, "paper-sized interaction", PAPER_SHARE, "uniform", 1.0, True, "Contamination >= 80%"),
    (PAPER_LIKE, "beta_3 = -37% (accuracy falls with LAP)", -PAPER_SHARE, "uniform", 1.0, True, "never No evidence"),
]


def write(rows: list[str], extra: list[str], seconds: float) -> Path:
    header = ("| shape | scenario | panels | " + " | ".join(SHORT[label] for label in LABELS)
              + " | requirement | CPU time per panel |\n|---|---|---|" + "---|" * len(LABELS) + "---|---|")
    text = (f"## Verdict-level Monte Carlo\n\nMachine: {describe()}. Each panel: pre- and post-cutoff samples with "
            "entity and period effects, the validation (high, low, high-minus-low), detection and placebo "
            "regressions, beta_3's wild cluster restricted bootstrap (999 draws, Webb weights) where the verdict reads "
            "it (fewer than 42 clusters), the power of both tests and the report's rule (python/lapbias/estimate/"
            "simulate.py, report/verdict.py); seeds 0..panels-1. Share of panels given each label with a 95% Wilson "
            "interval. Noise set so that a paper-sized interaction (beta_3 x SD(LAP) = 37% of the standalone LLM "
            "effect) has the paper's expected t statistic (4.86). Thresholds: the defaults (max_mde_share = 0.20 on "
            "the one-sided 95% upper bound, detectable_share = 0.37 on the minimum detectable share of the detection "
            "test and of the placebo, min_lap_gap = 5 points, wild_below_clusters = 42). One BLAS thread per worker "
            f"process. CPU time is process time summed over the worker processes ({seconds / 60:.0f} CPU minutes in "
            "all); wall time is not reported, the cores being shared with other jobs.\n\n"
            f"{header}\n" + "\n".join(rows) + "\n\n" + "\n".join(extra) + "\n")
    out = Path(__file__).resolve().parent / "results" / "verdict_mc.md"
    out.write_text(text, encoding="utf-8")
    return out


def main(panels: int, panels_paper_like: int) -> None:
    rows, extra, total = [], [], 0.0
    for shape, name, share, lap, noise, recall, target in SCENARIOS:
        n = panels_paper_like if shape is PAPER_LIKE else panels
        found, seconds = run(shape, share, n, lap, noise, recall)
        total += seconds
        counts = found["label"].value_counts().reindex(LABELS, fill_value=0)
        rows.append(f"| {shape.name} | {name} | {n} | " + " | ".join(cell(int(counts[label]), n) for label in LABELS)
                    + f" | {target} | {seconds / n:.2f} s |")
        cleared = found["label"].isin([NO_EVIDENCE, NO_EVIDENCE_UNTESTED])
        two_sided = int((cleared & (found["lcb_share"] >= -THRESHOLDS.max_mde_share)).sum())
        extra.append(f"- {shape.name}, {name}: placebo failed (Mixed/invalid) in "
                     f"{cell(int(found['placebo_failed'].sum()), n)}; cleared (either No evidence label) in "
                     f"{cell(int(cleared.sum()), n)}, {cell(two_sided, n)} if \"No evidence\" also needed the "
                     f"one-sided 95% lower bound of the share above -{THRESHOLDS.max_mde_share:.0%} (a two-sided "
                     "equivalence rule, not the verdict's)"
                     + (f"; judged by the CRV1 t tests alone: Contamination in "
                        f"{cell(int((found['crv1_label'] == CONTAMINATION).sum()), n)}, placebo failed in "
                        f"{cell(int(found['crv1_placebo_failed'].sum()), n)}"
                        if shape.n_entities < THRESHOLDS.wild_below_clusters else "") + ".")
        print(rows[-1], "\n", extra[-1], flush=True)
        print(f"wrote {write(rows, extra, total)}", flush=True)


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:]]
    np.seterr(all="ignore")
    main(*(args + [1000, 1000][len(args):]))
