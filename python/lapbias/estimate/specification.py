"""The protocol's regression specification (Steps 3-5), shared by the regressions (estimate/protocol.py) and the
power calculation's standalone regression (estimate/power.py):
    reghdfe y x, absorb(entity_num period_num) cluster(entity_num);
or, with [estimate] cluster = "entity date", cluster(entity_num date_num) (two-way: entity and target date);
a sample with a single entity is one time series (protocol, implementation notes): no fixed effects, Newey-West
standard errors over period_num.
"""

from __future__ import annotations

import pandas as pd

from ..errors import ConfigError
from .reghdfe import RegResult, reghdfe


CLUSTERS = {"entity": ("entity_num",), "entity date": ("entity_num", "date_num")}
"""[estimate] cluster -> the panel's cluster variables."""


def fit(sample: pd.DataFrame, y: str, x: list[str], newey_lag: int,
        cluster: tuple[str, ...] = CLUSTERS["entity"]) -> RegResult:
    """y on x with the protocol's fixed effects and clustering, or the single-series route (module docstring)."""
    if sample["entity_num"].nunique() == 1:
        return reghdfe(sample, y, x, absorb=[], vce="newey", time="period_num", newey_lag=newey_lag)
    return reghdfe(sample, y, x, absorb=["entity_num", "period_num"], vce="cluster", cluster=list(cluster))


def check_newey_lag(newey_lag: int, panel: pd.DataFrame) -> None:
    """[estimate] newey_lag on a single time series: the lag L must be below the number of observations T of every
    series it is computed on -- the pre- and post-cutoff samples and their high- and low-LAP halves (Step 3's
    validation regressions). At L >= T the Bartlett weights 1 - j/(L + 1) weight every pair of observations, and as L
    grows they approach 1, where the HAC variance of OLS scores (which sum to zero) is 0: the standard errors
    collapse. ConfigError naming the series lengths and the largest lag that fits; -1 (the plug-in rule, below T)
    and a panel of several entities (clustered, no lag) pass."""
    if newey_lag < 0 or panel["entity_num"].nunique() != 1:
        return
    lengths = {}
    for name, post in (("pre-cutoff", 0), ("post-cutoff", 1)):
        sample = panel[panel["post"] == post]
        if len(sample):
            halves = [n for n in ((sample["high_lap"] == flag).sum() for flag in (1, 0)) if n]
            lengths[name] = (len(sample), int(min(halves, default=len(sample))))
    shortest = min((half for _, half in lengths.values()), default=newey_lag + 1)
    if newey_lag >= shortest:
        series = ", ".join(f"{n} {name} observations ({half} in the shorter LAP half)"
                           for name, (n, half) in lengths.items())
        raise ConfigError(f"[estimate] newey_lag = {newey_lag} is at or past the length of a series it is computed on: "
                          f"the panel is one entity's time series (Newey-West standard errors), with {series}; a lag "
                          "must be below the number of observations, else the standard errors collapse towards 0. "
                          f"Set newey_lag below {shortest}, or -1 for the plug-in rule floor(4 (T/100)^(2/9))")
