"""Pairs bootstrap of beta_3 (paper, section "Out-of-Sample and Bootstrap Analysis", Table V and Figure III).

The paper: "we repeatedly sample observations from the out-of-sample data with replacement for 10,000 repetitions
and re-estimate the regression in each bootstrap sample. The bootstrap sample size is set equal to that of the
out-of-sample period. For each iteration, we record the estimated coefficient on the interaction term between
LLM^std and LAP^std." The regression is r = b1 LLM^std + b2 LAP^std + beta (LLM^std x LAP^std) + alpha_i + alpha_t
(Figure III), all variables "standardized separately within each period" (Table V). The in-sample beta_3 (Table V,
column 2) "lies well outside the 95th percentile of the empirical distribution of the out-of-sample interaction
coefficients (with one-sided p-value of 0.033)".

Definitions used here (the paper states no formula):
- p_boot = #{draws b: beta_3(b) >= beta_3 in-sample} / #{identified draws}: the share of placebo draws at least as
  large as the in-sample estimate; a tie counts as "at least as large" (the conservative side). Draws whose beta_3 is
  not identified (a collinear resampled design) are left out of both counts and reported as `n_unidentified`.
- p95 = the 95th percentile of the identified draws, Stata's `_pctile` definition (Hyndman-Fan type 2, numpy
  "averaged_inverted_cdf"), so that it equals `lapboot`'s r(p95) on the same draws.
- The resampling pool is the sample's complete rows (outcome, mu_hat, lap, entity_num, period_num), as `lapboot`'s
  marksample; a draw has that many rows. Duplicated rows keep their entity and period ids (Stata's `bsample`
  without idcluster()); `resample="entity"` draws whole entities (`bsample, cluster(entity_num)`). Singletons are
  dropped from every draw as reghdfe drops them from the materialised draw.

Speed: a draw with replacement is the original rows with integer frequency weights, so every draw's beta_3 is an
exact weighted fit on the original rows: weighted FWL, conjugate gradients on the smaller FE's Schur complement
preconditioned by the full sample's (estimate/bootstrap_kernel.py, numba), threads over blocks of draws. The
compiled lane kernel (estimate/bootstrap_lanes.py, C) runs that algorithm on four draws at once; the draws it leaves
(CG not converged: the dense solve) and every draw where it was not compiled run on the numba kernel, on the same
random streams (the same draws to rounding). Each draw equals pyfixest on the materialised draw to ~1e-12
(tests/test_bootstrap.py; benchmarks/results/bootstrap.md), except where a regressor is nearly collinear with the
FEs: the normal-equation form loses digits there (~1e-8 in standardized beta_3 where the date explains all but 1e-5
of LAP; bootstrap_kernel).

Units never matter: the columns are standardized inside the kernel (beta_3 scaled back), so rescaling a regressor by
any factor rescales every draw by the same factor. A sample in which beta_3 cannot be identified at all (a regressor
without variation, every row a singleton, beta_3 collinear with the FEs) gives a result with `identified = False`
and the reason, all draws NaN, instead of an error: the caller records it.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm import tqdm

from ..config import RunConfig
from ..errors import EstimationError
from ..io import Layout, atomic_write, read_parquet, write_csv
from . import bootstrap_kernel as kernel
from . import bootstrap_lanes as lanes
from .extended import standardize_within
from .reghdfe import reghdfe
from .scaling import power_of_two, sd

VARIABLES = ["outcome", "mu_hat", "lap"]
ABSORB = ["entity_num", "period_num"]
BETA3 = "c.mu_hat#c.lap"
COLLINEAR_TOLERANCE = kernel.COLLINEAR_TOLERANCE
CG_MAX_ITER = 100
"""Conjugate-gradient steps per draw before the kernel solves that draw directly (dense, n_d^3 / 3): the
full-sample preconditioner needs 3 on the random paper-sized panel of benchmarks/bench_bootstrap.py and about 12
where each entity is seen on a short window of dates (tests/test_bootstrap.py)."""
OUTPUTS = ("bootstrap.csv", "bootstrap_draws.csv", "figures/bootstrap.png")
MIN_ROWS = 10
"""Complete rows a bootstrap sample needs (pairs_bootstrap refuses fewer; the Stata driver applies the same rule)."""


@dataclass
class BootstrapResult:
    draws: np.ndarray
    """beta_3 of every draw, in draw order (NaN where a draw leaves beta_3 unidentified)."""
    b3_in_sample: float
    B: int
    seed: int
    resample: str
    N: int
    """Rows in the resampling pool = rows of every draw."""
    standardized: bool = False
    identified: bool = True
    """False when beta_3 is identified in no draw by construction (then `reason` says why and all draws are NaN)."""
    reason: str = ""

    @property
    def identified_draws(self) -> np.ndarray:
        return self.draws[~np.isnan(self.draws)]

    @property
    def p95(self) -> float:
        """95th percentile of the identified draws, Stata's `_pctile` (type 2) definition."""
        values = self.identified_draws
        return float(np.percentile(values, 95, method="averaged_inverted_cdf")) if values.size else float("nan")

    @property
    def p_boot(self) -> float:
        """One-sided bootstrap p: share of identified draws >= the in-sample beta_3 (ties count)."""
        values = self.identified_draws
        return float(np.mean(values >= self.b3_in_sample)) if values.size else float("nan")

    def summary(self) -> pd.DataFrame:
        return pd.DataFrame([{"b3_in_sample": self.b3_in_sample, "p_boot": self.p_boot, "p95": self.p95,
                              "B": self.B, "seed": self.seed, "resampling": self.resample, "N": self.N,
                              "standardized": int(self.standardized),
                              "n_unidentified": int(np.isnan(self.draws).sum()),
                              "identified": int(self.identified), "note": self.reason}])


