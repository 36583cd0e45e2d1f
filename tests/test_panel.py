"""Panel preprocessing (protocol Step 3): checked merges, integer ids, periods, high_lap, .dta export."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyreadstat
import pytest

from lapbias.config import from_dict
from lapbias.errors import MergeError
from lapbias.io import Layout, write_parquet
from lapbias.panel import build, high_lap_flags, integer_ids, merge_checked, period_labels


def synthetic_stage_files(layout: Layout, n_entities: int = 6, dates=("2024-03-04", "2024-03-05", "2024-09-03",
                                                                      "2024-09-04"), seed: int = 0) -> pd.DataFrame:
    """input/forecast/recall/minkprob parquet files in the schemas of docs/contracts.md, random values."""
    rng = np.random.default_rng(seed)
    rows = [{"row_id": f"E{e}-{d}", "entity_id": f"E{e}", "entity_name": f"Entity {e}", "ticker": f"E{e}",
             "text": f"headline {e} {d}", "text_date": pd.Timestamp(d) - pd.Timedelta(days=1),
             "target_date": pd.Timestamp(d), "outcome": float(rng.normal()), "small": e % 2}
            for e in range(1, n_entities + 1) for d in dates]
    inputs = pd.DataFrame(rows)
    write_parquet(inputs, layout.derived_file("input.parquet"))
    mu_hat = rng.choice([-1.0, 1.0], len(inputs))
    write_parquet(pd.DataFrame({
        "row_id": inputs["row_id"], "entity_id": inputs["entity_id"], "text_date": inputs["text_date"],
        "target_date": inputs["target_date"], "response": np.where(mu_hat > 0, "up", "down"),
        "label": np.where(mu_hat > 0, "up", "down"), "parsed": True, "mu_hat": mu_hat,
        "p_first": rng.uniform(0.3, 0.9, len(inputs)), "confidence": np.nan, "cache_key": "k"}),
        layout.derived_file("forecast.parquet"))
    pairs = inputs[["entity_id", "target_date"]].drop_duplicates()
    p_up, p_down = rng.uniform(0, 0.4, len(pairs)), rng.uniform(0, 0.4, len(pairs))
    write_parquet(pairs.assign(p_up=p_up, p_down=p_down, p_unknown=0.1, lap=p_up + p_down, ud=p_up - p_down,
                               residual_mass=0.9 - p_up - p_down, censored_up=False, censored_down=False,
                               censored_unknown=False, cache_key="k"), layout.derived_file("recall.parquet"))
    write_parquet(pd.DataFrame({"row_id": inputs["row_id"], "lap_mink": rng.uniform(0, 0.01, len(inputs)),
                                "lap_minkpp": rng.normal(-4, 0.5, len(inputs)), "lap_gapk": rng.normal(-4, 0.5, len(inputs)),
                                "lap_zlib": rng.normal(-0.025, 0.002, len(inputs)),
                                "lap_loss": rng.uniform(0.01, 0.03, len(inputs)), "n_tokens": 40, "n_lowest": 8,
                                "moments_top_k": 0, "cache_key": "k"}), layout.derived_file("minkprob.parquet"))
    return inputs


def write_hand_built_panel(layout: Layout, panel: pd.DataFrame, inputs: pd.DataFrame) -> None:
    """Write a panel.parquet edited by hand (a degenerate sample) as the Python API writes one, without the record of
    the files `lapbias panel` built it from, and input.parquet's rows for it (its row ids, in order, with its
    outcomes): what `lapbias estimate` then checks the panel against (freshness.panel_current)."""
    panel = panel.reset_index(drop=True)
    panel.attrs = {}
    write_parquet(panel, layout.derived_file("panel.parquet"))
    write_parquet(inputs.set_index("row_id").loc[panel["row_id"]].assign(outcome=panel["outcome"].to_numpy())
                  .reset_index(), layout.derived_file("input.parquet"))


@pytest.fixture()
def study(tmp_path):
    layout = Layout(tmp_path)
    layout.make_dirs()
    return from_dict({"root": str(tmp_path), "study": {"cutoff": "2024-06-30"}}), layout


def test_build_writes_panel_and_both_dta_files(study):
    config, layout = study
    inputs = synthetic_stage_files(layout)
    result = build(config, layout)
    panel = result.panel
    assert len(panel) == len(inputs) and list(panel["row_id"]) == list(inputs["row_id"])
    assert panel["entity_num"].tolist()[:4] == [1, 1, 1, 1] and panel["entity_num"].max() == 6
    assert sorted(panel["period_num"].unique()) == [1, 2, 3, 4]
    assert (panel["lap"] == panel["lap_recall"]).all()
    assert panel["post"].tolist()[:4] == [0, 0, 1, 1]
    pre, meta = pyreadstat.read_dta(layout.derived_file("panel_pre.dta"))
    assert len(pre) == 12 and "text" not in pre.columns
    assert meta.column_names_to_labels["lap"] == "LAP used in estimation"
    assert meta.original_variable_types["target_date"] == "%td"
    np.testing.assert_allclose(pre["outcome"], panel.loc[panel["post"] == 0, "outcome"])
    assert layout.derived_file("panel_post.dta").exists()


def test_numeric_user_columns_are_numbers_in_the_dta(study):
    """A CSV's extra columns arrive as text; RavenPack's RELEVANCE and EVENT_SENTIMENT_SCORE reached the .dta as
    str3/str5, to destring in Stata. A column of numbers (missing markers allowed) is now a number there; one with
    text, or identifiers written with leading zeros, stays a string."""
    config, layout = study
    inputs = synthetic_stage_files(layout)
    n = len(inputs)
    inputs["RELEVANCE"] = ["100", "NA", "75", "90"] * (n // 4)  # rows 1-2 of each 4 are pre-cutoff
    inputs["EVENT_SENTIMENT_SCORE"] = ["0.54", "-0.3", "", "1e-2"] * (n // 4)
    inputs["CUSIP"] = ["03783310", "59491810", "03783310", "59491810"] * (n // 4)
    inputs["SOURCE"] = ["DJ", "10", "DJ", "10"] * (n // 4)
    write_parquet(inputs, layout.derived_file("input.parquet"))
    panel = build(config, layout).panel
    pre, meta = pyreadstat.read_dta(layout.derived_file("panel_pre.dta"))
    assert meta.readstat_variable_types["RELEVANCE"] == "double"
    expected = pd.to_numeric(panel.loc[panel["post"] == 0, "RELEVANCE"].replace("NA", None)).to_numpy(float)
    np.testing.assert_array_equal(pre["RELEVANCE"].to_numpy(float), expected)
    assert np.isnan(expected).any() and set(expected[~np.isnan(expected)]) <= {100.0, 90.0, 75.0}
    assert meta.readstat_variable_types["EVENT_SENTIMENT_SCORE"] == "double"
    assert meta.readstat_variable_types["CUSIP"] == "string" and pre["CUSIP"].iloc[0] == "03783310"
    assert meta.readstat_variable_types["SOURCE"] == "string"


def test_every_column_has_one_type_in_both_dta_files(study):
    """Stata review F1: the type of a user column was decided per sample, so a column of numbers before the cutoff
    and only empty or "NA" cells after (analyst_eps), or an id with a leading zero only after the cutoff (cusip),
    was double in panel_pre.dta and str in panel_post.dta, and the documented `append using
    data/derived/panel_post` stops with r(106). The type is now decided once, on the whole panel."""
    config, layout = study
    inputs = synthetic_stage_files(layout)
    n = len(inputs)
    inputs["analyst_eps"] = ["1.25", "2.5", "", "NA"] * (n // 4)  # rows 1-2 of each 4 are pre-cutoff
    inputs["cusip"] = ["3783310", "59491810", "03783310", "59491810"] * (n // 4)
    inputs["empty_after"] = ["DJ", "RTRS", "", ""] * (n // 4)
    write_parquet(inputs, layout.derived_file("input.parquet"))
    build(config, layout)
    _, pre = pyreadstat.read_dta(layout.derived_file("panel_pre.dta"), metadataonly=True)
    _, post = pyreadstat.read_dta(layout.derived_file("panel_post.dta"), metadataonly=True)
    assert pre.column_names == post.column_names
    assert pre.readstat_variable_types == post.readstat_variable_types
    assert pre.readstat_variable_types["analyst_eps"] == "double"
    assert pre.readstat_variable_types["cusip"] == "string" and pre.readstat_variable_types["empty_after"] == "string"
    post_rows, _ = pyreadstat.read_dta(layout.derived_file("panel_post.dta"))
    assert post_rows["analyst_eps"].isna().all() and (post_rows["cusip"] == "03783310").any()
    gap = config.replace(study={"release_date": "2024-09-03"})  # rows in the release gap: post missing
    panel = build(gap, layout).panel
    assert panel["post"].isna().any()
    assert len(pyreadstat.read_dta(layout.derived_file("panel_post.dta"))[0]) == int((panel["post"] == 1).sum())


def test_minkprob_choice_and_missing_minkprob(study):
    config, layout = study
    synthetic_stage_files(layout)
    mink = build(config.replace(estimate={"lap_measure": "minkprob"}), layout).panel
    assert (mink["lap"] == mink["lap_mink"]).all()
    layout.derived_file("minkprob.parquet").unlink()
    result = build(config, layout)
    assert result.panel["lap_mink"].isna().all() and result.notes


def test_merge_failures_name_the_key(study):
    config, layout = study
    synthetic_stage_files(layout)
    recall = pd.read_parquet(layout.derived_file("recall.parquet"))
    write_parquet(pd.concat([recall, recall.iloc[[0]]]), layout.derived_file("recall.parquet"))
    with pytest.raises(MergeError, match=r"recall has 2 rows with a repeated key \['entity_id', 'target_date'\]"):
        build(config, layout)
    synthetic_stage_files(layout)
    forecast = pd.read_parquet(layout.derived_file("forecast.parquet"))
    write_parquet(forecast.iloc[1:], layout.derived_file("forecast.parquet"))
    with pytest.raises(MergeError, match=r"1 input rows have no match in forecast on \['row_id'\]"):
        build(config, layout)


def test_merge_checked_rejects_row_count_changes():
    left = pd.DataFrame({"k": [1, 2]})
    with pytest.raises(MergeError):
        merge_checked(left, pd.DataFrame({"k": [1]}), ["k"], "x")


def test_period_labels_for_each_frequency():
    dates = pd.Series(pd.to_datetime(["2024-03-29", "2024-04-01", "2024-12-31", "2025-01-02"]))
    assert period_labels(dates, "day")[0].tolist() == ["2024-03-29", "2024-04-01", "2024-12-31", "2025-01-02"]
    assert period_labels(dates, "week")[0].tolist() == ["2024-W13", "2024-W14", "2025-W01", "2025-W01"]
    assert period_labels(dates, "month")[0].tolist() == ["2024-03", "2024-04", "2024-12", "2025-01"]
    assert period_labels(dates, "quarter")[0].tolist() == ["2024Q1", "2024Q2", "2024Q4", "2025Q1"]
    assert period_labels(dates, "year")[0].tolist() == ["2024", "2024", "2024", "2025"]
    assert integer_ids(period_labels(dates, "week")[1]).tolist() == [1, 2, 3, 3]


def test_high_lap_rules_and_ties():
    sample = pd.DataFrame({"entity_id": ["a", "a", "b", "b", "c", "c"], "lap": [0.1, 0.3, 0.2, 0.2, 0.9, np.nan]})
    # pooled median of (0.1, 0.3, 0.2, 0.2, 0.9) = 0.2; rows equal to it go to the low half
    assert high_lap_flags(sample, "pooled").tolist() == [0, 1, 0, 0, 1, pd.NA]
    # entity means a 0.2, b 0.2, c 0.9 -> median 0.2 -> only c is high
    assert high_lap_flags(sample, "entity_mean").tolist() == [0, 0, 0, 0, 1, 1]


def _with_extra_input_columns(layout: Layout, **columns) -> None:
    """input.parquet with more columns, as `lapbias validate` carries a CSV's extra columns into it."""
    path = layout.derived_file("input.parquet")
    write_parquet(pd.read_parquet(path).assign(**columns), path)


