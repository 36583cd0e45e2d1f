"""Config errors name the user's value as they wrote it in TOML (`horizon = 2024-06-30`, `labels = { up = true }`),
never as a Python repr (`datetime.date(2024, 6, 30)`, `{'up': True}`), through the real CLI."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from lapbias.cli import main

LONG_PROMPT = "News: " + "x" * 300 + " {company} {text}"

CASES = [  # (id, TOML lines, fragment of the error line)
    ("date_for_text", "[study]\nhorizon = 2024-06-30\n", "[study] horizon = 2024-06-30; it must be text in quotes"),
    ("datetime_for_date", "[study]\ncutoff = 2024-06-30T10:00:00\n",
     "[study] cutoff = 2024-06-30T10:00:00 is a date with a time of day"),
    ("date_in_table", "[data.columns]\noutcome = 2024-01-01\n", "[data] columns.outcome = 2024-01-01; it must be text"),
    ("quoted_number", '[model]\nbatch_size = "16"\n', '[model] batch_size = "16"; it must be a whole number'),
    ("empty_text", '[model]\ndtype = ""\n', '[model] dtype = ""; it must not be empty'),
    ("boolean_label", "[forecast]\nlabels = { up = true, down = -1 }\n",
     "[forecast] labels = { up = true, down = -1 } maps up to true; mu_hat must be a finite number"),
    ("label_keys_quoted", '[forecast]\nlabels = { "Up " = 1, up = -1 }\n',
     '[forecast] labels = { "Up " = 1, up = -1 } has keys "Up " and up that differ only by case'),
    ("choice", '[estimate]\nengine = "stat"\n', '[estimate] engine = "stat"; choose one of "python", "auto", "stata"'),
    ("boolean_for_text", "[study]\noutcome_description = true\n",
     "[study] outcome_description = true; it must be text in quotes"),
    ("list_of_two", '[recall]\nlabels = ["up", "down"]\n', '[recall] labels = ["up", "down"] must list three labels'),
    ("list_with_number", '[model]\nbase_urls = ["http://127.0.0.1:8000/v1", 5]\n',
     '[model] base_urls = ["http://127.0.0.1:8000/v1", 5] must be a list of URLs'),
    ("section_as_date", "model = 2024-01-01\n", "[model] must be a table (a [model] section of key = value lines), "
                                               "not 2024-01-01"),
    ("escaped_text", '[study]\nfrequency = "da\\ny"\n', '[study] frequency = "da\\ny"; choose one of'),
    ("long_text_cut", f'[forecast]\nprompt = "{LONG_PROMPT}"\n', '[forecast] prompt = "News: xxx'),
    ("calendar", '[study]\ncalendar = "xnys"\n', '[study] calendar = "xnys" is not an exchange calendar of '
                                                 'exchange-calendars; did you mean "XNYS"'),
    ("horizon", '[data]\ntarget_date_from = "text_date"\n[study]\nhorizon = "1 month"\n',
     '[study] horizon = "1 month" cannot be counted on the XNYS calendar'),
]
PYTHON_REPRS = re.compile(r"datetime\.|\bTrue\b|\bFalse\b|\('|\['|\{'|= '")


@pytest.mark.parametrize("name, text, fragment", CASES, ids=[c[0] for c in CASES])
def test_config_messages_show_values_as_written(tmp_path, name, text, fragment):
    config = tmp_path / "study.toml"
    config.write_text(f'root = "{tmp_path}"\n{text}', encoding="utf-8")
    result = CliRunner().invoke(main, ["validate", str(config)])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    line = next((line for line in result.output.splitlines() if fragment in line), None)
    assert line is not None, f"{fragment!r} not in:\n{result.output}"
    assert not PYTHON_REPRS.search(line), line
    assert len(line) < 400, line  # a long value is cut, not printed whole
