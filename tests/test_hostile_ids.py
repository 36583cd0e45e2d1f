"""Hostile input, round three: one firm is one entity however its id is typed, headers and dialects as Excel and
databases write them, outcomes whose scale breaks the estimation, and data files, caches and records that must not
be lost or misreported. Each case reads a real file through the real reader and validator (or the real CLI); none
may end in a traceback, in exit 0 with a wrong or stale result, or in a lost file."""

from __future__ import annotations

import os

import pandas as pd
import pytest

from lapbias.config import from_dict
from lapbias.data import header_map
from lapbias.data.validate import validate_file
from lapbias.errors import InputDataError
from test_bad_inputs import STUDY, cli, expect, write_config
from test_validate import GOOD, HEADER, write

CONFIG = from_dict({"study": {"cutoff": "2024-06-30"}})


def _ids(tmp_path, ids: list[str], outcomes=None) -> pd.DataFrame:
    """A file of one row per id (each its own headline, two dates), validated."""
    lines = []
    for i, entity in enumerate(ids):
        outcome = outcomes[i] if outcomes else 0.1 * (i + 1)
        lines.append(f"r{i},{entity},Firm {i},T{i},Headline {i},2024-03-01,2024-03-0{4 + i % 2},{outcome}")
    return validate_file(write(tmp_path, lines), CONFIG)


# --- One firm, one entity ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("forms", [
    ("BRK B", "BRK  B"),                        # an internal double space
    ("ACME", "AC\u200bME"),                     # a zero-width space
    ("SOCI\u00c9T\u00c9", "SOCIE\u0301TE\u0301"),  # NFC vs NFD
    ("10107", "10107.0"),                       # float formatting of an integer id
])
def test_ids_that_are_the_same_id_become_one_entity_with_a_note(tmp_path, forms):
    result = _ids(tmp_path, list(forms))
    assert result.frame["entity_id"].nunique() == 1, result.frame["entity_id"].tolist()
    assert any("entity_id" in n and "normalised" in n for n in result.notes), result.notes


def test_ids_that_differ_only_by_case_are_refused_naming_both(tmp_path):
    with pytest.raises(InputDataError, match=r"(?s)entity_id.*'MSFT'.*'msft'.*case"):
        _ids(tmp_path, ["MSFT", "msft"])


def test_one_entity_on_one_date_with_two_outcomes_is_refused_naming_both_rows(tmp_path):
    lines = GOOD + ["r9,AAPL,Apple Inc.,AAPL,Apple: corrected re-export,2024-03-01,2024-03-04,1.5"]
    with pytest.raises(InputDataError, match=r"(?s)outcome.*AAPL.*2024-03-04.*r1 outcome 1\.2.*r9 outcome 1\.5.*on_conflicting"):
        validate_file(write(tmp_path, lines), CONFIG)
    for keep, expected, dropped in (("first", 1.2, "r9"), ("last", 1.5, "r1")):
        config = from_dict({"study": {"cutoff": "2024-06-30"}, "data": {"on_conflicting_outcome": keep}})
        result = validate_file(write(tmp_path, lines), config)
        apple = result.frame[(result.frame["entity_id"] == "AAPL") & (result.frame["target_date"] == "2024-03-04")]
        assert set(apple["outcome"]) == {expected} and dropped not in set(result.frame["row_id"])
        assert "conflicting_outcome" in set(result.dropped["reason"])


def test_several_headlines_of_one_firm_day_with_one_outcome_stay(tmp_path):
    lines = GOOD + ["r9,AAPL,Apple Inc.,AAPL,Apple second story,2024-03-01,2024-03-04,1.2"]
    assert len(validate_file(write(tmp_path, lines), CONFIG).frame) == 5


def test_a_ticker_that_changes_inside_an_entity_is_named(tmp_path):
    lines = ["r1,F1,Meta Platforms,FB,Facebook story,2023-03-01,2023-03-02,0.1",
             "r2,F1,Meta Platforms,META,Meta story,2024-09-05,2024-09-06,0.2",
             "r3,F2,Boeing,BA,Boeing story,2023-03-01,2023-03-02,-0.1",
             "r4,F2,Boeing,BA,Boeing story 2,2024-09-05,2024-09-06,-0.2"]
    result = validate_file(write(tmp_path, lines), CONFIG)
    assert any("ticker varies within entity_id" in w and "'F1'" in w for w in result.warnings), result.warnings


