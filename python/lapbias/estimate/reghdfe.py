"""`reghdfe(df, y, x, absorb, vce, cluster)`: reghdfe's specification and reporting on top of pyfixest.

pyfixest (feols) does the demeaning, the solve and the sandwich (its defaults ssc(k_adj=True,
k_fixef="nonnested", G_adj=True, G_df="min") are reghdfe's small-sample factors for a connected graph of two FEs).
On top, this module does what reghdfe does around the solve:
- the absorbed degrees of freedom df_a and df_a_nested by reghdfe's rules (`absorbed_dof`: FEs nested in a
  cluster variable, pairwise mobility groups), and the variance rescaled to reghdfe's small-sample factor with
  them, so the SEs are reghdfe's also on disconnected FE graphs, with three or more FEs, and with nesting;
- listwise deletion of rows with a missing y, x, absorb or cluster value (counted: N_full − N_used);
- singletons dropped iteratively (pyfixest fixef_rm="singleton"; counted as num_singletons);
- scale-free estimation (`scaling`): y and every regressor (after forming interactions) are divided by a power
  of two near their size before pyfixest and the estimates mapped back, so every t statistic is invariant to the
  units of any variable; collinearity is decided after scaling by reghdfe's relative rules (`collinear_terms`):
  a regressor collinear with the fixed effects, or with the regressors before it, is omitted and reported with
  its reason, the sample unchanged;
- residual degrees of freedom df_r = N − K − df_a, and with clustering min(N − K − df_a, G − 1); two-sided p-values
  and 95% confidence intervals from the t distribution with df_r (reghdfe's convention);
- Stata term names (`c.mu_hat#c.lap` for an interaction of continuous variables) and reghdfe's `_cons`
  (ybar − xbar'b with the FE absorbed, see `_constant`).
A single time series (absorb=[]) with vce="newey" uses Stata's `newey`: Bartlett-kernel HAC with the N/(N−k)
correction (statsmodels), lag floor(4(T/100)^(2/9)) by default (Newey and West 1994) or as given.
"""

from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from ..errors import EstimationError
from .scaling import RMCOLL_TOLERANCE, check_finite, collinear_terms, fe_tolerance, partial_out, power_of_two

FEW_CLUSTERS = 20
DEMEAN_TOLERANCE = 1e-10
"""Convergence tolerance of the alternating-projections demeaning. pyfixest's default (1e-6) moves standard errors
in the 7th digit between runs; reghdfe's default is 1e-8; 1e-10 keeps reruns equal to ~1e-10 relative."""
PYFIXEST_COLLIN_TOL = RMCOLL_TOLERANCE / 100
"""pyfixest's own (absolute) pivot check on the scaled design, whose within sums of squares are ~N: below our
relative rule, so pyfixest never drops what `collinear_terms` kept."""
FACTOR = re.compile(r"^(?:c\.)?([A-Za-z_]\w*)$")
RESULT_COLUMNS = ["model", "term", "coef", "se", "t", "p", "p_one_sided", "ci_low", "ci_high", "N", "N_clust",
                  "df_r", "r2", "r2_within", "num_singletons", "engine"]


CONSTANT = "_cons"
"""reghdfe's name for the constant's row (`_constant`); no variable may carry it."""


class AllOmitted(EstimationError):
    """Every regressor is collinear (with the fixed effects or each other): nothing to estimate. reghdfe still posts
    the fit, which this carries: N (after singletons), N_clust, df_r (K = 0), num_singletons, N_dropped_missing and
    cons, reghdfe's _cons by its regression through the means (reghdfe.mata reghdfe_extend_b_and_xx: b0 = mean(y) -
    mean(x)'b, here mean(y) on the estimation sample)."""

    def __init__(self, message: str, omitted: dict[str, str], **fit):
        super().__init__(message)
        self.omitted = omitted
        self.fit = fit


def one_sided_p(t: float, p_two: float) -> float:
    """Protocol Step 4: p for coef > 0 is p_two/2 if t > 0, else 1 − p_two/2."""
    if math.isnan(t) or math.isnan(p_two):
        return math.nan
    return p_two / 2 if t > 0 else 1 - p_two / 2


def newey_default_lag(n_periods: int) -> int:
    """floor(4 (T/100)^(2/9)), the Newey-West (1994) plug-in rule (Stata's `newey` has no default lag)."""
    return int(math.floor(4 * (n_periods / 100) ** (2 / 9)))


