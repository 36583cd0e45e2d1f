"""The NumLeak audit end to end on the real bundled model (SmolLM2-135M-Instruct) over a few dates of the bundled
macrodata series. A 135M model is not expected to recall them: this checks the machinery and that every metric
is what the probe panel says, not a finding. The cutoff 2000-01-01 is a test setting that puts some of the
1959-2009 dates in the holdout window."""

import json

import numpy as np
import pandas as pd
import pyreadstat
import pytest
from click.testing import CliRunner

from lapbias.cli import main
from lapbias.io import Layout
from lapbias.leak import config as leak_config
from lapbias.leak import draws, metrics, pipeline, series
from lapbias.leak.report import HEADING
from lapbias.llm.base import chat
from lapbias.signals.batch import always

CONFIG = """root = "{root}"
[model]
batch_size = 16
[leak]
series = ["unemp"]
cutoff = "2000-01-01"
dates = ["1975-04-01", "1982-10-01", "2005-01-01"]
seed = 7
max_new_tokens = 8
narrative_tokens = 10
stepwise_tokens = 10
n_control_dates = 1
bootstrap_reps = 100
shuffle_reps = 20
permutation_reps = 20
"""
N_DATES = {"pre": 2, "holdout": 1}


@pytest.fixture(scope="module")
def audit(tmp_path_factory, bundled_backend):
    root = tmp_path_factory.mktemp("leak")
    (root / "leak.toml").write_text(CONFIG.format(root=root))
    run = leak_config.load(root / "leak.toml")
    layout = Layout(root)
    layout.make_dirs()
    result = pipeline.run(run, layout, bundled_backend, always)
    return run, layout, result


def test_outputs_written(audit):
    run, layout, result = audit
    leak = layout.results / "leak"
    for name in ("summary", "selectivity", "ranking", "entropy", "leakshare"):
        assert (leak / f"{name}.csv").stat().st_size > 0
    for figure in ("leak_calibration.png", "leak_parse_rate.png"):
        assert (layout.figures / figure).read_bytes()[:4] == b"\x89PNG"
    report = (layout.results / "REPORT.md").read_text()
    assert HEADING in report and "Leak attribution (App. N)" in report and "Fabricated controls" in report
    section = report[report.index(HEADING):]
    assert section.split("\n")[2].startswith("Reading: `bundled:SmolLM2-135M-Instruct`")   # the finding first
    assert "Replies that ended at the answer-length limit:" in section
    dta, meta = pyreadstat.read_dta(str(layout.derived / "leak" / "probes.dta"))
    assert len(dta) == len(result.panel) and "truth" in meta.column_names
    assert json.loads((leak / "run_config.json").read_text())["leak"]["seed"] == 7


def test_report_section_in_the_main_report_and_replaced_in_place(audit):
    from lapbias.config import RunConfig
    from lapbias.leak.report import update_report
    from lapbias.report.markdown import render
    from lapbias.report.verdict import Verdict

    run, layout, _ = audit
    tables = {"lap_distribution": pd.DataFrame(columns=["sample", "measure", "mean"]),
              "recall_checks": pd.DataFrame(columns=["sample"])}
    text = render(RunConfig(root=str(layout.root)), tables, Verdict("Mixed evidence", [], "x"), "python")
    assert text.count(HEADING) == 1 and text.index(HEADING) < text.index("## Estimation notes")
    (layout.results / "REPORT.md").write_text(text)
    update_report(layout.results)
    again = (layout.results / "REPORT.md").read_text()
    assert again.count(HEADING) == 1 and again.index(HEADING) < again.index("## Estimation notes")


