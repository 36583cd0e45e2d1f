"""The command line: every subcommand documents itself with an example; user errors never show a traceback."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from lapbias.cli import main

SUBCOMMANDS = ["init", "validate", "forecast", "recall", "minkprob", "panel", "estimate", "report", "run", "demo",
               "rebuild", "reghdfe", "stata-install"]


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
    assert 'error: [study] frequency = "hourly"' in result.output
    assert "Traceback" not in result.output


def test_debug_flag_shows_the_exception(tmp_path):
    path = tmp_path / "study.toml"
    path.write_text('[study]\nfrequency = "hourly"\n')
    result = CliRunner().invoke(main, ["--debug", "validate", str(path)])
    assert result.exit_code != 0 and result.exception is not None


def test_reghdfe_command_prints_the_golden_case(tmp_path):
    import pyfixest as pf

    pf.get_data().to_csv(tmp_path / "data.csv", index=False)
    result = CliRunner().invoke(main, ["reghdfe", str(tmp_path / "data.csv"), "Y", "X1", "X2", "-a", "f1", "-c", "f1",
                                       "--save", str(tmp_path / "out.csv")])
    assert result.exit_code == 0, result.output
    assert "-0.9495256" in result.output and "Number of clusters =        30" in result.output
    import pandas as pd

    table = pd.read_csv(tmp_path / "out.csv")
    assert list(table["term"]) == ["X1", "X2", "_cons"]