@dataclass
class RegResult:
    """reghdfe's e() results under their reghdfe names, plus the coefficient table."""

    coef: pd.Series
    se: pd.Series
    t: pd.Series
    p: pd.Series
    ci_low: pd.Series
    ci_high: pd.Series
    N: int
    N_full: int
    num_singletons: int
    N_dropped_missing: int
    df_r: int
    df_m: int
    N_clust: int | None
    r2: float
    r2_within: float
    r2_a: float
    rmse: float
    vce: str
    absorb: list[str]
    df_a: int = 0
    """Absorbed levels not nested in a cluster variable, net of redundant ones (mobility groups)."""
    df_a_nested: int = 0
    """Levels of absorbed FEs nested in a cluster variable (redundant with the cluster-robust variance)."""
    r2_a_within: float = math.nan
    F: float = math.nan
    omitted: list[str] = field(default_factory=list)
    omitted_reasons: dict[str, str] = field(default_factory=dict)
    """Why each omitted term was dropped: "collinear with the fixed effects" or "... with the other regressors"."""
    warnings: list[str] = field(default_factory=list)

    def tidy(self) -> pd.DataFrame:
        return pd.DataFrame({"coef": self.coef, "se": self.se, "t": self.t, "p": self.p,
                             "ci_low": self.ci_low, "ci_high": self.ci_high})

    def to_rows(self, model: str, engine: str = "python") -> pd.DataFrame:
        """The coefficient table in the results schema of docs/contracts.md, one row per term; an omitted term
        is a row with empty estimates (reghdfe's `o.` line)."""
        rows = []
        terms = [t for t in self.coef.index if t != "_cons"] + self.omitted + [t for t in self.coef.index
                                                                               if t == "_cons"]
        for term in terms:
            if term in self.omitted:
                rows.append({"model": model, "term": term, "N": self.N, "df_r": self.df_r, "r2": self.r2,
                             "N_clust": self.N_clust if self.N_clust is not None else np.nan,
                             "r2_within": self.r2_within, "num_singletons": self.num_singletons, "engine": engine})
                continue
            rows.append({
                "model": model, "term": term, "coef": self.coef[term], "se": self.se[term], "t": self.t[term],
                "p": self.p[term], "p_one_sided": one_sided_p(self.t[term], self.p[term]),
                "ci_low": self.ci_low[term], "ci_high": self.ci_high[term], "N": self.N,
                "N_clust": self.N_clust if self.N_clust is not None else np.nan, "df_r": self.df_r,
                "r2": self.r2, "r2_within": self.r2_within, "num_singletons": self.num_singletons, "engine": engine,
            })
        return pd.DataFrame(rows, columns=RESULT_COLUMNS)


def term_variables(term: str) -> list[str]:
    """The variables of a term: `x`, or the factors of a Stata interaction of continuous variables
    `c.a#c.b[#c.c...]` (every factor of an interaction with its `c.` prefix, as Stata needs for continuous ones)."""
    parts = term.split("#")
    matches = [FACTOR.match(p) for p in parts]
    if not all(matches):
        raise EstimationError(f"term {term!r} is not a variable name or an interaction such as c.mu_hat#c.lap")
    bare = [p for p in parts if not p.startswith("c.")]
    if len(parts) > 1 and bare:
        # Stata reads a variable without c. in an interaction as a factor (i.b: one dummy per level); treating it
        # as continuous would silently estimate another model than reghdfe does.
        raise EstimationError(f"term {term!r}: {bare[0]!r} has no c. prefix, which Stata reads as a factor variable "
                              f"(i.{FACTOR.match(bare[0]).group(1)}); factor variables are not supported: write "
                              f"c.{FACTOR.match(bare[0]).group(1)} for a continuous interaction")
    return [m.group(1) for m in matches]


def _design(df: pd.DataFrame, x: list[str], scales: dict[str, float]) -> tuple[pd.DataFrame, dict[str, str],
                                                                         dict[str, float]]:
    """Columns for each term: a plain variable, or the product of the factors of an interaction, named as
    Stata names it (c.a#c.b); built from the variables divided by their `scales`, and the scale of each column
    (the product of its factors' scales)."""
    design, names, column_scales = pd.DataFrame(index=df.index), {}, {}
    for term in x:
        factors = term_variables(term)
        column = "x__" + "__X__".join(factors)  # never the name of y, an absorbed or a cluster variable
        design[column] = np.prod([df[f].to_numpy(np.float64) / scales[f] for f in factors], axis=0)
        names[column] = factors[0] if len(factors) == 1 else "#".join(f"c.{f}" for f in factors)
        column_scales[column] = float(np.prod([scales[f] for f in factors]))
    return design, names, column_scales