def too_few_rows(n_rows: int) -> str:
    """Why a bootstrap sample of `n_rows` complete rows cannot be resampled ('' when it can)."""
    if n_rows >= MIN_ROWS:
        return ""
    return f"the bootstrap sample has {n_rows} complete rows; at least {MIN_ROWS} are needed"


def _units(n_rows: int, entity: np.ndarray, resample: str) -> tuple[np.ndarray, int]:
    """Row i's weight in a draw is counts[unit[i]]: the row itself ("obs") or its entity ("entity")."""
    if resample == "obs":
        return np.arange(n_rows), n_rows
    if resample == "entity":
        codes = pd.factorize(entity)[0]
        return codes.astype(np.int64), int(codes.max()) + 1
    raise EstimationError(f"resample = {resample!r}; choose 'obs' (the paper's pairs bootstrap) or 'entity'")


def draw_weights(n_rows: int, entity: np.ndarray, B: int, seed: int, resample: str, first: int = 0) -> np.ndarray:
    """(n_rows, B) frequency weights of draws first .. first + B − 1: how often each row is in each draw. "obs":
    n_rows rows drawn uniformly with replacement (the paper's pairs bootstrap); "entity": as many entities drawn with
    replacement as the sample has, each bringing all its rows. The same numbers the bootstrap uses (kernel streams:
    a draw depends only on seed and draw number)."""
    unit, n_units = _units(n_rows, entity, resample)
    return np.stack([kernel.draw_counts(seed, first + b, n_units)[unit] for b in range(B)], axis=1)


def drop_weighted_singletons(weights: np.ndarray, fe_codes: list[np.ndarray]) -> np.ndarray:
    """Zero the weight of rows alone in a level of either FE, repeatedly: a row of weight w is w rows of the
    materialised draw, so a level is a singleton when its total weight is 1 (a row drawn twice is not alone).
    The fixed point does not depend on the order of removal, so it equals reghdfe's and pyfixest's."""
    a, d = (np.asarray(codes, dtype=np.int64) for codes in fe_codes)
    weights = np.asarray(weights, dtype=np.float64).copy()
    kernel.drop_singletons(weights, a, d, int(a.max()) + 1, int(d.max()) + 1)
    return weights


