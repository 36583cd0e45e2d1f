"""The Stata driver against a labelled stand-in executable (tests/stata_standin/stata-mp: Stata cannot exist on
these machines). The stand-in writes esttab exports holding the Python engine's numbers, so reading them back must
reproduce the Python engine's tables; a failing do-file (r(198);) must raise with the log excerpt."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyreadstat
import pytest

from lapbias.config import from_dict
from lapbias.errors import LapbiasError
from lapbias.estimate import stata
from lapbias.estimate.protocol import estimate_panel
from lapbias.io import Layout
from lapbias.panel import build
from test_panel import synthetic_stage_files

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def project(tmp_path, monkeypatch):
    layout = Layout(tmp_path)
    layout.make_dirs()
    shutil.copytree(ROOT / "do", tmp_path / "do")
    config = from_dict({"root": str(tmp_path), "study": {"cutoff": "2024-06-30"}})
    dates = [f"2024-0{m}-1{d}" for m in (3, 4, 5) for d in range(5)] + [f"2024-{m}-1{d}" for m in (10, 11) for d in range(5)]
    synthetic_stage_files(layout, n_entities=25, dates=dates)
    build(config, layout)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "stata-mp"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} {ROOT / 'tests/stata_standin/stata-mp'} \"$@\"\n")
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{__import__('os').environ['PATH']}")
    monkeypatch.delenv("STATA_PATH", raising=False)
    return config, layout


def test_auto_finds_the_executable_and_results_round_trip(project):
    config, layout = project
    engine, install, message = stata.select_engine(config, "auto")
    assert engine == "stata" and install.kind == "batch" and "stata-mp" in message
    tables = stata.run_stata(config, layout, install)
    assert (layout.root / "standin_args.txt").read_text() == "-b do do/master.do"
    assert (layout.logs / "stata_master.log").exists()
    pre = pyreadstat.read_dta(layout.derived_file("panel_pre.dta"))[0]
    post = pyreadstat.read_dta(layout.derived_file("panel_post.dta"))[0]
    expected = estimate_panel(pre, post).tables
    for name in ("validation", "detection", "placebo", "placebo_validation"):
        got = pd.read_csv(layout.results / f"{name}.csv")
        assert set(got["engine"]) == {"stata"}
        want = expected[name]
        assert list(got["term"]) == list(want["term"]) and list(got["model"]) == list(want["model"])
        for column in ("coef", "se", "t", "p", "p_one_sided", "ci_low", "ci_high", "N", "N_clust", "df_r", "r2"):
            # results/*.csv keep 10 significant digits (io.write_csv), and the stand-in demeans iteratively in its
            # own process (~2e-10 apart): equal up to both
            np.testing.assert_allclose(got[column], want[column], rtol=5e-9, err_msg=f"{name}.{column}")
    assert set(tables) == {"validation", "detection", "placebo", "placebo_validation"}


def test_batch_error_line_fails_with_the_log_excerpt(project, monkeypatch):
    config, layout = project
    monkeypatch.setenv("STANDIN_FAIL", "1")
    _, install, _ = stata.select_engine(config, "stata")
    with pytest.raises(stata.StataError, match=r"(?s)error r\(198\).*invalid syntax"):
        stata.run_stata(config, layout, install)


def test_engine_choice_without_stata(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("STATA_PATH", raising=False)
    config = from_dict({})
    assert stata.select_engine(config, "auto")[0] == "python"
    assert "no Stata found" in stata.select_engine(config, "auto")[2]
    with pytest.raises(LapbiasError, match="--engine stata: no Stata found"):
        stata.select_engine(config, "stata")


def test_esttab_excel_quoting_is_read(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text('="",="pre",="",="",="",="",=""\n="",="b",="se",="t",="p",="ci_l",="ci_u"\n'
                    '="c.mu_hat#c.lap",="0.5",="0.2",="2.5",="0.02",="0.1",="0.9"\n="N",="100",,,,,\n')
    row = stata.parse_esttab_csv(path).iloc[0]
    assert (row["model"], row["term"], row["coef"], row["N"]) == ("pre", "c.mu_hat#c.lap", 0.5, 100)
    assert row["p_one_sided"] == pytest.approx(0.01)