def _check_columns(df: pd.DataFrame, needed: list[str]) -> None:
    missing = [c for c in needed if c not in df.columns]
    if missing:
        raise EstimationError(f"variable(s) {missing} not found; the data has {list(df.columns)}")


def reghdfe(df: pd.DataFrame, y: str, x: list[str], absorb: list[str] | None = None, vce: str = "unadjusted",
            cluster: list[str] | None = None, newey_lag: int | None = None, time: str | None = None) -> RegResult:
    """Estimate y on x absorbing the fixed effects in `absorb`, as `reghdfe y x, absorb(...) vce(...)`.

    Scale-free (lapbias.estimate.scaling): the estimates are those on y / s_y and x_j / s_j mapped back, so a t
    statistic does not change when any variable is multiplied by a constant; omitted regressors are listed in
    `omitted` with their reason in `omitted_reasons`, as reghdfe's notes."""
    absorb, cluster = list(absorb or []), list(cluster or [])
    if vce not in ("unadjusted", "robust", "cluster", "newey"):
        raise EstimationError(f"vce({vce}) is not supported; use unadjusted, robust, cluster or newey")
    if vce == "cluster" and not cluster:
        raise EstimationError("vce(cluster) needs at least one cluster variable")
    variables = list(dict.fromkeys(v for term in x for v in term_variables(term)))
    _check_columns(df, [y, *variables, *absorb, *cluster, *([time] if time else [])])
    repeated = sorted({term for term in x if x.count(term) > 1})
    if repeated:
        raise EstimationError(f"regressor(s) {repeated} given more than once; give each term once")
    for option, names in (("absorb", absorb), ("cluster", cluster)):  # pyfixest's compiled code aborts on these
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise EstimationError(f"{option}({' '.join(names)}): {', '.join(twice)} given more than once; name each "
                                  f"{'fixed effect' if option == 'absorb' else 'cluster variable'} once")
    if CONSTANT in [y, *variables]:
        raise EstimationError(f"a variable named {CONSTANT} cannot enter the regression: it is the name of the "
                              "constant's row in the results (reserved in Stata too); rename the variable")
    if y in variables:
        raise EstimationError(f"the dependent variable {y} is also a regressor; a variable cannot explain itself")
    keep = [y, *variables, *absorb, *cluster, *([time] if time else [])]
    data = df[list(dict.fromkeys(keep))].copy()
    n_full = len(data)
    data = data.dropna()
    dropped_missing = n_full - len(data)
    if data.empty:
        raise EstimationError(f"no observations left for {y} on {x}: every row has a missing value")
    check_finite(data, list(dict.fromkeys([y, *variables])))
    scales = {v: power_of_two(data[v].to_numpy(np.float64)) for v in dict.fromkeys([y, *variables])}
    design, names, column_scales = _design(data, x, scales)
    frame = pd.concat([data[list(dict.fromkeys([*absorb, *cluster, *([time] if time else [])]))]
                       .reset_index(drop=True), design.reset_index(drop=True)], axis=1)
    frame[y] = data[y].to_numpy(np.float64) / scales[y]
    if vce == "newey":
        return _newey(frame, y, list(design.columns), names, column_scales, scales[y], time, newey_lag, n_full,
                      dropped_missing)
    frame, num_singletons = drop_singletons(frame, absorb)
    if frame.empty:
        raise EstimationError(f"no observations left for {y} on {x}: all {num_singletons} are singletons "
                              f"(alone in a level of {' or '.join(absorb)}) and reghdfe drops them")
    kept, omitted, frame = _scale_columns(frame, y, list(design.columns), names, absorb)
    for column in kept:
        column_scales[column] *= frame.attrs["within_scale"][column]
    formula = f"{y} ~ {' + '.join(kept) or '1'}" + (f" | {' + '.join(absorb)}" if absorb else "")
    df_a, df_a_nested = absorbed_dof(frame, absorb, cluster if vce == "cluster" else [])
    k = len(kept)
    n_clusters = int(min(frame[c].nunique() for c in cluster)) if vce == "cluster" else None
    if n_clusters is not None and n_clusters < 2:
        raise EstimationError(f"vce(cluster {' '.join(cluster)}) with 1 cluster: cluster-robust standard errors "
                              "need at least 2 clusters (use vce(robust), or a panel with more entities)")
    if len(frame) - k - (df_a + df_a_nested if absorb else 1) <= 0:
        absorbed = f"{df_a + df_a_nested} absorbed level(s)" if absorb else "a constant"
        raise EstimationError(f"N = {len(frame)} observation(s) for K = {k} regressor(s) and {absorbed}: no "
                              f"residual degrees of freedom for {y} on {x}")
    if not kept:
        levels = df_a + df_a_nested if absorb else 1  # reghdfe's df_a; the constant without absorbed FE
        df_r = min(len(frame) - (df_a if absorb else 1), n_clusters - 1) if vce == "cluster" else len(frame) - levels
        raise AllOmitted(f"every regressor of {y} on {x} is omitted: "
                         + "; ".join(f"{t} {why}" for t, why in omitted.items()), omitted, N=len(frame),
                         N_clust=n_clusters, df_r=df_r, num_singletons=num_singletons,
                         N_dropped_missing=dropped_missing, cons=float(frame[y].mean()) * scales[y])
    # reghdfe fixes a multiway VCV in its standardized units (partial_out standardizes y and each regressor by its
    # SD, N - 1, floored at 1e-3: reghdfe.mata compute_stdevs; the constant's factor is 1 / SD(y)), so each term's
    # factor from the scaled estimates here to those units: b_std = b_here x (s_y / s_j) x SD(x_j) / SD(y)
    def raw_sd(column: str, scale: float) -> float:
        return max(float(np.std(frame[column].to_numpy(np.float64), ddof=1)) * scale, STANDARDIZE_FLOOR)

    sd_y = raw_sd(y, scales[y])
    units = {**{names[c]: scales[y] / column_scales[c] * raw_sd(c, column_scales[c]) / sd_y for c in kept},
             CONSTANT: scales[y] / sd_y}
    result = _feols(frame, y, kept, names, absorb, vce, cluster, formula, df_a, df_a_nested, n_clusters, units)
    result.N_full, result.num_singletons, result.N_dropped_missing = n_full, num_singletons, dropped_missing
    result.omitted, result.omitted_reasons = list(omitted), omitted
    return _unscaled(result, {names[c]: column_scales[c] for c in kept}, scales[y], y)


