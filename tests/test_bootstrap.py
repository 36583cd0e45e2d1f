"""The pairs bootstrap (paper Figure III): beta_3 per draw equals a naive pyfixest fit on the materialised
resampled data (both solvers, connected and disconnected designs); the one-sided bootstrap p and the 95th
percentile by hand; entity resampling; reproducibility; units never matter; samples where beta_3 is not
identified (constant LAP, a single entity) give a reasoned result, not an error; the run on a panel file."""

from __future__ import annotations

import ctypes
import os
import platform
import re
import shutil
import subprocess
import sysconfig
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pyfixest as pf
import pytest

from lapbias.config import RunConfig
from lapbias.estimate import bootstrap
from lapbias.estimate import bootstrap_kernel as kernel
from lapbias.estimate import bootstrap_lanes as lanes
from lapbias.estimate.bootstrap import BootstrapResult, draw_weights, drop_weighted_singletons, pairs_bootstrap
from lapbias.io import Layout, write_parquet

FORMULA = "outcome ~ mu_hat + lap + mu_hat:lap | entity_num + period_num"


def panel(seed: int = 3, n_entities: int = 40, n_periods: int = 8, disconnected: bool = False) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    entity = np.repeat(np.arange(1, n_entities + 1), n_periods)
    period = np.tile(np.arange(1, n_periods + 1), n_entities)
    if disconnected:  # the second half of the entities lives in periods of its own: two mobility groups
        period = np.where(entity > n_entities // 2, period + n_periods, period)
    frame = pd.DataFrame({"entity_num": entity, "period_num": period,
                          "mu_hat": rng.choice([-1.0, 0.0, 1.0], entity.size), "lap": rng.uniform(0, 1, entity.size)})
    frame["outcome"] = 0.3 * frame["mu_hat"] * frame["lap"] + rng.normal(0, 1, entity.size) + 0.1 * entity
    return frame


def naive_draws(frame: pd.DataFrame, n_draws: int, seed: int, resample: str) -> np.ndarray:
    """Materialise each draw (rows repeated count times) and fit it with pyfixest, singletons dropped."""
    entity = pd.factorize(frame["entity_num"])[0]
    weights = draw_weights(len(frame), entity, n_draws, seed, resample)
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for b in range(n_draws):
            drawn = frame.loc[np.repeat(frame.index.to_numpy(), weights[:, b].astype(int))].reset_index(drop=True)
            fit = pf.feols(FORMULA, data=drawn, fixef_rm="singleton", fixef_tol=1e-14, vcov="iid")
            out.append(float(fit.coef()["mu_hat:lap"]))
    return np.array(out)


@pytest.mark.parametrize("resample", ["obs", "entity"])
@pytest.mark.parametrize("disconnected", [False, True])
@pytest.mark.parametrize("solver", ["conjugate_gradients", "dense"])
def test_each_draw_equals_the_naive_pyfixest_fit(monkeypatch, resample, disconnected, solver):
    if solver == "dense":  # no CG step allowed: every draw takes the direct solve
        monkeypatch.setattr(bootstrap, "CG_MAX_ITER", 0)
    frame = panel(disconnected=disconnected)
    fast = pairs_bootstrap(frame, 0.0, B=4, seed=11, resample=resample, progress=False)
    np.testing.assert_allclose(fast.draws, naive_draws(frame, 4, 11, resample), rtol=0, atol=1e-8)


def test_weighted_singletons_follow_the_materialised_data():
    # Materialised: row0 (e0,p0) x1, row2 (e1,p0) x2, row4 (e2,p0) x1, row5 (e2,p1) x1.
    # Round 1: entity 0 has weight 1 (row0) and period 1 has weight 1 (row5): both dropped.
    # Round 2: entity 2 now has weight 1 (row4): dropped. Row 2, drawn twice, is not a singleton and stays.
    weights = np.array([1.0, 0.0, 2.0, 0.0, 1.0, 1.0])
    entity = np.array([0, 0, 1, 1, 2, 2])
    period = np.array([0, 1, 0, 1, 0, 1])
    assert drop_weighted_singletons(weights, [entity, period]).tolist() == [0.0, 0.0, 2.0, 0.0, 0.0, 0.0]


def test_entity_resampling_keeps_whole_entities():
    entity = np.repeat(np.arange(6), 4)
    weights = draw_weights(entity.size, entity, 20, 0, "entity")
    for b in range(20):
        per_entity = pd.Series(weights[:, b]).groupby(entity).nunique()
        assert (per_entity == 1).all()  # every row of an entity has its entity's draw count
        assert weights[:, b].sum() == entity.size  # six entities drawn, four rows each


def test_one_sided_bootstrap_p_and_p95_by_hand():
    # Identified draws 1..20 (and one NaN). In-sample 18: draws 18, 19, 20 are >= it (the tie counts): 3/20.
    draws = np.append(np.arange(1.0, 21.0), np.nan)
    result = BootstrapResult(draws, 18.0, 21, 1, "obs", 100)
    assert result.p_boot == pytest.approx(3 / 20)
    # Stata's _pctile: 20 x 0.95 = 19 is an integer, so p95 = (x_19 + x_20) / 2.
    assert result.p95 == pytest.approx(19.5)
    summary = result.summary().iloc[0]
    assert summary["n_unidentified"] == 1 and summary["resampling"] == "obs"


def test_reproducible_with_a_seed_whatever_the_block():
    frame = panel(seed=5)
    first = pairs_bootstrap(frame, 0.2, B=40, seed=9, progress=False)
    second = pairs_bootstrap(frame, 0.2, B=40, seed=9, block=7, progress=False)
    np.testing.assert_array_equal(first.draws, pairs_bootstrap(frame, 0.2, B=40, seed=9, progress=False).draws)
    np.testing.assert_allclose(first.draws, second.draws, rtol=0, atol=1e-12)  # same draws; BLAS sums may round
    assert not np.array_equal(first.draws, pairs_bootstrap(frame, 0.2, B=40, seed=10, progress=False).draws)


def test_bad_resample_is_a_user_error():
    with pytest.raises(bootstrap.EstimationError, match="resample"):
        pairs_bootstrap(panel(), 0.0, B=2, resample="firm", progress=False)


def test_run_standardizes_each_sample_and_writes_the_files(tmp_path):
    pre, post = panel(seed=1), panel(seed=2)
    pre["lap"] *= 3  # different scales: standardization must take each sample on its own
    frame = pd.concat([pre.assign(post=0), post.assign(post=1)], ignore_index=True)
    layout = Layout(tmp_path)
    write_parquet(frame, layout.derived_file("panel.parquet"))
    config = RunConfig().replace(estimate={"bootstrap_reps": 30, "bootstrap_seed": 4})
    result = bootstrap.run(config, layout, progress=False)
    z = pre.copy()
    for column in ("outcome", "mu_hat", "lap"):
        z[column] = (z[column] - z[column].mean()) / z[column].std(ddof=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = pf.feols(FORMULA, data=z, fixef_rm="singleton", fixef_tol=1e-14).coef()["mu_hat:lap"]
    assert result.b3_in_sample == pytest.approx(expected, abs=1e-8)
    summary = pd.read_csv(layout.results / "bootstrap.csv").iloc[0]
    assert (summary["B"], summary["N"], summary["standardized"]) == (30, len(post), 1)
    assert summary["p_boot"] == pytest.approx(np.mean(result.draws >= expected))
    assert len(pd.read_csv(layout.results / "bootstrap_draws.csv")) == 30
    assert (layout.figures / "bootstrap.png").stat().st_size > 0
    assert bootstrap.run(config.replace(estimate={"bootstrap_reps": 0}), layout) is None
    assert not (layout.results / "bootstrap.csv").exists()  # no stale summary left for the report to quote


@pytest.mark.parametrize("factors", [(1e-12, 1e12, 1.0), (1e12, 1e-12, 1e6), (1e-12, 1e-12, 1e-12)])
def test_draws_do_not_depend_on_units(factors):
    # issue 11: rescaling mu_hat, lap and the outcome rescales beta_3 by outcome / (mu_hat x lap), every draw.
    frame = panel(seed=4)
    scaled = frame.assign(mu_hat=frame["mu_hat"] * factors[0], lap=frame["lap"] * factors[1],
                          outcome=frame["outcome"] * factors[2])
    base = pairs_bootstrap(frame, 0.0, B=20, seed=2, progress=False)
    moved = pairs_bootstrap(scaled, 0.0, B=20, seed=2, progress=False)
    assert np.isfinite(base.draws).all()
    np.testing.assert_allclose(moved.draws * factors[0] * factors[1] / factors[2], base.draws, rtol=1e-8)


def test_constant_lap_is_not_identified_with_a_reason():
    frame = panel(seed=6).assign(lap=0.7)
    result = pairs_bootstrap(frame, 0.1, B=5, seed=1, progress=False)
    assert not result.identified and "lap has no variation" in result.reason
    assert np.isnan(result.draws).all() and np.isnan(result.p_boot)
    summary = result.summary().iloc[0]
    assert summary["identified"] == 0 and summary["note"] == result.reason


def test_single_entity_panels():
    # One row per period: every row is a singleton of the period FE, nothing is identified.
    frame = panel(seed=7, n_entities=1, n_periods=30)
    result = pairs_bootstrap(frame, 0.0, B=3, seed=1, progress=False)
    assert not result.identified and "singleton" in result.reason
    # Several rows per period: the entity FE is a constant and beta_3 is identified, as pyfixest finds.
    several = panel(seed=7, n_entities=1, n_periods=24)
    several["period_num"] = (several["period_num"] - 1) // 4  # six periods of four rows each
    result = pairs_bootstrap(several, 0.0, B=4, seed=1, progress=False)
    assert result.identified and result.reason == ""
    np.testing.assert_allclose(result.draws, naive_draws(several, 4, 1, "obs"), rtol=0, atol=1e-8)


def test_run_records_a_constant_lap_instead_of_aborting(tmp_path):
    pre, post = panel(seed=1), panel(seed=2).assign(lap=0.5)
    layout = Layout(tmp_path)
    write_parquet(pd.concat([pre.assign(post=0), post.assign(post=1)], ignore_index=True),
                  layout.derived_file("panel.parquet"))
    result = bootstrap.run(RunConfig().replace(estimate={"bootstrap_reps": 10}), layout, progress=False)
    assert not result.identified and np.isfinite(result.b3_in_sample)
    summary = pd.read_csv(layout.results / "bootstrap.csv").iloc[0]
    assert summary["identified"] == 0 and "lap has no variation" in summary["note"]
    assert not (layout.results / "bootstrap_draws.csv").exists()


def test_an_in_sample_beta3_that_is_not_identified_reports_no_draws(tmp_path):
    """With no in-sample beta_3 the draws have nothing to be compared with: p_boot and p95 are missing and every
    draw counts as unidentified, as the Stata engine writes it (they had been 0.0, a real percentile and a count)."""
    pre, post = panel(seed=1).assign(lap=0.5), panel(seed=2)
    layout = Layout(tmp_path)
    write_parquet(pd.concat([pre.assign(post=0), post.assign(post=1)], ignore_index=True),
                  layout.derived_file("panel.parquet"))
    result = bootstrap.run(RunConfig().replace(estimate={"bootstrap_reps": 10}), layout, progress=False)
    summary = pd.read_csv(layout.results / "bootstrap.csv").iloc[0]
    assert summary["identified"] == 0 and "in-sample beta_3 not identified" in summary["note"]
    assert np.isnan(summary["p_boot"]) and np.isnan(summary["p95"]) and summary["n_unidentified"] == 10
    assert not result.identified and not (layout.results / "bootstrap_draws.csv").exists()


def ragged_panel(seed: int = 8) -> pd.DataFrame:
    """Unbalanced: 30 entities with 1 to 9 rows on random dates of 12, plus two entities on dates 13-14 of their own
    (a second mobility group) and one row alone on date 15 (a singleton date)."""
    rng = np.random.default_rng(seed)
    entity = np.concatenate([np.repeat(np.arange(1, 31), rng.integers(1, 10, 30)), [31, 31, 31, 32, 32, 32, 33]])
    period = np.concatenate([rng.integers(1, 13, entity.size - 7), [13, 14, 14, 13, 14, 13, 15]])
    frame = pd.DataFrame({"entity_num": entity, "period_num": period,
                          "mu_hat": rng.normal(0, 1, entity.size), "lap": rng.uniform(0, 1, entity.size)})
    frame["outcome"] = 0.3 * frame["mu_hat"] * frame["lap"] + rng.normal(0, 1, entity.size) + 0.1 * entity
    return frame


def components(weights: np.ndarray, entity: np.ndarray, period: np.ndarray) -> int:
    """Connected components of the entity-date graph of the rows with positive weight."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    keep = weights > 0
    n = entity.max() + 1
    graph = coo_matrix((np.ones(keep.sum()), (entity[keep], n + period[keep])), shape=(n + period.max() + 1,) * 2)
    used = np.unique(np.concatenate([entity[keep], n + period[keep]]))
    labels = connected_components(graph, directed=False)[1]
    return np.unique(labels[used]).size


@pytest.mark.parametrize("resample", ["obs", "entity"])
@pytest.mark.parametrize("solver", ["conjugate_gradients", "dense"])
def test_ragged_panel_draws_equal_the_naive_fit(monkeypatch, resample, solver):
    """Issue 17: the full-sample-preconditioned solve is exact on draws with singletons, dates of zero weight and
    more than one mobility group."""
    if solver == "dense":
        monkeypatch.setattr(bootstrap, "CG_MAX_ITER", 0)
    frame, B = ragged_panel(), 12
    entity, period = pd.factorize(frame["entity_num"])[0], pd.factorize(frame["period_num"])[0]
    weights = draw_weights(len(frame), entity, B, 5, resample)
    kept = [drop_weighted_singletons(weights[:, b], [entity, period]) for b in range(B)]
    assert any(((weights[:, b] > 0) & (kept[b] == 0)).any() for b in range(B))  # singletons dropped in a draw
    assert any((np.bincount(period, kept[b], period.max() + 1) == 0).any() for b in range(B))  # a date of weight 0
    assert any(components(kept[b], entity, period) > 1 for b in range(B))  # a disconnected draw
    fast = pairs_bootstrap(frame, 0.0, B=B, seed=5, resample=resample, progress=False)
    np.testing.assert_allclose(fast.draws, naive_draws(frame, B, 5, resample), rtol=0, atol=1e-8)


def test_full_sample_preconditioner_needs_few_iterations():
    """Issue 17: conjugate gradients preconditioned by the full sample's Schur complement converge in a few steps per
    draw on a panel where each entity is seen on a window of 8 of 100 dates (a path-like graph), where Jacobi (the
    same kernel with the identity in place of the full-sample inverse) needs more than twice as many."""
    rng = np.random.default_rng(0)
    a = np.repeat(np.arange(300), 12)
    d = rng.integers(0, 92, 300)[a] + rng.integers(0, 8, a.size)
    z = rng.normal(size=(a.size, 4))
    start = np.searchsorted(a, np.arange(a[-1] + 2)).astype(np.int64)
    steps = {name: kernel.bootstrap_cross_products(z, a, d, start, 100, np.arange(a.size), a.size, 3, 0, 10, inverse,
                                                   1_000)[2]
             for name, inverse in [("full sample", kernel.preconditioner(a, d, start, 100)), ("jacobi", np.eye(100))]}
    assert steps["full sample"].max() <= 14 and steps["jacobi"].min() > 2 * steps["full sample"].max()


@pytest.mark.parametrize(("noise", "atol"), [(1e-4, 1e-10), (1e-5, 5e-9)])
def test_cg_resolves_m_where_the_date_explains_almost_all_of_lap(monkeypatch, noise, atol):
    """Issue 17: CG stops on the accuracy of M (its error relative to M's diagonal), not on a fixed reduction of its
    residual. A LAP driven by the date (the recall query names only the date), with within-date variation `noise`,
    leaves little of lap after the date FE; the previous rule (1e-6 of the initial residual) stopped after 4 steps
    here, 1.5e-9 (noise 1e-4) and 1.5e-7 (noise 1e-5) off the direct solve. Each CG draw equals the direct
    (Cholesky) solve of the same draw; at noise 1e-5 both carry ~1e-8 of rounding from M = z~'Wz~ − B'S^+B (the
    review measured CG−direct up to 1.5e-9 over 40 draws), hence the looser tolerance there."""
    rng = np.random.default_rng(0)
    n = 20_000
    frame = pd.DataFrame({"entity_num": rng.integers(0, 400, n), "period_num": rng.integers(0, 200, n),
                          "mu_hat": rng.choice([-1.0, 0.0, 1.0], n)})
    frame["lap"] = np.sin(frame["period_num"]) + 2 + noise * rng.normal(size=n)
    frame["outcome"] = 0.2 * frame["mu_hat"] * frame["lap"] + rng.normal(0, 1, n)
    cg = pairs_bootstrap(frame, 0.0, B=10, seed=1, progress=False).draws
    monkeypatch.setattr(bootstrap, "CG_MAX_ITER", 0)
    direct = pairs_bootstrap(frame, 0.0, B=10, seed=1, progress=False).draws
    np.testing.assert_allclose(cg, direct, rtol=0, atol=atol)


def test_a_regressor_constant_in_a_draw_costs_no_cg_steps():
    """A draw in which mu_hat is constant (it is nonzero on 2 of 5,000 rows) leaves beta_3 unidentified; CG is not
    run on its rounding-noise column (the review found 27 of 200 such draws running 100 steps, then the dense solve)."""
    rng = np.random.default_rng(1)
    a = np.sort(rng.integers(0, 250, 5_000))
    d = rng.integers(0, 40, a.size)
    z = rng.normal(size=(a.size, 4))
    z[:, 1] = 0.0
    z[[10, 2_000], 1] = 1.0
    z[:, 3] = z[:, 1] * z[:, 2]
    start = np.searchsorted(a, np.arange(a[-1] + 2)).astype(np.int64)
    M, raw, steps = kernel.bootstrap_cross_products(z, a, d, start, 40, np.arange(a.size), a.size, 3, 0, 200,
                                                    kernel.preconditioner(a, d, start, 40), 100)
    constant = np.array([kernel.draw_counts(3, b, a.size)[[10, 2_000]].sum() == 0 for b in range(200)])
    assert constant.sum() > 10 and (steps[constant] == 0).all() and (steps[~constant] < 100).all()
    assert np.isnan(bootstrap.beta3_of(M, raw)[constant]).all()


def test_a_draw_with_a_constant_regressor_is_not_identified_without_nan_arithmetic():
    """A regressor constant in a draw has a centred sum of squares of 0 up to rounding, possibly -1e-17, and an FE
    residual of 0: beta_3 is not identified there (NaN), decided without dividing by zero (the demo's bootstrap
    warned "divide by zero" in beta3_of)."""
    M = np.tile(np.diag([2.0, 1.0, 1.0, 1.0]), (2, 1, 1))
    raw = np.array([[2.0, 1.5, 1.5, 1.5], [2.0, 1.5, -1e-17, 1.5]])
    M[1, 2, 2] = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        beta3 = bootstrap.beta3_of(M, raw)
    assert np.isfinite(beta3[0]) and np.isnan(beta3[1])


def inputs_of(frame: pd.DataFrame, resample: str) -> bootstrap.KernelInputs:
    """The kernels' inputs for `frame`, as pairs_bootstrap prepares them."""
    z = np.column_stack([frame["outcome"], frame["mu_hat"], frame["lap"], frame["mu_hat"] * frame["lap"]])
    z = (z - z.mean(axis=0)) / z.std(axis=0)
    return bootstrap.kernel_inputs(z, pd.factorize(frame["entity_num"])[0], pd.factorize(frame["period_num"])[0],
                                   resample)


def paper_shaped(rows: int = 6_000, entities: int = 300, periods: int = 40, seed: int = 0) -> pd.DataFrame:
    """Random unbalanced panel of the benchmark's shape (benchmarks/bench_bootstrap.py), smaller."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"entity_num": rng.integers(1, entities + 1, rows), "period_num": rng.integers(1, periods + 1, rows),
                          "mu_hat": rng.choice([-1.0, 0.0, 1.0], rows), "lap": rng.uniform(0, 1, rows)})
    frame["outcome"] = 0.2 * frame["mu_hat"] * frame["lap"] + rng.normal(0, 1, rows)
    return frame


needs_lanes = pytest.mark.skipif(bool(lanes.UNAVAILABLE), reason=f"C kernel not available: {lanes.UNAVAILABLE}")


def test_the_compiled_lane_kernel_is_built():
    """The install compiles estimate/_bootstrap_lanes.c (setup.py). `make test` (CI) sets LAPBIAS_REQUIRE_LANES=1, so
    a failed build fails here instead of leaving the tests below skipped and the numba kernel tested alone."""
    if not os.environ.get("LAPBIAS_REQUIRE_LANES"):
        pytest.skip("LAPBIAS_REQUIRE_LANES is not set (make test sets it)")
    assert lanes.UNAVAILABLE == ""


def lone_date_panel() -> pd.DataFrame:
    """paper_shaped with one row moved to a date of its own: about half the draws have a singleton date and none a
    singleton entity (each entity has ~50 rows)."""
    frame = paper_shaped(rows=3_000, entities=60, periods=30)
    frame.loc[0, "period_num"] = 99
    return frame


def small_entities_panel() -> pd.DataFrame:
    """paper_shaped plus 20 entities of one to three rows: nearly every draw has singleton entities, dropped
    repeatedly (a dropped entity can leave a date alone)."""
    frame = paper_shaped(rows=3_000, entities=60, periods=30)
    sizes = np.random.default_rng(4).integers(1, 4, 20)
    small = paper_shaped(rows=int(sizes.sum()), entities=20, periods=30, seed=5)
    small["entity_num"] = 1_000 + np.repeat(np.arange(20), sizes)
    return pd.concat([frame, small], ignore_index=True)


def draws_with_singletons(frame: pd.DataFrame, B: int, seed: int, resample: str, first: int = 0) -> np.ndarray:
    weights = draw_weights(len(frame), pd.factorize(frame["entity_num"])[0], B, seed, resample, first=first)
    entity, period = pd.factorize(frame["entity_num"])[0], pd.factorize(frame["period_num"])[0]
    return np.array([(drop_weighted_singletons(weights[:, b], [entity, period]) != weights[:, b]).any()
                     for b in range(B)])


SHAPES = {"paper": paper_shaped, "ragged": ragged_panel, "lone date": lone_date_panel,
          "small entities": small_entities_panel}


def assert_same_draws(lane_result, numba_result, rows: int) -> None:
    (M, raw, steps), (M0, raw0, steps0) = lane_result, numba_result
    np.testing.assert_array_equal(steps, steps0)
    np.testing.assert_allclose(raw, raw0, rtol=1e-12, atol=1e-12 * rows)
    np.testing.assert_allclose(M, M0, rtol=0, atol=1e-12 * rows)
    np.testing.assert_allclose(bootstrap.beta3_of(M, raw), bootstrap.beta3_of(M0, raw0), rtol=0, atol=1e-12)


@needs_lanes
@pytest.mark.parametrize("resample", ["obs", "entity"])
@pytest.mark.parametrize("shape", SHAPES)
def test_lane_kernel_equals_the_per_draw_kernel(resample, shape):
    """Issue 17: the C kernel (four draws per vector) computes what the numba kernel computes, draw by draw (same
    random streams, same singleton rule, same CG and stopping rule: the same steps), on every draw, including those
    with singleton levels; 13 draws from draw 5, so the last vector is a partial one."""
    frame = SHAPES[shape]()
    i = inputs_of(frame, resample)
    lane_result = lanes.cross_products(i.z, i.d_int32, i.start, i.n_d, i.unit, i.n_units, 7, 5, 13, i.inverse, 100)
    numba_result = kernel.bootstrap_cross_products(i.z, i.a, i.d, i.start, i.n_d, i.unit, i.n_units, 7, 5, 13,
                                                   i.inverse, 100)
    singletons = draws_with_singletons(frame, 13, 7, resample, first=5)
    if shape == "paper":
        assert not singletons.any()
    elif shape == "lone date":  # vectors mix draws with and without singletons
        assert singletons.any() and not singletons.all()
    else:
        assert singletons.any()
    assert (lane_result[2] >= 0).all()  # every draw computed by the C kernel
    assert_same_draws(lane_result, numba_result, len(frame))


@needs_lanes
def test_draws_are_the_same_without_the_compiled_kernel(monkeypatch):
    """Where the C kernel is not built, the bootstrap runs on the numba kernel alone: the same draws (to rounding).
    The compiled run is checked to have gone through the C kernel, in several threads (blocks of 8 draws)."""
    frame = small_entities_panel()
    calls = []
    compiled_kernel = lanes.cross_products

    def spy(*args, **kwargs):
        result = compiled_kernel(*args, **kwargs)
        calls.append(result[2])
        return result

    monkeypatch.setattr(lanes, "cross_products", spy)
    compiled = pairs_bootstrap(frame, 0.0, B=30, seed=3, block=8, progress=False).draws
    assert len(calls) == 4 and all((steps >= 0).all() for steps in calls)
    assert draws_with_singletons(frame, 30, 3, "obs").sum() > 20
    monkeypatch.setattr(lanes, "UNAVAILABLE", "not built (test)")
    numba_only = pairs_bootstrap(frame, 0.0, B=30, seed=3, block=8, progress=False).draws
    assert len(calls) == 4 and np.isfinite(compiled).all()
    np.testing.assert_allclose(compiled, numba_only, rtol=0, atol=1e-12)


@pytest.mark.skipif(shutil.which("gcc") is None or platform.machine() != "x86_64", reason="needs gcc on x86-64")
@pytest.mark.parametrize("level", ["x86-64", "x86-64-v3"])
def test_each_build_level_of_the_lane_kernel_equals_the_numba_kernel(tmp_path, level):
    """The installed library runs one clone (target_clones picks it for this CPU); each of the others is built here
    on its own (-DLAPBIAS_NO_CLONES) and compared with the numba kernel, with and without singleton draws."""
    if level == "x86-64-v3" and not {"avx2", "fma"} <= cpu_flags():
        pytest.skip("this CPU has no AVX2/FMA")
    library = tmp_path / f"lanes-{level}.so"
    include = sysconfig.get_paths()["include"]
    subprocess.run(["gcc", "-O3", f"-march={level}", "-fno-math-errno", "-Wno-psabi", "-fPIC", "-shared",
                    "-DLAPBIAS_NO_CLONES", f"-I{include}", "-o", str(library), str(lanes.SOURCE)], check=True)
    function = ctypes.CDLL(str(library)).lapbias_lanes_cross_products
    function.restype, function.argtypes = ctypes.c_int64, lanes.ARGTYPES
    for shape in ("paper", "small entities"):
        frame = SHAPES[shape]()
        i = inputs_of(frame, "obs")
        M, raw, steps = np.zeros((13, 4, 4)), np.zeros((13, 4)), np.zeros(13, np.int64)
        assert function(len(i.z), i.start.size - 1, i.n_d, i.z.ctypes.data, i.d_int32.ctypes.data,
                        i.start.ctypes.data, i.unit.ctypes.data, i.n_units, 7, 5, 13, i.inverse.ctypes.data, 100, 255,
                        M.ctypes.data, raw.ctypes.data, steps.ctypes.data) == 0
        assert_same_draws((M, raw, steps), kernel.bootstrap_cross_products(
            i.z, i.a, i.d, i.start, i.n_d, i.unit, i.n_units, 7, 5, 13, i.inverse, 100), len(frame))


def cpu_flags() -> set[str]:
    text = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    return set(next((line for line in text.splitlines() if line.startswith("flags")), "").split())


@needs_lanes
def test_a_compiled_kernel_older_than_its_source_is_not_used(tmp_path, monkeypatch):
    """An edit of the C source whose rebuild failed (an optional extension keeps the old file) must not run the old
    kernel: the sha256 compiled in differs from the source's, and the bootstrap falls back to numba with the reason."""
    library, why = lanes._load()
    assert library is not None and why == ""
    edited = tmp_path / "_bootstrap_lanes.c"
    edited.write_bytes(lanes.SOURCE.read_bytes() + b"/* edited */\n")
    monkeypatch.setattr(lanes, "SOURCE", edited)
    library, why = lanes._load()
    assert library is None and "was built from another version of _bootstrap_lanes.c" in why


@needs_lanes
def test_the_lane_wrapper_checks_what_the_c_kernel_assumes():
    i = inputs_of(paper_shaped(rows=400, entities=40, periods=10), "obs")
    args = [i.z, i.d_int32, i.start, i.n_d, i.unit, i.n_units, 1, 0, 4, i.inverse, 100]
    for position, bad, message in [(0, i.z[:, :3].copy(), "z as a C-contiguous float64 array of shape (400, 4)"),
                                   (1, i.d, "d as a C-contiguous int32"),
                                   (4, i.unit[::-1], "not contiguous"),
                                   (5, 10, "unit in 0 .. 9"),
                                   (9, i.inverse[:5, :5].copy(), "inverse as a C-contiguous float64 array of shape")]:
        wrong = list(args)
        wrong[position] = bad
        with pytest.raises((TypeError, ValueError), match=re.escape(message)):
            lanes.cross_products(*wrong)


@needs_lanes
def test_lane_kernel_leaves_counts_past_its_byte_and_unconverged_draws_to_the_numba_kernel(monkeypatch):
    """A draw with a count above max_count (255 in use: a byte) and a draw on which CG has not converged within
    max_iter steps come back with steps = -1, and pairs_bootstrap computes them with the numba kernel."""
    frame = paper_shaped(rows=2_000, entities=100, periods=20)
    i = inputs_of(frame, "obs")
    counts = np.stack([kernel.draw_counts(2, b, i.n_units) for b in range(8)])
    _, _, steps = lanes.cross_products(i.z, i.d_int32, i.start, i.n_d, i.unit, i.n_units, 2, 0, 8, i.inverse, 100,
                                       max_count=5)
    np.testing.assert_array_equal(steps < 0, counts.max(axis=1) > 5)
    assert (steps < 0).any() and (steps >= 0).any()
    _, _, steps = lanes.cross_products(i.z, i.d_int32, i.start, i.n_d, i.unit, i.n_units, 2, 0, 8, i.inverse, 1)
    assert (steps == -1).all()  # 3 CG steps are needed on this panel
    expected = pairs_bootstrap(frame, 0.0, B=8, seed=2, progress=False).draws
    monkeypatch.setattr(lanes.cross_products, "__defaults__", (5,))
    np.testing.assert_allclose(pairs_bootstrap(frame, 0.0, B=8, seed=2, progress=False).draws, expected, rtol=0,
                               atol=1e-12)
    with pytest.raises(ValueError, match="max_count = 256"):
        lanes.cross_products(i.z, i.d_int32, i.start, i.n_d, i.unit, i.n_units, 2, 0, 4, i.inverse, 100, max_count=256)


@needs_lanes
def test_lane_kernel_skips_cg_on_a_draw_with_a_constant_regressor():
    """As the numba kernel (test_a_regressor_constant_in_a_draw_costs_no_cg_steps): such a draw takes 0 steps and its
    beta_3 is not identified; the other draws of its vector are computed as usual, as the numba kernel computes them
    (a draw with one of the two rows is not identified either: mu_hat and mu_hat x lap are then collinear)."""
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"entity_num": rng.integers(0, 250, 5_000), "period_num": rng.integers(0, 40, 5_000),
                          "mu_hat": 0.0, "lap": rng.normal(size=5_000), "outcome": rng.normal(size=5_000)})
    frame.loc[[10, 2_000], "mu_hat"] = 1.0
    i = inputs_of(frame, "obs")
    M, raw, steps = lanes.cross_products(i.z, i.d_int32, i.start, i.n_d, i.unit, i.n_units, 3, 0, 200, i.inverse, 100)
    constant = np.array([kernel.draw_counts(3, b, i.n_units)[[10, 2_000]].sum() == 0 for b in range(200)])
    assert constant.sum() > 10 and (steps[constant] == 0).all() and (steps[~constant] > 0).all()
    assert np.isnan(bootstrap.beta3_of(M, raw)[constant]).all()
    M0, raw0, _ = kernel.bootstrap_cross_products(i.z, i.a, i.d, i.start, i.n_d, i.unit, i.n_units, 3, 0, 200,
                                                  i.inverse, 100)
    beta3, beta3_numba = bootstrap.beta3_of(M, raw), bootstrap.beta3_of(M0, raw0)
    assert np.isfinite(beta3).sum() > 10
    np.testing.assert_allclose(beta3, beta3_numba, rtol=0, atol=1e-12)  # NaN where NaN
