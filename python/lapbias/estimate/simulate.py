"""Verdict-level Monte Carlo (issue 11 item 6): simulated panels with a known interaction and the verdict the
protocol's rule gives them (tests/test_verdict_mc.py; benchmarks/bench_verdict_mc.py writes the rates).

Data-generating process, per sample (pre- and post-cutoff), entities i and periods t, every row observed with
probability `coverage`:
    outcome = a_i + g_t + b1 mu_hat + b2 lap + b3 mu_hat x lap + sigma e,     a_i, g_t ~ N(0, 0.5²), e ~ N(0, 1),
    mu_hat uniform on {-1, 0, 1};  lap ~ U(0, 1) (varying), or 0.3 + 1e-9 U(0, 1) (barely varying: numerically
    constant, beta_3 omitted as collinear after scaling, as reghdfe omits it);
    ud = kappa 1{lap > median} e + 0.5 N(0, 1) pre-cutoff (recall of the realized shock where LAP is high: the
    validation pattern), 0.5 N(0, 1) post-cutoff; post-cutoff b3 = 0.
The interaction is set by its paper magnitude: b3 = share x B / SD(lap) with B = 0.2 the standalone LLM effect
(b1 = B − b3 mean(lap), so the standalone regression recovers B); share = 0.37 is the paper's in-sample estimate
("paper-sized", Table II text), share = 0 no contamination. sigma is set so that the expected t statistic of a
paper-sized b3 is the paper's, 4.86 (Table II column 2): sigma = b3_paper sqrt(N / 18) / 4.86, 1/18 being the
variance of mu_hat x lap net of mu_hat and lap for lap ~ U(0, 1) (Var(mu_hat) Var(lap) = 2/3 x 1/12). The formula
ignores the degrees of freedom the entity and period effects absorb (the within variance is about (N − G − T + 1)/N
of it) and reghdfe's cluster small-sample factor, so the realized t is a little below 4.86 (demo shape: mean 4.25 ±
0.19 over seeds 0-29, 4.66 ± 0.21 over seeds 900-939; paper-like: 4.75 ± 0.29 over seeds 900-915), a slightly
harder test than the paper's; the power of the one-sided 5% test is above 0.99 either way. The null keeps the
validation pattern, the hardest case for the rule (only the size of the beta_3 test, the low-LAP validation test
and the placebo stand between it and "Contamination detected").
`noise_factor` multiplies sigma (a weaker signal than the paper's: the power rule's "Underpowered" path).

The model that almost always answers "unknown" (issue 11 item 5's example, `unknown=True`): lap = 0.001 +
0.019 U(0, 1) (LAP between 0.001 and 0.02) and ud = lap (2 U(0, 1) − 1) = P(up) − P(down), unrelated to the outcome
(no recall), in both samples. Its beta_3 test is as powerful per SD of LAP as the U(0, 1) one (below), so the MDE
does not flag it; the null high-LAP theta does: the rule calls it Underpowered (validation, protocol Step 3: "no
evidence of memorization and the detection test in Step 4 has little power"), never "No evidence of contamination".

Why "barely varying" is not simply a small SD: with mu_hat independent of LAP, the residual variance of
mu_hat x lap given mu_hat and lap is Var(mu_hat) Var(lap), so se(beta_3) x SD(lap) — and the minimum detectable
share — do not depend on how LAP is spread (its units, its range, or whether it varies within or between
entities); they depend on the noise, N and SD(mu_hat). A LAP confined to [0.001, 0.02] is as powerful per SD as
one on [0, 1]; only a LAP without numerical variation, or a weak signal, makes the test underpowered.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..config import EstimateConfig
from ..report.verdict import Verdict, decide
from .power import detection_power
from .protocol import DETECTION_TERMS, ProtocolResults, _estimated

STANDALONE = 0.2
PAPER_SHARE = 0.37
PAPER_T = 4.86
KAPPA = 0.5


@dataclass(frozen=True)
class Shape:
    name: str
    n_entities: int
    n_periods: int
    coverage: float = 1.0


DEMO = Shape("demo (30 entities x 8 periods)", 30, 8)
PAPER_LIKE = Shape("paper-like (300 entities x 40 dates, 40% of cells)", 300, 40, 0.4)


def _sample(rng: np.random.Generator, shape: Shape, share: float, flat_lap: bool, memorized: bool,
            sigma: float, unknown: bool = False) -> pd.DataFrame:
    """One sample of the module docstring's process."""
    entity = np.repeat(np.arange(1, shape.n_entities + 1), shape.n_periods)
    period = np.tile(np.arange(1, shape.n_periods + 1), shape.n_entities)
    keep = rng.uniform(size=entity.size) < shape.coverage
    entity, period = entity[keep], period[keep]
    n = entity.size
    if flat_lap:
        lap = 0.3 + 1e-9 * rng.uniform(size=n)
    elif unknown:
        lap = 0.001 + 0.019 * rng.uniform(size=n)
    else:
        lap = rng.uniform(size=n)
    mu_hat = rng.choice([-1.0, 0.0, 1.0], size=n)
    b3 = share * STANDALONE / lap.std(ddof=1) if share else 0.0
    b1 = STANDALONE - b3 * lap.mean()
    shock = rng.normal(size=n)
    outcome = (0.5 * rng.normal(size=shape.n_entities)[entity - 1] + 0.5 * rng.normal(size=shape.n_periods)[period - 1]
               + b1 * mu_hat + 0.1 * lap + b3 * mu_hat * lap + sigma * shock)
    high = (lap > np.median(lap)).astype(int)
    if unknown:  # ud = P(up) - P(down) with P(up) + P(down) = lap, unrelated to the outcome: no recall
        ud = lap * (2 * rng.uniform(size=n) - 1)
    else:
        ud = (KAPPA * high * shock if memorized else 0.0) + 0.5 * rng.normal(size=n)
    return pd.DataFrame({"entity_num": entity, "period_num": period, "mu_hat": mu_hat, "lap": lap, "ud": ud,
                         "outcome": outcome, "high_lap": high})


