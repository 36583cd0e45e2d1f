"""Input validation (protocol "Input data format"): errors name column, rule and example; drops are counted."""

from __future__ import annotations

import pandas as pd
import pytest
from click.testing import CliRunner

from lapbias.cli import main
from lapbias.config import from_dict
from lapbias.data.validate import validate_file
from lapbias.errors import InputDataError

HEADER = "row_id,entity_id,entity_name,ticker,text,text_date,target_date,outcome\n"
GOOD = [
    "r1,AAPL,Apple Inc.,AAPL,Apple beats estimates,2024-03-01,2024-03-04,1.2",
    "r2,BA,Boeing Co.,BA,Boeing faces lawsuit,2024-03-01,2024-03-04,-0.7",
    "r3,AAPL,Apple Inc.,AAPL,Apple unveils headset,2024-09-05,2024-09-06,0.4",
    "r4,BA,Boeing Co.,BA,Boeing strike ends,2024-09-05,2024-09-06,-0.2",
]
CONFIG = from_dict({"study": {"cutoff": "2024-06-30"}})


def write(tmp_path, lines, header=HEADER, name="panel.csv"):
    path = tmp_path / name
    path.write_text(header + "\n".join(lines) + "\n")
    return path


def test_clean_file_keeps_every_row_with_types(tmp_path):
    result = validate_file(write(tmp_path, GOOD), CONFIG)
    assert len(result.frame) == 4 and result.dropped.empty and result.warnings == []
    assert str(result.frame["target_date"].dtype) == "datetime64[ns]"
    assert result.frame["outcome"].tolist() == [1.2, -0.7, 0.4, -0.2]


def test_rows_breaking_row_rules_are_dropped_and_counted(tmp_path):
    lines = GOOD + [
        "r5,AAPL,Apple Inc.,AAPL,Apple slips,2024-03-05,2024-03-04,0.1",     # target before text
        "r6,AAPL,Apple Inc.,AAPL,Apple flat,2024-03-04,2024-03-04,0.1",      # target == text
        "r7,BA,Boeing Co.,BA,Boeing,2024-03-01,2024-03-04,",                 # missing outcome
        "r8,BA,Boeing Co.,BA,   ,2024-03-01,2024-03-04,0.3",                 # empty text
    ]
    result = validate_file(write(tmp_path, lines), CONFIG)
    counts = dict(zip(result.dropped["reason"], result.dropped["n_rows"]))
    assert counts == {"target_not_after_text": 2, "missing_outcome": 1, "empty_text": 1}
    assert list(result.frame["row_id"]) == ["r1", "r2", "r3", "r4"]
    messages = "\n".join(result.messages())
    assert "dropped 2 rows: target_date must be after text_date (example row_id r5: text_date 2024-03-05, " \
           "target_date 2024-03-04)" in messages


