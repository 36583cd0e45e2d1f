"""ESS estimators against hand computations on tiny arrays: block-out CV (eq. 3.2), the variance components
(eq. 4.5), fixed-K (B.2), the finite-K variance (by hand and by Monte Carlo with a real learner), the bands' rule,
Algorithm 3.1, Remark 3.1, the delta method and the losses."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score, f1_score

from lapbias.ess import inference, variance
from lapbias.ess.blockcv import BlockStats, block_out_cv, fixed_predictor_cv
from lapbias.ess.losses import make_loss

Y = np.arange(6.0)


def _mean_rule_stats() -> BlockStats:
    """y = 0..5, n = 2, identity order: blocks {0,1}, {2,3}, {4,5}; each block predicts its own mean."""
    return block_out_cv(np.arange(6), 2, lambda train, rows: np.full(len(rows), Y[train].mean()),
                        lambda rows, pred: ((Y[rows] - pred) ** 2)[None, :]).linear([1.0])


def _stats(block_risk, obs_loss, within=None) -> BlockStats:
    block_risk = np.asarray(block_risk, float)
    return BlockStats(len(obs_loss) // len(block_risk), block_risk, np.asarray(obs_loss, float),
                      np.zeros(len(block_risk)) if within is None else np.asarray(within, float))


def test_block_out_cv_by_hand():
    stats = _mean_rule_stats()
    # R̂_0 = (1.5² + 0.5²... ) computed by hand: block means 0.5, 2.5, 4.5 on the complements
    assert stats.block_risk == pytest.approx([41 / 4, 17 / 4, 41 / 4])
    assert stats.obs_loss == pytest.approx([13.25, 7.25, 4.25, 4.25, 7.25, 13.25])
    assert stats.risk == pytest.approx(8.25) and stats.obs_loss.mean() == pytest.approx(8.25)
    assert (stats.K, stats.N) == (3, 6)
    # W_k = Σ over the test set of (ℓ − R̂_k)²: block 0 predicts 0.5 → losses 2.25, 6.25, 12.25, 20.25 (mean 41/4)
    losses = np.array([2.25, 6.25, 12.25, 20.25])
    assert stats.within[0] == pytest.approx(np.sum((losses - 41 / 4) ** 2))


def test_block_out_cv_discards_the_remainder_and_keeps_the_permutation():
    order = np.array([5, 3, 1, 0, 2, 4, 6])                    # N = 7, n = 3 → K = 2, row 6 discarded
    seen = []
    stats = block_out_cv(order, 3, lambda train, rows: seen.append((list(train), list(rows))) or np.zeros(len(rows)),
                         lambda rows, pred: (np.asarray(rows, float))[None, :]).linear([1.0])
    assert seen[0] == ([5, 3, 1], [5, 3, 1, 0, 2, 4]) and seen[1][0] == [0, 2, 4]
    assert stats.block_risk == pytest.approx([2.0, 3.0])       # loss = row index on the complement
    assert stats.obs_loss == pytest.approx([5, 3, 1, 0, 2, 4])


def test_variance_components_by_hand():
    stats = _stats([1.0, 2.0, 3.0], [0.0, 1.0, 2.0, 2.0, 3.0, 4.0])
    comp = variance.fixed_n(stats)
    # σ̂₁² = (1 + 0 + 1)/2; σ̂₂² = (4+1+0+0+1+4)/5; L̂_k = 0.5, 2, 3.5 → σ̂₁₂ = ((−1)(−1.5) + 0 + (1)(1.5))/2
    assert (comp.between_block, comp.test, comp.cross) == pytest.approx((1.0, 2.0, 1.5))
    assert comp.sigma2 == pytest.approx(1 + 2 / 2 + 2 * 1.5)
    assert comp.variance == pytest.approx(5 / 3)
    assert variance.fixed_k(stats) == pytest.approx(2 / 6)


def test_finite_k_variance_by_hand():
    # K = 3, n = 2, N = 6, m = 4: κ = 2·5/(1·3), λ = 4/5, μ = 1/(2·2·1·3); σ̂₁² = 1, σ̂₂² = 2, σ̂₁₂ = 1.5 (above),
    # W̄ = (3 + 6 + 9)/(3·3) = 2.
    stats = _stats([1.0, 2.0, 3.0], [0.0, 1.0, 2.0, 2.0, 3.0, 4.0], [3.0, 6.0, 9.0])
    expected = (10 / 3) / 3 * (1 + 2 / 2 + 2 * 0.8 * 1.5) - 2 / 12
    assert variance.finite_k(stats) == pytest.approx(expected)
    assert np.isnan(variance.finite_k(_stats([1.0, 2.0], [0.0, 1.0, 2.0, 3.0])))          # K = 2: undefined


def test_bands_rule_and_test_rule():
    stats = _stats([1.0, 2.0, 3.0], [0.0, 1.0, 2.0, 2.0, 3.0, 4.0], [3.0, 6.0, 9.0])
    assert variance.finite_k(stats) > variance.fixed_k(stats)
    assert (variance.band(stats, min_blocks=20).rule, variance.band(stats, min_blocks=3).rule) == ("finite_K",) * 2
    small = _stats([1.2, 1.0, 0.8], [0.2, 1.0, 0.0, 2.0, 1.8, 1.0], [9.0, 9.0, 9.0])   # V̂ = 0.017 < B.2 = 0.109
    assert variance.fixed_k(small) > variance.finite_k(small) > 0
    assert variance.band(small, min_blocks=20).rule == "fixed_K"                 # K < 20: the larger of the two
    assert variance.band(small, min_blocks=3).rule == "finite_K"
    assert variance.for_test(small).rule == "finite_K"                           # the test never takes B.2 ...
    negative = _stats([1.0, 2.0, 3.0], [4.0, 3.0, 2.0, 2.0, 1.0, 0.0], [0.0, 0.0, 0.0])
    assert variance.finite_k(negative) < 0
    assert variance.for_test(negative).rule == "fixed_K_fallback"                # ... unless V̂ ≤ 0
    two_blocks = variance.for_test(_stats([1.0, 2.0], [0.0, 1.0, 2.0, 3.0]))
    assert two_blocks.rule == "untested" and np.isnan(two_blocks.variance)
    assert np.isnan(inference.t_statistic(0.5, two_blocks.se))                  # Algorithm 3.1 stops there


@pytest.mark.parametrize("K, most", [(3, 1.6), (5, 1.3)])
def test_finite_k_variance_is_conservative_where_eq_4_5_is_not(K, most):
    # A real learner (least squares, p = 1) and the loss difference against a fixed predictor, as in the ESS test:
    # the mean of V̂ over replications is at least the Monte Carlo variance of Δ̂(n) at K = 3 and 5, and above it by
    # no more than its documented conservative term n(ρ + w)/((K − 1)(m − 1)) (least squares is the case where that
    # term is largest, ρ ≈ w), while eq. (4.5)/K and the fixed-K B.2 fall well short of it.
    from lapbias.ess.simulation import LeastSquares

    n, reps = 10, 1500
    rng = np.random.default_rng(K)
    deltas, finite, fixed_n, fixed_k = [], [], [], []
    for _ in range(reps):
        x = rng.normal(size=(K * n, 1))
        y = x[:, 0] + rng.normal(size=K * n)
        llm = (x[:, 0] + 0.5 - y) ** 2
        parts = block_out_cv(np.arange(K * n), n,
                             lambda train, rows: LeastSquares().fit(x[train], y[train]).predict(x[rows]),
                             lambda rows, pred: np.vstack([(pred - y[rows]) ** 2, llm[rows]]))
        difference = parts.linear([1.0, -1.0])
        deltas.append(difference.risk)
        finite.append(variance.finite_k(difference))
        fixed_n.append(variance.fixed_n(difference).variance)
        fixed_k.append(variance.fixed_k(difference))
    truth = np.var(deltas, ddof=1)
    assert 0.93 <= np.mean(finite) / truth <= most
    assert np.mean(fixed_n) / truth < 0.85 and np.mean(fixed_k) / truth < 0.8


def test_difference_summaries_are_exact():
    # The difference ℓ_ML − ℓ_LLM built from the joint components equals block-out CV run on the difference loss
    # itself, W_k included (eq. 4.6: the test's statistics are those of one loss).
    rng = np.random.default_rng(0)
    y, g = rng.normal(size=12), rng.normal(size=12)
    order = rng.permutation(12)

    def fit(train, rows):
        return np.full(len(rows), y[train].mean())

    joint = block_out_cv(order, 3, fit, lambda rows, pred: np.vstack([(pred - y[rows]) ** 2, (g[rows] - y[rows]) ** 2]))
    direct = block_out_cv(order, 3, fit, lambda rows, pred: ((pred - y[rows]) ** 2 - (g[rows] - y[rows]) ** 2)[None])
    joint_diff, direct_diff = joint.linear([1.0, -1.0]), direct.linear([1.0])
    for field in ("block_risk", "obs_loss", "within"):
        assert getattr(joint_diff, field) == pytest.approx(getattr(direct_diff, field))
    fixed = fixed_predictor_cv(order, 3, ((g - y) ** 2)[None])
    by_cv = block_out_cv(order, 3, fit, lambda rows, pred: ((g[rows] - y[rows]) ** 2)[None])
    for field in ("block_risk", "obs_loss", "cross"):
        assert getattr(fixed, field) == pytest.approx(getattr(by_cv, field))


def test_sum_of_variances():
    ml = _mean_rule_stats()
    llm_losses = np.array([1.0, 0.0, 4.0, 1.0, 0.0, 9.0])
    llm = fixed_predictor_cv(np.arange(6), 2, llm_losses).linear([1.0])
    assert llm.block_risk == pytest.approx([14 / 4, 10 / 4, 6 / 4]) and llm.obs_loss == pytest.approx(llm_losses)
    expected = variance.for_test(ml).variance + np.var(llm_losses, ddof=1) / 6
    assert variance.sum_of_variances(ml, llm_losses) == pytest.approx(expected)


def test_sequential_procedure_by_hand():
    grid = [1, 5, 10, 20]
    result = inference.sequential(grid, [3.0, 2.0, 1.0, 5.0], alpha=0.05)      # z = 1.645
    assert (result.lower, result.stop_index) == (6, 2)                          # n_{j*-1} + 1 = 5 + 1
    assert result.rejected == [True, True, False, False] and result.tested == [True, True, True, False]
    assert inference.sequential(grid, [1.0, 9.0, 9.0, 9.0], 0.05).lower == 1
    everything = inference.sequential(grid, [9.0] * 4, 0.05)
    assert (everything.lower, everything.exceeds_grid) == (21, True)
    assert inference.sequential(grid, [3.0, 1.7, 1.0, 1.0], 0.05).lower == 6    # 1.7 > 1.645
    assert inference.sequential(grid, [3.0, 1.7, 1.0, 1.0], 0.01).lower == 2    # 1.7 < 2.326


def test_critical_value_is_student_t_with_k_minus_1_degrees_of_freedom():
    # K blocks at each n: t_{K−1} (inference.critical); without blocks, Proposition 4.1's normal quantile.
    from scipy.stats import t as t_dist

    assert inference.critical(0.05, 10) == pytest.approx(t_dist.ppf(0.95, 9)) == pytest.approx(1.8331, abs=1e-4)
    assert inference.critical(0.05) == pytest.approx(1.6449, abs=1e-4)
    grid, t = [5, 10, 20], [4.0, 1.8, 0.0]                    # N = 100: K = 20, 10, 5
    assert inference.sequential(grid, t, 0.05).lower == 11                    # 1.8 > 1.645
    assert inference.sequential(grid, t, 0.05, blocks=[20, 10, 5]).lower == 6  # 1.8 < 1.833
    assert inference.excess_risk_lower(0.18, 0.1, 0.05, 10) == pytest.approx(0.18 - 0.18331, abs=1e-5)


def test_excess_risk_ci_gives_the_same_bound():
    grid, excess, se = [2, 4, 8, 16], [0.5, 0.2, 0.05, -0.1], [0.1, 0.1, 0.1, 0.1]
    t = [d / s for d, s in zip(excess, se)]
    lower_ends = [inference.excess_risk_lower(d, s, 0.05) for d, s in zip(excess, se)]
    assert lower_ends[1] == pytest.approx(0.2 - 1.6448536 * 0.1)
    assert inference.lower_from_excess_ci(grid, lower_ends) == inference.sequential(grid, t, 0.05).lower == 5


def test_plug_in_and_t_statistic_edges():
    assert inference.plug_in([5, 10, 20], [0.4, 0.3, 0.2], 0.3) == 10
    assert inference.plug_in([5, 10, 20], [0.4, 0.35, 0.31], 0.3) is None
    # As the grid allows it to be stated: censored below n₁ and above n_J.
    assert [inference.stated_plug_in([5, 10, 20], p) for p in (5, 10, None)] == ["≤ 5", "10", "> 20"]
    # A grid starting at n = 1 censors nothing below it: the ESS is min{n ≥ 1 : R(n) ≤ R(g)} = 1 (Definition 2.1).
    assert inference.stated_plug_in([1, 5], 1) == "1"
    assert inference.below_grid([5, 10, 20], 5) and not inference.below_grid([5, 10, 20], None)
    assert not inference.below_grid([1, 5], 1)
    assert inference.t_statistic(0.1, 0.0) == np.inf and inference.t_statistic(0.0, 0.0) == 0.0


def test_delta_method_rmse():
    rmse, low, high = inference.rmse_interval(4.0, 0.4, 0.95)
    assert rmse == 2.0 and (high - low) / 2 == pytest.approx(1.959964 * 0.4 / (2 * 2.0))


def test_balanced_error_and_f1_losses_match_sklearn():
    y, pred = np.array([0, 0, 0, 1, 1, 0, 1]), np.array([0, 1, 0, 1, 0, 0, 1])
    order = np.arange(7)
    balanced = make_loss("balanced_error", y)
    stats = balanced.stats(fixed_predictor_cv(order, 1, balanced.components(y, pred)))
    assert stats.risk == pytest.approx(1 - balanced_accuracy_score(y, pred))
    f1 = make_loss("f1_error", y)
    stats = f1.stats(fixed_predictor_cv(order, 1, f1.components(y, pred)))
    assert stats.risk == pytest.approx(1 - f1_score(y, pred))
    assert stats.obs_loss.mean() == pytest.approx(stats.risk)        # the linearised ψ averages to 1 − F1


def test_undefined_point_stops_the_procedure_in_both_forms():
    # An undefined excess risk or standard error (e.g. 1 − F1 = 0/0 at some n) is no evidence against H₀: Algorithm
    # 3.1 stops there, and the excess-risk form (3.5) must give the same bound, not skip the point as if rejected.
    grid = [2, 4, 8]
    assert np.isnan(inference.t_statistic(0.1, np.nan)) and np.isnan(inference.t_statistic(np.nan, 0.1))
    t = [inference.t_statistic(d, s) for d, s in zip([0.5, 0.4, 0.3], [0.1, np.nan, 0.1])]
    lower_ends = [inference.excess_risk_lower(d, s, 0.05) for d, s in zip([0.5, np.nan, 0.3], [0.1, 0.1, 0.1])]
    assert inference.sequential(grid, t, 0.05).lower == 3
    assert inference.lower_from_excess_ci(grid, lower_ends) == 3


@pytest.mark.parametrize("s", [-1.0, 1.0])
def test_finite_k_variance_against_a_known_hoeffding_decomposition(s):
    # A loss whose Hoeffding parts are known exactly (variance.py): Z = (U, V) i.i.d. N(0, I₂), a training block D of
    # n rows, ℓ(D, z) = a(D) + b(z) + h(D, z) with a = ū_D, b = 0.7u + 0.5(v² − 1), h = 3(ū_D v + s·v̄_D u). Then
    # σ₁² = 1/n, σ₁₂ = 0.7/n, σ₂² = 0.99, τ² = 9(1 + s²)/n, ρ = 18s/n² and w = τ²/n: s = −1 puts ρ at its lower
    # bound −w, where V̂ is unbiased; s = +1 at its upper bound +w, where V̂ exceeds Var R̂(n) by its documented
    # conservative term n(ρ + w)/((K − 1)(m − 1)). Checks the exact finite-K variance and the four expectations
    # solved for V̂ at K = 4 (where eq. 4.5 is far off).
    K, n, reps = 4, 3, 10_000
    N, m = K * n, (K - 1) * n
    rng = np.random.default_rng(7)
    risks, finite = np.empty(reps), np.empty(reps)
    for r in range(reps):
        u, v = rng.normal(size=N), rng.normal(size=N)

        def losses(train, rows):
            return (u[train].mean() + 0.7 * u[rows] + 0.5 * (v[rows] ** 2 - 1)
                    + 3 * (u[train].mean() * v[rows] + s * v[train].mean() * u[rows]))

        stats = block_out_cv(np.arange(N), n, losses, lambda rows, loss: loss[None]).linear([1.0])
        risks[r], finite[r] = stats.risk, variance.finite_k(stats)
    tau2, rho = 9 * (1 + s ** 2) / n, 18 * s / n ** 2
    exact = (1 / n + 2 * 0.7 / n + 0.99 / n) / K + (tau2 / n + rho) / (K * (K - 1))
    expected = exact + n * (rho + tau2 / n) / ((K - 1) * (m - 1))
    assert np.var(risks, ddof=1) == pytest.approx(exact, rel=4 * np.sqrt(2 / reps))
    assert abs(finite.mean() - expected) <= 4 * finite.std(ddof=1) / np.sqrt(reps)
    assert expected == pytest.approx(exact if s < 0 else exact + 0.5)