def _scale_columns(frame: pd.DataFrame, y: str, columns: list[str], names: dict[str, str], absorb: list[str]
                   ) -> tuple[list[str], dict[str, str], pd.DataFrame]:
    """Decide collinearity after scaling (scaling.collinear_terms), refuse an outcome without within variation,
    and divide each kept column by a power of two near its within root mean square (frame.attrs["within_scale"])."""
    codes = (np.column_stack([pd.factorize(frame[fe])[0] for fe in absorb]).astype(np.uint64) if absorb else None)
    raw = frame[[y, *columns]].to_numpy(np.float64)
    within = partial_out(raw, codes, DEMEAN_TOLERANCE)
    absorbed = "the fixed effects" if absorb else "the constant"
    y_ss, y_norm2 = float(within[:, 0] @ within[:, 0]), float(raw[:, 0] @ raw[:, 0])
    if y_norm2 == 0 or y_ss <= fe_tolerance(DEMEAN_TOLERANCE) * y_norm2:
        where = " within the fixed effects (they explain it perfectly)" if absorb else ""
        raise EstimationError(f"the outcome {y} is constant{where} in the {len(frame)} observation(s) used: nothing "
                              f"is left to regress on {list(names.values())}")
    kept, omitted = collinear_terms(raw[:, 1:], within[:, 1:], [names[c] for c in columns],
                                    fe_tolerance(DEMEAN_TOLERANCE), absorbed)
    kept_columns = [columns[j] for j in kept]
    frame = frame.drop(columns=[c for c in columns if c not in kept_columns])
    within_scale = {}
    for j, column in zip(kept, kept_columns):
        within_scale[column] = power_of_two(np.array([math.sqrt(within[:, j + 1] @ within[:, j + 1] / len(frame))]))
        frame[column] = frame[column] / within_scale[column]
    frame.attrs["within_scale"] = within_scale
    return kept_columns, omitted, frame