def beta3_of(M: np.ndarray, raw: np.ndarray) -> np.ndarray:
    """beta_3 = last element of M[x, x]^-1 M[x, y] for each draw's FE-residual cross-product M (draws, 4, 4), or
    NaN where not identified (COLLINEAR_TOLERANCE; raw = the weighted centred sums of squares before the FEs)."""
    Mxx, Mxy = M[:, 1:, 1:], M[:, 1:, 0]
    diagonal = np.diagonal(Mxx, axis1=1, axis2=2)
    # a centred sum of squares is 0 up to rounding (it can be -1e-17) for a regressor constant in the draw
    ok = np.all((diagonal > COLLINEAR_TOLERANCE * raw[:, 1:]) & (raw[:, 1:] > 0), axis=1)
    scale = 1.0 / np.sqrt(np.where(ok[:, None], diagonal, 1.0))
    ok &= np.linalg.eigvalsh(Mxx * scale[:, :, None] * scale[:, None, :])[:, 0] >= COLLINEAR_TOLERANCE
    out = np.full(len(M), np.nan)
    if ok.any():
        out[ok] = np.linalg.solve(Mxx[ok], Mxy[ok][:, :, None])[:, -1, 0]
    return out


def _constant_regressor(z: np.ndarray, scales: np.ndarray) -> str:
    """Why beta_3 cannot be identified in any draw because a regressor has no variation in the pool ('' when none):
    a draw's design is a subset of the pool's rows, so what is collinear in the pool is collinear in every draw.
    `z` holds the columns divided by `scales` (pairs_bootstrap); the value is shown in the data's units."""
    for name, column, scale in zip(["mu_hat", "lap", "mu_hat x lap"], z[:, 1:].T, scales[1:]):
        if np.ptp(column) == 0:
            return f"{name} has no variation in the bootstrap sample (every value {column[0] * scale:g}): beta_3 " \
                   "is not identified"
    return ""


@dataclass
class KernelInputs:
    """The bootstrap sample as the kernels take it: rows sorted by the FE with more levels ("a"), the other FE's
    levels d (int64 for numba, int32 for C), a-level e = rows start[e] .. start[e + 1] − 1, z the four standardized
    columns (outcome, mu_hat, lap, mu_hat x lap), row i's weight in a draw counts[unit[i]] of n_units counts, and the
    full sample's preconditioner (bootstrap_kernel.preconditioner)."""
    z: np.ndarray
    a: np.ndarray
    d: np.ndarray
    d_int32: np.ndarray
    start: np.ndarray
    n_d: int
    unit: np.ndarray
    n_units: int
    inverse: np.ndarray


def kernel_inputs(z: np.ndarray, entity: np.ndarray, period: np.ndarray, resample: str) -> KernelInputs:
    """KernelInputs of standardized z (rows in sample order) with factorized entity and period codes."""
    unit, n_units = _units(len(z), entity, resample)
    a, d = (entity, period) if entity.max() >= period.max() else (period, entity)
    order = np.argsort(a, kind="stable")
    z, a, d, unit = np.ascontiguousarray(z[order]), a[order].astype(np.int64), d[order].astype(np.int64), unit[order]
    start = np.searchsorted(a, np.arange(a[-1] + 2)).astype(np.int64)
    n_d = int(d.max()) + 1
    return KernelInputs(z, a, d, d.astype(np.int32), start, n_d, np.ascontiguousarray(unit, dtype=np.int64), n_units,
                        kernel.preconditioner(a, d, start, n_d))


