"""Leak attribution (NumLeak App. N, §6): how much of a date-conditioned signal's truth-correlation runs through
the model's own recall of the series.

Notation (App. N): F = the true series, S = the downstream signal (the transmission prompt's answer, or a user
signal), M = the model's recall of F (Variant A's parsed value), all on the same dates.

Residualization (Eq. 4, the point estimate): regress S on M by OLS with a constant (statsmodels), keep the
residual e, and compare the squared truth-correlations before and after:
    LeakShare = 1 − ρ(e, F)² / ρ(S, F)²  ∈ [0, 1]
(the paper's Eq. 4 and the authors' experiments/53_residualization_variant.py: the share of the signal's explained
truth-variance that goes once the recall is partialled out). When the residual correlates with the truth more
strongly than the signal does (a recall that masks the truth), 1 − ρ(e,F)²/ρ(S,F)² is negative: it is clipped to
0 and the note says so.

Worst-case ceiling (Eq. 3, the authors' factor_leak/forensic.py `leak_upper_bound`): with S = βM + ε (Eq. 1), the
alpha of S is proportional to Cov(S, F) = β Cov(M, F) + Cov(ε, F) (Eq. 2), and the leak part is β Cov(M, F). With S
fully aligned with M (|ρ(S, M)| = 1), the leak share of the alpha is at most
    α_leak,max / α_paper = min(1, |ρ(M, F)| / ρ(S, F)),
which saturates at 1 whenever |ρ(M, F)| ≥ ρ(S, F) (a recall anti-correlated with the truth transmits it through
S = −M just as well, hence |·|). Its stated assumptions, reported beside the number: (i) the recall's variance
matches the truth's (a damped recall loosens the bound, which stays conservative); (ii) the signal is worst-case
aligned with the memorized series; (iii) the residual ε carries no further factor-spanning content. An upper bound
only: it neither establishes nor excludes a leak.
When S is an exact linear function of M (the complete leak: the residual is zero up to float rounding), the
residual's truth-correlation is 0 by definition, not the correlation of rounding noise with F, so LeakShare = 1.
Both need at least 4 dates with S, M and F; the ceiling also needs ρ(S, F) > 0 (the authors' `leak_upper_bound`
takes ρ(S, F) in [0, 1]), LeakShare a ρ(S, F) other than 0; otherwise they are NaN with the reason.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import statsmodels.api as sm

from .metrics import pearson

ASSUMPTIONS = ("(i) the recall's variance matches the truth's; (ii) the signal is worst-case aligned with the "
               "recalled series; (iii) the residual carries no further factor-spanning content")
MIN_DATES = 4
ZERO_RESIDUAL = 1e-9
"""A residual whose range is below this share of the signal's range is rounding noise of an exact fit."""


def attribute(frame: pd.DataFrame) -> dict:
    """`frame` has columns signal (S), recall (M), truth (F), one row per date with all three."""
    frame = frame.dropna(subset=["signal", "recall", "truth"])
    n = len(frame)
    out = {"n_dates": n, "rho_signal_truth": math.nan, "rho_recall_truth": math.nan,
           "rho_signal_recall": math.nan, "slope_signal_on_recall": math.nan, "rho_residual_truth": math.nan,
           "leakshare": math.nan, "ceiling": math.nan, "ceiling_assumptions": ASSUMPTIONS, "note": ""}
    if n < MIN_DATES:
        out["note"] = f"fewer than {MIN_DATES} dates with signal, recall and truth"
        return out
    s, m, f = (frame[c].to_numpy(float) for c in ("signal", "recall", "truth"))
    out["rho_signal_truth"], out["rho_recall_truth"], out["rho_signal_recall"] = pearson(s, f), pearson(m, f), \
        pearson(s, m)
    if np.ptp(m) == 0 or np.ptp(s) == 0:
        out["note"] = "no variation in the signal or the recall"
        return out
    fit = sm.OLS(s, sm.add_constant(m)).fit()
    out["slope_signal_on_recall"] = float(fit.params[1])
    exact = np.ptp(fit.resid) <= ZERO_RESIDUAL * np.ptp(s)
    out["rho_residual_truth"] = 0.0 if exact else pearson(fit.resid, f)
    rho_sf, rho_mf = out["rho_signal_truth"], out["rho_recall_truth"]
    if math.isnan(rho_sf) or rho_sf == 0:
        out["note"] = "rho(S, F) is undefined or 0: there is no truth-correlation to attribute"
        return out
    share = 1.0 - out["rho_residual_truth"] ** 2 / rho_sf ** 2
    out["leakshare"] = min(1.0, max(0.0, share))
    if share < 0:
        out["note"] = f"1 - rho(e,F)^2/rho(S,F)^2 = {share:.3f} clipped to 0: the residual tracks the truth more than S"
    if rho_sf < 0:
        out["note"] = "rho(S, F) is negative: the ceiling (Eq. 3) is not defined"
        return out
    out["ceiling"] = min(1.0, abs(rho_mf) / rho_sf) if not math.isnan(rho_mf) else math.nan
    return out
