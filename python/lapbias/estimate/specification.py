"""The protocol's regression specification (Steps 3-5), shared by the regressions (estimate/protocol.py) and the
power calculation's standalone regression (estimate/power.py):
    reghdfe y x, absorb(entity_num period_num) cluster(entity_num);
or, with [estimate] cluster = "entity date", cluster(entity_num date_num) (two-way: entity and target date);
a sample with a single entity is one time series (protocol, implementation notes): no fixed effects, Newey-West
standard errors over period_num.
"""

from __future__ import annotations

import pandas as pd

from .reghdfe import RegResult, reghdfe


CLUSTERS = {"entity": ("entity_num",), "entity date": ("entity_num", "date_num")}
"""[estimate] cluster -> the panel's cluster variables."""


def fit(sample: pd.DataFrame, y: str, x: list[str], newey_lag: int,
        cluster: tuple[str, ...] = CLUSTERS["entity"]) -> RegResult:
    """y on x with the protocol's fixed effects and clustering, or the single-series route (module docstring)."""
    if sample["entity_num"].nunique() == 1:
        return reghdfe(sample, y, x, absorb=[], vce="newey", time="period_num", newey_lag=newey_lag)
    return reghdfe(sample, y, x, absorb=["entity_num", "period_num"], vce="cluster", cluster=list(cluster))
