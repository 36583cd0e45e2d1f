"""Scale-free estimation: units never matter (docs/contracts.md, "Units never matter").

Min-K% LAP is of order 1e-5..1e-8 (paper Table I: mean 7.3e-6); an absolute pivot tolerance on X'X then drops
`lap` and `c.mu_hat#c.lap` as "collinear". reghdfe avoids this by standardizing every variable before it
partials out the fixed effects and by deciding collinearity on ratios (sergiocorreia/reghdfe, src/reghdfe.mata at
commit 0aa858f, lines 3121 and 3143-3147: norm2 = diag(X'X) before partialling, data divided by its SD; line 2230:
`is_collinear = diag(cross(data, data))' :/ norm2 :<= collinear_tol`, collinear_tol = min(1e-6, tol/10) set in
src/reghdfe.ado line 492; lines 3765-3792: `reghdfe_rmcoll`, a sweep `invsym(xx, 1..K)` of the standardized
partialled X'X in the regressors' order, a zero pivot dropping the regressor). This module mirrors those rules:

1. `power_of_two` scales: y and every variable are divided by a power of two near their largest absolute value
   before interactions are formed (an exact operation in binary floating point, so rescaling by a power of two
   changes no digit), and each design column again by a power of two near its within-FE root mean square before
   pyfixest sees it; coefficients and standard errors are mapped back by s_y / s_j.
2. `collinear_terms`: a regressor is collinear with the fixed effects when its partialled sum of squares is at
   most FE_TOLERANCE times its raw (uncentred) sum of squares, reghdfe's line 2230 with its tolerance formula
   applied to our demeaning tolerance; of the others, in order, a regressor is collinear with the earlier kept
   ones when 1 − R² of its partialled values on theirs is at most RMCOLL_TOLERANCE (the sweep pivot of the
   standardized X'X, reghdfe_rmcoll). Both ratios are unchanged when a variable is multiplied by any constant.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..errors import EstimationError

RMCOLL_TOLERANCE = 1e-12
"""Sweep pivot (1 − R² on the earlier kept regressors, after partialling) at or below which a regressor is
omitted. Stata's invsym() uses an internal relative tolerance that reghdfe does not set; 1e-12 is ~10^4 times the
rounding error of unit-scaled double columns and far below any near-collinearity real data show (R² = 1 − 1e-12)."""


def fe_tolerance(demean_tolerance: float) -> float:
    """reghdfe.ado line 492: collinear_tol = min(1e-6, tolerance / 10)."""
    return min(1e-6, demean_tolerance / 10)


def power_of_two(values: np.ndarray) -> float:
    """2^round(log2(max |v|)) (1 for an all-zero column): dividing by it is exact and brings the column near 1."""
    largest = float(np.max(np.abs(values))) if len(values) else 0.0
    return 1.0 if largest == 0 or not math.isfinite(largest) else 2.0 ** round(math.log2(largest))


def mean_sd(values, ddof: int = 1) -> tuple[float, float]:
    """Mean and SD (`ddof`) of a column, computed on the column divided by its power-of-two scale and multiplied back:
    the same digits at any units (values of 1e300 would overflow the sum of squares, values of 1e-300 underflow it to
    an SD of 0, "constant"). NaN for an empty column (and for the SD of fewer than ddof + 1 values)."""
    array = np.asarray(values, dtype=np.float64)
    if array.size == 0:
        return math.nan, math.nan
    scale = power_of_two(array)
    scaled = array / scale
    sd = float(np.std(scaled, ddof=ddof)) * scale if array.size > ddof else math.nan
    return float(np.mean(scaled)) * scale, sd


def sd(values, ddof: int = 1) -> float:
    """The scale-free SD of `mean_sd`."""
    return mean_sd(values, ddof)[1]


def zscores(values) -> np.ndarray:
    """(x − mean) / SD (ddof = 1) over the non-missing values, at any units (`mean_sd`): exactly the z-scores of
    x / 2^k, so rescaling x changes no digit. Missing values stay missing; fewer than two values or a constant
    column give NaN (0/0; callers say why first)."""
    array = np.asarray(values, dtype=np.float64)
    present = array[~np.isnan(array)]
    mean, spread = mean_sd(present)
    if not spread > 0:
        return np.full(array.shape, np.nan)
    scale = power_of_two(present)
    return (array / scale - mean / scale) / (spread / scale)


def check_finite(frame: pd.DataFrame, columns: list[str]) -> None:
    """Regression variables must be numbers and finite: name the variable, the row and the value otherwise."""
    for column in columns:
        values = frame[column]
        if not (pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values)):
            example = values.dropna().iloc[0] if values.notna().any() else None
            raise EstimationError(f"variable {column} is not numeric (dtype {values.dtype}, e.g. {example!r}): "
                                  "regression variables must be numbers, e.g. 0.25")
        bad = ~np.isfinite(values.to_numpy(np.float64))
        if bad.any():
            row = values.index[np.argmax(bad)]
            raise EstimationError(f"variable {column} has {int(bad.sum())} infinite value(s) (first: row {row}, "
                                  f"{values.loc[row]}); regression variables must be finite, e.g. 0.25")


def partial_out(matrix: np.ndarray, codes: np.ndarray | None, tolerance: float) -> np.ndarray:
    """Residuals of each column on the fixed effects (pyfixest's alternating-projections demeaner), or on a
    constant when there are none."""
    if codes is None:
        return matrix - matrix.mean(axis=0)
    from pyfixest.core.demean import demean

    result, converged = demean(np.ascontiguousarray(matrix), codes, np.ones(len(matrix)), tol=tolerance,
                               maxiter=100_000)
    if not converged:
        raise EstimationError("demeaning by the fixed effects did not converge in 100,000 iterations")
    return result


def collinear_terms(raw: np.ndarray, within: np.ndarray, names: list[str], fe_tol: float,
                    absorbed: str) -> tuple[list[int], dict[str, str]]:
    """Indexes of the regressors kept and, for each omitted one, why (module docstring, rules 2).

    raw: the scaled design (N × K); within: the same partialled out. `absorbed` names what was partialled out
    ("the fixed effects" or "the constant") for the message."""
    norm2 = np.einsum("ij,ij->j", raw, raw)
    within_ss = np.einsum("ij,ij->j", within, within)
    omitted, kept, basis = {}, [], []
    for j, name in enumerate(names):
        if norm2[j] == 0 or within_ss[j] <= fe_tol * norm2[j]:
            omitted[name] = f"collinear with {absorbed}"
            continue
        residual = within[:, j] / math.sqrt(within_ss[j])
        for _ in range(2):  # Gram-Schmidt twice: orthogonal to rounding error (Giraud et al. 2005)
            for q in basis:
                residual = residual - (q @ residual) * q
        pivot = float(residual @ residual)
        if pivot <= RMCOLL_TOLERANCE:
            omitted[name] = "collinear with the other regressors"
            continue
        kept.append(j)
        basis.append(residual / math.sqrt(pivot))
    return kept, omitted
