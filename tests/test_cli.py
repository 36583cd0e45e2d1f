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


def test_a_model_step_without_yes_and_without_a_terminal_refuses_before_loading_the_model(tmp_path):
    """`lapbias forecast CONFIG` with no --yes and no terminal to ask on (CliRunner's stdin is not a terminal) loaded
    the model (40 s) before refusing; it now refuses at once with the count and the flag to rerun with, and the model
    is never loaded (no "loading model" line)."""
    rows = "\n".join(f"r{i},AAPL,Apple Inc.,AAPL,Apple news {i},2024-03-0{i},2024-03-0{i + 1},0.{i}"
                     for i in range(1, 5))
    (tmp_path / "panel.csv").write_text("row_id,entity_id,entity_name,ticker,text,text_date,target_date,outcome\n"
                                        + rows + "\n")
    config = tmp_path / "study.toml"
    config.write_text(f'root = "{tmp_path}"\n[data]\npath = "{tmp_path / "panel.csv"}"\n[study]\ncutoff = 2024-06-30\n')
    assert CliRunner().invoke(main, ["validate", str(config)]).exit_code == 0
    for stage in ("forecast", "recall", "minkprob"):
        result = CliRunner().invoke(main, [stage, str(config)])
        assert result.exit_code == 2, result.output
        assert f"error: {stage}: 4 queries to ask (0 of 4 already cached); not confirmed: no terminal to confirm the " \
               "query batch on: rerun with --yes to go ahead" in result.output
        assert "loading model" not in result.output
    assert not (tmp_path / "data/raw/forecast.jsonl").exists()