def _feols(frame: pd.DataFrame, y: str, kept: list[str], names: dict[str, str], absorb: list[str], vce: str,
           cluster: list[str], formula: str, df_a: int, df_a_nested: int, n_clusters: int | None,
           units: dict[str, float]) -> RegResult:
    """pyfixest on the scaled, full-rank design, with reghdfe's degrees of freedom and _cons (module docstring);
    `units`: each term's factor to reghdfe's standardized units, in which a multiway VCV is fixed (fix_psd)."""
    import pyfixest as pf

    vcov = {"unadjusted": "iid", "robust": "hetero"}.get(vce) or {"CRV1": "+".join(cluster)}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = pf.feols(formula, data=frame, vcov=vcov, fixef_rm="none", collin_tol=PYFIXEST_COLLIN_TOL,
                           demeaner=pf.MapDemeaner(fixef_tol=DEMEAN_TOLERANCE, fixef_maxiter=100_000))
    except Exception as err:  # pyfixest raises plain exceptions for degenerate designs
        reason = (str(err).strip().splitlines() or [""])[0] or (
            f"{type(err).__name__} without a reason; the usual cause is that every regressor is constant or "
            "collinear with the absorbed fixed effects")
        raise EstimationError(f"cannot estimate {formula}: {reason}") from None
    n_used = int(fit._N)
    coef = fit.coef().rename(index=names)
    if absorb:
        coef = coef.drop(index="Intercept", errors="ignore")
    else:
        coef = coef.rename(index={"Intercept": "_cons"})
        df_a = 1  # the constant
    k = len(coef) - (0 if absorb else 1)
    df_r = n_used - k - df_a - df_a_nested
    notes = []
    if vce == "cluster":
        df_r = min(n_used - k - df_a, n_clusters - 1)
        if n_clusters < FEW_CLUSTERS:
            notes.append(f"only {n_clusters} clusters (< {FEW_CLUSTERS}): cluster-robust inference is unreliable")
    if df_r <= 0:
        raise EstimationError(f"no residual degrees of freedom for {formula} (N = {n_used}, K = {k}, "
                              f"absorbed = {df_a + df_a_nested})")
    # pyfixest's small-sample factor counts every absorbed level but one per extra FE (k_fixef "nonnested");
    # reghdfe's counts df_a above (mobility groups, nesting): q_iid = q_robust ∝ 1/(N − K − df_a) and
    # q_cluster ∝ 1/(N − nested_adj − K − df_a) (reghdfe.mata lines 3898, 3941, 4043). Same form, so the
    # variance is rescaled by the ratio of the two denominators.
    scale = 1.0
    if absorb:
        nested_adj = 1 if vce == "cluster" and df_a_nested > 0 else 0
        scale = (n_used - int(fit._df_k)) / (n_used - nested_adj - k - df_a)
    se = fit.se().rename(index=names).rename(index={"Intercept": "_cons"}).reindex(coef.index) * math.sqrt(scale)
    slopes = coef.index.drop("_cons", errors="ignore")
    vcov = pd.DataFrame(np.asarray(fit._vcov) * scale, index=fit.coef().rename(index=names).index,
                        columns=fit.coef().rename(index=names).index).loc[slopes, slopes]
    first_slope_variance = float(vcov.iloc[0, 0]) if len(slopes) else math.nan
    if vce == "cluster" and len(cluster) > 1 and len(slopes):
        # reghdfe_fix_psd (report_constant): the whole VCV's negative eigenvalues set to zero, the slopes' block
        # then fixed on its own; with absorbed FE the constant's variance is _constant's, fixed the same way
        fixed, required = fix_psd(vcov.to_numpy(), [units[t] for t in vcov.index])
        if not absorb and "_cons" in se.index:
            whole = np.asarray(fit._vcov) * scale
            terms = list(fit.coef().rename(index=names).rename(index={"Intercept": "_cons"}).index)
            position = terms.index("_cons")
            whole_fixed, whole_required = fix_psd(whole, [units[t] for t in terms])
            required |= whole_required
            se.loc["_cons"] = math.sqrt(max(whole_fixed[position, position], 0.0))
        if required:
            vcov = pd.DataFrame(fixed, index=vcov.index, columns=vcov.columns)
            se.loc[slopes] = np.sqrt(np.diag(fixed))
            notes.append(PSD_NOTE)
    try:
        f_stat = float(coef[slopes] @ np.linalg.solve(vcov.to_numpy(), coef[slopes])) / len(slopes) if len(slopes) else math.nan
    except np.linalg.LinAlgError:  # reghdfe.mata line 3704: "missing F statistic; ... too few clusters"
        f_stat = math.nan
        notes.append(f"missing F statistic: the variance matrix is singular ({n_clusters} clusters for "
                     f"{len(slopes)} regressors)" if n_clusters else "missing F statistic: singular variance matrix")
    if absorb:
        cons, cons_se, cons_fixed = _constant(fit, frame, y, [c for c in kept if names[c] in slopes], vce, cluster,
                                              first_slope_variance, [units[names[c]] for c in kept
                                                                     if names[c] in slopes] + [units[CONSTANT]])
        if cons_fixed and not any(note.startswith("the multiway VCV") for note in notes):
            notes.append(PSD_NOTE)
        coef, se = pd.concat([coef, pd.Series({"_cons": cons})]), pd.concat([se, pd.Series({"_cons": cons_se})])
    rss = float(np.sum(np.asarray(fit._u_hat) ** 2))
    # RMSE and adjusted R²: N − df_m − df_a − df_a_nested (reghdfe.mata line 3742; reproduces reghdfe's printed
    # RMSE 1.3893 and adj. R² .6372 with absorb(f1 f2) cluster(f1)).
    dof_resid = n_used - k - (df_a + df_a_nested if absorb else 1)
    if dof_resid <= 0:  # saturated: every observation spent on a coefficient or an absorbed level
        raise EstimationError(f"no residual degrees of freedom for {formula} (N = {n_used}, K = {k}, absorbed = "
                              f"{df_a + df_a_nested}, of which {df_a_nested} nested in the clusters)")
    r2 = float(fit._r2)
    r2_within = float(fit._r2_within) if absorb else r2
    return _finish(coef, se, df_r, N=n_used, N_full=n_used, num_singletons=0, N_dropped_missing=0, df_m=k,
                   N_clust=n_clusters, r2=r2, r2_within=r2_within, r2_a=1 - (1 - r2) * (n_used - 1) / dof_resid,
                   rmse=math.sqrt(rss / dof_resid), vce=vce, absorb=absorb, warnings=notes,
                   df_a=df_a if absorb else 0, df_a_nested=df_a_nested, F=f_stat,
                   r2_a_within=1 - (1 - r2_within) * (n_used - 1) / dof_resid)


