"""Power of the detection test and of the placebo: what beta_3 each sample could have detected or excluded.

A non-significant beta_3 is "No evidence of contamination" only if the data exclude a contamination of consequence.
Three quantities, all on the paper's economic magnitude (Gao, Jiang, Yan, Table II text: "a one-standard-deviation
increase in LAP increases the marginal effect of LLM ... by 0.077%, which is about 37% of the standalone LLM
effect"), i.e. an interaction times SD(lap) as a share of b1:
- the one-sided upper confidence bound, what the verdict's power rule reads (an equivalence-type rule: the data
  exclude larger interactions at the one-sided level 1 − alpha; Schuirmann 1987, J. Pharmacokinetics and
  Biopharmaceutics 15(6), the one-sided test of the two one-sided tests):
      UCB = beta_3 + t_{1−alpha, df_r} × se(beta_3),   UCB share = UCB × SD(lap) / b1;
- the minimum detectable effect of the one-sided test at level alpha with power 1 − kappa, reported beside it
  (Bloom 1995, "Minimum detectable effects", Evaluation Review 19(5), eq. 1):
      MDE = (t_{1−alpha, df_r} + t_{1−kappa, df_r}) × se(beta_3),   MDE share = MDE × SD(lap) / b1,
  read "an interaction of ≥ MDE share of the standalone LLM effect per SD of LAP would have been detected with
  80% probability";
- the placebo's MDE (post-cutoff beta_3, one-sided at placebo_alpha, 80% power) times the post-cutoff SD of LAP as a
  share of the pre-cutoff b1: the placebo could not have rejected a post-cutoff interaction smaller than that. The
  reference is the pre-cutoff b1 because the LLM's post-cutoff skill may vanish precisely when its pre-cutoff skill
  was memorized.
t quantiles at reghdfe's residual df (the tests themselves use t(df_r) p-values; with few clusters df_r = G − 1),
alpha = detection_alpha, 1 − kappa = 0.80. SD(lap) is the SD of LAP on the detection sample and b1 the coefficient
of the standalone regression outcome ~ mu_hat with the same fixed effects and clustering (Table II column 1). The
shares are scale-free (LAP's units cancel) and invariant to affine maps of LAP, so they cannot tell whether LAP
varies at all: the verdict's "LAP showing meaningful variation" (protocol, final rule) reads `lap_gap`, the mean LAP
of the high-LAP half minus that of the low half (protocol Step 3's split), absolute for the recall LAP (probability
points) and relative to mean LAP for Min-K% (`lap_relative_gap`, a measure without natural units). The within-FE SD
of LAP is reported as a description: the FE absorb LAP's own between variation, but not that of mu_hat x LAP when
mu_hat varies within entities and periods, so a LAP that varies across entities and barely within them still
identifies beta_3 (tests/test_verdict_mc.py); se(beta_3) x SD(lap) depends on the noise, N and SD(mu_hat), not on
how LAP is spread (estimate/simulate.py).
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


def _beta3(table: pd.DataFrame | None) -> tuple[float, float, float]:
    """(coef, se, df_r) of beta_3 in a detection or placebo table, NaN where absent."""
    row = table[table["term"] == BETA3] if table is not None and len(table) else None
    if row is None or row.empty:
        return math.nan, math.nan, math.nan
    return tuple(float(row[column].iloc[0]) for column in ("coef", "se", "df_r"))


def lap_gaps(sample: pd.DataFrame) -> tuple[float, float]:
    """(mean LAP of the high-LAP half − mean of the low half, that gap / mean LAP) on `sample`'s high_lap flags."""
    if "high_lap" not in sample.columns:
        return math.nan, math.nan
    flag = pd.to_numeric(sample["high_lap"], errors="coerce")
    high, low = sample.loc[flag == 1, "lap"], sample.loc[flag == 0, "lap"]
    if high.empty or low.empty:
        return math.nan, math.nan
    gap, mean = float(high.mean() - low.mean()), float(sample["lap"].mean())
    return gap, gap / mean if mean > 0 else math.nan


