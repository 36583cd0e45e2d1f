"""Target dates from text dates on a real exchange calendar ([data] target_date_from = "text_date", [study] horizon
and calendar; data/target_dates.py states the rule). Expected dates are read off the exchanges' published calendars
(NYSE 2024: Good Friday 29 March, Independence Day 4 July, the early close at 1 p.m. on 29 November; LSE: Christmas
and Boxing Day, the 12:30 close on Christmas Eve; TSE: the 3 p.m. close of 2024)."""

from __future__ import annotations

import json
import time

import pandas as pd
import pytest
from click.testing import CliRunner

from lapbias.cli import main
from lapbias.config import from_dict
from lapbias.data.target_dates import derive
from lapbias.data.validate import validate_file
from lapbias.errors import ConfigError, InputDataError

def ROW(index) -> str:  # noqa: N802 -- how validate names a row in a message
    return f"row {index + 1}"


DERIVED = [  # (text date as written, horizon, calendar, target date, where the text falls)
    ("2024-03-01", "1 trading day", "XNYS", "2024-03-04", "before_close"),            # Friday -> Monday
    ("2024-03-02", "1 trading day", "XNYS", "2024-03-05", "closed_day"),              # Saturday: news Monday
    ("2024-03-04T15:59:00", "1 trading day", "XNYS", "2024-03-05", "before_close"),
    ("2024-03-04T16:00:00", "1 trading day", "XNYS", "2024-03-06", "after_close"),    # at the close: next day
    ("2024-03-04 16:30", "1 trading day", "XNYS", "2024-03-06", "after_close"),
    ("2024-03-04T20:59:00Z", "1 trading day", "XNYS", "2024-03-05", "before_close"),  # 15:59 in New York (EST)
    ("2024-03-04T21:30:00Z", "1 trading day", "XNYS", "2024-03-06", "after_close"),   # 16:30 in New York
    ("2024-03-05T02:00:00+09:00", "1 trading day", "XNYS", "2024-03-05", "before_close"),  # 12:00 on the 4th, NY
    ("2024-03-28", "1 trading day", "XNYS", "2024-04-01", "before_close"),            # Good Friday closed
    ("2024-07-04", "1 trading day", "XNYS", "2024-07-08", "closed_day"),              # holiday: news on Friday
    ("2024-11-29T12:30:00", "1 trading day", "XNYS", "2024-12-02", "before_close"),   # early close at 13:00
    ("2024-11-29T13:30:00", "1 trading day", "XNYS", "2024-12-03", "after_close"),
    ("2024-03-10T02:30:00", "1 trading day", "XNYS", "2024-03-12", "closed_day"),     # a time DST skips, a Sunday
    ("2024-03-01", "5 trading days", "XNYS", "2024-03-08", "before_close"),
    ("2024-03-28T17:00:00", "2 Trading Sessions", "XNYS", "2024-04-03", "after_close"),  # news Monday 1 April
    ("2024-12-24T13:00:00", "1 trading day", "XLON", "2024-12-30", "after_close"),    # closed 12:30; 25, 26 holidays
    ("2024-12-24", "1 trading day", "XLON", "2024-12-27", "before_close"),
    ("2024-03-01T15:30:00+09:00", "1 trading day", "XTKS", "2024-03-05", "after_close"),  # Tokyo closes at 15:00
    ("2024-03-01T14:30:00", "1 trading day", "XTKS", "2024-03-04", "before_close"),
]


@pytest.mark.parametrize("written, horizon, calendar, target, case", DERIVED,
                         ids=[f"{c[2]}-{c[0]}-{c[1].split()[0]}" for c in DERIVED])
def test_target_date_from_the_text_date_on_the_exchange_calendar(written, horizon, calendar, target, case):
    study = from_dict({"data": {"target_date_from": "text_date"},
                       "study": {"horizon": horizon, "calendar": calendar}}).study
    values = pd.Series([written, ""], dtype=object)
    derivation = derive(values, study, ROW)
    assert f"{derivation.target[0]:%Y-%m-%d}" == target and derivation.case[0] == case
    assert pd.isna(derivation.target[1]) and pd.isna(derivation.case[1])  # a missing date stays missing