def _finish(coef: pd.Series, se: pd.Series, df_r: int, **fields) -> RegResult:
    """t, two-sided p and 95% CI from the t distribution with df_r (reghdfe's convention). A standard error of 0
    (a degenerate variance, e.g. a regressor constant within every cluster) gives a missing t and p, as Stata's
    ".", never an infinite t that would read as significant."""
    t = (coef / se).where((se > 0) & np.isfinite(se))
    p = pd.Series(2 * stats.t.sf(np.abs(t), df_r), index=coef.index)
    q = stats.t.ppf(0.975, df_r)
    return RegResult(coef=coef, se=se, t=t, p=p, ci_low=coef - q * se, ci_high=coef + q * se, df_r=int(df_r),
                     **fields)


def _unscaled(result: RegResult, term_scales: dict[str, float], y_scale: float, y: str) -> RegResult:
    """Map estimates on y / s_y and x_j / s_j back to the data's units: b_j s_y / s_j (se alike), _cons s_y,
    RMSE s_y; t, p, R² and F are unchanged. A result too large for a double names the outcome."""
    factor = pd.Series({term: y_scale / term_scales.get(term, 1.0) for term in result.coef.index})
    for name in ("coef", "se", "ci_low", "ci_high"):
        setattr(result, name, getattr(result, name) * factor)
    result.rmse *= y_scale
    values = np.concatenate([result.coef.to_numpy(), result.se.to_numpy(), [result.rmse]])
    if np.isinf(values).any():
        raise EstimationError(f"estimates overflow a double in the units of the outcome {y} (largest |{y}| ="
                              f" {y_scale:.3g} × O(1)): divide {y} by a power of ten, e.g. express it in millions")
    return result


def _constant(fit, frame: pd.DataFrame, y: str, columns: list[str], vce: str, cluster: list[str],
              first_slope_variance: float, units: list[float]) -> tuple[float, float, bool]:
    """reghdfe's _cons with absorbed FE: ybar − xbar'b on the estimation sample, its standard error from the
    design with the sample means added back, [X̃ + xbar, 1], under the slopes' own small-sample factor (checked
    against reghdfe's printed _cons .842222 (.0694639) and .8156588 (.064596))."""
    b = fit.coef().to_numpy()[: len(columns)]
    xbar = frame[columns].mean().to_numpy()
    cons = float(frame[y].mean() - xbar @ b)
    if not columns:
        return cons, math.nan
    u = np.asarray(fit._u_hat).ravel()
    augmented = np.column_stack([np.asarray(fit._X)[:, : len(columns)] + xbar, np.ones(len(u))])
    bread = np.linalg.inv(augmented.T @ augmented)
    if vce == "unadjusted":
        meat = augmented.T @ augmented
    elif vce == "robust":
        meat = (augmented * u[:, None] ** 2).T @ augmented
    else:
        meat = _cluster_meat(augmented * u[:, None], [frame[c] for c in cluster])
    unscaled = bread @ meat @ bread
    scale = first_slope_variance / unscaled[0, 0]
    variance = unscaled * scale
    fixed = False
    if len(cluster) > 1:  # reghdfe fixes the whole VCV, _cons included (reghdfe.mata reghdfe_fix_psd)
        variance, fixed = fix_psd(variance, units)
    return cons, float(math.sqrt(max(variance[-1, -1], 0.0))), fixed


