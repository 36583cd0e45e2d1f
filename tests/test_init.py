"""A new user's first hour: `lapbias init DATA` writes a commented starter config with the column map guessed from
the header (each guess shown with its column's type and first values), target dates derived from the horizon when
the file has none, and the cutoff a TODO every command refuses; whatever the header holds, the TOML is valid; a data
file given where a config is expected is named as such, with the command that writes a config."""

from __future__ import annotations

import tomllib

import pandas as pd
import pytest
from click.testing import CliRunner

from lapbias.cli import main
from lapbias.data.header_map import guess_columns

PANEL = pd.DataFrame({
    "PERMNO": ["10107", "10107", "14593", "14593"],
    "Company Name": ["Microsoft", "Microsoft", "Apple", "Apple"],
    "tic": ["MSFT", "MSFT", "AAPL", "AAPL"],
    "headline": ["Microsoft beats estimates", "Microsoft cuts jobs", "Apple unveils phone", "Apple faces fine"],
    "date": ["2024-03-01", "2024-03-04", "2024-03-01", "2024-03-04"],
    "target_date": ["2024-03-04", "2024-03-05", "2024-03-04", "2024-03-05"],
    "ret_next_day": [0.8, -1.1, 0.3, -0.2],
})


@pytest.fixture()
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    PANEL.to_csv(tmp_path / "my_panel.csv", index=False)
    return tmp_path


def test_guess_columns_from_usual_names():
    guessed = guess_columns(list(PANEL.columns))
    assert guessed == {"row_id": None, "entity_id": "PERMNO", "entity_name": "Company Name", "ticker": "tic",
                       "text": "headline", "text_date": "date", "target_date": "target_date",
                       "outcome": "ret_next_day"}
    assert guess_columns(["id", "firm", "y", "x"])["outcome"] == "y"
    assert guess_columns(["name", "company"])["entity_name"] == "name"  # each header column used once


def test_data_file_where_a_config_is_expected_says_so(workdir):
    for command in (["validate", "my_panel.csv"], ["run", "my_panel.csv", "--yes"], ["report", "panel.parquet"],
                    ["demo", "--config", "my_panel.csv"]):
        result = CliRunner().invoke(main, command)
        assert result.exit_code == 2, result.output
        assert "is a data file, not a run configuration" in result.output
        assert "lapbias init" in result.output and "Traceback" not in result.output
    result = CliRunner().invoke(main, ["validate", "my_panel.csv"])
    assert "Write one with `lapbias init my_panel.csv`" in result.output
    assert "`lapbias validate my_panel.toml`" in result.output


def test_init_writes_a_commented_config_that_validates_once_the_cutoff_is_set(workdir):
    result = CliRunner().invoke(main, ["init", "my_panel.csv"])
    assert result.exit_code == 0, result.output
    assert "  outcome      <- ret_next_day: number, 0.8, -1.1, 0.3\n" in result.output
    assert "  entity_id    <- PERMNO: whole number, 10107, 10107, 14593\n" in result.output
    assert '  text         <- headline: text, "Microsoft beats estimates", "Microsoft cuts jobs", "Apple unveils ' \
           'phone"\n' in result.output
    assert "  text_date    <- date: date, 2024-03-01, 2024-03-04, 2024-03-01\n" in result.output
    assert "  row_id       <- (none: made from each row's content)" in result.output
    path = workdir / "my_panel.toml"
    text = path.read_text()
    assert '# header: "PERMNO", "Company Name", "tic", "headline", "date", "target_date", "ret_next_day"' in text
    assert "target_date_from" not in tomllib.loads(text)["data"]  # the file has target dates
    values = tomllib.loads(text)
    assert values["data"] == {"path": "my_panel.csv", "columns": {
        "entity_id": "PERMNO", "entity_name": "Company Name", "ticker": "tic", "text": "headline",
        "text_date": "date", "outcome": "ret_next_day"}}
    refused = CliRunner().invoke(main, ["validate", "my_panel.toml"])
    assert refused.exit_code == 2 and '[study] cutoff = "TODO: YYYY-MM-DD' in refused.output
    path.write_text(text.replace(f'cutoff = "{values["study"]["cutoff"]}"', "cutoff = 2024-06-30"))
    done = CliRunner().invoke(main, ["validate", "my_panel.toml"])
    assert done.exit_code == 0, done.output
    frame = pd.read_parquet(workdir / "data/derived/input.parquet")
    assert list(frame["entity_id"]) == list(PANEL["PERMNO"]) and list(frame["outcome"]) == list(PANEL["ret_next_day"])
    again = CliRunner().invoke(main, ["init", "my_panel.csv"])
    assert again.exit_code == 2 and "already exists" in again.output and "--force" in again.output