def test_datetime_values_of_a_parquet_file(tmp_path):
    """Stored datetimes: without a time zone, the exchange's local time; with one, converted; validate's sample
    shows them as dates and times."""
    study = from_dict({"data": {"target_date_from": "text_date"}}).study
    naive = pd.Series(pd.to_datetime(["2024-03-04 16:30", "2024-03-04 09:00"]))
    aware = naive.dt.tz_localize("UTC")  # 11:30 and 04:00 in New York: both before the close
    assert [f"{d:%d}" for d in derive(naive, study, ROW).target] == ["06", "05"]
    assert [f"{d:%d}" for d in derive(aware, study, ROW).target] == ["05", "05"]
    pd.DataFrame({"entity_id": ["A", "A"], "entity_name": ["Apple", "Apple"], "text": ["x", "y"],
                  "text_date": naive, "outcome": [1.0, -1.0]}).to_parquet(tmp_path / "calls.parquet")
    result = validate_file(tmp_path / "calls.parquet", from_dict({"data": {"target_date_from": "text_date"}}))
    assert ": text_date 2024-03-04 16:30:00 (at or after the close, news session Tue 2024-03-05) -> target_date " \
           "Wed 2024-03-06" in "\n".join(result.notes)


def test_times_without_an_offset_in_a_named_time_zone():
    """[data] text_time_zone = "UTC" (RavenPack's TIMESTAMP_UTC): 20:59 UTC is 15:59 in New York, before the close;
    21:00 UTC is the close. A name that is no time zone is a config error."""
    study = from_dict({"data": {"target_date_from": "text_date"}}).study
    values = pd.Series(["2024-03-04 20:59:00", "2024-03-04 21:00:00"])
    assert [f"{d:%d}" for d in derive(values, study, ROW, "UTC").target] == ["05", "06"]
    assert [f"{d:%d}" for d in derive(values, study, ROW).target] == ["06", "06"]
    with pytest.raises(ConfigError, match=r'\[data\] text_time_zone = "EST5" is not a time zone name'):
        from_dict({"data": {"text_time_zone": "EST5"}})


def test_many_rows_are_derived_without_a_loop_per_row():
    """The calendar lookup is one vectorized search; its time is reported, not asserted (benchmarks/)."""
    study = from_dict({"data": {"target_date_from": "text_date"}}).study
    days = pd.Series(pd.date_range("1990-01-01", "2024-12-31", freq="D").strftime("%Y-%m-%d"))
    values = days.sample(n=200_000, replace=True, random_state=0).reset_index(drop=True)
    start = time.process_time()
    derivation = derive(values, study, ROW)
    print(f"2e5 rows: {time.process_time() - start:.1f} s CPU")
    assert derivation.target.notna().all() and (derivation.target > pd.to_datetime(values)).all()
    assert derivation.target.dt.day_of_week.lt(5).all()


def test_horizon_and_calendar_the_calendar_cannot_resolve_are_config_errors():
    for horizon in ("1 month", "next earnings", "0 trading days", "1 day"):
        with pytest.raises(ConfigError, match=r"^\[study\] horizon = \"[^\"]+\" cannot be counted on the XNYS "
                                              r"calendar.*\"1 trading day\""):
            from_dict({"data": {"target_date_from": "text_date"}, "study": {"horizon": horizon}})
    assert from_dict({"study": {"horizon": "1 month"}}).study.horizon == "1 month"  # only named in the report
    with pytest.raises(ConfigError, match=r"target_date_from = \"text_date\" derives target_date, and "
                                          r"\[data.columns\] also maps target_date = \"ret_date\""):
        from_dict({"data": {"target_date_from": "text_date", "columns": {"target_date": "ret_date"}}})
    with pytest.raises(ConfigError, match=r"calendar = \"NYSX\" is not an exchange calendar"):
        from_dict({"study": {"calendar": "NYSX"}})
    assert from_dict({"study": {"calendar": "XLON"}}).study.calendar == "XLON"


def test_a_date_outside_the_years_a_calendar_records_is_one_line():
    """exchange-calendars records the Shanghai exchange's holidays from 1991 only."""
    study = from_dict({"data": {"target_date_from": "text_date"}, "study": {"calendar": "XSHG"}}).study
    values = pd.Series(["2020-03-02", "1985-06-03", "1986-01-02"])
    with pytest.raises(InputDataError, match=r"^text_date: 2 date\(s\) on which the XSHG calendar cannot count "
                                             r"\[study\] horizon = \"1 trading day\" \(example row 2: '1985-06-03', "
                                             r"before the first session it records"):
        derive(values, study, ROW)


NEWS = ("Firm,Date,Headline,Return next day\n"
        "Apple Inc.,2024-03-01,Apple beats estimates,0.8\n"
        "Apple Inc.,2024-03-02,Apple unveils a headset on Saturday,-0.4\n"
        "Apple Inc.,2024-03-04T16:45:00,Apple cuts jobs after the bell,-1.1\n"
        "Boeing Co.,2024-07-04,Boeing delivers jets,0.3\n"
        "Boeing Co.,2024-09-03,Boeing strike ends,-0.2\n")
