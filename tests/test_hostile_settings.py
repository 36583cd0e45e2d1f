"""Hostile settings and inputs, third round, through the real CLI and the real config loader: a device the machine
has not got, a recall prompt or a forecast answer past the model's context, a Newey-West lag at or past the length
of its series, a misspelt LoRA module, a broken Stata on PATH, and the audits' inputs (value labels of a column
that is not there, Stata's extended missing codes, a semicolon-separated file, a missing signal file). Each ends in
a correct result or a one-line refusal naming the file, the column or setting, the rule and the fix. The bundled
model is real (loaded only where the check needs its tokenizer or its modules); stage files are synthetic
(test_panel.synthetic_stage_files); a test double stands in where this machine cannot produce the failure, and the
test says so."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

from lapbias.io import Layout, read_parquet, write_parquet
from test_bad_inputs import DATES, STUDY, expect, write_config
from test_hostile_inputs import _project
from test_panel import synthetic_stage_files


# ---- [model] device: a value torch cannot use, or a GPU the machine has not got ----------------------------------
def test_a_device_that_is_not_one_is_refused_naming_the_choices(tmp_path):
    _project(tmp_path)
    config = write_config(tmp_path, f'[model]\ndevice = "gpu"\n{STUDY}')
    out = expect(2, '[model] device = "gpu" is not a device', "forecast", config, "--yes")
    assert '"cpu", "cuda", "cuda:N" (the N-th GPU, from 0) or "mps"' in out and "loading model" not in out


def test_cuda_on_a_machine_without_one_is_refused_before_the_model_loads(tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA device: the refusal needs one without")
    layout, _ = _project(tmp_path)
    config = write_config(tmp_path, f'[model]\ndevice = "cuda"\n{STUDY}')
    out = expect(2, '[model] device = "cuda", but no CUDA device is visible', "forecast", config, "--yes")
    assert "torch.cuda.is_available() is False" in out and 'set device = "cpu"' in out
    assert "Loading weights" not in out and not layout.raw_file("forecast").exists()


def test_a_gpu_index_past_the_visible_ones_is_refused(monkeypatch):
    import torch

    from lapbias.errors import ConfigError
    from lapbias.llm import require_device

    # a test double for a machine with one GPU (this one has none): torch's own answers replaced, nothing else
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    require_device("cuda")
    require_device("cuda:0")
    with pytest.raises(ConfigError, match=r'^\[model\] device = "cuda:1", but torch sees 1 CUDA device\(s\), cuda:0 '
                                          r'to cuda:0; choose one of them'):
        require_device("cuda:1")


# ---- prompts and answers past the model's context ---------------------------------------------------------------
def test_a_recall_prompt_longer_than_the_context_is_refused_before_any_query(tmp_path):
    layout, config = _project(tmp_path)
    inputs = read_parquet(layout.derived_file("input.parquet"))
    name = " ".join(f"Holding{i}" for i in range(4000))[:27_500]  # the template quotes it twice: > 8,192 tokens
    inputs.loc[inputs["entity_id"] == "E3", "entity_name"] = name
    write_parquet(inputs, layout.derived_file("input.parquet"))
    before = layout.derived_file("recall.parquet").read_bytes()
    out = expect(2, "longer than the model's context of 8,192 tokens", "recall", config, "--yes")
    assert f"{len(DATES)} prompt(s)" in out and "row E3|" in out and "nothing was asked" in out
    assert "column 'entity_name'" in out
    assert not layout.raw_file("recall").exists() or layout.raw_file("recall").stat().st_size == 0
    assert layout.derived_file("recall.parquet").read_bytes() == before  # no LAP of an unread prompt


def test_max_new_tokens_past_the_context_names_the_setting(tmp_path):
    layout, _ = _project(tmp_path)
    config = write_config(tmp_path, f"[forecast]\nmax_new_tokens = 100000\n{STUDY}")
    out = expect(2, "[forecast] max_new_tokens = 100,000", "forecast", config, "--yes")
    assert "the model's context of 8,192 tokens" in out and "nothing was asked" in out
    assert "Shorten those texts" not in out
    at_most = int(out.split("to at most ")[1].split(" ")[0].replace(",", ""))
    assert 8_000 < at_most < 8_192  # the context minus the longest prompt (a headline and the starter prompt)
    assert not layout.raw_file("forecast").exists() or layout.raw_file("forecast").stat().st_size == 0


# ---- [estimate] newey_lag on a single time series ------------------------------------------------------------------
def _single_entity(tmp_path, lag: int):
    layout = Layout(tmp_path)
    layout.make_dirs()
    synthetic_stage_files(layout, n_entities=1, dates=DATES)
    config = write_config(tmp_path, f"{STUDY}newey_lag = {lag}\n")
    expect(0, "panel:", "panel", config)
    return layout, config


def test_a_newey_lag_at_or_past_the_series_length_is_refused(tmp_path):
    layout, config = _single_entity(tmp_path, 1_000_000)
    panel = read_parquet(layout.derived_file("panel.parquet"))
    pre, post = panel[panel["post"] == 0], panel[panel["post"] == 1]
    shortest = int(min((part["high_lap"] == flag).sum() for part in (pre, post) for flag in (0, 1)))
    out = expect(2, "[estimate] newey_lag = 1000000 is at or past the length of", "estimate", config)
    assert f"{len(pre)} pre-cutoff" in out and f"{len(post)} post-cutoff" in out
    assert f"Set newey_lag below {shortest}" in out and "-1" in out
    assert not (layout.results / "detection.csv").exists()


def test_a_newey_lag_below_every_series_length_is_estimated(tmp_path):
    layout, config = _single_entity(tmp_path, 2)
    expect(0, "estimate (python engine)", "estimate", config)
    notes = pd.read_csv(layout.results / "estimation_notes.csv")
    assert notes["detail"].str.contains("Newey-West standard errors with lag 2").any()


def test_the_python_api_refuses_a_newey_lag_at_the_series_length():
    from lapbias.errors import EstimationError
    from lapbias.estimate import reghdfe

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"y": rng.normal(size=12), "x": rng.normal(size=12), "t": range(12)})
    assert reghdfe(frame, "y", ["x"], absorb=[], vce="newey", time="t", newey_lag=11).N == 12
    with pytest.raises(EstimationError, match=r"newey_lag\(12\) must be less than N = 12"):
        reghdfe(frame, "y", ["x"], absorb=[], vce="newey", time="t", newey_lag=12)


# ---- [calibrate] target_modules: every name must be a module of the model ----------------------------------------
def test_a_misspelt_lora_module_is_refused_listing_the_models_modules(tmp_path):
    from lapbias.calibrate import train
    from lapbias.errors import ConfigError

    _, model = train.load_base("bundled:SmolLM2-135M-Instruct")  # the real model's module names
    train.check_target_modules(model, ("q_proj", "v_proj"))
    with pytest.raises(ConfigError) as refused:
        train.check_target_modules(model, ("q_prj", "v_proj"))
    message = str(refused.value)
    assert message.startswith('[calibrate] target_modules = ["q_prj", "v_proj"]: "q_prj" is not a module of')
    for name in ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"):
        assert f'"{name}"' in message
    assert "did you mean \"q_proj\"" in message


def test_calibrate_refuses_a_misspelt_module_before_asking_to_train(tmp_path):
    import tomllib

    import tomli_w

    from test_calibrate import tiny_config

    path = tiny_config(tmp_path)
    values = tomllib.loads(path.read_text())
    values["calibrate"]["target_modules"] = ["q_prj", "v_proj"]
    path.write_text(tomli_w.dumps(values))
    out = expect(2, '[calibrate] target_modules = ["q_prj", "v_proj"]: "q_prj" is not a module', "calibrate", path,
                 "--yes")
    assert "LoRA fine-tuning of the last" not in out  # refused before the confirmation, nothing trained
    assert not list((tmp_path / "data/derived/calibration").glob("planted-*"))


# ---- a Stata on PATH that does not start --------------------------------------------------------------------------
def test_a_broken_stata_shows_its_own_message_and_the_python_engine(tmp_path, monkeypatch):
    # A test double for a broken installation (Stata cannot be installed here): a stata-mp that prints the error a
    # Stata with a missing library prints, and exits 127 without writing a batch log.
    layout, config = _project(tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    broken = bin_dir / "stata-mp"
    broken.write_text("#!/bin/sh\necho 'stata-mp: error while loading shared libraries: libncurses.so.5: cannot "
                      "open shared object file: No such file or directory' >&2\nexit 127\n")
    broken.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.delenv("STATA_PATH", raising=False)
    expect(0, "panel:", "panel", config)
    out = expect(2, "libncurses.so.5: cannot open shared object file", "estimate", config, "--engine", "auto")
    assert f"{broken}" in out and "exit status 127" in out and "--engine python" in out
    assert "stata_steps.log" not in out and "staging" not in out  # no log that was never written
    assert not (layout.results / "detection.csv").exists()


# ---- lapbias ess: value labels, Stata's missing codes, a semicolon-separated file ----------------------------------
def _ess_data(n_rows: int = 60) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x1": rng.normal(size=n_rows).round(4), "income": rng.integers(1, 4, n_rows),
                          "y": [0, 1] * (n_rows // 2)})
    frame["g"] = (frame["x1"] > 0).astype(int)
    return frame


def _ess_cli(tmp_path, extra: str = "", outcome: str = 'llm_column = "g"\n', data: str = "d.csv"):
    from test_ess_inputs import _cli

    return _cli(tmp_path, f'root = "{tmp_path}"\n[ess]\ndata = "{data}"\ncovariates = ["x1", "income"]\n'
                          f'grid = [5, 10]\ntrees = 5\n{extra}[[ess.outcomes]]\nname = "y"\ncolumn = "y"\n'
                          f'type = "discrete"\ncomparators = ["rf"]\n{outcome}')


def test_value_labels_of_a_column_that_is_not_there_are_refused(tmp_path):
    _ess_data().to_csv(tmp_path / "d.csv", index=False)
    persona = 'prompt = "You earn {income}. Yes or no?"\nlabels = {yes = 1, no = 0}\n'
    result = _ess_cli(tmp_path, '[ess.value_labels.incom]\n1 = "little"\n3 = "a lot"\n', persona)
    assert result.exit_code == 2 and "loading model" not in result.output, result.output
    (line,) = result.output.strip().splitlines()
    assert line.startswith("error: [ess.value_labels.incom] labels column 'incom', which is not a column of ")
    assert "d.csv" in line and "'income'" in line and "did you mean 'income'" in line


def test_statas_extended_missing_codes_read_as_missing(tmp_path):
    frame = _ess_data().astype({"x1": object})
    frame.loc[3, "x1"], frame.loc[8, "x1"], frame.loc[9, "x1"] = ".a", ".z", "."
    frame.to_csv(tmp_path / "d.csv", index=False)
    result = _ess_cli(tmp_path)
    assert result.exit_code == 2, result.output
    (line,) = result.output.strip().splitlines()
    assert "column 'x1' ([ess] covariates) has 3 missing value(s), first at row 3" in line
    assert "categorical" not in line


def test_a_semicolon_separated_file_is_read_as_the_comma_separated_one(tmp_path):
    from lapbias.ess import config as ess_config
    from lapbias.ess import data as ess_data

    frame = _ess_data()
    frame.to_csv(tmp_path / "comma.csv", index=False)
    frame.to_csv(tmp_path / "semicolon.csv", index=False, sep=";", decimal=",")
    assert "," in (tmp_path / "semicolon.csv").read_text().splitlines()[1]  # decimal commas, as European Excel
    read = {name: ess_data.read(ess_config.from_dict({"data": f"{name}.csv", "covariates": ["x1", "income"],
                                                      "grid": [5], "outcomes": [{"name": "y", "column": "y",
                                                                                 "llm_column": "g"}]}, str(tmp_path)))
            for name in ("comma", "semicolon")}
    pd.testing.assert_frame_equal(read["semicolon"], read["comma"])
    result = _ess_cli(tmp_path, data="semicolon.csv")
    assert result.exit_code == 0, result.output


# ---- lapbias leak: a signal file that is not there -----------------------------------------------------------------
def test_a_missing_signal_file_names_leak_signal_path(tmp_path):
    from test_leak_inputs import SERIES, run_cli

    (tmp_path / "series.csv").write_text(SERIES)
    (tmp_path / "replies.csv").write_text(
        "series,date,variant,prompt,reply\nu,01/02/2020,A,q,+3.2\nu,01/03/2020,A,q,3.3\nu,01/04/2020,A,q,3.9\n")
    missing = tmp_path / "signal.csv"
    out = run_cli(tmp_path, f'path = "{tmp_path / "series.csv"}"\ndate_format = "%d/%m/%Y"\n'
                            f'signal_path = "{missing}"\n', "--replies", str(tmp_path / "replies.csv"))
    assert out.exit_code == 2 and "Traceback" not in out.output, out.output
    (line,) = out.output.strip().splitlines()
    assert line.startswith(f'error: [leak] signal_path = "{missing}": the signal file does not exist')
    assert "[data] path" not in line and "date, signal" in line


def test_a_missing_series_file_names_leak_path(tmp_path):
    from test_leak_inputs import run_cli

    out = run_cli(tmp_path, f'path = "{tmp_path / "series.csv"}"\n')
    assert out.exit_code == 2 and out.output.strip() == (
        f'error: [leak] path = "{tmp_path / "series.csv"}": the series file does not exist; give the CSV or parquet '
        "file of the series (columns series, date, value), or remove path to probe statsmodels' macrodata")
