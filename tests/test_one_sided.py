"""Protocol Step 4's one-sided p-value for beta_3 > 0 and its place in the results schema."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from lapbias.estimate import one_sided_p, reghdfe
from lapbias.estimate.reghdfe import RESULT_COLUMNS


def test_rule():
    assert one_sided_p(2.0, 0.06) == pytest.approx(0.03)
    assert one_sided_p(-2.0, 0.06) == pytest.approx(0.97)
    assert one_sided_p(0.0, 1.0) == pytest.approx(0.5)  # t = 0 is nonpositive: 1 - p/2
    assert math.isnan(one_sided_p(math.nan, 0.5))


def test_equals_the_upper_t_tail():
    """p/2 or 1 - p/2 is P(T > t) for T ~ t(df): checked against scipy's survival function directly."""
    for t in (-2.5, -0.3, 0.4, 3.1):
        p_two = 2 * stats.t.sf(abs(t), 17)
        assert one_sided_p(t, p_two) == pytest.approx(stats.t.sf(t, 17), rel=1e-12)


def test_rows_carry_the_schema_and_the_one_sided_p():
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"g": np.repeat(np.arange(30), 10), "x": rng.normal(size=300)})
    frame["y"] = -0.3 * frame["x"] + rng.normal(size=300)
    r = reghdfe(frame, "y", ["x"], absorb=["g"], vce="cluster", cluster=["g"])
    rows = r.to_rows("pre")
    assert list(rows.columns) == RESULT_COLUMNS and list(rows["term"]) == ["x", "_cons"]
    x = rows.set_index("term").loc["x"]
    assert x["coef"] < 0 and x["p_one_sided"] == pytest.approx(stats.t.sf(x["t"], x["df_r"]), rel=1e-10)
    assert (x["model"], x["engine"], x["N"], x["N_clust"], x["df_r"]) == ("pre", "python", 300, 30, 29)