CONFIG = """root = "{root}"
[data]
path = "{root}/news.csv"
target_date_from = "text_date"
[data.columns]
entity_id = "Firm"
entity_name = "Firm"
text = "Headline"
text_date = "Date"
outcome = "Return next day"
[study]
cutoff = 2024-06-30
"""


@pytest.fixture()
def news(tmp_path):
    (tmp_path / "news.csv").write_text(NEWS)
    config = tmp_path / "news.toml"
    config.write_text(CONFIG.format(root=tmp_path))
    return tmp_path, config


def test_validate_shows_a_sample_of_derived_dates_and_records_the_settings(news):
    root, config = news
    result = CliRunner().invoke(main, ["validate", str(config)])
    assert result.exit_code == 0, result.output
    assert ("texts before the close: 2, at or after the close: 1, on a weekend or holiday: 2" in result.output)
    assert "text_date '2024-03-02' (on a weekend or holiday, news session Mon 2024-03-04) -> target_date Tue " \
           "2024-03-05" in result.output
    assert "text_date '2024-03-04T16:45:00' (at or after the close, news session Tue 2024-03-05) -> target_date " \
           "Wed 2024-03-06" in result.output
    frame = pd.read_parquet(root / "data/derived/input.parquet")
    assert [f"{d:%Y-%m-%d}" for d in frame["target_date"]] == ["2024-03-04", "2024-03-05", "2024-03-06",
                                                                "2024-07-08", "2024-09-04"]
    assert [f"{d:%Y-%m-%d}" for d in frame["text_date"]][2] == "2024-03-04"  # the date as written
    record = json.loads((root / "data/derived/data_source.json").read_text())
    assert record["target_dates"] == {"from": "text_date", "horizon": "1 trading day", "calendar": "XNYS",
                                      "text_time_zone": ""}
    changed = config.read_text().replace("cutoff = 2024-06-30", 'cutoff = 2024-06-30\nhorizon = "2 trading days"')
    config.write_text(changed)
    refused = CliRunner().invoke(main, ["panel", str(config)])
    assert refused.exit_code == 2 and "the target-date settings changed since `lapbias validate`" in refused.output


def test_a_target_date_column_and_target_date_from_together_are_refused(news):
    root, config = news
    (root / "news.csv").write_text(NEWS.replace("Return next day\n", "Return next day,target_date\n", 1)
                                   .replace("\n", ",2024-12-31\n").replace("target_date,2024-12-31", "target_date"))
    result = CliRunner().invoke(main, ["validate", str(config)])
    assert result.exit_code == 2 and "the data file has a target_date column and [data] target_date_from" \
        in result.output


