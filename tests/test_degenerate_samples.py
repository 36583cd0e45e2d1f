"""Degenerate samples end in REPORT.md with a verdict that names the reason (issue 11 item 2, issue 12 item 10):
panel.parquet-shaped files are edited directly and `lapbias estimate` and `lapbias report` run on them (no model)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from lapbias.cli import main
from lapbias.config import from_dict
from lapbias.io import Layout, read_parquet, write_parquet
from lapbias.panel import build, high_lap_flags
from test_panel import synthetic_stage_files, write_hand_built_panel

PRE_DATES = [f"2024-0{m}-1{d}" for m in (3, 4, 5) for d in range(3)]
POST_DATES = [f"2024-{m}-1{d}" for m in (10, 11, 12) for d in range(3)]


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """A 25-entity panel with 9 pre- and 9 post-cutoff dates, built once by the panel stage."""
    root = tmp_path_factory.mktemp("base")
    layout = Layout(root)
    layout.make_dirs()
    synthetic_stage_files(layout, n_entities=25, dates=PRE_DATES + POST_DATES)
    build(from_dict({"root": str(root), "study": {"cutoff": "2024-06-30"}}), layout)
    return layout


def _consistent(panel: pd.DataFrame) -> pd.DataFrame:
    """An edited panel as the panel stage would have built it: lap_recall = lap and high_lap recomputed within
    each sample (`lapbias estimate` refuses a panel whose columns the config would not give, freshness.panel_current)."""
    panel = panel.assign(lap_recall=panel["lap"])
    panel["high_lap"] = pd.Series(pd.NA, index=panel.index, dtype="Int8")
    for _, sample in panel.groupby("post"):
        panel.loc[sample.index, "high_lap"] = high_lap_flags(sample, from_dict({}).panel.high_lap)
    return panel


def _one_series(panel: pd.DataFrame) -> pd.DataFrame:
    return panel[panel["entity_num"] == 1]


CASES = {
    # case: (edit of panel.parquet, fragment the verdict paragraph must contain)
    "post_lap_constant": (lambda p: p.assign(lap=np.where(p["post"] == 1, 0.0, p["lap"])), "collapsed"),
    "pre_lap_all_zero": (lambda p: p.assign(lap=np.where(p["post"] == 0, 0.0, p["lap"])),
                         "beta_3 omitted as collinear"),
    "singletons_only": (lambda p: p.assign(entity_num=np.where(p["post"] == 0, np.arange(len(p)) + 100,
                                                               p["entity_num"])), "singletons"),
    "post_one_entity": (lambda p: p[(p["post"] == 0) | (p["entity_num"] == 1)], "Verdict:"),
    "single_entity": (_one_series, "single time series"),
    "single_date": (lambda p: p[p["target_date"].isin(pd.to_datetime([PRE_DATES[0], POST_DATES[0]]))], "Verdict:"),
    "two_entities": (lambda p: p[p["entity_num"] <= 2], "Verdict:"),
    "one_row": (lambda p: p.head(1), "detection regression not estimable"),
    "constant_lap": (lambda p: p.assign(lap=0.3), "beta_3 omitted as collinear"),
    "no_pre_rows": (lambda p: p[p["post"] == 1], "pre-cutoff sample is empty"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_degenerate_sample_ends_in_a_report_with_a_reason(base, tmp_path, case):
    edit, fragment = CASES[case]
    layout = Layout(tmp_path)
    layout.make_dirs()
    write_parquet(read_parquet(base.derived_file("forecast.parquet")), layout.derived_file("forecast.parquet"))
    panel = _consistent(edit(read_parquet(base.derived_file("panel.parquet"))).reset_index(drop=True))
    write_hand_built_panel(layout, panel, read_parquet(base.derived_file("input.parquet")))
    config = tmp_path / "study.toml"
    config.write_text(f'root = "{tmp_path}"\n[study]\ncutoff = "2024-06-30"\n[estimate]\nbootstrap_reps = 30\n')
    (layout.results / "REPORT.md").write_text("STALE")
    for command in ("estimate", "report"):
        result = CliRunner().invoke(main, [command, str(config)])
        assert result.exit_code == 0, f"{command}: {result.output}"
        assert "Traceback" not in result.output
    report = (layout.results / "REPORT.md").read_text()
    verdict = report[report.index("## 6. Verdict"):]
    verdict = verdict[:verdict.index("\n## ", 1)]  # the verdict's own section (section 7 shows the other measures')
    assert "STALE" not in report and "**Verdict:" in report
    assert fragment in verdict or fragment in report, verdict[:600]
    if case == "post_lap_constant":
        assert "no post-cutoff" not in verdict
    if case in ("pre_lap_all_zero", "constant_lap"):
        assert "Underpowered" in verdict and "Mixed/invalid" not in verdict