PSD_NOTE = ("the multiway VCV was not positive semi-definite; the Cameron, Gelbach and Miller adjustment was applied "
            "(reghdfe's warning)")
STANDARDIZE_FLOOR = 1e-3
"""reghdfe's floor of a standardizing SD (reghdfe.mata compute_stdevs: colmax(stdevs, 1e-3))."""


def fix_psd(variance: np.ndarray, units: list[float] | None = None) -> tuple[np.ndarray, bool]:
    """(V with its negative eigenvalues set to zero, whether any was negative): the Cameron, Gelbach and Miller
    (2011) adjustment reghdfe applies to a multiway VCV (reghdfe.mata, reghdfe_fix_psd: V = U diag(max(lambda, 0))
    U'), which the inclusion-exclusion sum V_1 + V_2 - V_12 need not be; written here because pyfixest returns the
    sum unadjusted. The eigenvalues of V depend on the units of its variables, so V is fixed in the units reghdfe
    fixes it in, its standardized ones: D V D with D = diag(`units`), each term's factor to them, then mapped back."""
    d = np.ones(len(variance)) if units is None else np.asarray(units, dtype=np.float64)
    symmetric = (variance + variance.T) / 2 * np.outer(d, d)
    values, vectors = np.linalg.eigh(symmetric)
    if values.min() >= 0:
        return symmetric / np.outer(d, d), False
    return (vectors * np.clip(values, 0, None)) @ vectors.T / np.outer(d, d), True


def _cluster_meat(scores: np.ndarray, clusters: list[pd.Series]) -> np.ndarray:
    """Sum over clusters of s_g s_g'; with several cluster variables, Cameron-Gelbach-Miller inclusion-exclusion
    over every non-empty subset of them (clusters of a subset = the intersections of its variables)."""
    from itertools import combinations

    codes = [pd.factorize(c)[0].astype(np.int64) for c in clusters]
    meat = np.zeros((scores.shape[1], scores.shape[1]))
    for size in range(1, len(codes) + 1):
        for subset in combinations(codes, size):
            group = pd.factorize(pd.MultiIndex.from_arrays(subset))[0] if size > 1 else subset[0]
            sums = np.stack([np.bincount(group, weights=scores[:, j]) for j in range(scores.shape[1])], axis=1)
            meat += (-1) ** (size + 1) * sums.T @ sums
    return meat


def drop_singletons(frame: pd.DataFrame, absorb: list[str]) -> tuple[pd.DataFrame, int]:
    """Drop observations alone in a level of any absorbed FE, repeatedly until none is left (reghdfe's
    default: singletons carry no information and overstate precision; Correia 2015)."""
    if not absorb:
        return frame, 0
    codes = [pd.factorize(frame[fe])[0] for fe in absorb]
    keep = np.ones(len(frame), dtype=bool)
    while True:
        alone = np.zeros(len(frame), dtype=bool)
        for code in codes:
            counts = np.bincount(code[keep], minlength=code.max() + 1)
            alone |= keep & (counts[code] == 1)
        if not alone.any():
            break
        keep &= ~alone
    return (frame if keep.all() else frame.loc[keep]).reset_index(drop=True), int((~keep).sum())


def absorbed_dof(frame: pd.DataFrame, absorb: list[str], cluster: list[str]) -> tuple[int, int]:
    """(df_a, df_a_nested) by reghdfe's default rules (reghdfe.mata estimate_dof, dofadjustments "all").

    An FE nested in a cluster variable is redundant with the cluster-robust variance: its levels go to
    df_a_nested, not df_a (dof_update_nested). Of the other FEs e_1, e_2, ... (in absorb order), each loses M_j
    redundant levels: M_1 = 1 if some FE is nested, else 0 (lines 4240-4257); for j >= 2, M_j = the largest number
    of mobility groups (connected components of the bipartite graph) between e_j and any earlier e_i, at least
    1 (dof_update_mobility_group, "pairwise"). With two FEs this is exact; beyond two it is reghdfe's count.
    """
    codes = {name: pd.factorize(frame[name])[0].astype(np.int64) for name in dict.fromkeys([*absorb, *cluster])}
    levels = {name: int(codes[name].max()) + 1 for name in absorb}
    nested = [fe for fe in absorb if any(_nested(codes[fe], levels[fe], codes[c]) for c in cluster)]
    others = [fe for fe in absorb if fe not in nested]
    df_a_nested = sum(levels[fe] for fe in nested)
    df_a = 0
    for j, fe in enumerate(others):
        redundant = (1 if nested else 0) if j == 0 else max(
            [1, *(mobility_groups(codes[earlier], codes[fe]) for earlier in others[:j])])
        df_a += levels[fe] - redundant
    return df_a, df_a_nested


