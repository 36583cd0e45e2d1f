"""Verdict-level Monte Carlo: simulated panels with a known interaction and the verdict the protocol's rule gives
them (tests/test_verdict_mc.py; benchmarks/bench_verdict_mc.py writes the rates). It sits above the estimation
(lapbias.estimate) and the report's rule (lapbias.report.verdict), which it runs in turn, as `lapbias estimate` and
`lapbias report` do.

Data-generating process, per sample (pre- and post-cutoff), entities i and periods t, every row observed with
probability `coverage`:
    outcome = a_i + g_t + b1 mu_hat + b2 lap + b3 mu_hat x lap + sigma e,     a_i, g_t ~ N(0, 0.5²), e ~ N(0, 1),
    mu_hat uniform on {-1, 0, 1};  lap by the scenario's LAP design (below);
    ud = P(up) − P(down), so |ud| <= lap = P(up) + P(down) on every row (lap is the recall LAP, also the sample's
    column lap_recall; ud_dir = ud / lap_recall, the recalled direction, as `lapbias panel` computes it):
      memorized rows (pre-cutoff, the high-LAP half, lap > median: the validation pattern), ud = lap s U(0.6, 1) with
      s the sign of the realized shock e, flipped with probability 0.1 (the recall is right 90% of the time);
      every other row (the low-LAP half, every post-cutoff row, a model that recalls nothing), ud = lap (2 U − 1),
      a guess unrelated to the outcome;
    post-cutoff b3 = 0.
The interaction is set by its paper magnitude: b3 = share x B / SD(lap) with B = 0.2 the standalone LLM effect
(b1 = B − b3 mean(lap), so the standalone regression recovers B); share = 0.37 is the paper's in-sample estimate
("paper-sized", Table II text), share = 0 no contamination, share = −0.37 accuracy falling with LAP. sigma is set so
that the expected t statistic of a paper-sized b3 is the paper's, 4.86 (Table II column 2): sigma = b3_paper
sqrt(N / 18) / 4.86, 1/18 being the variance of mu_hat x lap net of mu_hat and lap for lap ~ U(0, 1) (Var(mu_hat)
Var(lap) = 2/3 x 1/12). The formula ignores the degrees of freedom the entity and period effects absorb (the within
variance is about (N − G − T + 1)/N of it) and reghdfe's cluster small-sample factor, so the realized t is a little
below 4.86 (demo shape: mean 4.25 ± 0.19 over seeds 0-29, 4.66 ± 0.21 over seeds 900-939; paper-like: 4.75 ± 0.29
over seeds 900-915), a slightly harder test than the paper's. `noise_factor` multiplies sigma (a weaker signal).

LAP designs: "uniform", U(0, 1); "flat", 0.3 + 1e-9 U(0, 1) (numerically constant: beta_3 omitted as collinear after
scaling, as reghdfe omits it); "six_digits", 0.3 + 4e-6 (U(0, 1) − 1/2), a recall mass constant to six digits
(0.3 ± 2e-6): `lap` is omitted as collinear with the fixed effects, beta_3 is still estimated, and only the
verdict's LAP-variation gate can tell it from a varying LAP; "unknown", the model that almost always answers
"unknown": lap = 0.001 + 0.019 U(0, 1) with a guessed direction in both samples. The null keeps the validation
pattern, the hardest case for the rule (only the size of the beta_3 test, of the high-minus-low validation test and
of the placebo stand between it and "Contamination detected"); the clean model (`recall=False`) recalls nothing
and is not contaminated: a confident guesser, whose LAP varies over (0, 1) while its direction is a guess (a model
that abstains, answering "unknown", is the "unknown" design). The recall is strong (every high-LAP row memorized,
90% right): the validation tests have more power here than with a recall that memorizes only some high-LAP rows;
it is not calibrated to the paper, which has no recall regression. The difference test reads ud_dir, whose
memorized rows are ±U(0.6, 1) and guessed rows U(−1, 1): LAP's size does not enter it.

Post-cutoff shape: `post_periods` periods of the same entities (default: as many as before the cutoff); the
paper's Table V has N_post / N_pre = 9,942 / 82,234 = 0.12.

Heterogeneous shapes (few clusters, as in an independent review's design): entities observed on unbalanced shares
of the periods (coverage_i ~ U(0.3, 1)), entity-specific error SDs (sigma exp(0.5 z_i − 1/8)), AR(1) errors within
an entity (rho = 0.5, unit variance), persistent forecasts (mu_hat the tertile of an AR(1) latent with rho = 0.7,
still uniform on {-1, 0, 1}) and a LAP correlated with the entity effect, lap = Phi(0.8 a_i / 0.5 + 0.6 N(0, 1))
(uniform on (0, 1), 64% of its probit variance between entities): scores of beta_3 correlated within entities, the
case in which CRV1 t tests over-reject with few clusters.

Why "barely varying" is not simply a small SD: with mu_hat independent of LAP, the residual variance of
mu_hat x lap given mu_hat and lap is Var(mu_hat) Var(lap), so se(beta_3) x SD(lap) — and the power shares — do not
depend on how LAP is spread (its units, its range, or whether it varies within or between entities); they depend
on the noise, N and SD(mu_hat). A LAP confined to [0.001, 0.02] is as powerful per SD as one on [0, 1]: the
verdict's LAP-variation gate (report/verdict.py) reads the gap between the halves' mean LAP instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from functools import partial

from .config import EstimateConfig
from .estimate import specification
from .estimate.specification import CLUSTERS
from .estimate.power import detection_power
from .estimate.protocol import (DETECTION_TERMS, ProtocolResults, _estimated, theta_with_wild, validation_difference,
                                with_wild)
from .panel import recall_direction
from .report.verdict import Verdict, decide

STANDALONE = 0.2
PAPER_SHARE = 0.37
PAPER_T = 4.86
RECALL_RIGHT = 0.9
LAP_DESIGNS = ("uniform", "flat", "six_digits", "unknown")
TERTILE = stats.norm.ppf(2 / 3)


@dataclass(frozen=True)
class Shape:
    name: str
    n_entities: int
    n_periods: int
    coverage: float = 1.0
    heterogeneous: bool = False
    post_periods: int | None = None
    """Post-cutoff periods (None: n_periods)."""


DEMO = Shape("demo (30 entities x 8 periods)", 30, 8)
PAPER_LIKE = Shape("paper-like (300 entities x 40 dates, 40% of cells)", 300, 40, 0.4)
TABLE_V = Shape("Table V ratio (300 entities x 40 dates pre, 5 post, 40% of cells)", 300, 40, 0.4, post_periods=5)
FEW_8 = Shape("8 entities x 150 days, heterogeneous", 8, 150, 0.65, heterogeneous=True)
FEW_15 = Shape("15 entities x 150 days, heterogeneous", 15, 150, 0.65, heterogeneous=True)


def _ar1(rng: np.random.Generator, rows: int, columns: int, rho: float) -> np.ndarray:
    """rows independent stationary AR(1) series of length `columns`, unit variance."""
    out = np.empty((rows, columns))
    out[:, 0] = rng.normal(size=rows)
    for t in range(1, columns):
        out[:, t] = rho * out[:, t - 1] + math.sqrt(1 - rho ** 2) * rng.normal(size=rows)
    return out


def _heterogeneous(rng: np.random.Generator, shape: Shape, periods: int) -> dict[str, np.ndarray]:
    """Entity, period, mu_hat, LAP, unit shock and error scale of a heterogeneous shape (module docstring)."""
    e, t = shape.n_entities, periods
    effect = 0.5 * rng.normal(size=e)
    keep = rng.uniform(size=(e, t)) < rng.uniform(0.3, 1.0, size=(e, 1))
    scale = np.exp(0.5 * rng.normal(size=e) - 0.125)
    shock = _ar1(rng, e, t, 0.5)
    latent = _ar1(rng, e, t, 0.7)
    mu_hat = np.where(latent > TERTILE, 1.0, np.where(latent < -TERTILE, -1.0, 0.0))
    lap = stats.norm.cdf(0.8 * effect[:, None] / 0.5 + 0.6 * rng.normal(size=(e, t)))
    entity, period = np.nonzero(keep)
    return {"entity": entity + 1, "period": period + 1, "mu_hat": mu_hat[keep], "lap": lap[keep],
            "shock": shock[keep], "scale": scale[entity], "effect": effect[entity]}


def _sample(rng: np.random.Generator, shape: Shape, share: float, lap_design: str, memorized: bool,
            sigma: float, periods: int) -> pd.DataFrame:
    """One sample of the module docstring's process, over `periods` periods."""
    if shape.heterogeneous:
        draw = _heterogeneous(rng, shape, periods)
        entity, period, mu_hat, lap = draw["entity"], draw["period"], draw["mu_hat"], draw["lap"]
        n = entity.size
        shock, scale, entity_effect = draw["shock"], draw["scale"], draw["effect"]
    else:
        entity = np.repeat(np.arange(1, shape.n_entities + 1), periods)
        period = np.tile(np.arange(1, periods + 1), shape.n_entities)
        keep = rng.uniform(size=entity.size) < shape.coverage
        entity, period = entity[keep], period[keep]
        n = entity.size
        lap = {"flat": lambda: 0.3 + 1e-9 * rng.uniform(size=n),
               "six_digits": lambda: 0.3 + 4e-6 * (rng.uniform(size=n) - 0.5),
               "unknown": lambda: 0.001 + 0.019 * rng.uniform(size=n),
               "uniform": lambda: rng.uniform(size=n)}[lap_design]()
        mu_hat = rng.choice([-1.0, 0.0, 1.0], size=n)
        scale = 1.0
    b3 = share * STANDALONE / lap.std(ddof=1) if share else 0.0
    b1 = STANDALONE - b3 * lap.mean()
    if not shape.heterogeneous:
        shock = rng.normal(size=n)
        entity_effect = 0.5 * rng.normal(size=shape.n_entities)[entity - 1]
    outcome = (entity_effect + 0.5 * rng.normal(size=periods)[period - 1]
               + b1 * mu_hat + 0.1 * lap + b3 * mu_hat * lap + sigma * scale * shock)
    high = (lap > np.median(lap)).astype(int)
    recalled = (high == 1) & memorized & (lap_design != "unknown")
    direction = np.sign(shock) * np.where(rng.uniform(size=n) < RECALL_RIGHT, 1.0, -1.0)
    guess = 2 * rng.uniform(size=n) - 1
    ud = lap * np.where(recalled, direction * rng.uniform(0.6, 1.0, size=n), guess)
    frame = pd.DataFrame({"entity_num": entity, "period_num": period, "date_num": period,  # one date a period
                          "mu_hat": mu_hat, "lap": lap, "lap_recall": lap,
                          "ud": ud, "outcome": outcome, "high_lap": high})
    return frame.assign(ud_dir=recall_direction(frame["ud"], frame["lap_recall"]))


