"""Verdict-level Monte Carlo, quick version (issue 11 item 6; the full rates: benchmarks/bench_verdict_mc.py and
benchmarks/RESULTS.md). Simulated demo-shaped panels (30 entities x 8 periods, entity and period effects; DGP in
lapbias/estimate/simulate.py) go through the regressions and the report's rule. With few draws the rates are
checked for consistency with the requirement at the 1% level (a binomial tail), the labels of the degenerate
scenarios exactly."""

from __future__ import annotations

from scipy import stats

from lapbias.estimate.simulate import DEMO, PAPER_SHARE, simulate, verdict
from lapbias.report.verdict import CONTAMINATION, NO_EVIDENCE, UNDERPOWERED

REPS = 10


def labels(share: float, reps: int, flat_lap: bool = False, noise_factor: float = 1.0, first_seed: int = 0):
    return [verdict(*simulate(first_seed + r, DEMO, share, flat_lap, noise_factor)).label for r in range(reps)]


def test_no_contamination_is_rarely_called_contamination_and_mostly_no_evidence():
    found = labels(0.0, REPS, first_seed=100)
    detected = found.count(CONTAMINATION)
    assert stats.binom.sf(detected - 1, REPS, 0.05) > 0.01, found  # consistent with a rate <= 5%
    assert found.count(NO_EVIDENCE) >= REPS // 2, found  # powered: the MDE share is below 37%


def test_paper_sized_interaction_is_detected():
    found = labels(PAPER_SHARE, REPS, first_seed=200)
    assert stats.binom.cdf(found.count(CONTAMINATION), REPS, 0.80) > 0.01, found  # consistent with >= 80%


def test_lap_without_variation_and_weak_signal_are_underpowered():
    assert labels(PAPER_SHARE, 2, flat_lap=True, first_seed=300) == [UNDERPOWERED] * 2
    assert labels(0.0, 2, noise_factor=5.0, first_seed=400) == [UNDERPOWERED] * 2