def mobility_groups(first: np.ndarray, second: np.ndarray) -> int:
    """Connected components of the bipartite graph whose edges are the observed (first, second) level pairs."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    n1, n2 = int(first.max()) + 1, int(second.max()) + 1
    graph = coo_matrix((np.ones(len(first)), (first, n1 + second)), shape=(n1 + n2, n1 + n2))
    return int(connected_components(graph, directed=False)[0])


def _nested(fe: np.ndarray, levels: int, cluster: np.ndarray) -> bool:
    """True when every level of the FE lies within one cluster (the cluster code is constant on each level)."""
    first_cluster = np.empty(levels, dtype=np.int64)
    first_cluster[fe[::-1]] = cluster[::-1]  # reversed, so the first occurrence is written last and kept
    return bool(np.all(first_cluster[fe] == cluster))


def _newey(frame: pd.DataFrame, y: str, columns: list[str], names: dict[str, str], column_scales: dict[str, float],
           y_scale: float, time: str | None, lag: int | None, n_full: int, dropped_missing: int) -> RegResult:
    """Stata `newey y x, lag(L)` for a single time series: OLS with a constant, Bartlett HAC, N/(N−k); on the
    scaled design with collinearity decided as in `reghdfe` (the constant is what is partialled out). L must be below
    N (specification.check_newey_lag says why)."""
    import statsmodels.api as sm

    if time is None:
        raise EstimationError("Newey-West standard errors need the time variable (period_num) to order the series")
    frame = frame.sort_values(time)
    if frame[time].duplicated().any():
        raise EstimationError(f"{time} repeats within the single time series: Newey-West needs one row per period")
    kept, omitted, frame = _scale_columns(frame, y, columns, names, [])
    if len(frame) <= len(kept) + 1:
        raise EstimationError(f"N = {len(frame)} observation(s) for K = {len(kept)} regressor(s) and a constant: "
                              f"no residual degrees of freedom for {y} on {list(names.values())}")
    if not kept:
        raise AllOmitted(f"every regressor of {y} on {list(names.values())} is omitted: "
                         + "; ".join(f"{t} {why}" for t, why in omitted.items()), omitted, N=len(frame),
                         N_clust=None, df_r=len(frame) - 1, num_singletons=0, N_dropped_missing=dropped_missing,
                         cons=float(frame[y].mean()) * y_scale)
    lag = newey_default_lag(len(frame)) if lag is None or lag < 0 else lag
    if lag >= len(frame):  # every pair of observations weighted: the HAC variance collapses (check_newey_lag)
        raise EstimationError(f"newey_lag({lag}) must be less than N = {len(frame)}, the observations of the series "
                              f"{y} on {list(names.values())}")
    exog = sm.add_constant(frame[kept].to_numpy(), has_constant="add")
    fit = sm.OLS(frame[y].to_numpy(), exog).fit(cov_type="HAC", cov_kwds={"maxlags": lag, "use_correction": True},
                                                 use_t=True)
    index = ["_cons"] + [names[c] for c in kept]  # add_constant puts the constant first
    order = index[1:] + ["_cons"]  # reported as Stata does: regressors, then _cons
    result = _finish(pd.Series(fit.params, index=index)[order], pd.Series(fit.bse, index=index)[order],
                     int(fit.df_resid), N=int(fit.nobs), N_full=n_full, num_singletons=0,
                     N_dropped_missing=dropped_missing, df_m=len(kept), N_clust=None, r2=float(fit.rsquared),
                     r2_within=float(fit.rsquared), r2_a=float(fit.rsquared_adj), rmse=float(np.sqrt(fit.mse_resid)),
                     vce=f"newey (lag {lag})", absorb=[],
                     warnings=[f"single time series: no entity fixed effects, Newey-West standard errors with lag "
                               f"{lag}; power is limited"])
    result.omitted, result.omitted_reasons = list(omitted), omitted
    scales = {names[c]: column_scales[c] * frame.attrs["within_scale"][c] for c in kept}
    return _unscaled(result, scales, y_scale, y)
