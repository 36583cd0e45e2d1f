"""A user's own CSV to a verdict without reading the code (README, "Running your own study"): from a CSV with only
`Firm, Date, Headline, Return next day`, `lapbias init` + setting the cutoff + `lapbias run --yes` reaches
results/REPORT.md with no other edit, and the terminal ends with the verdict, its sentence and the report's path.
The bundled model answers every query (48 rows: about a minute of CPU)."""

from __future__ import annotations

import re

import pandas as pd
from click.testing import CliRunner

from lapbias.cli import main

FIRMS = {
    "Apple Inc.": ["Apple beats quarterly earnings estimates", "Apple unveils a new iPhone lineup",
                   "Apple faces an antitrust lawsuit in Europe", "Apple cuts production of its headset",
                   "Apple raises its dividend", "Apple shares fall on weak China sales"],
    "Boeing Co.": ["Boeing wins a large aircraft order", "Boeing faces a new safety probe",
                   "Boeing delivers fewer jets than expected", "Boeing names a new chief executive",
                   "Boeing strike ends after a union vote", "Boeing reports a quarterly loss"],
    "Pfizer Inc.": ["Pfizer drug wins FDA approval", "Pfizer cuts its sales forecast",
                    "Pfizer announces a large acquisition", "Pfizer trial misses its main goal",
                    "Pfizer beats profit estimates", "Pfizer plans cost cuts and layoffs"],
    "Walmart Inc.": ["Walmart raises its annual outlook", "Walmart sales slow in the holiday quarter",
                     "Walmart expands same-day delivery", "Walmart faces a pay discrimination suit",
                     "Walmart profit tops estimates", "Walmart cuts prices on thousands of items"],
}
DATES = ["2024-02-05", "2024-03-02", "2024-04-10", "2024-05-14", "2024-06-03", "2024-06-17",  # 2 March: a Saturday
         "2024-07-22", "2024-08-05", "2024-09-14", "2024-10-08", "2024-11-12", "2024-12-03"]  # 14 September too
RETURNS = [0.012, -0.021, 0.004, -0.008, 0.017, -0.003, 0.009, -0.015, 0.022, -0.006, 0.001, -0.011, 0.013]


def news_csv() -> str:
    rows = ["Firm,Date,Headline,Return next day"]
    for k, (firm, date) in enumerate((firm, date) for firm in FIRMS for date in DATES):
        i = DATES.index(date)
        rows.append(f"{firm},{date},{FIRMS[firm][i % 6]}{'' if i < 6 else ' again'},{RETURNS[k % len(RETURNS)]}")
    return "\n".join(rows) + "\n"


def test_init_cutoff_run_reaches_the_report_and_says_the_verdict(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "news.csv").write_text(news_csv())
    init = CliRunner().invoke(main, ["init", "news.csv"])
    assert init.exit_code == 0 and "NOT FOUND" not in init.output, init.output
    config = tmp_path / "news.toml"
    text, edits = re.subn(r'(?m)^cutoff = "TODO[^"]*"', "cutoff = 2024-06-30", config.read_text())
    assert edits == 1  # the one edit the user makes
    config.write_text(text)
    run = CliRunner().invoke(main, ["run", "news.toml", "--yes"])
    assert run.exit_code == 0, run.output
    assert "validate: 48 rows kept" in run.output and "forecast: 48 rows, parse rate" in run.output
    assert "panel: 48 rows (24 pre-cutoff, 24 post-cutoff)" in run.output
    report = tmp_path / "results/REPORT.md"
    label = re.search(r"\*\*Verdict: (.+?)\.\*\*", report.read_text()).group(1)
    assert "horizon 1 trading day (target dates derived from the text dates: 1 trading day after each text's news " \
           "session on the XNYS exchange calendar" in report.read_text()
    last = run.output.rstrip("\n").splitlines()[-3:]
    assert last[0] == f"verdict: {label}" and last[1].startswith("  ") and last[2] == "report: results/REPORT.md"
    panel = pd.read_parquet(tmp_path / "data/derived/panel.parquet")
    saturday = panel[panel["text_date"] == "2024-03-02"]
    assert (saturday["target_date"] == "2024-03-05").all()  # news on Monday 4 March, next-day return on Tuesday