def test_panel_covers_every_variant_and_window(audit):
    _, _, result = audit
    panel = result.panel
    assert set(panel["variant"]) == set(leak_config.VARIANTS)
    values = panel[panel["variant"] == "A"]
    assert set(values["window"]) == {"pre", "holdout"}
    assert values["window"].value_counts().to_dict() == N_DATES
    assert set(panel["status"]) <= {"parsed", "refusal", "unparsed"}
    assert panel["truncated"].isin([0.0, 1.0]).all()              # every answer says whether it hit the limit
    assert (panel.loc[panel["variant"] == "A", "truncated"] == 1).any()   # 8 tokens: cut
    controls = panel[panel["variant"].str.startswith("fabricated")]
    assert len(controls) == 5 and (controls["window"] == "pre").all()     # App. K's five names, pre window only
    sampled = panel[panel["variant"] == "E"]
    assert sampled.groupby("period")["draw"].nunique().eq(2).all() and sampled["seed"].nunique() == len(sampled)
    assert panel.loc[panel["variant"] != "E", "entropy_bits"].between(0, 20).all()
    assert panel.loc[panel["variant"] == "E", "entropy_bits"].isna().all()
    parsed = panel[panel["status"] == "parsed"]
    assert parsed["value"].notna().all() and panel.loc[panel["status"] != "parsed", "value"].isna().all()


def test_summary_rows_match_the_panel(audit):
    _, layout, result = audit
    summary = pd.read_csv(layout.results / "leak" / "summary.csv")
    assert list(summary.columns) == metrics.COLUMNS + ["run_id"]   # stamped by the staging (lapbias/stage.py)
    assert not summary.duplicated(["series", "variant", "window"]).any()
    for row in summary.itertuples():
        group = result.panel[(result.panel["series"].fillna("") == (row.series if isinstance(row.series, str)
                                                                   else "")) &
                             (result.panel["variant"] == row.variant) & (result.panel["window"] == row.window)]
        assert row.n_queries == len(group)
        assert row.n_parsed + row.n_refusal + row.n_unparsed == row.n_queries
        assert row.parse_rate == pytest.approx((group["status"] == "parsed").mean())
        assert row.parse_rate_lo <= row.parse_rate <= row.parse_rate_hi


def test_a_bad_signal_file_stops_the_run_before_the_model_is_asked(tmp_path):
    """[leak] signal_path is read and checked before any query: no backend is given, none is needed to fail."""
    from lapbias.errors import InputDataError

    (tmp_path / "signal.csv").write_text("date,signal\n1975-04-01,high\n")
    (tmp_path / "leak.toml").write_text(CONFIG.format(root=tmp_path) + f'signal_path = "{tmp_path / "signal.csv"}"\n')
    run = leak_config.load(tmp_path / "leak.toml")
    layout = Layout(tmp_path)
    layout.make_dirs()
    with pytest.raises(InputDataError, match="line 2: signal 'high' is not a finite number"):
        pipeline.run(run, layout, None, always)
    assert not layout.raw_file(pipeline.TASK).exists()


def test_ranking_and_attribution_tables(audit):
    _, layout, _ = audit
    ranking = pd.read_csv(layout.results / "leak" / "ranking.csv")
    assert ranking.set_index("window")["n_dates"].to_dict() == N_DATES
    assert ranking["top1_accuracy"].between(0, 1).all()
    assert ranking["mean_rank_true"].between(1, 4).all()   # one series: no other-series candidate
    losses = ranking[[c for c in ranking.columns if c.startswith("loses_to_")]].sum(axis=1)
    assert (losses == ranking["n_dates"] - ranking["top1_accuracy"] * ranking["n_dates"]).all()
    share = pd.read_csv(layout.results / "leak" / "leakshare.csv")
    assert share["window"].tolist() == ["all", "holdout", "pre"] and (share["series"] == "unemp").all()


def test_rerun_is_cached_and_resumes(audit, bundled_backend):
    run, layout, result = audit
    lines = (layout.raw / "leak.jsonl").read_text().splitlines()
    again = pipeline.run(run, layout, bundled_backend, always)
    assert again.n_asked == 0
    pd.testing.assert_frame_equal(again.summary, result.summary)
    (layout.raw / "leak.jsonl").write_text("\n".join(lines[:-3]) + "\n")   # an interrupted run
    resumed = pipeline.run(run, layout, bundled_backend, always)
    assert resumed.n_asked == 3
    pd.testing.assert_frame_equal(resumed.panel.drop(columns="reply"), result.panel.drop(columns="reply"),
                                  check_exact=False)