def detection_power(pre: pd.DataFrame, detection: pd.DataFrame, alpha: float = 0.05, fit=None,
                    post: pd.DataFrame | None = None, placebo: pd.DataFrame | None = None,
                    placebo_alpha: float = 0.10) -> pd.DataFrame:
    """results/power.csv: beta_3, its upper confidence bound and MDE, b1 of the standalone regression, SD, within-FE
    SD and high/low-half gap of LAP, the shares of b1 (module docstring), and the placebo's MDE from `post` and its
    `placebo` table. `fit(sample, y, x)` estimates the standalone regression as the protocol does (default:
    estimate.protocol's FE/cluster or single-series route). Quantities that cannot be computed are NaN."""
    from .protocol import _fit

    fit = fit or (lambda sample, y, x: _fit(sample, y, x, -1))
    sample = pre.dropna(subset=["outcome", "mu_hat", "lap", "entity_num", "period_num"])
    beta3, se, df_r = _beta3(detection)
    minimum = mde(se, df_r, alpha) if math.isfinite(se) and df_r > 0 else math.nan
    upper = beta3 + stats.t.ppf(1 - alpha, df_r) * se if math.isfinite(se) and df_r > 0 else math.nan
    try:
        b1 = float(fit(sample, "outcome", ["mu_hat"]).coef["mu_hat"])
    except (EstimationError, KeyError):
        b1 = math.nan
    sd = float(sample["lap"].std(ddof=1)) if len(sample) > 1 else math.nan
    try:
        sd_within = within_sd(sample) if len(sample) > 1 else math.nan
    except EstimationError:
        sd_within = math.nan
    gap, relative_gap = lap_gaps(sample)
    share = (lambda effect, spread=sd: effect * spread / b1 if b1 > 0 and math.isfinite(effect) else math.nan)
    after = (post.dropna(subset=["outcome", "mu_hat", "lap", "entity_num", "period_num"]) if post is not None
             else pd.DataFrame(columns=["lap"]))
    _, se_post, df_post = _beta3(placebo)
    placebo_mde = mde(se_post, df_post, placebo_alpha) if math.isfinite(se_post) and df_post > 0 else math.nan
    sd_post = float(after["lap"].std(ddof=1)) if len(after) > 1 else math.nan
    return pd.DataFrame([
        ("beta3", beta3, "coefficient on c.mu_hat#c.lap (detection, pre-cutoff)"),
        ("se_beta3", se, "its standard error"),
        ("df_r", df_r, "residual degrees of freedom of the detection regression"),
        ("ucb_beta3", upper, f"beta3 + t_(1-{alpha:g}, df_r) x se_beta3: one-sided {1 - alpha:.0%} upper bound"),
        ("mde_beta3", minimum, f"(t_(1-{alpha:g}, df_r) + t_({POWER:g}, df_r)) x se_beta3"),
        ("b1_standalone", b1, "coefficient on mu_hat in outcome ~ mu_hat, same FE and clustering"),
        ("sd_lap", sd, "SD of pre-cutoff LAP on the detection sample"),
        ("sd_lap_within", sd_within, "SD of LAP net of entity and period effects"),
        ("within_share_lap", sd_within / sd if sd and sd > 0 else math.nan, "sd_lap_within / sd_lap"),
        ("lap_gap", gap, "mean LAP of the high-LAP half - mean LAP of the low-LAP half (detection sample)"),
        ("lap_relative_gap", relative_gap, "lap_gap / mean LAP"),
        ("beta3_share", share(beta3), "beta3 x sd_lap / b1_standalone (paper: 37%)"),
        ("ucb_share", share(upper), "ucb_beta3 x sd_lap / b1_standalone"),
        ("mde_share", share(minimum), "mde_beta3 x sd_lap / b1_standalone"),
        ("placebo_mde_beta3", placebo_mde,
         f"(t_(1-{placebo_alpha:g}, df_r) + t_({POWER:g}, df_r)) x se of the post-cutoff beta3"),
        ("sd_lap_post", sd_post, "SD of post-cutoff LAP"),
        ("placebo_mde_share", share(placebo_mde, sd_post), "placebo_mde_beta3 x sd_lap_post / b1_standalone"),
    ], columns=COLUMNS)