def test_horizon_the_calendar_cannot_count_through_the_cli(news):
    _, config = news
    config.write_text(config.read_text() + 'horizon = "1 month"\n')
    result = CliRunner().invoke(main, ["validate", str(config)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.output.count("error:") == 1 and 'horizon = "1 month" cannot be counted' in result.output


def test_without_target_date_from_the_target_date_column_is_required(news):
    root, config = news
    config.write_text(config.read_text().replace('target_date_from = "text_date"\n', ""))
    with pytest.raises(InputDataError, match=r"required column 'target_date' is missing"):
        validate_file(root / "news.csv", from_dict({"data": {"columns": {
            "entity_id": "Firm", "entity_name": "Firm", "text": "Headline", "text_date": "Date",
            "outcome": "Return next day"}}}))


@pytest.mark.parametrize("zone", ["", "UTC", "Asia/Tokyo", "America/Los_Angeles"])
def test_a_date_without_a_time_is_a_day_of_the_exchange_whatever_the_text_time_zone(zone):
    """[data] text_time_zone places times written without an offset; a date alone names a day of the exchange (it
    counts as before that day's close): midnight in Tokyo is 10:00 of the previous day in New York, which made a
    Tuesday's text news of Monday and its target date the text's own day."""
    study = from_dict({"data": {"target_date_from": "text_date"}}).study
    derivation = derive(pd.Series(["2024-03-04", "2024-03-05", "2024-03-02"]), study, ROW, zone)
    assert [f"{d:%m-%d}" for d in derivation.target] == ["03-05", "03-06", "03-05"]
    assert list(derivation.case) == ["before_close", "before_close", "closed_day"]


def test_a_text_dated_a_day_ahead_of_the_exchange_keeps_its_row(tmp_path):
    """02:00 in Tokyo on the 5th is 12:00 in New York on the 4th: news of Monday's session, target Tuesday. text_date
    is the text's day on the exchange's clock (Monday), so the row keeps target_date > text_date (it was dropped as a
    target date not after its text date, the 5th as written)."""
    (tmp_path / "news.csv").write_text(
        "Firm,Date,Headline,Return next day\n"
        "Apple Inc.,2024-03-05T02:00:00+09:00,Apple in Tokyo,0.8\n"         # 12:00 Monday in New York
        "Apple Inc.,2024-03-05T07:00:00+09:00,Apple after the bell,-0.4\n"  # 17:00 Monday: news of Tuesday
        "Apple Inc.,2024-03-05T01:30:00Z,Apple late,-0.4\n"                 # 20:30 Monday: news of Tuesday
        "Apple Inc.,2024-03-05,Apple Tuesday,-0.4\n")                       # one outcome per firm and target date
    config = from_dict({"data": {"path": str(tmp_path / "news.csv"), "target_date_from": "text_date", "columns": {
        "entity_id": "Firm", "entity_name": "Firm", "text": "Headline", "text_date": "Date",
        "outcome": "Return next day"}}})
    result = validate_file(tmp_path / "news.csv", config)
    assert result.dropped.empty, result.messages()
    assert [f"{d:%m-%d}" for d in result.frame["text_date"]] == ["03-04", "03-04", "03-04", "03-05"]
    assert [f"{d:%m-%d}" for d in result.frame["target_date"]] == ["03-05", "03-06", "03-06", "03-06"]
    assert "text_date '2024-03-05T02:00:00+09:00' (before the close, news session Mon 2024-03-04)" in \
        "\n".join(result.notes)


@pytest.mark.parametrize("calendar, dates, limit", [
    ("XTKS", ["1990-01-04", "1991-05-01"], "before the first session it records (1997-01-06)"),
    ("XHKG", ["2060-01-04"], "past the last session it records (2049-12-31)"),
    ("XNYS", ["2262-04-10"], "past the last session it records (2262-04-10)"),
], ids=["before_XTKS", "after_XHKG", "after_pandas"])
def test_texts_wholly_outside_the_calendar_are_one_line(tmp_path, monkeypatch, calendar, dates, limit):
    """Every text before the years a calendar records (the TSE's from 1997), after them (the HKEX's to 2049) or past
    the last day pandas holds: a one-line error naming a row (it was an unexpected ValueError or
    OutOfBoundsDatetime, reported as a bug)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "news.csv").write_text("Firm,Date,Headline,Return next day\n" + "".join(
        f"Toyota,{d},Toyota news {i},0.1\n" for i, d in enumerate(dates)))
    (tmp_path / "news.toml").write_text(CONFIG.format(root=tmp_path) + f'calendar = "{calendar}"\n')
    result = CliRunner().invoke(main, ["validate", str(tmp_path / "news.toml")])
    assert result.exit_code == 2 and result.output.count("\n") == 1, result.output
    assert result.output.startswith(f"error: text_date: {len(dates)} date(s) on which the {calendar} calendar "
                                    "cannot count [study] horizon") and limit in result.output
    assert f"(example row 1: '{dates[0]}'" in result.output


def test_a_horizon_of_zero_sessions_is_refused_saying_why():
    """"0 trading days" is written as the message asked ("N trading days"): the refusal says N counts from 1 and
    why (the news session's own return is not after the text)."""
    with pytest.raises(ConfigError, match=r"^\[study\] horizon = \"0 trading days\" cannot be counted.*N of at least "
                                          r"1.*a target date after the text"):
        from_dict({"data": {"target_date_from": "text_date"}, "study": {"horizon": "0 trading days"}})


def test_a_text_date_validate_cannot_read_is_one_error_not_also_a_missing_date(news):
    """CRSP's 20240301: one line names the column, the rule and a row; the rows are not counted again as rows whose
    dates are "missing" (they said "text_date missing, target_date missing" of a text_date 20240301). A row with
    another fault is still named."""
    root, config = news
    (root / "news.csv").write_text("Firm,Date,Headline,Return next day\n"
                                   "Apple Inc.,20240301,Apple beats estimates,0.8\n"
                                   "Apple Inc.,20240304,Apple cuts jobs,-0.4\n"
                                   "Boeing Co.,2024-09-03,Boeing strike ends,\n")
    result = CliRunner().invoke(main, ["validate", str(config)])
    assert result.exit_code == 2
    lines = result.output.splitlines()
    assert lines[0] == "error: text_date: 2 value(s) are not dates in YYYY-MM-DD form, a full calendar date " \
                       "(example row 1: '20240301')"
    assert len(lines) == 2 and "missing" not in lines[0]
    assert lines[1].startswith("note: 1 row would also be dropped: outcome must be numeric and non-missing")
