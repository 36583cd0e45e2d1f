"""Estimation: the reghdfe-convention engine on pyfixest and the protocol's regressions (Steps 3-5)."""

from .reghdfe import RegResult, one_sided_p, reghdfe

__all__ = ["RegResult", "one_sided_p", "reghdfe"]