@pytest.mark.parametrize("column, value", [("entity_id", "NA"), ("ticker", "NA"), ("entity_name", "None")])
def test_ids_tickers_and_names_spelled_like_missing_markers_are_kept(tmp_path, column, value):
    """National Bank of Canada trades as NA on the TSX: missing-value markers apply to numbers, not to names."""
    frame = pd.DataFrame([line.split(",") for line in GOOD], columns=HEADER.strip().split(","))
    frame.loc[0, column] = value
    path = tmp_path / "panel.csv"
    frame.to_csv(path, index=False)
    result = validate_file(path, CONFIG)
    assert len(result.frame) == 4 and value in set(result.frame[column])


def test_init_never_maps_a_required_field_to_a_long_descriptive_or_empty_column():
    long = "Analyst comment on the headline as exported by the news vendor, full field name kept"
    columns = ["Firm", "Headline", "Date", "Return next day", long]
    guessed = header_map.guess(columns, empty={long})
    assert guessed["entity_name"].column != long
    assert header_map.guess(["Firm", "Headline", "Date", "Return next day", "Company Name"],
                            empty={"Company Name"})["entity_name"].column != "Company Name"
    assert header_map.guess(["Firm", "Company Name"])["entity_name"].column == "Company Name"


def test_when_every_row_is_dropped_the_rule_and_column_are_named(tmp_path):
    lines = [",".join(line.split(",")[:7] + ["NA"]) for line in GOOD]
    with pytest.raises(InputDataError, match=r"(?s)all dropped: 4 rows: outcome must be .*column outcome"):
        validate_file(write(tmp_path, lines), CONFIG)


def test_names_spelled_like_missing_markers_are_kept_with_a_warning(tmp_path):
    lines = [line.replace("Apple Inc.", "n/a") for line in GOOD]
    result = validate_file(write(tmp_path, lines), CONFIG)
    assert len(result.frame) == 4
    assert any("entity_name is 'n/a'" in w and "kept as written" in w for w in result.warnings), result.warnings


# --- Headers and dialects ---------------------------------------------------------------------------------------

def test_header_cells_with_spaces_and_repeated_byte_order_marks_are_matched(tmp_path):
    header = "\ufeff\ufeffrow_id ,entity_id, entity_name,ticker ,text,text_date,target_date,outcome\n"
    path = tmp_path / "panel.csv"
    path.write_bytes((header + "\n".join(GOOD) + "\n").encode("utf-8"))
    result = validate_file(path, CONFIG)
    assert result.frame["row_id"].tolist() == ["r1", "r2", "r3", "r4"]
    assert result.frame["ticker"].tolist() == ["AAPL", "BA", "AAPL", "BA"]


@pytest.mark.parametrize("dialect", ["semicolon", "tab", "excel_sep"])
def test_separators_are_detected(tmp_path, dialect):
    path = tmp_path / "panel.csv"
    if dialect == "semicolon":  # a European export: decimal commas, a header holding a comma
        rows = [line.split(",") for line in GOOD]
        text = "row_id;entity_id;entity_name;ticker;text;text_date;target_date;outcome, next day\n" + "\n".join(
            ";".join(r[:7] + [r[7].replace(".", ",")]) for r in rows) + "\n"
        config = from_dict({"study": {"cutoff": "2024-06-30"}, "data": {"columns": {"outcome": "outcome, next day"}}})
    elif dialect == "tab":
        text = HEADER.replace(",", "\t") + "\n".join(line.replace(",", "\t") for line in GOOD) + "\n"
        config = CONFIG
    else:
        text = "sep=,\n" + HEADER + "\n".join(GOOD) + "\n"
        config = CONFIG
    path.write_text(text, encoding="utf-8")
    result = validate_file(path, config)
    assert result.frame["outcome"].tolist() == [1.2, -0.7, 0.4, -0.2]
    assert result.frame["entity_name"].tolist()[0] == "Apple Inc."


@pytest.mark.parametrize("stamp", ["2024-03-01 0:00", "2024-03-01 16:00:00+00",
                                   "2024-03-01T10:00-05:00[America/New_York]", "2024-03-01 9:30:15.250"])
def test_database_and_excel_timestamps_are_read_by_their_date(tmp_path, stamp):
    lines = [line.replace(",2024-03-01,", f",{stamp},") for line in GOOD]
    result = validate_file(write(tmp_path, lines), CONFIG)
    assert str(result.frame["text_date"].iloc[0].date()) == "2024-03-01"


def test_a_time_that_is_not_a_time_names_the_part_not_read(tmp_path):
    lines = [line.replace(",2024-03-01,", ",2024-03-01 approx,") for line in GOOD]
    with pytest.raises(InputDataError, match=r"text_date.*'approx'"):
        validate_file(write(tmp_path, lines), CONFIG)


# --- Outcomes whose scale breaks the estimation -------------------------------------------------------------------

