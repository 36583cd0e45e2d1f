"""Hostile inputs, second round, through the real CLI: each class of defect with a table of cases. Model-free:
stage files are synthetic (test_panel.synthetic_stage_files); where the environment cannot produce a failure here
(a full disk), the failing call is replaced, and the test says so."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lapbias.io import Layout, read_parquet, write_parquet
from test_bad_inputs import DATES, STUDY, expect, write_config
from test_panel import synthetic_stage_files


def _project(root, rescale: dict[str, float] | None = None) -> tuple[Layout, object]:
    layout = Layout(root)
    layout.make_dirs()
    inputs = synthetic_stage_files(layout, n_entities=20, dates=DATES)
    if rescale:
        for column, factor in rescale.items():
            if column == "outcome":
                inputs["outcome"] = inputs["outcome"] * factor
                write_parquet(inputs, layout.derived_file("input.parquet"))
            else:  # a recall column: LAP in other units
                recall = read_parquet(layout.derived_file("recall.parquet"))
                recall[column] = recall[column] * factor
                write_parquet(recall, layout.derived_file("recall.parquet"))
    return layout, write_config(root, STUDY)


def _estimate_and_report(layout: Layout, config) -> None:
    expect(0, "panel:", "panel", config)
    expect(0, "estimate (python engine)", "estimate", config)
    expect(0, "report:", "report", config)


# ---- units at the extremes: every standardization and descriptive is scale-free ------------------------------
@pytest.fixture(scope="module")
def unit_runs(tmp_path_factory):
    runs = {}
    for name, rescale in {"as is": None, "outcome x 1e300": {"outcome": 1e300},
                          "outcome x 1e-300": {"outcome": 1e-300}, "lap x 1e-300": {"lap": 1e-300}}.items():
        layout, config = _project(tmp_path_factory.mktemp("units"), rescale)
        _estimate_and_report(layout, config)
        runs[name] = layout
    return runs


@pytest.mark.parametrize("name, column, factor", [("outcome x 1e300", "outcome", 1e300),
                                                  ("outcome x 1e-300", "outcome", 1e-300),
                                                  ("lap x 1e-300", "lap", 1e-300)])
def test_standardizations_and_descriptives_do_not_see_units(unit_runs, name, column, factor):
    base, scaled = unit_runs["as is"].results, unit_runs[name].results
    b0, b1 = pd.read_csv(base / "bootstrap.csv"), pd.read_csv(scaled / "bootstrap.csv")
    assert b0["identified"].iloc[0] == 1 and b1["identified"].iloc[0] == 1, b1.to_dict("records")
    np.testing.assert_allclose(b1["p_boot"], b0["p_boot"], rtol=0, atol=1e-12)
    t0 = pd.read_csv(base / "table5.csv").query("term != '_cons'").set_index(["model", "term"])["t"]  # _cons: 0 + noise
    t1 = pd.read_csv(scaled / "table5.csv").query("term != '_cons'").set_index(["model", "term"])["t"]
    np.testing.assert_allclose(t1.loc[t0.index], t0, rtol=1e-9)
    d0 = pd.read_csv(base / "descriptive.csv").set_index(["sample", "variable"])
    d1 = pd.read_csv(scaled / "descriptive.csv").set_index(["sample", "variable"])
    for stat in ("mean", "sd"):
        np.testing.assert_allclose(d1.loc[(slice(None), column), stat] / factor,
                                   d0.loc[(slice(None), column), stat], rtol=1e-12)
    if column == "lap":
        l0 = pd.read_csv(base / "lap_distribution.csv").query("measure == 'lap_recall'")
        l1 = pd.read_csv(scaled / "lap_distribution.csv").query("measure == 'lap_recall'")
        np.testing.assert_allclose(l1["sd"].to_numpy() / factor, l0["sd"].to_numpy(), rtol=1e-12)
    m0 = pd.read_csv(base / "magnitudes.csv").set_index("quantity")["value"]
    m1 = pd.read_csv(scaled / "magnitudes.csv").set_index("quantity")["value"]
    np.testing.assert_allclose(m1["interaction_share_of_standalone"], m0["interaction_share_of_standalone"],
                               rtol=1e-9)
