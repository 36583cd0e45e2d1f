"""Report tables: Min-K% LAP in the paper's units (x 10^4), Table IV in the paper's row order, and every caption
stating its clustering and LAP measure (issue 11 items 1 and 3)."""

from __future__ import annotations

import pandas as pd
import pytest

from lapbias.config import from_dict
from lapbias.estimate import extended, protocol
from lapbias.io import Layout, read_parquet, write_parquet
from lapbias.panel import build
from lapbias.report import write_report
from test_panel import synthetic_stage_files

DATES = [f"2024-0{m}-1{d}" for m in (3, 4, 5) for d in range(4)] + [f"2024-{m}-1{d}" for m in (10, 11) for d in range(4)]


@pytest.fixture(scope="module")
def minkprob_report(tmp_path_factory):
    root = tmp_path_factory.mktemp("mink")
    layout = Layout(root)
    layout.make_dirs()
    config = from_dict({"root": str(root), "study": {"cutoff": "2024-06-30"},
                        "estimate": {"lap_measure": "minkprob", "bootstrap_reps": 0}})
    synthetic_stage_files(layout, n_entities=25, dates=DATES)
    mink = read_parquet(layout.derived_file("minkprob.parquet"))
    write_parquet(mink.assign(lap_mink=mink["lap_mink"] * 1e-3), layout.derived_file("minkprob.parquet"))  # ~5e-6
    forecast = read_parquet(layout.derived_file("forecast.parquet"))
    write_parquet(forecast.assign(confidence=0.5 + forecast["p_first"] / 2), layout.derived_file("forecast.parquet"))
    build(config, layout)
    protocol.run(config, layout)
    extended.run(config, layout)
    return layout, write_report(config, layout).read_text()


def test_min_k_lap_is_reported_times_ten_thousand(minkprob_report):
    layout, text = minkprob_report
    raw = pd.read_csv(layout.results / "detection.csv").set_index("term").loc["c.mu_hat#c.lap"]
    assert abs(raw["coef"]) > 100  # raw units: per unit of a ~5e-6 LAP
    tex = (layout.results / "detection.tex").read_text()
    assert f"{raw['coef'] / 1e4:.4f}" in tex and f"({raw['t']:.2f})" in tex
    assert "Min-K\\% prob (K = 20\\%) x 10^4" in tex and "clustered by entity" in tex
    assert f"{raw['coef'] / 1e4:.4g}" in text  # REPORT.md's detection table
    lap_mean = read_parquet(layout.derived_file("panel.parquet")).query("post == 0")["lap_mink"].mean()
    assert "lap_mink (x10^4)" in text and f"{lap_mean * 1e4:.4g}" in text


def test_extended_captions_state_date_clustering_and_table_iv_follows_the_paper(minkprob_report):
    layout, _ = minkprob_report
    for name in ("table2", "table3", "table4", "table5"):
        tex = (layout.results / f"{name}.tex").read_text()
        assert "clustered by date (period\\_num)" in tex and "Min-K\\% prob" in tex, name
    table4 = (layout.results / "table4.tex").read_text()
    rows = [line.split(" & ")[0] for line in table4.splitlines() if " & " in line and not line.startswith(" &")]
    assert rows[:7] == ["mu\\_hat", "lap", "c.mu\\_hat\\#c.lap", "p\\_first", "c.mu\\_hat\\#c.p\\_first",
                         "confidence", "c.mu\\_hat\\#c.confidence"]
    assert "(1)-(2) in-sample" in (layout.results / "table5.tex").read_text()


def test_minimum_detectable_effect_is_shown_beside_beta3(minkprob_report):
    from scipy import stats

    from lapbias.estimate.power import mde

    layout, text = minkprob_report
    power = pd.read_csv(layout.results / "power.csv").set_index("quantity")["value"]
    assert power["mde_beta3"] == pytest.approx(
        (stats.t.ppf(0.95, power["df_bound"]) + stats.t.ppf(0.80, power["df_bound"])) * power["se_bound"])
    assert mde(1.0, 1e9) == pytest.approx(1.6449 + 0.8416, abs=1e-3)  # z quantiles in the limit
    section = text[text.index("## 4. Detection"):text.index("## 5. Post-cutoff")]
    assert "minimum detectable beta_3 at 5% one-sided with 80% power" in section
    assert f"{power['mde_beta3'] / 1e4:.4g}" in section  # shown per unit of Min-K% LAP x 10^4


def test_table_v_is_standardized_so_min_k_lap_is_not_rescaled(minkprob_report):
    """Paper Table V: every variable is a z-score within its sample, so its LAP coefficients are per SD of LAP,
    not per unit of LAP x 10^4: the report must show them as estimated and not claim the x 10^4 units."""
    layout, _ = minkprob_report
    raw = pd.read_csv(layout.results / "table5.csv")
    row = raw[(raw["model"] == "(2)") & (raw["term"] == "c.mu_hat#c.lap")].iloc[0]
    assert abs(row["coef"]) > 1e-3  # a z-score coefficient, visible at 4 decimals
    tex = (layout.results / "table5.tex").read_text()
    assert f"{row['coef']:.4f}" in tex and f"({row['t']:.2f})" in tex
    assert "x 10^4" not in tex and "standardized" in tex


def test_verdict_quotes_beta3_and_its_mde_in_the_units_of_the_files_it_cites(minkprob_report):
    """The verdict paragraph cites results/detection.csv and results/power.csv, which hold raw units: it quotes
    beta_3 and the MDE as those files give them, both in the same units (it once mixed beta_3 / 10^4 with a raw
    MDE)."""
    layout, text = minkprob_report
    raw = pd.read_csv(layout.results / "detection.csv").set_index("term").loc["c.mu_hat#c.lap"]
    power = pd.read_csv(layout.results / "power.csv").set_index("quantity")["value"]
    paragraph = text[text.index("## 6. Verdict"):]
    assert f"beta_3 = {raw['coef']:.4g} (t = {raw['t']:.2f}" in paragraph, paragraph[:300]
    assert f"minimum detectable beta_3 (5% one-sided, 80% power) is {power['mde_beta3']:.4g}, i.e." in paragraph


@pytest.mark.parametrize("n_clust, says, never", [
    ([30, 30], ["absorb(entity_num period_num), standard errors clustered by entity (entity_num)"],
     ["Newey-West", "single entity"]),
    ([None, None], ["a single entity: no fixed effects, Newey-West standard errors"], ["clustered by entity"]),
    ([30, None], ["clustered by entity (entity_num)", "model post on a single entity: no fixed effects, Newey-West"],
     ["model pre on a single entity"]),
])
def test_protocol_table_note_describes_the_estimator_each_model_used(n_clust, says, never):
    """A protocol table's note states what was run: FE with entity clusters, or (protocol, implementation notes)
    no FE and Newey-West on a single entity -- not a rule for both, as if the table were either."""
    from lapbias.report import units

    config = from_dict({"study": {"cutoff": "2024-06-30"}})
    table = pd.DataFrame({"model": ["pre", "post"], "term": ["c.mu_hat#c.lap"] * 2, "coef": [0.1, 0.2],
                          "N_clust": n_clust})
    note = units.note("placebo", config, table)
    assert all(s in note for s in says) and not any(s in note for s in never), note