def test_an_outcome_far_beyond_any_return_is_refused_naming_the_row(tmp_path):
    lines = GOOD + [f"r{i},F{i},Firm {i},F{i},Story {i},2024-03-01,2024-03-04,{0.01 * i}" for i in range(5, 30)]
    lines[2] = lines[2].replace(",0.4", ",1e300")
    with pytest.raises(InputDataError, match=r"(?s)outcome.*r3.*1e\+300"):
        validate_file(write(tmp_path, lines), CONFIG)


# --- Files and caches -------------------------------------------------------------------------------------------

def test_a_data_file_inside_lapbias_output_folders_is_refused_and_kept(tmp_path):
    derived = tmp_path / "data" / "derived"
    derived.mkdir(parents=True)
    data = write(derived, GOOD, name="input.parquet.csv")
    data = data.rename(derived / "input.csv")
    before = data.read_bytes()
    config = write_config(tmp_path, STUDY + f'[data]\npath = "{data}"\n')
    expect(2, "inside lapbias's output folder", "validate", config)
    assert data.read_bytes() == before


def test_a_dangling_cache_symlink_stops_before_the_first_query(tmp_path):
    raw = tmp_path / "data" / "raw"
    raw.mkdir(parents=True)
    os.symlink(tmp_path / "unmounted" / "forecast.jsonl", raw / "forecast.jsonl")
    from lapbias.errors import LapbiasError
    from lapbias.llm.cache import ResponseCache

    with pytest.raises(LapbiasError, match=r"forecast\.jsonl.*does not exist"):
        ResponseCache(raw / "forecast.jsonl")


def test_a_deleted_source_record_is_not_reported_as_the_edited_file(tmp_path):
    data = write(tmp_path, GOOD + [f"r{i},F{i},Firm {i},F{i},Story {i},2024-0{3 + 6 * (i % 2)}-05,"
                                   f"2024-0{3 + 6 * (i % 2)}-06,{0.01 * i}" for i in range(5, 25)])
    config = write_config(tmp_path, STUDY + f'[data]\npath = "{data}"\n')
    expect(0, "", "validate", config)
    (tmp_path / "data" / "derived" / "data_source.json").unlink()
    data.write_text(data.read_text().replace(",1.2\n", ",9.9\n"))
    code, output = cli("panel", config)
    assert code != 0 and "data_source.json" in output and "validate" in output, output


def test_a_config_in_another_folder_says_paths_are_read_from_the_working_directory(tmp_path, monkeypatch):
    study = tmp_path / "study"
    study.mkdir()
    (study / "c.toml").write_text('root = "."\n[data]\npath = "panel.csv"\n' + STUDY)
    write(study, GOOD)
    monkeypatch.chdir(tmp_path)
    code, output = cli("report", "study/c.toml")
    assert code != 0 and "working directory" in output, output
    assert not [p.name for p in tmp_path.iterdir() if p.name in ("data", "logs", "results")]


def test_a_cached_answer_edited_away_from_its_tokens_is_refused(tmp_path):
    from lapbias.errors import CacheError
    from lapbias.llm.cache import Query, ResponseCache, canonical_json
    from lapbias.llm.responses import check_response

    tokens = [[709, " up", -0.2], [2, "<|im_end|>", -0.01]]
    response = {"text": "up", "tokens": tokens, "first_top": [[709, " up", -0.2]]}
    assert check_response("forecast", response) is None  # the end-of-turn token is not part of the text
    assert check_response("forecast", {**response, "tokens": []}) is None  # no log-probs returned: nothing to check
    edited = {**response, "text": "down"}
    assert "is not what its tokens spell" in check_response("forecast", edited)
    query = Query("forecast", "m", "r1", "prompt", {})
    path = tmp_path / "forecast.jsonl"
    path.write_text(canonical_json({"key": query.key, "task": "forecast", "model_id": "m", "query_id": "r1",
                                    "prompt": "prompt", "params": {}, "response": edited, "created": "x"}) + "\n")
    with pytest.raises(CacheError, match="is not what its tokens spell"):
        ResponseCache(path)


def test_each_recall_query_names_the_ticker_of_its_date(tmp_path):
    from lapbias.signals.recall import recall_pairs

    lines = ["r1,F1,Meta Platforms,FB,Facebook story,2021-03-01,2021-03-02,0.1",
             "r2,F1,Meta Platforms,META,Meta story,2024-09-05,2024-09-06,0.2"]
    pairs = recall_pairs(validate_file(write(tmp_path, lines), CONFIG).frame)
    assert pairs["ticker"].tolist() == ["FB", "META"] and set(pairs["entity_name"]) == {"Meta Platforms"}