def test_one_message_per_problem_and_no_traceback(tmp_path):
    lines = GOOD + [
        "r5,AAPL,Apple Inc.,AAPL,Apple slips,2024-03-05,2024-03-04,0.1",
        "r6,BA,Boeing Co.,BA,Boeing,2024-03-01,2024-03-04,",
        "r1,BA,Boeing Co.,BA,Boeing again,2024-03-01,2024-03-04,-0.7",  # its firm-day outcome, as r2
    ]
    path = write(tmp_path, lines)
    config = tmp_path / "study.toml"
    config.write_text(f'root = "{tmp_path}"\n[data]\npath = "{path}"\n[study]\ncutoff = "2024-06-30"\n')
    result = CliRunner().invoke(main, ["validate", str(config)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1
    assert "duplicate row_id" in lines[0] and "'r1' on rows 1, 7" in lines[0]
    # rows that would also be dropped are notes, not errors of their own (they said `error:` too)
    notes = [line for line in result.output.splitlines() if line.startswith("note:")]
    assert len(notes) == 2
    assert "target_date must be after text_date (example row_id r5" in notes[0]
    assert "outcome must be numeric and non-missing (example row_id r6" in notes[1]


def test_an_exact_duplicate_row_with_a_row_id_is_kept_once_with_a_note(tmp_path):
    """README: an exact duplicate is kept once. With a row_id column, a row exported twice (the same row_id too) was
    refused as a "duplicate row_id" while the same output said it "would be kept once" as a repeat of itself."""
    result = validate_file(write(tmp_path, GOOD + [GOOD[1]]), CONFIG)
    assert result.frame["row_id"].tolist() == ["r1", "r2", "r3", "r4"]
    (message,) = result.messages()
    assert message.startswith("dropped 1 row: a row repeating an earlier row") and "kept once" in message
    assert "(example row_id r2: repeats row 2)" in message


def test_two_rows_with_one_row_id_that_differ_name_what_differs_and_the_fix(tmp_path):
    """The same row_id on two different rows stays an error; it names the rows, what differs and the fix."""
    other = "r2,BA,Boeing Co.,BA,Boeing faces lawsuit,2024-03-01,2024-03-04,-0.9"
    with pytest.raises(InputDataError, match=r"duplicate row_id: 1 value\(s\) name different rows.*'r2' on rows 2, 5, "
                                             r"which differ in outcome\); give each row its own row_id"):
        validate_file(write(tmp_path, GOOD + [other]), CONFIG)


def test_same_day_repeats_of_a_headline_without_a_row_id_name_the_rule_and_the_fix(tmp_path):
    """Without a row_id, one headline repeated for one entity on one day (at two times of day, with different
    returns) was refused as "duplicate identical rows", though the rows differ; the message now states the rule,
    shows the rows as written and names a column of the file that tells every row apart, to map to row_id."""
    header = "story_id,entity_id,entity_name,text,text_date,target_date,outcome\n"
    lines = ["S1,AAPL,Apple Inc.,Apple beats,2024-03-01 09:30,2024-03-04,1.2",
             "S2,BA,Boeing Co.,Boeing falls,2024-03-01 10:00,2024-03-04,-0.7",
             "S3,AAPL,Apple Inc.,Apple beats,2024-03-01 14:45,2024-03-04,0.9",
             "S4,BA,Boeing Co.,Boeing strike ends,2024-09-05,2024-09-06,-0.2"]
    with pytest.raises(InputDataError) as raised:
        validate_file(write(tmp_path, lines, header=header), CONFIG)
    message = str(raised.value)
    assert "identical" not in message
    assert "share entity_id, text_date (the day), target_date and text but differ in outcome (e.g. rows 1, 3: " \
           "text_date as written 2024-03-01 09:30, 2024-03-01 14:45; outcome 1.2, 0.9)" in message
    assert 'map a column holding a distinct value on every row to row_id in [data.columns] (e.g. row_id = ' \
           '"story_id"' in message
    # the fix the message names works (each row's outcome its own: outcomes measured from each text's time)
    mapped = from_dict({"study": {"cutoff": "2024-06-30"}, "data": {"columns": {"row_id": "story_id"},
                                                                      "on_conflicting_outcome": "all"}})
    assert len(validate_file(tmp_path / "panel.csv", mapped).frame) == 4


@pytest.mark.parametrize("bad, message", [
    ("r9,AAPL,Apple Inc.,AAPL,x,2024-13-45,2024-03-04,0.1", r"text_date: 1 value\(s\) are not dates .*row_id r9: '2024-13-45'"),
    ("r9,AAPL,Apple Inc.,AAPL,x,2024-03-01,2024-03-04,abc", r"outcome: 1 value\(s\) are not finite numbers.*row_id r9: 'abc'"),
])
def test_unparseable_values_are_errors_with_an_example(tmp_path, bad, message):
    with pytest.raises(InputDataError, match=message):
        validate_file(write(tmp_path, GOOD + [bad]), CONFIG)


def test_missing_column_empty_file_and_unknown_format(tmp_path):
    header = "row_id,entity_id,entity_name,text,text_date,target_date\n"
    with pytest.raises(InputDataError, match=r"required column 'outcome' is missing"):
        validate_file(write(tmp_path, [line.rsplit(",", 1)[0] for line in GOOD], header=header), CONFIG)
    mapped = from_dict({"data": {"columns": {"outcome": "ret"}}})
    with pytest.raises(InputDataError, match=r"'outcome' \(mapped to 'ret' by \[data.columns\]\) is missing"):
        validate_file(write(tmp_path, GOOD), mapped)
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(InputDataError, match="is empty"):
        validate_file(tmp_path / "empty.csv", CONFIG)
    with pytest.raises(InputDataError, match="header but no rows"):
        validate_file(write(tmp_path, [], name="header.csv"), CONFIG)
    (tmp_path / "panel.xlsx").write_text("x")
    with pytest.raises(InputDataError, match="give a .csv or .parquet file"):
        validate_file(tmp_path / "panel.xlsx", CONFIG)


def test_parquet_mapping_deterministic_row_id_and_extra_columns(tmp_path):
    frame = pd.DataFrame({
        "firm": ["AAPL", "BA"], "name": ["Apple Inc.", "Boeing Co."], "headline": ["Apple beats", "Boeing falls"],
        "text_date": pd.to_datetime(["2024-03-01", "2024-03-01"]), "target_date": ["2024-03-04", "2024-09-04"],
        "ret": [1.0, -1.0], "small": [0, 1],
    })
    frame.to_parquet(tmp_path / "panel.parquet")
    config = from_dict({"study": {"cutoff": "2024-06-30"}, "data": {"columns": {
        "entity_id": "firm", "entity_name": "name", "text": "headline", "outcome": "ret"}}})
    first = validate_file(tmp_path / "panel.parquet", config)
    second = validate_file(tmp_path / "panel.parquet", config)
    assert first.frame["row_id"].tolist() == second.frame["row_id"].tolist()
    assert first.frame["row_id"].str.match(r"^r[0-9a-f]{12}$").all()
    assert first.frame["small"].tolist() == [0, 1] and first.frame["ticker"].tolist() == ["", ""]
    assert any("no ticker column" in w for w in first.warnings)


def test_warnings_all_pre_cutoff_one_signed_and_single_entity(tmp_path):
    lines = [f"r{i},AAPL,Apple Inc.,AAPL,Apple news {i},2024-03-0{i},2024-03-0{i + 1},{0.5 + i}" for i in range(1, 6)]
    result = validate_file(write(tmp_path, lines), CONFIG)
    text = "\n".join(result.warnings)
    assert "placebo (Step 5) is infeasible" in text
    assert "heavily one-signed (100% of non-zero outcomes are positive)" in text
    assert "a single entity (one time series)" in text


def test_sample_option_keeps_a_reproducible_subsample_in_file_order(tmp_path):
    from pathlib import Path

    demo = Path(__file__).resolve().parents[1] / "data/demo/demo_panel.csv"
    config = tmp_path / "study.toml"
    config.write_text(f'root = "{tmp_path}"\n[data]\npath = "{demo}"\n[study]\ncutoff = "2024-06-30"\n')
    kept = []
    for _ in range(2):
        result = CliRunner().invoke(main, ["validate", str(config), "--sample", "50", "--seed", "7"])
        assert result.exit_code == 0, result.output
        n_valid = len(validate_file(demo, CONFIG).frame)
        assert f"kept a random subsample of 50 of {n_valid} valid rows (seed 7)" in result.output
        kept.append(pd.read_parquet(tmp_path / "data/derived/input.parquet")["row_id"].tolist())
    assert kept[0] == kept[1] and len(kept[0]) == 50
    order = pd.read_csv(demo)["row_id"].tolist()
    assert kept[0] == sorted(kept[0], key=order.index)


def test_unset_data_path_is_named_by_every_caller():
    """validate_file itself refuses an unset [data] path (the validate stage, calibrate and the dry run all read
    the panel through it), not Path('') = '.' read as a file without extension."""
    with pytest.raises(InputDataError, match=r"no data file: set \[data\] path"):
        validate_file(CONFIG.data.path, CONFIG)


def test_a_missing_date_without_a_row_id_column_is_dropped_and_counted(tmp_path):
    """The deterministic row_id of a row whose date is missing (pandas' text of NaT is missing, not "NaT"): the row
    is dropped by its rule, with the dates named as missing, not a crash."""
    header = "entity_id,entity_name,text,text_date,target_date,outcome\n"
    lines = ["AAPL,Apple Inc.,Apple beats,2024-03-01,2024-03-04,1.2", "BA,Boeing Co.,Boeing falls,2024-03-01,,-0.7",
             "BA,Boeing Co.,Boeing rises,,2024-03-05,0.4"]
    result = validate_file(write(tmp_path, lines, header=header), CONFIG)
    assert len(result.frame) == 1 and result.dropped["n_rows"].tolist() == [2]
    assert "(example row_id r" in result.messages()[0]
    assert result.messages()[0].endswith(": text_date 2024-03-01, target_date missing)")


def test_excel_trailing_empty_header_cells(tmp_path):
    """Excel saves the empty cells right of a table as columns without a name: left out when empty throughout (and
    said so); one that holds a value (a saved pandas index) is left out with a warning naming it and a value."""
    excel = [line + ",,, " for line in GOOD]
    config = tmp_path / "study.toml"
    config.write_text(f'root = "{tmp_path}"\n[data]\npath = "{tmp_path / "panel.csv"}"\n[study]\ncutoff = 2024-06-30\n')
    write(tmp_path, excel, header=HEADER.rstrip("\n") + ",, ,\n")
    result = CliRunner().invoke(main, ["validate", str(config)])
    assert result.exit_code == 0, result.output
    assert "ignored 3 columns with an empty header cell and no values (columns 9, 10, 11" in result.output
    frame = pd.read_parquet(tmp_path / "data/derived/input.parquet")
    assert list(frame.columns) == ["row_id", "entity_id", "entity_name", "ticker", "text", "text_date",
                                   "target_date", "outcome"]
    excel[2] = GOOD[2] + ",,see note,"
    write(tmp_path, excel, header=HEADER.rstrip("\n") + ",, ,\n")
    result = CliRunner().invoke(main, ["validate", str(config)])
    assert result.exit_code == 0 and "ignored 2 columns with an empty header cell and no values (columns 9, 11" \
        in result.output
    assert "warning: ignored column 10: it has no name in the header but holds values (e.g. 'see note'; a saved " \
           "pandas index?); give it a name in the header row to use it" in result.output
    assert len(pd.read_parquet(tmp_path / "data/derived/input.parquet").columns) == 8