def cross_products(inputs: KernelInputs, seed: int, first: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """(M, raw) of draws first .. first + count − 1 (bootstrap_kernel.cross_products, stacked by draw): the compiled
    lane kernel where it is built, the numba kernel for the draws it leaves (CG not converged: the dense solve; a
    count past a byte) or for all draws where it is not built; the same draws either way, to rounding (same random
    streams)."""
    i = inputs
    if lanes.UNAVAILABLE:
        return kernel.bootstrap_cross_products(i.z, i.a, i.d, i.start, i.n_d, i.unit, i.n_units, seed, first, count,
                                               i.inverse, CG_MAX_ITER)[:2]
    M, raw, steps = lanes.cross_products(i.z, i.d_int32, i.start, i.n_d, i.unit, i.n_units, seed, first, count,
                                         i.inverse, CG_MAX_ITER)
    for b in np.flatnonzero(steps < 0):
        M[b:b + 1], raw[b:b + 1], _ = kernel.bootstrap_cross_products(
            i.z, i.a, i.d, i.start, i.n_d, i.unit, i.n_units, seed, first + b, 1, i.inverse, CG_MAX_ITER)
    return M, raw


def pairs_bootstrap(sample: pd.DataFrame, b3_in_sample: float, B: int = 10_000, seed: int = 20251222,
                    resample: str = "obs", block: int = 64, progress: bool = True,
                    standardized: bool = False) -> BootstrapResult:
    """Bootstrap distribution of beta_3 of `outcome ~ mu_hat + lap + mu_hat:lap | entity_num + period_num` on
    `sample` (the post-cutoff panel in the paper's design) and the one-sided bootstrap p of `b3_in_sample`.
    Draw b uses the kernel's stream (seed, b); `block` draws are computed at a time (same draws for any block).
    A sample where beta_3 is identified in no draw returns `identified=False` with the reason (all draws NaN)."""
    if B < 1:
        raise EstimationError(f"B = {B}: the bootstrap needs at least one draw")
    missing = [c for c in VARIABLES + ABSORB if c not in sample.columns]
    if missing:
        raise EstimationError(f"the bootstrap sample lacks column(s) {missing}")
    data = sample[VARIABLES + ABSORB].dropna()
    if too_few_rows(len(data)):
        raise EstimationError(too_few_rows(len(data)))
    # Units never matter: each variable is divided by a power of two near its largest value (exact), the interaction
    # formed from the scaled factors, and each column standardized (beta_3 is scaled back), so neither a tolerance
    # nor a sum of squares sees the data's units (outcomes of 1e300 would overflow it, of 1e-300 underflow it).
    raw = data[["outcome", "mu_hat", "lap"]].to_numpy(np.float64)
    scales = np.array([power_of_two(column) for column in raw.T])
    scaled = raw / scales
    z = np.column_stack([scaled, scaled[:, 1] * scaled[:, 2]])
    scales = np.append(scales, scales[1] * scales[2])
    entity = pd.factorize(data["entity_num"])[0]
    period = pd.factorize(data["period_num"])[0]
    result = BootstrapResult(np.full(B, np.nan), float(b3_in_sample), B, seed, resample, len(data), standardized)
    result.reason = _constant_regressor(z, scales)
    centre, spread = z.mean(axis=0), z.std(axis=0)
    spread[spread == 0] = 1.0
    inputs = kernel_inputs((z - centre) / spread, entity, period, resample)
    M, raw, kept = np.zeros((1, 4, 4)), np.zeros((1, 4)), np.ones(len(z))
    kernel.cross_products(inputs.z, kept, inputs.a, inputs.d, inputs.start, inputs.n_d, inputs.inverse, CG_MAX_ITER,
                          M[0], raw[0], np.empty(len(z)), np.empty(len(z), np.int64))  # drops singletons from kept
    if not result.reason and not kept.any():
        result.reason = f"every row of the bootstrap sample is a singleton of a fixed effect ({entity.max() + 1} " \
                        f"entit{'y' if entity.max() == 0 else 'ies'}, {period.max() + 1} periods): beta_3 is not " \
                        "identified"
    elif not result.reason and np.isnan(beta3_of(M, raw)[0]):
        result.reason = "beta_3 is not identified in the bootstrap sample itself (after dropping singletons, " \
                        "mu_hat x lap is collinear with the fixed effects and the other regressors)"
    if result.reason:
        result.identified = False
        return result
    blocks = [(first, min(block, B - first)) for first in range(0, B, block)]

    def compute(first: int, count: int) -> int:
        result.draws[first:first + count] = beta3_of(*cross_products(inputs, seed, first, count))
        return count

    with ThreadPoolExecutor(threads()) as pool, \
            tqdm(total=B, desc="bootstrap", unit="draw", disable=not progress) as bar:
        for count in pool.map(compute, *zip(*blocks)):
            bar.update(count)
    result.draws *= (scales[0] * spread[0]) / (scales[3] * spread[3])
    return result


def threads() -> int:
    """The CPUs this process may run on: os.sched_getaffinity where the OS has it (Linux), else os.cpu_count()
    (macOS, Windows). The thread count never changes a draw (each draw has its own random stream)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def histogram(result: BootstrapResult, path: Path) -> None:
    """Paper Figure III: the draws, the 95th percentile (blue dotted) and the in-sample beta_3 (red solid)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4))
    axes.hist(result.identified_draws, bins=60, color="0.6")
    axes.axvline(result.p95, color="blue", linestyle=":", linewidth=2, label=f"95th percentile = {result.p95:.3g}")
    axes.axvline(result.b3_in_sample, color="red", linestyle="-", linewidth=2,
                 label=f"in-sample estimate = {result.b3_in_sample:.3g}")
    scale = "standardized " if result.standardized else ""
    axes.set_xlabel(f"beta_3 ({scale}mu_hat x {scale}lap), out-of-sample bootstrap draws")
    axes.set_ylabel("draws")
    axes.set_title(f"Pairs bootstrap, B = {result.B:,}, one-sided bootstrap p = {result.p_boot:.3f}")
    axes.legend()
    figure.tight_layout()
    atomic_write(path, lambda tmp: figure.savefig(tmp, format="png", dpi=120))
    plt.close(figure)