def test_init_names_a_missing_or_unreadable_data_file(workdir):
    result = CliRunner().invoke(main, ["init", "nothing.csv"])
    assert result.exit_code == 2 and "data file nothing.csv does not exist" in result.output
    (workdir / "notes.txt").write_text("x")
    result = CliRunner().invoke(main, ["init", "notes.txt"])
    assert result.exit_code == 2 and "give a .csv or .parquet file" in result.output


def test_the_issue_csv_maps_every_column_and_derives_target_dates(workdir):
    """Firm, Date, Headline, Return next day: the outcome and the dates are found, entity_name is the entity_id
    column (said so), target dates come from the horizon; with the cutoff set, the config validates as written."""
    (workdir / "news.csv").write_text("Firm,Date,Headline,Return next day\n"
                                      "Apple Inc.,2024-03-01,Apple beats estimates,0.8\n"
                                      "Apple Inc.,2024-03-02,Apple unveils a headset,-0.4\n"
                                      "Boeing Co.,2024-09-03,Boeing strike ends,-0.2\n")
    result = CliRunner().invoke(main, ["init", "news.csv"])
    assert result.exit_code == 0, result.output
    assert "  outcome      <- Return next day: number, 0.8, -0.4, -0.2\n" in result.output
    assert "  entity_name  <- Firm: text, " in result.output and "the entity_id column: no name column found" \
        in result.output
    assert "  target_date  <- (derived from text_date: [study] horizon on the [study] calendar" in result.output
    assert "NOT FOUND" not in result.output
    text = (workdir / "news.toml").read_text()
    values = tomllib.loads(text)
    assert values["data"]["target_date_from"] == "text_date" and values["study"]["calendar"] == "XNYS"
    assert values["data"]["columns"] == {"entity_id": "Firm", "entity_name": "Firm", "text": "Headline",
                                         "text_date": "Date", "outcome": "Return next day"}
    assert "({ticker})" not in values["forecast"]["prompt"]  # no ticker column: the prompt does not name one
    (workdir / "news.toml").write_text(text.replace(f'cutoff = "{values["study"]["cutoff"]}"', "cutoff = 2024-06-30"))
    done = CliRunner().invoke(main, ["validate", "news.toml"])
    assert done.exit_code == 0 and "validate: 3 rows kept" in done.output, done.output
    assert "target_date Tue 2024-03-05" in done.output  # the Saturday headline: news on Monday, target Tuesday


HOSTILE_HEADERS = [  # (id, CSV text, protocol column -> the header column it must map to)
    ("line_break_in_a_name", 'Firm,Date,"News\nheadline",Return next day\nApple,2024-03-01,Apple beats,0.8\n',
     {"text": "News\nheadline"}),
    ("quotes_and_backslash", 'Firm,Date,"Head ""line"" \\ text",ret\nApple,2024-03-01,Apple beats,0.8\n',
     {"text": 'Head "line" \\ text'}),
    ("comment_and_brackets", 'Firm,Date,"# headline [x]",ret\nApple,2024-03-01,Apple beats,0.8\n',
     {"text": "# headline [x]"}),
    ("excel_trailing_cells", "Firm,Date,Headline,ret,,,\nApple,2024-03-01,Apple beats,0.8,,,\n",
     {"text": "Headline", "outcome": "ret"}),
    ("pandas_index", ",title,date,stock,ret\n0,Apple beats,2024-03-01,AAPL,0.8\n",
     {"text": "title", "ticker": "stock"}),
]


@pytest.mark.parametrize("name, csv, mapped", HOSTILE_HEADERS, ids=[h[0] for h in HOSTILE_HEADERS])
def test_any_header_gives_valid_toml_that_validates(workdir, name, csv, mapped):
    (workdir / "hostile.csv").write_text(csv)
    result = CliRunner().invoke(main, ["init", "hostile.csv"])
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    text = (workdir / "hostile.toml").read_text()
    values = tomllib.loads(text)  # valid TOML whatever the header holds
    for protocol, column in mapped.items():
        assert values["data"]["columns"][protocol] == column
    (workdir / "hostile.toml").write_text(text.replace(f'cutoff = "{values["study"]["cutoff"]}"',
                                                       "cutoff = 2024-06-30"))
    done = CliRunner().invoke(main, ["validate", "hostile.toml"])
    assert done.exit_code == 0 and "validate: 1 rows kept" in done.output, done.output
    if name == "excel_trailing_cells":
        assert "ignored 3 columns with an empty header cell" in result.output
        assert '"", ""' not in text and values["data"]["columns"].keys() >= {"entity_id", "text"}
    if name == "pandas_index":
        assert "warning: ignored column 1: it has no name in the header but holds values (e.g. '0'" in result.output


