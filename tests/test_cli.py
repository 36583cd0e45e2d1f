"""The command line: every subcommand documents itself with an example; user errors never show a traceback."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from lapbias.cli import main

SUBCOMMANDS = ["validate", "forecast", "recall", "minkprob", "panel", "estimate", "report", "run", "demo", "rebuild"]


@pytest.mark.parametrize("name", SUBCOMMANDS)
def test_every_subcommand_has_help_with_an_example(name):
    result = CliRunner().invoke(main, [name, "--help"])
    assert result.exit_code == 0, result.output
    assert "Example:" in result.output and f"lapbias {name}" in result.output


def test_config_error_is_one_line_without_traceback(tmp_path):
    path = tmp_path / "study.toml"
    path.write_text('[study]\nfrequency = "hourly"\n')
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code == 2
    assert "error: [study] frequency = 'hourly'" in result.output
    assert "Traceback" not in result.output


def test_debug_flag_shows_the_exception(tmp_path):
    path = tmp_path / "study.toml"
    path.write_text('[study]\nfrequency = "hourly"\n')
    result = CliRunner().invoke(main, ["--debug", "validate", str(path)])
    assert result.exit_code != 0 and result.exception is not None