def noise(shape: Shape) -> float:
    """sigma giving a paper-sized b3 the paper's expected t statistic on this shape (module docstring)."""
    n = shape.n_entities * shape.n_periods * shape.coverage
    return PAPER_SHARE * STANDALONE / math.sqrt(1 / 12) * math.sqrt(n / 18) / PAPER_T


def simulate(seed: int, shape: Shape, share: float, lap_design: str = "uniform", noise_factor: float = 1.0,
             recall: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(pre, post) panels of the module docstring's process; `recall=False`: a model that recalls nothing."""
    if lap_design not in LAP_DESIGNS:
        raise ValueError(f"lap_design {lap_design!r} is not one of {LAP_DESIGNS}")
    rng = np.random.default_rng(seed)
    sigma = noise(shape) * noise_factor
    return (_sample(rng, shape, share, lap_design, recall, sigma, shape.n_periods),
            _sample(rng, shape, 0.0, lap_design, False, sigma, shape.post_periods or shape.n_periods))


def tables(pre: pd.DataFrame, post: pd.DataFrame, thresholds: EstimateConfig | None = None) -> dict:
    """What the report's verdict reads, estimated as `lapbias estimate` does (clustered as thresholds.cluster says):
    high/low-LAP and high-minus-low
    validation and detection pre-cutoff, the detection regression post-cutoff, beta_3's wild cluster bootstrap
    p-values (only where the verdict reads them: fewer than wild_below_clusters clusters), the power of both and the
    notes (the pooled validation regressions do not enter the rule and are left out)."""
    thresholds = thresholds or EstimateConfig()
    cluster = CLUSTERS[thresholds.cluster]
    fit = partial(specification.fit, cluster=cluster)
    results = ProtocolResults()
    halves = [(model, pre[pre["high_lap"] == flag]) for model, flag in (("high_lap", 1), ("low_lap", 0))]
    few_validation = pre["entity_num"].nunique() < thresholds.wild_below_clusters
    validation = [theta_with_wild(results, "validation", _estimated(results, "validation", model, half, ["ud"], -1,
                                                                    fit),
                                  half, thresholds.wild_bootstrap_reps if few_validation else 0,
                                  thresholds.bootstrap_seed)
                  for model, half in halves]
    validation.append(validation_difference(results, "validation", pre, -1, cluster))
    empty = pd.DataFrame(columns=["model", "term", "coef", "se", "t", "p", "p_one_sided", "df_r", "N_clust"])
    fitted = {}
    for name, model, sample in (("detection", "pre", pre), ("placebo", "post", post)):
        table = _estimated(results, name, model, sample, DETECTION_TERMS, -1, fit)
        few = table is not None and table["N_clust"].lt(thresholds.wild_below_clusters).any()
        reps = thresholds.wild_bootstrap_reps if few else 0
        fitted[name] = (with_wild(results, name, table, sample, reps, thresholds.bootstrap_seed)
                        if table is not None else None)
    detection = fitted["detection"] if fitted["detection"] is not None else empty
    kept = [t for t in validation if t is not None]
    return {"detection": detection, "validation": pd.concat(kept) if kept else None, "placebo": fitted["placebo"],
            "power": detection_power(pre, detection, thresholds.detection_alpha,
                                     fit=lambda sample, y, x: specification.fit(sample, y, x, -1, cluster), post=post,
                                     placebo=fitted["placebo"], placebo_alpha=thresholds.placebo_alpha,
                                     wild_below_clusters=thresholds.wild_below_clusters),
            "notes": pd.DataFrame(results.notes, columns=["model", "kind", "detail"])}


def verdict(pre: pd.DataFrame, post: pd.DataFrame, thresholds: EstimateConfig | None = None) -> Verdict:
    """The report's verdict from the regressions it reads (`tables`)."""
    thresholds = thresholds or EstimateConfig()
    found = tables(pre, post, thresholds)
    return decide(found["detection"], found["validation"], found["placebo"], found["power"], thresholds,
                  found["notes"])
