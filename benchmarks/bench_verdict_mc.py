"""Verdict-level Monte Carlo: the share of simulated panels given each verdict label, scenario by scenario.

Scenarios (DGP: python/lapbias/simulate.py, whose recall respects |ud| <= LAP; noise set so that a paper-sized
interaction has the paper's expected t statistic, 4.86): no contamination with the validation pattern (the hardest
null); a paper-sized interaction (beta_3 x SD(LAP) = 37% of the standalone LLM effect), also with 1.8x the noise (the
upper-bound rule) and with the paper's post/pre ratio (Table V: 9,942 / 82,234 = 0.12, here 5 post-cutoff dates for
40 pre-cutoff ones); beta_3 = -37% (accuracy falling with LAP: LAP proxies for something else); a clean model (no
recall, no contamination: a confident guesser); LAP without numerical variation; a recall LAP constant to six digits
(0.3 +- 2e-6); 5x the noise; the model that almost always answers "unknown"; 8 and 15 heterogeneous entity clusters
(unbalanced, heteroskedastic AR(1) errors, persistent forecasts, LAP correlated with the entity effect) -- there the
verdict reads the wild cluster bootstrap and bounds beta_3 with the CV3 jackknife, and the same tables are also
judged by the CRV1 t tests alone (wild_below_clusters = 0) for comparison. Shapes: the demo's (30 entities x 8
periods: 30 clusters, so the wild bootstrap and CV3 are read), 8 and 15 entities x 150 days, and a paper-like one
(300 entities x 40 dates, 40% of cells: CRV1). Thresholds: the defaults (max_ucb_share 0.20, detectable_share 0.37,
min_lap_gap 0.05, wild_below_clusters 42), the wild bootstrap with the product's 9,999 draws. Also the rule applied
to the paper's published Table V numbers. 95% Wilson intervals. Writes benchmarks/results/verdict_mc.md after each
scenario.

    python benchmarks/bench_verdict_mc.py [panels] [panels_paper_like] [scenarios]

scenarios: their numbers in SCENARIOS, run in that order, e.g. 4,5,1 (default: all); the other rows are kept from the
results file.

(one worker process per CPU this process may use: `taskset -c 1 python ...` runs it on one core).
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
from lapbias.estimate.bootstrap import threads  # noqa: E402
from lapbias.estimate.power import placebo_bounds  # noqa: E402
from lapbias.report.verdict import (BETA3, CONTAMINATION, LABELS, MIXED, NO_EVIDENCE,  # noqa: E402
                                    NO_EVIDENCE_UNTESTED, UNDERPOWERED, decide, inference, placebo_check,
                                    placebo_power, term_row, validation_pattern)
from lapbias.simulate import (DEMO, FEW_15, FEW_8, PAPER_LIKE, PAPER_SHARE, TABLE_V, simulate,  # noqa: E402
                              tables)

THRESHOLDS = EstimateConfig()
"""The product's defaults, the wild bootstrap's 9,999 draws included."""
CRV1_ONLY = THRESHOLDS.model_copy(update={"wild_below_clusters": 0})
SHORT = {CONTAMINATION: "Contamination", NO_EVIDENCE: "No evidence", NO_EVIDENCE_UNTESTED: "No evidence (LAP untested)",
         UNDERPOWERED: "Underpowered", MIXED: "Mixed/invalid"}


def _panels(seeds: range, shape, share: float, lap_design: str, noise_factor: float, recall: bool
            ) -> tuple[list[dict], float]:
    from scipy import stats

    np.seterr(all="ignore")
    start, out = time.process_time(), []
    for seed in seeds:
        found = tables(*simulate(seed, shape, share, lap_design, noise_factor, recall), THRESHOLDS)
        args = (found["detection"], found["validation"], found["placebo"], found["power"])
        verdict = decide(*args, THRESHOLDS, found["notes"])
        crv1 = decide(*args, CRV1_ONLY, found["notes"])
        power = dict(zip(found["power"]["quantity"], found["power"]["value"]))
        beta3 = term_row(found["detection"], "pre", BETA3)
        read = (inference(beta3, THRESHOLDS.wild_below_clusters, THRESHOLDS.wild_bootstrap_reps)
                if beta3 is not None and pd.notna(beta3["p_one_sided"]) else None)
        placebo = placebo_check(found["placebo"], found["notes"], THRESHOLDS.placebo_alpha,
                                THRESHOLDS.wild_below_clusters, THRESHOLDS.wild_bootstrap_reps)
        crv1_ucb = power["beta3"] + stats.t.ppf(1 - THRESHOLDS.detection_alpha, power["df_r"]) * power["se_beta3"]
        out.append({"label": verdict.label, "placebo_failed": verdict.failed == ["placebo"],
                    "beta3_significant": read is not None and beta3["coef"] > 0
                    and read.p_one_sided < THRESHOLDS.detection_alpha,
                    "t": beta3["t"] if beta3 is not None else np.nan,
                    "pattern": validation_pattern(found["validation"], found["notes"],
                                                  THRESHOLDS.validation_alpha).present,
                    "placebo_passes": placebo[0] and placebo[1],
                    "informative": placebo_power(power, THRESHOLDS)[0] is True,
                    "validation_failed": verdict.label == MIXED and "validation" in verdict.failed,
                    "crv1_label": crv1.label, "crv1_placebo_failed": crv1.failed == ["placebo"],
                    "ucb_below_zero": power["ucb_beta3"] < 0, "crv1_ucb_below_zero": crv1_ucb < 0,
                    "cv3": power["cv3_bound"] == 1,
                    "lcb_share": 2 * power["beta3_share"] - power["ucb_share"]})
    return out, time.process_time() - start


def run(shape, share: float, panels: int, lap_design: str = "uniform", noise_factor: float = 1.0,
        recall: bool = True) -> tuple[pd.DataFrame, float]:
    """One row per panel, seeds 0..panels-1 (each panel depends only on its seed, so the split over processes does
    not change it), and the CPU seconds the panels took."""
    chunks = [range(first, min(first + 25, panels)) for first in range(0, panels, 25)]
    with ProcessPoolExecutor(threads()) as pool:
        done = list(pool.map(_panels, chunks, *([x] * len(chunks) for x in (shape, share, lap_design, noise_factor,
                                                                             recall))))
    return pd.DataFrame([row for chunk, _ in done for row in chunk]), sum(seconds for _, seconds in done)


def cell(count: int, panels: int) -> str:
    low, high = proportion_confint(count, panels, method="wilson")
    return f"{count / panels:.1%} [{low:.1%}, {high:.1%}]"


SCENARIOS = [  # the requirements first (benchmarks/results/verdict_mc.md is written after each scenario)
    # shape, scenario, share, LAP design, noise factor, recall, requirement
    (DEMO, "no contamination", 0.0, "uniform", 1.0, True, "Contamination <= 5%"),
    (PAPER_LIKE, "paper-sized interaction", PAPER_SHARE, "uniform", 1.0, True, "Contamination >= 80%"),
    (DEMO, "paper-sized interaction", PAPER_SHARE, "uniform", 1.0, True, "reported (small panel)"),
    (FEW_8, "no contamination", 0.0, "uniform", 1.0, True, "Contamination <= 5%; upper bound below 0 in <= 5%"),
    (DEMO, "clean model (no recall, no contamination)", 0.0, "uniform", 1.0, False,
     "cleared (No evidence (LAP untested)) in most panels"),
    (DEMO, "beta_3 = -37% (accuracy falls with LAP)", -PAPER_SHARE, "uniform", 1.0, True,
     "No evidence only where the beta_3 < 0 test misses"),
    (TABLE_V, "paper-sized interaction", PAPER_SHARE, "uniform", 1.0, True, "reported (the paper's N_post/N_pre)"),
    (PAPER_LIKE, "no contamination", 0.0, "uniform", 1.0, True, "Contamination <= 5%"),
    (FEW_15, "no contamination", 0.0, "uniform", 1.0, True, "Contamination <= 5%; upper bound below 0 in <= 5%"),
    (FEW_8, "paper-sized interaction", PAPER_SHARE, "uniform", 1.0, True, "reported (8 clusters)"),
    (DEMO, "recall LAP constant to six digits (0.3 +- 2e-6)", 0.0, "six_digits", 1.0, True, "never No evidence"),
    (DEMO, "paper-sized interaction, 1.8x noise", PAPER_SHARE, "uniform", 1.8, True,
     "No evidence only where the test had power and the upper bound is <= 20%"),
    (DEMO, "no contamination, 5x noise", 0.0, "uniform", 5.0, True, "Underpowered"),
    (DEMO, "LAP without variation (0.3 + 1e-9 U)", PAPER_SHARE, "flat", 1.0, True, "Underpowered"),
    (DEMO, "almost always \"unknown\" (LAP in [0.001, 0.02], no recall)", 0.0, "unknown", 1.0, False,
     "never No evidence"),
    (PAPER_LIKE, "beta_3 = -37% (accuracy falls with LAP)", -PAPER_SHARE, "uniform", 1.0, True,
     "No evidence only where the beta_3 < 0 test misses"),
]
TABLE_V_ROW = "| the paper's Table V (published numbers) |"


def table_v() -> str:
    """The rule on the paper's published Table V (variables standardized within each sample, SD(LAP) = 1): in-sample
    b1 = 0.0487, beta_3 = 0.0120 (t = 3.44, N = 82,234), out-of-sample beta_3 = -0.00736 (t = -0.74, N = 9,942),
    with the validation pattern present (the paper has no recall regression) and clusters enough for CRV1."""
    from scipy import stats

    pre_se, post_se, df_pre, df_post = 0.0120 / 3.44, 0.00736 / 0.74, 82_234 - 4, 9_942 - 4
    bounds = placebo_bounds(0.0120, pre_se, 1.0, -0.00736, post_se, df_post, 1.0, THRESHOLDS.placebo_alpha)
    row = {"N_clust": 1_000}
    detection = pd.DataFrame([{**row, "model": "pre", "term": BETA3, "coef": 0.0120, "t": 3.44,
                               "p": 2 * stats.t.sf(3.44, df_pre), "p_one_sided": stats.t.sf(3.44, df_pre)}])
    placebo = pd.DataFrame([{**row, "model": "post", "term": BETA3, "coef": -0.00736, "t": -0.74,
                             "p": 2 * stats.t.sf(0.74, df_post), "p_one_sided": stats.t.cdf(0.74, df_post)}])
    validation = pd.DataFrame([{**row, "model": model, "term": term, "coef": coef, "t": t, "p": p,
                                "p_one_sided": p / 2}
                               for model, term, coef, t, p in (
                                   ("high_lap", "ud", 0.5, 4.0, 1e-4), ("low_lap", "ud", 0.01, 0.2, 0.84),
                                   ("high_minus_low", "c.ud_dir_std#c.high_lap", 0.4, 3.5, 5e-4))])
    verdict = decide(detection, validation, placebo, {**bounds, "sd_lap": 1.0, "sd_lap_post": 1.0}, THRESHOLDS)
    return (f"{TABLE_V_ROW} placebo's one-sided 90% upper bound per SD of LAP {bounds['placebo_ucb_per_sd']:.4f} "
            f"< in-sample beta_3 per SD {bounds['beta3_per_sd']:.4f}: informative; pre minus post z = "
            f"{bounds['z_pre_minus_post']:.2f}, one-sided p = {bounds['p_pre_minus_post']:.3f} (the paper's bootstrap "
            f"p: 0.033) | {verdict.label} |")


def _kept(text: str, ran: set[tuple[str, str]]) -> tuple[dict, dict]:
    """Rows and notes of an earlier results file for the scenarios this run does not compute, by (shape, scenario)."""
    rows, extra = {}, {}
    for shape, name, *_ in SCENARIOS:
        if (shape.name, name) in ran:
            continue
        for line in text.splitlines():
            if line.startswith(f"| {shape.name} | {name} | "):
                rows[(shape.name, name)] = line
            elif line.startswith(f"- {shape.name}, {name}: "):
                extra[(shape.name, name)] = line
    return rows, extra


def write(rows: dict, extra: dict, seconds: float) -> Path:
    """benchmarks/results/verdict_mc.md: this run's scenarios and the earlier rows of the others, in SCENARIOS order."""
    out = Path(__file__).resolve().parent / "results" / "verdict_mc.md"
    old_rows, old_extra = _kept(out.read_text(encoding="utf-8") if out.exists() else "", set(rows))
    order = [(shape.name, name) for shape, name, *_ in SCENARIOS]
    table = [{**old_rows, **rows}[key] for key in order if key in rows or key in old_rows]
    notes = [{**old_extra, **extra}[key] for key in order if key in extra or key in old_extra]
    kept = ("" if not old_rows else f" The rows of {len(old_rows)} scenario(s) not run this time are kept from the "
            "file's earlier run (their CPU time column is that run's).")
    header = ("| shape | scenario | panels | " + " | ".join(SHORT[label] for label in LABELS)
              + " | requirement | CPU time per panel |\n|---|---|---|" + "---|" * len(LABELS) + "---|---|")
    text = (f"## Verdict-level Monte Carlo\n\nMachine: {describe()}. Each panel: pre- and post-cutoff samples with "
            "entity and period effects, the validation (high, low, and the high-minus-low difference per SD of the "
            "recalled direction ud_dir = ud / lap_recall within each half), "
            "detection and placebo regressions, beta_3's wild cluster restricted bootstrap "
            f"({THRESHOLDS.wild_bootstrap_reps:,} draws, Webb weights) and CV3 jackknife standard error where the "
            "verdict reads them (fewer than 42 clusters), the power of both tests and the report's rule "
            "(python/lapbias/simulate.py, report/verdict.py); seeds 0..panels-1. Share of panels given each label "
            "with a 95% Wilson interval. Noise set so that a paper-sized interaction (beta_3 x SD(LAP) = 37% of the "
            "standalone LLM effect) has the paper's expected t statistic (4.86); the recall respects |ud| <= LAP "
            "(memorized high-LAP rows: ud = LAP x the shock's sign, right 90% of the time, x U(0.6, 1); others: "
            "ud = LAP (2U - 1); so ud_dir is +-U(0.6, 1) or U(-1, 1), whatever the LAP). Thresholds: the defaults "
            "(max_ucb_share = 0.20 on the one-sided 95% upper bound, "
            "detectable_share = 0.37 on the detection test's minimum detectable share, min_lap_gap = 5 points, "
            "wild_below_clusters = 42; the placebo informative when its one-sided 90% upper bound per SD of "
            "post-cutoff LAP lies below the pre-cutoff beta_3 per SD of LAP). One BLAS thread per worker process, "
            f"{threads()} worker process(es) (the CPUs this process may use, estimate.bootstrap.threads). CPU time "
            f"is process time summed over the worker processes ({seconds / 60:.0f} CPU minutes in this run); wall "
            f"time is not reported, the cores being shared with other jobs.{kept}\n\n"
            "What \"Contamination detected\" can reach: the label needs beta_3 significant, the validation pattern "
            "(high-LAP theta significant and the halves' difference per SD of the recalled direction > 0 at "
            "one-sided 5%) and a passing "
            "(one-sided p > 0.10, protocol Step 5), informative placebo. Without post-cutoff contamination the "
            "placebo fails in 10% of panels whatever their size, so no shape exceeds about 90%; the notes under the "
            "table give each test's rate. The recall is strong (every high-LAP row memorized) and not calibrated "
            "to the paper, which has no recall regression.\n\n"
            f"{header}\n" + "\n".join(table) + "\n\n" + "\n".join(notes) + "\n\n"
            "The rule on the paper's own numbers:\n\n| case | placebo | verdict |\n|---|---|---|\n" + table_v() + "\n")
    out.write_text(text, encoding="utf-8")
    return out


