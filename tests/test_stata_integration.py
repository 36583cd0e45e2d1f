"""With Stata (STATA_PATH set to a Stata installation or executable, reghdfe, ftools and estout installed): every
command and the do-files against the Python engine on the same panel. Without Stata these tests are skipped, with
the reason printed; they are the first thing to run on a machine that has Stata.

Covered: lapbias (plain, string clusters, two-way clusters, aweights, standardize, replay with level()), lapvalid,
lapplacebo, lapboot, and `lapbias estimate --engine stata` (do/master.do + do/04_bootstrap.do): the coefficient
tables agree with the Python engine to 1e-6 relative; the bootstrap's in-sample beta_3 and sample size agree to
1e-6 (one standardization rule), p_boot only within Monte Carlo error (Stata's random stream is not numpy's)."""

from __future__ import annotations

import math
import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pyreadstat
import pytest

from lapbias.config import from_dict
from lapbias.estimate import bootstrap, stata
from lapbias.estimate.protocol import estimate_panel
from lapbias.estimate.reghdfe import reghdfe
from lapbias.io import Layout
from lapbias.panel import build
from test_panel import synthetic_stage_files

pytestmark = pytest.mark.skipif(not os.environ.get("STATA_PATH"),
                                reason="Stata is not installed here: set STATA_PATH to run both engines")
BETA3 = "c.mu_hat#c.lap"
ABSORB = ["entity_num", "period_num"]
DETECTION = ["mu_hat", "lap", BETA3]
REPS = 400


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("stata")
    layout = Layout(root)
    layout.make_dirs()
    config = from_dict({"root": str(root), "study": {"cutoff": "2024-06-30"},
                        "estimate": {"engine": "stata", "bootstrap_reps": REPS, "bootstrap_seed": 11}})
    dates = [f"2024-0{m}-1{d}" for m in (3, 4, 5) for d in range(5)] + [f"2024-{m}-1{d}" for m in (10, 11) for d in range(5)]
    synthetic_stage_files(layout, n_entities=25, dates=dates)
    build(config, layout)
    return config, layout, stata.find_stata(config)


def _stata_values(project, body: str) -> dict[str, float]:
    """Run a do-file of `body` on panel_pre.dta (plus a string `ticker` and a weight `w`); `put NAME EXP` writes
    one `name,value` line; return the values."""
    config, layout, install = project
    ado, _ = stata.stata_files()
    out = layout.root / "values.csv"
    do_file = layout.root / "commands.do"
    do_file.write_text("\n".join([
        "version 15", "clear all", "set more off", "capture log close _all", f'adopath ++ "{ado}"',
        "capture program drop put", "program define put",
        "    gettoken name 0 : 0", f'    file open fh using "{out}", write append text',
        '    file write fh "`name\'," %21.0g (`0\') _n', "    file close fh", "end",
        f'capture erase "{out}"', f'use "{layout.derived_file("panel_pre.dta")}", clear',
        'generate str8 ticker = "T" + string(entity_num)', "generate double w = 1 + mod(entity_num, 3)",
        body]) + "\n")
    stata._run(install, layout.logs.resolve(), do_file, [])
    return dict(pd.read_csv(out, header=None, names=["name", "value"]).itertuples(index=False, name=None))


def _pre(project) -> pd.DataFrame:
    return pyreadstat.read_dta(str(project[1].derived_file("panel_pre.dta")))[0]


def test_stata_and_python_engines_agree(project):
    config, layout, install = project
    run = stata.run_stata(config, layout, install)
    assert run.failed == []
    pre = _pre(project)
    post = pyreadstat.read_dta(str(layout.derived_file("panel_post.dta")))[0]
    expected = estimate_panel(pre, post).tables
    for name in ("validation", "detection", "placebo", "placebo_validation"):
        got = pd.read_csv(layout.results / f"{name}.csv")
        assert list(got["term"]) == list(expected[name]["term"])
        for column in ("coef", "se", "t", "p", "p_one_sided", "ci_low", "ci_high", "N", "N_clust", "df_r", "r2"):
            np.testing.assert_allclose(got[column], expected[name][column], rtol=1e-6, err_msg=f"{name}.{column}")
    stata_boot = pd.read_csv(layout.results / "bootstrap.csv").iloc[0]
    python_boot = bootstrap.run(config, layout, progress=False)
    assert stata_boot["b3_in_sample"] == pytest.approx(python_boot.b3_in_sample, rel=1e-6)
    assert stata_boot["N"] == python_boot.N and stata_boot["B"] == REPS
    p = python_boot.p_boot
    # two independent Monte Carlo estimates of the same p: their difference has sd sqrt(2 p (1-p) / B)
    assert abs(stata_boot["p_boot"] - p) <= 4 * math.sqrt(2 * max(p * (1 - p), 1 / REPS) / REPS)