def test_a_wrong_looking_column_is_flagged_at_once(workdir):
    """CRSP's YYYYMMDD dates and an outcome in text are shown with what validate will say of them; a RavenPack
    TIMESTAMP_UTC column of times without an offset gets text_time_zone = "UTC"."""
    (workdir / "crsp.csv").write_text("PERMNO,date,TICKER,headline,RET\n10107,20240301,MSFT,Microsoft beats,C\n")
    result = CliRunner().invoke(main, ["init", "crsp.csv"])
    assert "  text_date    <- date: YYYYMMDD number, 20240301  CHECK: validate reads dates as YYYY-MM-DD" \
        in result.output
    assert '  outcome      <- RET: text, "C"  CHECK: validate needs numbers here' in result.output
    (workdir / "rp.csv").write_text("TIMESTAMP_UTC,RP_ENTITY_ID,ENTITY_NAME,HEADLINE,ret_next_day\n"
                                    "2024-03-04 20:59:00.000,D8442A,Apple Inc.,Apple beats,0.8\n")
    result = CliRunner().invoke(main, ["init", "rp.csv"])
    assert result.exit_code == 0, result.output
    values = tomllib.loads((workdir / "rp.toml").read_text())
    assert values["data"]["text_time_zone"] == "UTC" and values["data"]["target_date_from"] == "text_date"


TIMING_CHECKS = [  # (id, CSV text, protocol column, CHECK fragment on its line or None: no CHECK on that line)
    ("crsp_same_period_ret", "PERMNO,date,COMNAM,TICKER,headline,RET\n10107,2024-03-01,MICROSOFT,MSFT,MS beats,0.012\n",
     "outcome", "CHECK: a same-period return? target dates are derived 1 trading session after each text's news "
                "session: the outcome must be the return on that target date (RET led by the horizon)"),
    ("crsp_lead_return", "permno,date,comnam,ticker,headline,ret,ret_lead1\n10107,2024-03-01,MICROSOFT,MSFT,x,0.1,0.2\n",
     "outcome", None),
    ("ravenpack_time_column", "RPNA_DATE_UTC,RPNA_TIME_UTC,RP_ENTITY_ID,ENTITY_NAME,HEADLINE,ret_next_day\n"
                              "2024-03-04,16:30:00.000,228D42,Apple Inc.,Apple after the bell,0.01\n",
     "text_date", "CHECK: the times of day are in column RPNA_TIME_UTC: the close rule sees only this date (each text "
                  "counts as before its close); join them into one column (2024-03-04 16:30:00.000) and set [data] "
                  "text_time_zone = \"UTC\""),
    ("naive_times", "ticker,company,timestamp,headline,ret_next_day\nAAPL,Apple,2024-03-04 16:30:00,Apple x,0.01\n",
     "text_date", "CHECK: times without an offset are read as New York time (the XNYS calendar's); if they are UTC "
                  "or in another zone, set [data] text_time_zone (e.g. \"UTC\")"),
    ("times_with_offsets", "ticker,company,timestamp,headline,ret_next_day\nAAPL,Apple,2024-03-04T21:30:00Z,A x,0.01\n",
     "text_date", None),
    ("compustat_datadate_only", "gvkey,datadate,conm,tic,mdna,car_0_1\n012141,2023-12-31,MICROSOFT,MSFT,Cloud,0.02\n",
     "text_date", "CHECK: Compustat's datadate is the fiscal period's end, not the day the text was public (the "
                  "report date rdq is)"),
]


@pytest.mark.parametrize("name, csv, column, check", TIMING_CHECKS, ids=[c[0] for c in TIMING_CHECKS])
def test_a_timing_the_derived_target_dates_would_get_wrong_is_flagged(workdir, name, csv, column, check):
    """With target dates derived from the text date, a same-period return (CRSP's RET on `date`), a time of day
    kept in its own column (RavenPack's RPNA_TIME_UTC) or Compustat's fiscal period end would pair each text with a
    return of the wrong day; init says so on the column's line and in the config."""
    (workdir / f"{name}.csv").write_text(csv)
    result = CliRunner().invoke(main, ["init", f"{name}.csv"])
    assert result.exit_code == 0, result.output
    (line,) = [line for line in result.output.splitlines() if line.startswith(f"  {column:<12} <- ")]
    text = (workdir / f"{name}.toml").read_text()
    if check is None:
        assert "CHECK" not in line
    else:
        assert check in line
        assert check.removeprefix("CHECK: ") in text