def test_a_header_over_80_characters_is_cut_to_an_80_character_label(study):
    """Review F2: a renamed column keeps its original name as its .dta variable label, and pyreadstat refuses labels
    over 80 characters ("A provided label is too long for the file format"), so one long CSV header stopped
    `lapbias panel`. The label is the name's first 80 characters; the rename warning keeps the whole name."""
    config, layout = study
    header = "Return on the next trading day after the headline, in percent, from the vendor's file"
    assert len(header) == 85
    synthetic_stage_files(layout)
    _with_extra_input_columns(layout, **{header: 0.5, "é" * 81: 1.0})
    result = build(config, layout)
    frame, meta = pyreadstat.read_dta(layout.derived_file("panel_pre.dta"))
    labels = meta.column_names_to_labels
    renamed = {name: label for name, label in labels.items() if label in (header[:80], "é" * 80)}
    assert sorted(renamed.values()) == sorted([header[:80], "é" * 80])
    warning = next(w for w in result.warnings if "renamed" in w)
    assert repr(header) in warning and repr("é" * 81) in warning


def test_a_nullable_boolean_column_with_a_missing_value_is_written(study):
    """Review N11: a nullable boolean input column (parquet) with a missing value stopped `lapbias panel` with
    "cannot convert NA to integer"; it is written as 0/1 with Stata's missing, as the Int8 flags are."""
    config, layout = study
    inputs = synthetic_stage_files(layout)
    flag = pd.array([True, False, None] * (len(inputs) // 3) + [True] * (len(inputs) % 3), dtype="boolean")
    _with_extra_input_columns(layout, flagged=flag)
    panel = build(config, layout).panel
    frame, _ = pyreadstat.read_dta(layout.derived_file("panel_pre.dta"))
    expected = panel.loc[panel["post"] == 0, "flagged"].astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    assert np.isnan(expected).any() and set(expected[~np.isnan(expected)]) == {0.0, 1.0}
    np.testing.assert_array_equal(frame["flagged"].to_numpy(), expected)


def test_the_recalled_direction_is_ud_over_the_recall_lap_whatever_the_lap_measure(study):
    """ud_dir = (P(up) - P(down)) / (P(up) + P(down)) = ud / lap_recall, the direction the recall gives when it
    answers up or down, in [-1, 1]; 0 where P(up) + P(down) = 0; missing where ud is. It divides by the recall LAP
    even when the estimation's `lap` is Min-K%; panel_pre.dta / panel_post.dta carry it with its label."""
    from lapbias.io import read_parquet
    from lapbias.panel import recall_direction

    config, layout = study
    synthetic_stage_files(layout)
    recall = read_parquet(layout.derived_file("recall.parquet"))
    recall.loc[0, ["p_up", "p_down", "lap", "ud"]] = 0.0  # every mass on "unknown"
    recall.loc[1, ["p_up", "ud"]] = np.nan
    recall.loc[1, "lap"] = np.nan
    write_parquet(recall, layout.derived_file("recall.parquet"))
    panel = build(config.replace(estimate={"lap_measure": "minkprob"}), layout).panel
    assert "ud_dir" in panel.columns
    answered = panel["lap_recall"] > 0  # P(up) + P(down)
    p_up, p_down = panel.loc[answered, "p_up"], panel.loc[answered, "p_down"]
    np.testing.assert_allclose(panel.loc[answered, "ud_dir"], (p_up - p_down) / (p_up + p_down))
    first = panel.merge(recall.loc[[0], ["entity_id", "target_date"]], on=["entity_id", "target_date"])
    second = panel.merge(recall.loc[[1], ["entity_id", "target_date"]], on=["entity_id", "target_date"])
    assert (first["ud_dir"] == 0.0).all() and second["ud_dir"].isna().all()
    assert panel["ud_dir"].abs().max() <= 1.0
    assert not np.allclose(panel["lap"], panel["lap_recall"])  # Min-K% chosen: never divided by `lap`
    pre, meta = pyreadstat.read_dta(layout.derived_file("panel_pre.dta"))
    assert meta.column_names_to_labels["ud_dir"] == "Recalled direction (P(up) - P(down)) / (P(up) + P(down))"
    np.testing.assert_allclose(pre["ud_dir"], panel.loc[panel["post"] == 0, "ud_dir"])
    ud = pd.Series([0.3, -0.2, 0.0, np.nan, 0.0])
    lap = pd.Series([0.5, 0.2, 0.0, 0.4, 0.1])
    np.testing.assert_allclose(recall_direction(ud, lap), [0.6, -1.0, 0.0, np.nan, 0.0], rtol=1e-15)
