"""Quick validation by simulation: the one-sided ESS CI covers a known ESS at its nominal rate where the true ESS
sits at K = 10 blocks (N = 10·n₀), the region where the fixed-K variance of the loss difference made it
under-cover. The full study (K = 5 … 100, squared and 0-1 loss, two comparators each, 400 replications) is
benchmarks/bench_ess_coverage.py, results in benchmarks/RESULTS.md."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import multivariate_normal, norm

from lapbias.ess.simulation import Scenario, bivariate_below_zero, coverage, linear_rule_risk, ols_risk, truth

REPS, ALPHA = 400, 0.05
BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def test_design_has_the_stated_ess():
    # R(n) = 1 + p/(n − p − 1) for OLS with p = 2: the "LLM" g(x) = x'β + δ, δ² = 2/17, has R(g) = R(20) exactly.
    known = truth(Scenario("linear", "ols", 10))
    assert known["risk"] == {10: 1 + 2 / 7, 20: 1 + 2 / 17, 40: 1 + 2 / 37}
    assert known["parameter"] ** 2 == pytest.approx(2 / 17)
    assert ols_risk(19, 2) > ols_risk(20, 2) > ols_risk(21, 2)


def test_one_sided_ci_covers_the_true_ess_at_ten_blocks():
    result, pointwise = coverage(Scenario("linear", "ols", 10), REPS, seed=0)
    threshold = 1 - ALPHA - 2.33 * np.sqrt(ALPHA * (1 - ALPHA) / REPS)        # one-sided 99% Monte Carlo margin
    assert result["coverage"] >= threshold, result
    # The same replications under the earlier rule (fixed-K variance of the difference below 20 blocks) fail the
    # same bar: this is the case the test is for.
    assert result["coverage_previous_rule"] < threshold, result
    assert result["coverage_sum"] >= result["coverage"] - 1e-12              # (4.7) is conservative here
    # Not vacuous: the false null at n = 10 (R = 1.29 vs 1.12) is rejected in most replications.
    assert result["median_lower"] == 11, result
    assert list(pointwise["n"]) == [10, 20, 40] and (pointwise["band"] >= 0.85).all()


def test_design_refuses_an_n0_that_is_not_the_true_ess():
    # Below p the comparator (minimum-norm least squares) has finite risk 1 + ‖β‖²(1 − n/p) + n/(p − n − 1)
    # (β = 1_p): with p = 10, R(6) = 1 + 4 + 2 = 7 < R(12) = 11, so the ESS of a predictor with risk R(12) is at
    # most 6, not 12, and coverage of "n0 = 12" would be measured against the wrong truth.
    assert ols_risk(6, 10) == 7.0 and ols_risk(10, 10) == np.inf and ols_risk(12, 10) == 11.0
    with pytest.raises(ValueError, match="not the true ESS"):
        truth(Scenario("linear", "ols", 4, n0=12, p=10))


def test_exact_risk_of_a_linear_rule_under_the_probit_design():
    # The 0-1 designs' truth: Owen's T against scipy's bivariate normal, and the risk against Monte Carlo.
    for k, rho in [(0.3, 0.5), (-1.2, -0.7), (0.0, 0.2)]:
        expected = multivariate_normal(mean=[0, 0], cov=[[1, rho], [rho, 1]]).cdf([0, k])
        assert bivariate_below_zero(k, rho) == pytest.approx(expected, abs=1e-7)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400_000, 2))
    p = norm.cdf(X.sum(axis=1))
    beta, w, w0 = np.ones(2), np.array([1.0, -0.4]), 0.3
    wrong = np.where(X @ w + w0 > 0, 1 - p, p).mean()
    assert linear_rule_risk(w, np.array([w0]), beta)[0] == pytest.approx(wrong, abs=2e-3)


def test_benchmark_runs_and_writes_its_table(tmp_path):
    sys.path.insert(0, str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location("bench_ess_coverage_smoke", BENCHMARKS / "bench_ess_coverage.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    real = (BENCHMARKS / "results" / "ess_coverage.md").read_bytes()
    module.main(["--smoke", "--out", str(tmp_path / "section.md")])
    lines = (tmp_path / "section.md").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "## ESS one-sided CI coverage by simulation"
    rows = [line for line in lines if line.startswith("| squared |") or line.startswith("| zero_one |")]
    assert {row.split(" | ")[1] for row in rows} == {"ols", "ridge", "lda", "ridge_classifier"}
    assert (BENCHMARKS / "results" / "ess_coverage.md").read_bytes() == real      # the real results are untouched


def test_pointwise_coverage_of_an_undefined_variance_is_not_zero():
    # At K = 2 blocks (n = 40 of N = 80) the finite-K variance is undefined: the benchmark's pointwise table must say
    # so ("—"), not report that its interval never covers R(n) (0.000).
    sys.path.insert(0, str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location("bench_ess_coverage_k2", BENCHMARKS / "bench_ess_coverage.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result, pointwise = coverage(Scenario("linear", "ols", 4), 5, seed=0)
    at_two = pointwise[pointwise["K"] == 2].iloc[0]
    assert np.isnan(at_two["finite_K"]) and at_two["band"] == at_two["fixed_K"] and 0 < at_two["fixed_K"] <= 1
    assert not pointwise.loc[pointwise["K"] > 2, "finite_K"].isna().any()
    result["cpu_s"] = 0.0
    lines = module.section(pd.DataFrame([result]), pointwise.assign(loss="squared", comparator="ols", K_at_n0=4), 5)
    row = next(line for line in lines if line.startswith("| squared | ols | 40 | 2 |"))
    assert row.split(" | ")[7] == "—"
