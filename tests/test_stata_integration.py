"""With Stata (STATA_PATH set to a Stata installation): both engines on the same panel agree to 1e-6 relative.
Without Stata this test is skipped, with the reason printed."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pyreadstat
import pytest

from lapbias.config import from_dict
from lapbias.estimate import stata
from lapbias.estimate.protocol import estimate_panel
from lapbias.io import Layout
from lapbias.panel import build
from test_panel import synthetic_stage_files

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(not os.environ.get("STATA_PATH"),
                                reason="Stata is not installed here: set STATA_PATH to run both engines")


def test_stata_and_python_engines_agree(tmp_path):
    layout = Layout(tmp_path)
    layout.make_dirs()
    shutil.copytree(ROOT / "do", tmp_path / "do")
    shutil.copytree(ROOT / "ado", tmp_path / "ado")
    config = from_dict({"root": str(tmp_path), "study": {"cutoff": "2024-06-30"}})
    dates = [f"2024-0{m}-1{d}" for m in (3, 4, 5) for d in range(5)] + [f"2024-{m}-1{d}" for m in (10, 11) for d in range(5)]
    synthetic_stage_files(layout, n_entities=25, dates=dates)
    build(config, layout)
    stata.run_stata(config, layout, stata.find_stata(config))
    pre = pyreadstat.read_dta(layout.derived_file("panel_pre.dta"))[0]
    post = pyreadstat.read_dta(layout.derived_file("panel_post.dta"))[0]
    expected = estimate_panel(pre, post).tables
    for name in ("validation", "detection", "placebo"):
        got = pd.read_csv(layout.results / f"{name}.csv")
        np.testing.assert_allclose(got["coef"], expected[name]["coef"], rtol=1e-6)
        np.testing.assert_allclose(got["se"], expected[name]["se"], rtol=1e-6)
