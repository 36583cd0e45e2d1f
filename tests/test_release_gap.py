"""The release-date gap (issue 11, item 7; paper Table A.1): rows with cutoff < target_date <= release_date belong
to neither sample, the estimates are those of a panel without them, and the report counts them."""

from __future__ import annotations

import pandas as pd
import pyreadstat
import pytest

from lapbias.config import from_dict, load
from lapbias.errors import ConfigError
from lapbias.estimate import protocol
from lapbias.io import Layout, read_parquet, write_parquet
from lapbias.panel import build
from lapbias.report import write_report
from test_panel import synthetic_stage_files

PRE = [f"2024-0{m}-1{d}" for m in (3, 4, 5) for d in range(5)]
GAP = ["2024-07-15", "2024-08-12"]
POST = [f"2024-{m}-1{d}" for m in (10, 11, 12) for d in range(5)]
N_ENTITIES = 12


def test_release_date_accepts_a_toml_date_or_a_string_and_must_follow_the_cutoff(tmp_path):
    path = tmp_path / "study.toml"
    path.write_text("[study]\ncutoff = 2024-06-30\nrelease_date = 2024-09-01\n")
    study = load(path).study
    assert (study.cutoff, study.release_date) == ("2024-06-30", "2024-09-01")
    assert from_dict({"study": {"cutoff": "2024-06-30", "release_date": "2024-09-01"}}).study == study
    with pytest.raises(ConfigError, match=r"release_date = 2024-06-30 is not after cutoff = 2024-06-30"):
        from_dict({"study": {"cutoff": "2024-06-30", "release_date": "2024-06-30"}})
    with pytest.raises(ConfigError, match=r'release_date = "2024-9-1" is not a date in YYYY-MM-DD form'):
        from_dict({"study": {"cutoff": "2024-06-30", "release_date": "2024-9-1"}})
    with pytest.raises(ConfigError, match="release_date is set but cutoff is not"):
        from_dict({"study": {"release_date": "2024-09-01"}})


def test_gap_rows_belong_to_neither_sample_and_the_report_counts_them(tmp_path):
    layout = Layout(tmp_path)
    layout.make_dirs()
    config = from_dict({"root": str(tmp_path), "study": {"cutoff": "2024-06-30", "release_date": "2024-09-01"},
                        "estimate": {"bootstrap_reps": 0}})
    inputs = synthetic_stage_files(layout, n_entities=N_ENTITIES, dates=PRE + GAP + POST)
    panel = build(config, layout).panel
    gap = panel["target_date"].between(pd.Timestamp("2024-07-01"), pd.Timestamp("2024-09-01"))
    assert gap.sum() == N_ENTITIES * len(GAP) and (panel["release_gap"] == gap.astype("int8")).all()
    assert panel.loc[gap, "post"].isna().all() and panel.loc[gap, "high_lap"].isna().all()
    assert (panel.loc[~gap, "post"] == (panel.loc[~gap, "target_date"] > pd.Timestamp("2024-09-01"))).all()
    pre, post = (pyreadstat.read_dta(layout.derived_file(f"panel_{s}.dta"))[0] for s in ("pre", "post"))
    assert (len(pre), len(post)) == (N_ENTITIES * len(PRE), N_ENTITIES * len(POST))
    with_gap = protocol.run(config, layout)
    write_report(config, layout)
    report = (layout.results / "REPORT.md").read_text()
    assert "release date 2024-09-01" in report
    sample = pd.read_csv(layout.results / "sample.csv").set_index("item")["value"]
    n_gap = N_ENTITIES * len(GAP)
    assert int(sample["rows in the release-date gap (cutoff < target date ≤ release date: neither sample)"]) == n_gap
    assert int(sample["rows pre-cutoff"]) + int(sample["rows post-cutoff"]) == len(inputs) - n_gap

    # The same estimates as a panel from which the gap rows were removed before anything else.
    other = Layout(tmp_path / "without_gap")
    other.make_dirs()
    kept = inputs[~inputs["target_date"].isin(pd.to_datetime(GAP))]
    for name, key in (("input", "row_id"), ("forecast", "row_id"), ("recall", "target_date"), ("minkprob", "row_id")):
        frame = read_parquet(layout.derived_file(f"{name}.parquet"))
        write_parquet(frame[frame[key].isin(kept[key])], other.derived_file(f"{name}.parquet"))
    plain = config.replace(root=str(other.root), study={"release_date": ""})
    build(plain, other)
    without_gap = protocol.run(plain, other)
    for name in ("detection", "placebo"):
        a, b = (pd.read_csv(where.results / f"{name}.csv") for where in (layout, other))
        pd.testing.assert_frame_equal(a[["term", "coef", "se", "N"]], b[["term", "coef", "se", "N"]])
    assert with_gap.summary() == without_gap.summary()
