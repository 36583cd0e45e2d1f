"""Quick validation by simulation (issue 15, item 7): the one-sided ESS CI covers the known ESS at its nominal
rate. The full study is benchmarks/bench_ess_coverage.py (results in benchmarks/RESULTS.md)."""

from __future__ import annotations

import numpy as np

from lapbias.ess.simulation import coverage, true_risk

REPS, ALPHA = 200, 0.05


def test_design_has_the_stated_ess():
    # R(n) = 1 + 1/(n − 2) for p = 1; the fixed predictor's risk 1 + δ² = 1 + 1/(6 − 2) equals R(6) only.
    assert true_risk(6, 1) == 1.25 and true_risk(5, 1) > 1.25 > true_risk(7, 1)


def test_one_sided_ci_covers_the_true_ess_at_nominal_rate():
    result, pointwise = coverage(REPS, N=120, grid=(3, 6, 12), p=1, n0=6, alpha=ALPHA, seed=0)
    tolerance = 2.33 * np.sqrt(ALPHA * (1 - ALPHA) / REPS)        # one-sided 99% Monte Carlo margin
    assert result["coverage"] >= 1 - ALPHA - tolerance, result
    assert result["coverage_sum"] >= result["coverage"] - 1e-12    # (4.7) is conservative here
    # Not vacuous: the false null at n = 3 (R = 2 vs 1.25) is rejected in most replications.
    assert result["median_lower"] >= 4, result
    assert set(pointwise["n"]) == {3, 6, 12}


def test_design_refuses_an_n0_that_is_not_the_true_ess():
    # Below p the comparator (minimum-norm least squares) has finite risk 1 + ‖β‖²(1 − n/p) + n/(p − n − 1)
    # (β = 1_p): with p = 10, R(7) = 1 + 3 + 7/2 = 7.5 < R(12) = 11, so the ESS of a predictor with risk R(12) is
    # at most 7, not 12, and coverage of "n0 = 12" would be measured against the wrong truth.
    import pytest

    assert true_risk(7, 10) == 7.5 and true_risk(10, 10) == np.inf and true_risk(12, 10) == 11.0
    with pytest.raises(ValueError, match="true ESS"):
        coverage(1, N=48, grid=(12, 24), p=10, n0=12, alpha=ALPHA)
