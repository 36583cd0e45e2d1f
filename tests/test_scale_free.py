"""Units never matter (issue 11 item 1): every t statistic of every regression the project runs is unchanged when
any regressor is multiplied by 1e-12 ... 1e12, and collinearity is decided after scaling, as reghdfe decides it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lapbias.errors import EstimationError
from lapbias.estimate import reghdfe
from lapbias.estimate.extended import estimate_extended
from lapbias.estimate.protocol import BETA3, estimate_panel
from lapbias.panel import recall_direction

ABSORB = ["entity_num", "period_num"]


def panel(n_entities: int = 30, n_periods: int = 8, seed: int = 5, lap_scale: float = 1.0) -> pd.DataFrame:
    """The demo's shape (30 entities x 8 periods per sample) with every column the extended tables and the
    validation difference (ud_dir, the recalled direction, as `lapbias panel` derives it) use."""
    rng = np.random.default_rng(seed)
    entity = np.repeat(np.arange(1, n_entities + 1), 2 * n_periods)
    period = np.tile(np.arange(1, 2 * n_periods + 1), n_entities)
    frame = pd.DataFrame({"entity_num": entity, "period_num": period, "post": (period > n_periods).astype(int),
                          "mu_hat": rng.choice([-1.0, 0.0, 1.0], entity.size),
                          "lap": lap_scale * rng.uniform(0.2, 1.0, entity.size),
                          "ud": rng.normal(0, 0.3, entity.size), "p_first": rng.uniform(0.5, 1, entity.size),
                          "confidence": rng.uniform(0.5, 1, entity.size), "small": rng.integers(0, 2, entity.size)})
    frame["outcome"] = (0.2 * frame["mu_hat"] + 0.5 * frame["mu_hat"] * frame["lap"] / lap_scale
                        + rng.normal(0, 0.5, n_entities)[entity - 1] + rng.normal(0, 1, entity.size))
    frame["high_lap"] = (frame["lap"] > frame.groupby("post")["lap"].transform("median")).astype(int)
    frame["lap_recall"] = frame["ud"].abs() + rng.uniform(0.0, 0.5, entity.size)  # |ud| <= P(up) + P(down)
    frame["ud_dir"] = recall_direction(frame["ud"], frame["lap_recall"])
    return frame


def t_stats(tables: dict[str, pd.DataFrame]) -> pd.Series:
    """Every t statistic, except Table V's _cons: its variables are standardized to mean 0, so _cons is 0 up to
    rounding (~1e-17) and its t statistic is rounding noise."""
    frames = [t.assign(table=name) for name, t in tables.items() if {"model", "term", "t"} <= set(t.columns)]
    stacked = pd.concat(frames)
    stacked = stacked[~((stacked["table"] == "table5") & (stacked["term"] == "_cons"))]
    return stacked.set_index(["table", "model", "term"])["t"].sort_index()


def protocol_t(frame: pd.DataFrame) -> pd.Series:
    results = estimate_panel(frame[frame["post"] == 0], frame[frame["post"] == 1])
    return t_stats(results.tables)


@pytest.fixture(scope="module")
def protocol_reference() -> pd.Series:
    return protocol_t(panel())


@pytest.mark.parametrize("scaling", [{"lap": 1e-12}, {"lap": 3e-7, "ud": 1e12}, {"lap": 1e12, "mu_hat": 1e-12},
                                     {"mu_hat": 1e12, "ud": 1e-12}])
def test_protocol_t_statistics_do_not_depend_on_units(scaling, protocol_reference):
    frame, reference = panel(), protocol_reference
    assert reference.notna().all() and len(reference) >= 20
    scaled = protocol_t(frame.assign(**{v: frame[v] * f for v, f in scaling.items()}))
    np.testing.assert_allclose(scaled.to_numpy(), reference.to_numpy(), rtol=1e-6, err_msg=str(scaling))


def test_extended_t_statistics_do_not_depend_on_units():
    frame = panel()
    reference = t_stats(estimate_extended(frame).tables)
    assert {"table2", "table3", "table4", "table5"} <= set(reference.index.get_level_values("table"))
    for scaling in ({"lap": 1e-12, "p_first": 1e-9, "small": 1e12},
                    {"lap": 1e12, "confidence": 1e9, "mu_hat": 1e-12, "small": 1e-12}):
        scaled = t_stats(estimate_extended(frame.assign(**{v: frame[v] * f for v, f in scaling.items()})).tables)
        np.testing.assert_allclose(scaled.to_numpy(), reference.to_numpy(), rtol=1e-6, err_msg=str(scaling))


def test_min_k_lap_of_real_size_keeps_beta3_with_eight_entities():
    """Min-K% LAP ~ 1e-6 (paper Table I) on a small panel: beta_3 is estimated, not dropped as collinear."""
    frame = panel(n_entities=8, lap_scale=7.3e-6)
    fit = reghdfe(frame, "outcome", ["mu_hat", "lap", BETA3], absorb=ABSORB, vce="cluster", cluster=["entity_num"])
    assert fit.omitted == [] and np.isfinite(fit.t[BETA3])
    unit = reghdfe(frame.assign(lap=frame["lap"] / 7.3e-6), "outcome", ["mu_hat", "lap", BETA3], absorb=ABSORB,
                   vce="cluster", cluster=["entity_num"])
    assert fit.t[BETA3] == pytest.approx(unit.t[BETA3], rel=1e-9)
    assert fit.coef[BETA3] == pytest.approx(unit.coef[BETA3] / 7.3e-6, rel=1e-9)
    assert fit.ci_high[BETA3] == pytest.approx(unit.ci_high[BETA3] / 7.3e-6, rel=1e-9)


def test_single_series_newey_is_scale_free_too():
    frame = panel(n_entities=1, n_periods=40)
    frame = frame[frame["post"] == 0]
    fits = [reghdfe(frame.assign(lap=frame["lap"] * f), "outcome", ["mu_hat", "lap", BETA3], vce="newey",
                    time="period_num") for f in (1.0, 1e-12)]
    np.testing.assert_allclose(fits[1].t.to_numpy(), fits[0].t.to_numpy(), rtol=1e-9)


def test_collinear_with_the_fixed_effects_is_omitted_and_said():
    frame = panel()
    frame["entity_trait"] = frame["entity_num"] * 1e-9  # constant within entity: absorbed by its FE
    fit = reghdfe(frame, "outcome", ["mu_hat", "entity_trait", "lap"], absorb=ABSORB, vce="cluster",
                  cluster=["entity_num"])
    assert fit.omitted == ["entity_trait"] and fit.omitted_reasons["entity_trait"] == "collinear with the fixed effects"
    assert list(fit.coef.index) == ["mu_hat", "lap", "_cons"]
    rows = fit.to_rows("m")
    assert rows.set_index("term").loc["entity_trait", ["coef", "se", "t"]].isna().all()


def test_collinear_with_other_regressors_is_omitted_in_order():
    frame = panel()
    frame["twice_lap"] = 2e-8 * frame["lap"] - 3e-9 * frame["mu_hat"]
    fit = reghdfe(frame, "outcome", ["mu_hat", "lap", "twice_lap"], absorb=ABSORB)
    assert fit.omitted == ["twice_lap"] and fit.omitted_reasons["twice_lap"] == "collinear with the other regressors"


@pytest.mark.parametrize("change, message", [
    (lambda f: f.assign(outcome=3.0), "the outcome outcome is constant within the fixed effects"),
    (lambda f: f.assign(outcome=f["entity_num"] * 1.5), "is constant within the fixed effects"),
    (lambda f: f.assign(outcome=np.where(f.index == 7, np.inf, f["outcome"])), "variable outcome has 1 infinite"),
    (lambda f: f.assign(lap=np.where(f.index == 3, -np.inf, f["lap"])), "variable lap has 1 infinite value(s) (first: row 3"),
    (lambda f: f.assign(mu_hat="up"), "variable mu_hat is not numeric"),
])
def test_degenerate_regressions_say_why(change, message):
    with pytest.raises(EstimationError, match=None) as err:
        reghdfe(change(panel()), "outcome", ["mu_hat", "lap", BETA3], absorb=ABSORB, vce="cluster",
                cluster=["entity_num"])
    assert message in str(err.value)


def test_one_cluster_is_called_one_cluster():
    frame = panel(n_entities=1)
    with pytest.raises(EstimationError, match="with 1 cluster"):
        reghdfe(frame, "outcome", ["mu_hat", "lap"], vce="cluster", cluster=["entity_num"])


def test_fewer_observations_than_parameters_is_said():
    frame = panel().head(3)
    with pytest.raises(EstimationError, match=r"N = 3 observation\(s\) for K = 2 regressor\(s\) and a constant"):
        reghdfe(frame, "outcome", ["mu_hat", "lap", "ud"])


def test_huge_outcome_is_estimated_in_its_units():
    frame = panel()
    small = reghdfe(frame, "outcome", ["mu_hat", "lap"], absorb=ABSORB)
    huge = reghdfe(frame.assign(outcome=frame["outcome"] * 1e300), "outcome", ["mu_hat", "lap"], absorb=ABSORB)
    assert huge.t["lap"] == pytest.approx(small.t["lap"], rel=1e-9)
    assert huge.coef["lap"] == pytest.approx(small.coef["lap"] * 1e300, rel=1e-9)


def test_a_regressor_that_is_also_the_absorbed_and_cluster_variable():
    frame = panel()
    fit = reghdfe(frame, "outcome", ["mu_hat", "entity_num"], absorb=["entity_num"], vce="cluster",
                  cluster=["entity_num"])
    assert fit.omitted_reasons == {"entity_num": "collinear with the fixed effects"} and fit.N_clust == 30


def test_reghdfe_command_says_what_is_omitted_and_names_one_cluster(tmp_path):
    from click.testing import CliRunner

    from lapbias.cli import main

    frame = panel()
    frame["entity_trait"] = frame["entity_num"] * 2.0
    frame.to_csv(tmp_path / "p.csv", index=False)
    result = CliRunner().invoke(main, ["reghdfe", str(tmp_path / "p.csv"), "outcome", "mu_hat", "entity_trait",
                                       "-a", "entity_num", "-a", "period_num", "-c", "entity_num"])
    assert result.exit_code == 0 and "note: entity_trait omitted: collinear with the fixed effects" in result.output
    frame[frame["entity_num"] == 1].to_csv(tmp_path / "one.csv", index=False)
    result = CliRunner().invoke(main, ["reghdfe", str(tmp_path / "one.csv"), "outcome", "mu_hat", "-c", "entity_num"])
    assert result.exit_code != 0 and "1 cluster" in result.output and "Traceback" not in result.output
