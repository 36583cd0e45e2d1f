"""A new user's first hour (issue 11, item 9): `lapbias init DATA` writes a commented starter config with the
column map guessed from the header and the cutoff a TODO every command refuses; a data file given where a config
is expected is named as such, with the command that writes a config."""

from __future__ import annotations

import tomllib

import pandas as pd
import pytest
from click.testing import CliRunner

from lapbias.cli import main
from lapbias.data.starter import guess_columns

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
    assert "outcome      <- ret_next_day" in result.output and "row_id       <- NOT FOUND" in result.output
    path = workdir / "my_panel.toml"
    text = path.read_text()
    assert "# header: PERMNO, Company Name, tic, headline, date, target_date, ret_next_day" in text
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