def test_a_file_without_a_date_column_says_how_target_dates_can_be_derived(workdir):
    """No text-date column found: the target_date line names target_date_from besides a column."""
    (workdir / "notes.csv").write_text("Firm,When,Headline,Return next day\nApple,2024-03-01,Apple beats,0.8\n")
    result = CliRunner().invoke(main, ["init", "notes.csv"])
    assert result.exit_code == 0, result.output
    assert "  target_date  <- NOT FOUND (required): name your column in [data.columns], or derive it from text_date " \
           "with [data] target_date_from = \"text_date\"" in result.output


def test_a_missing_value_marker_does_not_make_numbers_text_and_a_real_text_value_is_named(workdir):
    """One `NA` among the returns (R's and SAS's missing marker, which validate reads as missing) typed the outcome
    column as text with a false CHECK; now it is a number column whose marker is counted. A value that is not a
    number is named with its row."""
    (workdir / "rp.csv").write_text("TIMESTAMP_UTC,RP_ENTITY_ID,ENTITY_NAME,HEADLINE,RET_1D\n"
                                    "2024-06-03 19:59:00.000,D8442A,Nike Inc.,Nike beats,-0.1869\n"
                                    "2024-06-03 20:30:00.000,228D42,Apple Inc.,Apple falls,NA\n"
                                    "2024-06-04 14:00:00.000,228D42,Apple Inc.,Apple rises,-2.5123\n")
    result = CliRunner().invoke(main, ["init", "rp.csv"])
    assert result.exit_code == 0, result.output
    (line,) = [line for line in result.output.splitlines() if line.startswith("  outcome ")]
    assert line == "  outcome      <- RET_1D: number, -0.1869, -2.5123 (1 of 3 read as missing: 'NA')"
    (workdir / "bad.csv").write_text("date,ticker,headline,ret_next_day\n2024-03-01,AAPL,A,0.5\n"
                                     "2024-03-04,AAPL,B,n.a\n")
    result = CliRunner().invoke(main, ["init", "bad.csv"])
    (line,) = [line for line in result.output.splitlines() if line.startswith("  outcome ")]
    assert "CHECK: validate needs numbers here" in line and "'n.a' (row 2) is not a number" in line


def test_a_ticker_column_of_rics_is_flagged_for_the_prompts(workdir):
    """RavenPack's and Refinitiv's RIC column (NKE.N, AAPL.OQ) maps to the ticker, which both prompts quote as
    written ("Nike Inc. (NKE.N)"); init says so, and says nothing of a plain ticker column or a share class."""
    (workdir / "rics.csv").write_text("date,RIC,company,headline,ret_next_day\n2024-03-01,NKE.N,Nike,A,0.5\n"
                                      "2024-03-01,AAPL.OQ,Apple,B,0.2\n2024-03-04,BRK.B,Berkshire,C,0.1\n")
    result = CliRunner().invoke(main, ["init", "rics.csv"])
    (line,) = [line for line in result.output.splitlines() if line.startswith("  ticker ")]
    assert "CHECK: these look like RICs with an exchange suffix (NKE.N): the ticker enters the forecast and recall " \
           "prompts as written" in line and "model should read NKE" in line
    assert "look like RICs" in (workdir / "rics.toml").read_text()
    (workdir / "plain.csv").write_text("date,ticker,company,headline,ret_next_day\n2024-03-01,NKE,Nike,A,0.5\n"
                                       "2024-03-01,AAPL,Apple,B,0.2\n2024-03-04,BRK.B,Berkshire,C,0.1\n")
    result = CliRunner().invoke(main, ["init", "plain.csv"])
    (line,) = [line for line in result.output.splitlines() if line.startswith("  ticker ")]
    assert "CHECK" not in line


def test_the_starter_config_shows_the_answer_length_and_the_table_iii_moderator(workdir):
    """A production prompt answering in a sentence was cut at max_new_tokens, a setting the starter config did not
    show; nor did it show [estimate] moderator, without which Table III is skipped. Both are there now, with the
    README's section name."""
    result = CliRunner().invoke(main, ["init", "my_panel.csv"])
    assert result.exit_code == 0, result.output
    text = (workdir / "my_panel.toml").read_text()
    assert "\nmax_new_tokens = 8 " in text and "min_parse_rate = 0.95 " in text
    assert '# moderator = "small"' in text and "Table III is skipped" in text
    assert "Running your own study" not in text