def test_lapbias_string_and_two_way_clusters_weights_standardize_and_replay(project):
    values = _stata_values(project, "\n".join([
        "lapbias outcome mu_hat lap, absorb(entity_num period_num) cluster(ticker)",
        "put b3_string r(b3)", "put se3_string r(se3)", "put nclust_string r(N_clust)",
        "lapbias outcome mu_hat lap, absorb(entity_num period_num) vce(cluster entity_num period_num)",
        "put b3_twoway r(b3)", "put se3_twoway r(se3)",
        "lapbias outcome mu_hat lap [aweight=w], absorb(entity_num period_num) cluster(entity_num)",
        "put b3_aw r(b3)",
        "lapbias outcome mu_hat lap, absorb(entity_num period_num) cluster(entity_num) standardize",
        "put b3_std r(b3)", 'local flag = "`e(standardized)\'" == "Yes"', "put std_flag `flag'",
        "capture predict double xb", "local refused = _rc == 459", "put predict_refused `refused'",
        "lapbias, level(90)", "put ci_low90 r(ci_low)", "put level r(level)",
        'put cmd2 "`e(cmd2)\'" == "lapbias"', 'put entity_fe "`e(entity_fe)\'" == "Yes"']))
    pre = _pre(project)
    clustered = reghdfe(pre, "outcome", DETECTION, absorb=ABSORB, vce="cluster", cluster=["entity_num"])
    assert values["b3_string"] == pytest.approx(clustered.coef[BETA3], rel=1e-6)
    assert values["se3_string"] == pytest.approx(clustered.se[BETA3], rel=1e-6)
    assert values["nclust_string"] == clustered.N_clust
    twoway = reghdfe(pre, "outcome", DETECTION, absorb=ABSORB, vce="cluster", cluster=["entity_num", "period_num"])
    assert values["b3_twoway"] == pytest.approx(twoway.coef[BETA3], rel=1e-6)
    assert values["se3_twoway"] == pytest.approx(twoway.se[BETA3], rel=1e-6)
    import pyfixest as pf  # the Python engine has no weights: the weighted point estimate against pyfixest's WLS

    data = pre.dropna(subset=["outcome", "mu_hat", "lap", *ABSORB]).assign(w=lambda d: 1 + d["entity_num"] % 3)
    weighted = pf.feols("outcome ~ mu_hat * lap | entity_num + period_num", data=data, weights="w",
                        vcov={"CRV1": "entity_num"})
    assert values["b3_aw"] == pytest.approx(weighted.coef()["mu_hat:lap"], rel=1e-6)
    complete = pre.dropna(subset=bootstrap.VARIABLES + bootstrap.ABSORB).assign(post=0)
    standardized = bootstrap.in_sample_beta3(bootstrap.standardize_within(complete, bootstrap.VARIABLES))
    assert values["b3_std"] == pytest.approx(standardized, rel=1e-6)  # the one standardization rule of both engines
    assert values["std_flag"] == 1 and values["predict_refused"] == 1
    q = __import__("scipy").stats.t.ppf(0.95, clustered.df_r)
    std = reghdfe(bootstrap.standardize_within(complete, bootstrap.VARIABLES), "outcome", DETECTION, absorb=ABSORB,
                  vce="cluster", cluster=["entity_num"])
    assert values["ci_low90"] == pytest.approx(std.coef[BETA3] - q * std.se[BETA3], rel=1e-6)
    assert values["level"] == 90 and values["cmd2"] == 1 and values["entity_fe"] == 1


def test_lapvalid_lapplacebo_and_lapboot(project):
    config, layout, _ = project
    pre = _pre(project)
    post = pyreadstat.read_dta(str(layout.derived_file("panel_post.dta")))[0]
    values = _stata_values(project, "\n".join([
        "lapvalid outcome ud lap, absorb(entity_num period_num) cluster(ticker) store(v) noheader",
        "put theta_high r(theta_high)", "put se_low r(se_low)", "put nclust_pooled r(N_clust_pooled)",
        'put stored "`r(stored)\'" == "v_pooled v_high v_low"',
        f'use "{layout.derived_file("panel_pre.dta")}", clear',
        f'append using "{layout.derived_file("panel_post.dta")}"',
        "lapplacebo outcome mu_hat lap, absorb(entity_num period_num) cluster(entity_num) date(target_date) "
        "cutoff(2024-06-30) store(pl)",
        "put b3_post r(b3_post)", "put p_one_post r(p_one_post)", "put pass r(pass)",
        f'use "{layout.derived_file("panel_post.dta")}", clear',
        "lapboot outcome mu_hat lap, absorb(entity_num period_num) b3(0) reps(30) seed(5) saving(draws.dta)",
        "put reps r(reps)", "put unidentified r(n_unidentified)", "put p_boot r(p_boot)"]))
    high = reghdfe(pre[pre["high_lap"] == 1], "outcome", ["ud"], absorb=ABSORB, vce="cluster", cluster=["entity_num"])
    low = reghdfe(pre[pre["high_lap"] == 0], "outcome", ["ud"], absorb=ABSORB, vce="cluster", cluster=["entity_num"])
    assert values["theta_high"] == pytest.approx(high.coef["ud"], rel=1e-6)  # panel's high_lap = pooled median split
    assert values["se_low"] == pytest.approx(low.se["ud"], rel=1e-6)
    assert values["stored"] == 1
    placebo = reghdfe(post, "outcome", DETECTION, absorb=ABSORB, vce="cluster", cluster=["entity_num"])
    assert values["b3_post"] == pytest.approx(placebo.coef[BETA3], rel=1e-6)
    p_one = placebo.to_rows("post").set_index("term").loc[BETA3, "p_one_sided"]
    assert values["p_one_post"] == pytest.approx(p_one, rel=1e-6)
    assert values["pass"] == float(p_one > 0.10)
    assert values["reps"] == 30 and 0 <= values["p_boot"] <= 1