def test_an_empty_pre_window_is_said(audit, bundled_backend):
    # cutoff before every probed date: all holdout; the controls (pre window only) are not asked, and the report
    # says why; every other answer comes from the cache (the window is not in a query's key)
    run, layout, _ = audit
    late = leak_config.LeakRun(leak=__import__("dataclasses").replace(run.leak, cutoff="1900-01-01"), model=run.model)
    result = pipeline.run(late, layout, bundled_backend, always)
    assert result.n_asked == 0 and (result.panel["window"] == "holdout").all()
    assert not result.panel["variant"].str.startswith("fabricated").any()
    report = (layout.results / "REPORT.md").read_text()
    assert "no pre-window dates: every probed period ends after the cutoff 1900-01-01" in report
    pipeline.run(run, layout, bundled_backend, always)          # the module's results again for the other tests


def test_same_seed_same_dates_and_keys(audit):
    run, _, _ = audit
    table = series.load(run.leak)
    keys = [[pipeline.probe_query(i, run).key for i in pipeline.items_of(run, table)[1]] for _ in range(2)]
    assert keys[0] == keys[1] and len(set(keys[0])) == len(keys[0])
    sampled = leak_config.LeakRun(leak=leak_config.LeakConfig(series=("unemp", "infl"), n_dates=4, seed=7),
                                  model=run.model)
    both = series.load(sampled.leak)
    dates = [pipeline.items_of(sampled, both)[0] for _ in range(2)]
    pd.testing.assert_frame_equal(dates[0], dates[1])
    assert dates[0].groupby("series")["date"].apply(list).pipe(lambda d: d["unemp"] == d["infl"])  # siblings share
    reseeded = leak_config.LeakRun(leak=leak_config.LeakConfig(series=("unemp", "infl"), n_dates=4, seed=8),
                                   model=run.model)
    assert not pipeline.items_of(reseeded, both)[0]["date"].equals(dates[0]["date"])


def test_draws_reproducible_from_their_seeds(bundled_backend):
    chats = [chat("What was the U.S. unemployment rate in March 1990?"), chat("Name a number.")]
    first = draws.draw(bundled_backend, chats, [11, 12], 1.0, 5)
    assert draws.draw(bundled_backend, chats[:1], [11], 1.0, 5) == first[:1]     # independent of batch-mates
    assert len(set(draws.draw(bundled_backend, chats[:1] * 3, [1, 2, 3], 1.0, 5))) > 1


def test_cli_help_and_a_cached_run_without_loading_the_model(audit):
    run, layout, _ = audit
    helped = CliRunner().invoke(main, ["leak", "--help"])
    assert helped.exit_code == 0 and "Example:" in helped.output and "lapbias leak" in helped.output
    out = CliRunner().invoke(main, ["leak", str(layout.root / "leak.toml"), "--yes"])
    assert out.exit_code == 0, out.output
    assert "loading model" not in out.output and "(0 asked now)" in out.output


def test_cli_bad_config_one_line(tmp_path):
    path = tmp_path / "leak.toml"
    path.write_text("[leak]\nn_dates = 0\n")
    out = CliRunner().invoke(main, ["leak", str(path), "--yes"])
    assert out.exit_code == 2 and out.output.strip() == ("error: [leak] n_dates = 0; it must be at least 1 (e.g. "
                                                        "n_dates = 8)")


def test_window_split():
    table = series.load(leak_config.LeakConfig(series=("unemp",)))
    windows = series.window(table, __import__("datetime").date(1999, 12, 31))
    assert windows[table["period"] == "1999Q4"].item() == "pre"
    assert windows[table["period"] == "2000Q1"].item() == "holdout"
    assert np.array_equal(windows.unique(), ["pre", "holdout"])