def noise(shape: Shape) -> float:
    """sigma giving a paper-sized b3 the paper's expected t statistic on this shape (module docstring)."""
    n = shape.n_entities * shape.n_periods * shape.coverage
    return PAPER_SHARE * STANDALONE / math.sqrt(1 / 12) * math.sqrt(n / 18) / PAPER_T


def simulate(seed: int, shape: Shape, share: float, flat_lap: bool = False,
             noise_factor: float = 1.0, unknown: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(pre, post) panels of the module docstring's process (`unknown`: the model that almost always answers
    "unknown", module docstring)."""
    rng = np.random.default_rng(seed)
    sigma = noise(shape) * noise_factor
    return (_sample(rng, shape, share, flat_lap, True, sigma, unknown),
            _sample(rng, shape, 0.0, flat_lap, False, sigma, unknown))


def verdict(pre: pd.DataFrame, post: pd.DataFrame, thresholds: EstimateConfig | None = None) -> Verdict:
    """The report's verdict from the regressions it reads: high/low-LAP validation and detection pre-cutoff, the
    detection regression post-cutoff, and the power of the pre-cutoff test (the pooled validation regressions do
    not enter the rule and are left out)."""
    thresholds = thresholds or EstimateConfig()
    results = ProtocolResults()
    validation = [_estimated(results, "validation", model, pre[pre["high_lap"] == flag], ["ud"], -1)
                  for model, flag in (("high_lap", 1), ("low_lap", 0))]
    detection = _estimated(results, "detection", "pre", pre, DETECTION_TERMS, -1)
    placebo = _estimated(results, "placebo", "post", post, DETECTION_TERMS, -1)
    empty = pd.DataFrame(columns=["model", "term", "coef", "se", "t", "p", "p_one_sided", "df_r"])
    detection = detection if detection is not None else empty
    tables = [t for t in validation if t is not None]
    return decide(detection, pd.concat(tables) if tables else None, placebo,
                  detection_power(pre, detection, thresholds.detection_alpha), thresholds,
                  pd.DataFrame(results.notes, columns=["model", "kind", "detail"]))