def main(panels: int, panels_paper_like: int, chosen: list[int]) -> None:
    rows, extra, total = {}, {}, 0.0
    for number in chosen or range(1, len(SCENARIOS) + 1):
        shape, name, share, lap, noise, recall, target = SCENARIOS[number - 1]
        key = (shape.name, name)
        n = panels_paper_like if shape.n_entities >= THRESHOLDS.wild_below_clusters else panels
        found, seconds = run(shape, share, n, lap, noise, recall)
        total += seconds
        counts = found["label"].value_counts().reindex(LABELS, fill_value=0)
        rows[key] = (f"| {shape.name} | {name} | {n} | " + " | ".join(cell(int(counts[label]), n) for label in LABELS)
                     + f" | {target} | {seconds / n:.2f} s |")
        cleared = found["label"].isin([NO_EVIDENCE, NO_EVIDENCE_UNTESTED])
        two_sided = int((cleared & (found["lcb_share"] >= -THRESHOLDS.max_ucb_share)).sum())
        few = shape.n_entities < THRESHOLDS.wild_below_clusters
        extra[key] = (f"- {shape.name}, {name}: mean t of beta_3 {found['t'].mean():.2f}; the tests the label "
                      f"\"Contamination detected\" needs: beta_3 significant (the p the verdict reads) in "
                      f"{cell(int(found['beta3_significant'].sum()), n)}, the validation pattern present in "
                      f"{cell(int(found['pattern'].sum()), n)}, the placebo passing in "
                      f"{cell(int(found['placebo_passes'].sum()), n)} and informative in "
                      f"{cell(int(found['informative'].sum()), n)}; placebo failed (Mixed/invalid) in "
                      f"{cell(int(found['placebo_failed'].sum()), n)}; Mixed/invalid naming the validation pattern in "
                      f"{cell(int(found['validation_failed'].sum()), n)}; cleared (either No evidence label) in "
                      f"{cell(int(cleared.sum()), n)}, {cell(two_sided, n)} if \"No evidence\" also needed the "
                      f"one-sided 95% lower bound of the share above -{THRESHOLDS.max_ucb_share:.0%} (a two-sided "
                      "equivalence rule, not the verdict's)"
                      + (f"; one-sided 95% upper bound of beta_3 below its true value 0 in "
                         f"{cell(int(found['ucb_below_zero'].sum()), n)} ("
                         + ("CV3 jackknife se with t(G - 1); with the CRV1 se: "
                            f"{cell(int(found['crv1_ucb_below_zero'].sum()), n)}" if few else "CRV1 se") + ")"
                         if share == 0 else "")
                      + (f"; judged by the CRV1 t tests alone: Contamination in "
                         f"{cell(int((found['crv1_label'] == CONTAMINATION).sum()), n)}, placebo failed in "
                         f"{cell(int(found['crv1_placebo_failed'].sum()), n)}" if few else "") + ".")
        print(rows[key], "\n", extra[key], flush=True)
        print(f"wrote {write(rows, extra, total)}", flush=True)


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:3]]
    np.seterr(all="ignore")
    main(*(args + [400, 400][len(args):]), [int(a) for a in sys.argv[3].split(",")] if len(sys.argv) > 3 else [])