def _standardize(sample: pd.DataFrame) -> pd.DataFrame:
    """Table V z-scores within the sample (extended.standardize_within), except that a column without variation is
    left as it is: 0/0 would turn it into NaN and drop every row; the bootstrap reports it as not identified."""
    varying = [c for c in VARIABLES if sd(sample[c]) > 0]
    return standardize_within(sample, varying) if varying else sample


def in_sample_beta3(sample: pd.DataFrame) -> float:
    """beta_3 of the detection regression on the in-sample (pre-cutoff) rows (Table V, column 2)."""
    fit = reghdfe(sample, "outcome", ["mu_hat", "lap", BETA3], absorb=ABSORB, vce="cluster", cluster=["entity_num"])
    if BETA3 in fit.omitted or BETA3 not in fit.coef.index:
        raise EstimationError("the in-sample beta_3 (c.mu_hat#c.lap) is collinear with the fixed effects")
    return float(fit.coef[BETA3])


def run(config: RunConfig, layout: Layout, standardize: bool = True, progress: bool = True) -> BootstrapResult | None:
    """Paper Figure III on data/derived/panel.parquet: in-sample = post == 0, bootstrap sample = post == 1, both
    standardized within their own sample first (Table V; `standardize=False` keeps raw units). Writes
    results/bootstrap.csv (summary), results/bootstrap_draws.csv and results/figures/bootstrap.png. Returns None,
    and removes those files of an earlier run, when bootstrap_reps = 0 or a sample has no complete rows. When beta_3
    is not identified (in-sample or in the bootstrap sample) the result has identified = False and its reason, and
    only bootstrap.csv is written (columns identified = 0 and note = the reason)."""
    panel = read_parquet(layout.derived_file("panel.parquet"))
    complete = panel.dropna(subset=VARIABLES + ABSORB)
    pre, post = complete[complete["post"] == 0], complete[complete["post"] == 1]
    if config.estimate.bootstrap_reps <= 0 or pre.empty or post.empty:
        for name in OUTPUTS:
            (layout.results / name).unlink(missing_ok=True)
        return None
    if standardize:
        pre, post = (_standardize(part) for part in (pre, post))
    try:
        b3_in_sample, why_not = in_sample_beta3(pre), ""
    except EstimationError as err:
        b3_in_sample, why_not = float("nan"), f"in-sample beta_3 not identified: {err}"
    result = pairs_bootstrap(post, b3_in_sample, B=config.estimate.bootstrap_reps,
                             seed=config.estimate.bootstrap_seed, resample=config.estimate.bootstrap_resample,
                             progress=progress, standardized=standardize)
    if why_not:  # no in-sample beta_3 to compare the draws with: no draw is reported (as the Stata engine writes it)
        result.identified, result.reason = False, "; ".join(filter(None, [why_not, result.reason]))
        result.draws[:] = np.nan
    write_csv(result.summary(), layout.results / "bootstrap.csv")
    if not result.identified:
        for name in OUTPUTS[1:]:
            (layout.results / name).unlink(missing_ok=True)
        return result
    write_csv(pd.DataFrame({"draw": np.arange(1, result.B + 1), "beta3": result.draws}),
              layout.results / "bootstrap_draws.csv")
    histogram(result, layout.figures / "bootstrap.png")
    return result
