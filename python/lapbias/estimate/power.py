"""Power of the detection test (issue 11 item 5): what beta_3 the pre-cutoff sample could have detected.

A non-significant beta_3 is "No evidence of contamination" only if the test would have found a contamination of
consequence. The minimum detectable effect of a one-sided test at level alpha with power 1 − kappa is
    MDE = (t_{1−alpha, df_r} + t_{1−kappa, df_r}) × se(beta_3)
(Bloom 1995, "Minimum detectable effects", eq. 1; t quantiles at reghdfe's residual df because the detection
test itself uses t(df_r) p-values, so with few clusters the MDE is honest about them; alpha = detection_alpha,
1 − kappa = 0.80). It is stated as the paper's economic magnitude (Gao, Jiang, Yan, Table II text: "a
one-standard-deviation increase in LAP increases the marginal effect of LLM ... by 0.077%, which is about 37% of
the standalone LLM effect"):
    MDE share = MDE × SD(lap) / b1,
with SD(lap) the pre-cutoff SD of LAP on the detection sample and b1 the coefficient of the standalone regression
outcome ~ mu_hat with the same fixed effects and clustering (Table II column 1). The share is scale-free (LAP's
units cancel). The within-FE SD of LAP (LAP partialled on the entity and period effects) is reported beside it: the
FE absorb LAP's between variation, and se(beta_3) grows as the within share shrinks, so a LAP that varies across
entities but barely within them gives a large MDE share.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

from ..errors import EstimationError
from .reghdfe import DEMEAN_TOLERANCE, drop_singletons
from .scaling import partial_out

BETA3 = "c.mu_hat#c.lap"
POWER = 0.80
COLUMNS = ["quantity", "value", "formula"]


def mde(se: float, df_r: float, alpha: float = 0.05, power: float = POWER) -> float:
    """(t_{1−alpha, df} + t_{power, df}) × se (module docstring)."""
    return float((stats.t.ppf(1 - alpha, df_r) + stats.t.ppf(power, df_r)) * se)


def within_sd(sample: pd.DataFrame, column: str = "lap") -> float:
    """SD of `column` after partialling out entity and period effects (a constant for a single series), on the
    sample reghdfe uses (singletons dropped)."""
    if sample["entity_num"].nunique() == 1:
        return float(sample[column].std(ddof=1))
    frame, _ = drop_singletons(sample, ["entity_num", "period_num"])
    if len(frame) < 2:
        return math.nan
    codes = np.column_stack([pd.factorize(frame[fe])[0] for fe in ("entity_num", "period_num")]).astype(np.uint64)
    resid = partial_out(frame[[column]].to_numpy(np.float64), codes, DEMEAN_TOLERANCE)[:, 0]
    return float(math.sqrt(resid @ resid / (len(resid) - 1)))


def detection_power(pre: pd.DataFrame, detection: pd.DataFrame, alpha: float = 0.05,
                    fit=None) -> pd.DataFrame:
    """results/power.csv: beta_3, its MDE, b1 of the standalone regression, SD and within-FE SD of LAP and both as
    shares of b1 (module docstring). `fit(sample, y, x)` estimates the standalone regression as the protocol does
    (default: estimate.protocol's FE/cluster or single-series route). Quantities that cannot be computed are NaN."""
    from .protocol import _fit

    fit = fit or (lambda sample, y, x: _fit(sample, y, x, -1))
    sample = pre.dropna(subset=["outcome", "mu_hat", "lap", "entity_num", "period_num"])
    row = detection[detection["term"] == BETA3] if len(detection) else detection
    beta3 = float(row["coef"].iloc[0]) if len(row) else math.nan
    se = float(row["se"].iloc[0]) if len(row) else math.nan
    df_r = float(row["df_r"].iloc[0]) if len(row) else math.nan
    minimum = mde(se, df_r, alpha) if math.isfinite(se) and df_r > 0 else math.nan
    try:
        b1 = float(fit(sample, "outcome", ["mu_hat"]).coef["mu_hat"])
    except (EstimationError, KeyError):
        b1 = math.nan
    sd = float(sample["lap"].std(ddof=1)) if len(sample) > 1 else math.nan
    try:
        sd_within = within_sd(sample) if len(sample) > 1 else math.nan
    except EstimationError:
        sd_within = math.nan
    share = (lambda effect: effect * sd / b1 if b1 > 0 and math.isfinite(effect) else math.nan)
    return pd.DataFrame([
        ("beta3", beta3, "coefficient on c.mu_hat#c.lap (detection, pre-cutoff)"),
        ("se_beta3", se, "its standard error"),
        ("df_r", df_r, "residual degrees of freedom of the detection regression"),
        ("mde_beta3", minimum, f"(t_(1-{alpha:g}, df_r) + t_({POWER:g}, df_r)) x se_beta3"),
        ("b1_standalone", b1, "coefficient on mu_hat in outcome ~ mu_hat, same FE and clustering"),
        ("sd_lap", sd, "SD of pre-cutoff LAP on the detection sample"),
        ("sd_lap_within", sd_within, "SD of LAP net of entity and period effects"),
        ("within_share_lap", sd_within / sd if sd and sd > 0 else math.nan, "sd_lap_within / sd_lap"),
        ("beta3_share", share(beta3), "beta3 x sd_lap / b1_standalone (paper: 37%)"),
        ("mde_share", share(minimum), "mde_beta3 x sd_lap / b1_standalone"),
    ], columns=COLUMNS)