def test_answers_orphaned_by_changed_prompts_are_named_not_silent(tmp_path):
    """A header cell 'ticker ' (trailing space) once dropped the tickers: every prompt changed and the next forecast
    asked all queries again, the answers paid for orphaned without a word. The count now says so."""
    from lapbias.errors import ConfirmationDeclined
    from lapbias.llm.cache import Query, ResponseCache
    from lapbias.signals.batch import Declined, refuse_unconfirmable

    cache = ResponseCache(tmp_path / "forecast.jsonl")
    old = [Query("forecast", "m", f"r{i}", f"AAPL (AAPL) prompt {i}", {}) for i in range(3)]
    cache.append((q, {"text": "up", "tokens": [], "first_top": []}) for q in old)
    new = [Query("forecast", "m", f"r{i}", f"AAPL () prompt {i}", {}) for i in range(3)]
    assert cache.unused(new) == 3 and cache.unused(old) == 0
    with pytest.raises(ConfirmationDeclined, match="also holds 3 forecast answer"):
        refuse_unconfirmable("forecast", new, cache, Declined("rerun with --yes"))


def test_changing_the_conflict_rule_makes_the_validated_rows_stale(tmp_path):
    lines = GOOD + ["r9,AAPL,Apple Inc.,AAPL,Apple: corrected re-export,2024-03-01,2024-03-04,1.5"] + [
        f"r{i},F{i},Firm {i},F{i},Story {i},2024-0{3 + 6 * (i % 2)}-05,2024-0{3 + 6 * (i % 2)}-06,{0.01 * i}"
        for i in range(10, 30)]
    data = write(tmp_path, lines)
    first = write_config(tmp_path, STUDY + f'[data]\npath = "{data}"\non_conflicting_outcome = "first"\n')
    expect(0, "dropped 1 row: one outcome per entity_id and target_date", "validate", first)
    last = write_config(tmp_path, STUDY + f'[data]\npath = "{data}"\non_conflicting_outcome = "last"\n', "last.toml")
    expect(2, "on_conflicting_outcome changed since `lapbias validate`", "panel", last)


def test_review_cases_of_round_three(tmp_path):
    """An independent review's reproducers: answers that are real though their tokens hold special or escaped
    pieces; an Excel sep= line naming another separator; ids and texts of a semicolon file kept as text while its
    outcome's decimal commas are read; a mostly-zero outcome with one event; Java's Z[UTC]; a pair whose first row
    has no ticker."""
    from lapbias.llm.responses import check_response
    from lapbias.signals.recall import recall_pairs

    specials = ["up", "<|eot_id|>", "<|start_header_id|>", "assistant", "<|end_header_id|>", "\n\n", "ok"]
    assert check_response("forecast", {"text": "upassistant\n\nok", "tokens": [[i, t, -0.1] for i, t in
                          enumerate(specials)], "first_top": [[0, "up", -0.1]]}) is None
    assert check_response("forecast", {"text": "Up \U0001f4c8", "tokens": [[1, "Up", -0.1], [2, " \\xf0\\x9f", -0.2],
                          [3, "\\x93\\x88", -0.1]], "first_top": [[1, "Up", -0.1]]}) is None
    colon = tmp_path / "colon.csv"
    colon.write_text("sep=:\n" + HEADER.replace(",", ":") + "\n".join(l.replace(",", ":") for l in GOOD) + "\n")
    assert len(validate_file(colon, CONFIG).frame) == 4
    semicolon = tmp_path / "semi.csv"
    rows = [line.split(",") for line in GOOD]
    rows[0][0], rows[0][4] = "12345,1", "1,5"
    semicolon.write_text(HEADER.replace(",", ";") + "\n".join(";".join(r[:7] + [r[7].replace(".", ",")])
                                                             for r in rows) + "\n")
    frame = validate_file(semicolon, CONFIG).frame
    assert frame["row_id"].iloc[0] == "12345,1" and frame["text"].iloc[0] == "1,5"
    assert frame["outcome"].tolist() == [1.2, -0.7, 0.4, -0.2]
    zeros = [f"r{i},F{i},Firm {i},F{i},Story {i},2024-03-01,2024-03-04,0" for i in range(300)]
    zeros[7] = zeros[7][:-1] + "1"
    assert len(validate_file(write(tmp_path, zeros), CONFIG).frame) == 300
    java = [line.replace(",2024-03-01,", ",2024-03-01T10:00Z[UTC],") for line in GOOD]
    assert len(validate_file(write(tmp_path, java), CONFIG).frame) == 4
    blank = ["r1,F1,Apple,AAPL,Story a,2024-03-01,2024-03-04,0.1", "r2,F1,Apple,,Story b,2024-03-04,2024-03-05,0.2",
             "r3,F1,Apple,AAPL,Story c,2024-03-04,2024-03-05,0.2"]
    assert recall_pairs(validate_file(write(tmp_path, blank), CONFIG).frame)["ticker"].tolist() == ["AAPL", "AAPL"]
