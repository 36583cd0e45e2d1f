"""Power of the calibration design, by simulation: how often the protocol's verdict on a planted model is
"Contamination detected", for a panel, a number of exposed pairs and an assumed planted behaviour.

The simulated planted model answers, per (entity_id, target_date) pair of the panel (its own outcomes, entities
and periods; exposed pairs drawn as corpus.assign_arms draws them, half up and half down):
- an exposed pre-cutoff pair: recall LAP = P(up) + P(down) ~ U(lap_exposed), recalled direction
  ud = LAP x (realized direction) with probability `recall_accuracy`, else LAP x (the opposite); the forecast of
  each of its rows is the realized direction with probability `hit_rate`, else the opposite;
- every other pair (unexposed pre-cutoff, every post-cutoff pair: never exposed): LAP ~ U(lap_unexposed),
  ud = LAP x (2 U(0, 1) - 1) (no recall), forecasts "up" with probability `up_rate`, else "down", independent of
  the outcome.
Each simulated panel goes through the protocol's regressions and verdict rule (lapbias.simulate.verdict: Steps
3-5 with entity and period effects, clustered by entity, and report.verdict.decide), so the power follows the
rule as the report applies it. high_lap is the pooled median within each sample, as panel.py computes it.
The defaults are the planted model's behaviour measured on the demo (docs/calibrate.md); `design_table` runs a
grid of exposed-pair counts and hit rates (benchmarks/bench_calibration_power.py writes it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import simulate
from ..panel import high_lap_flags, integer_ids, period_labels
from ..config import EstimateConfig
from ..report.verdict import CONTAMINATION, decide, placebo_power
from . import corpus

PLACEBO_UNINFORMATIVE = "placebo uninformative"
"""report.verdict.decide's name for a placebo that passed but could not have rejected a paper-sized interaction."""


@dataclass(frozen=True)
class PlantedBehaviour:
    hit_rate: float = 0.9
    """Share of an exposed pair's forecasts that give the realized direction."""
    recall_accuracy: float = 0.95
    """Share of exposed pairs whose recall query puts more mass on the realized direction than on the other."""
    lap_exposed: tuple[float, float] = (0.6, 1.0)
    lap_unexposed: tuple[float, float] = (0.1, 0.6)
    up_rate: float = 0.5
    """Share of "up" forecasts where nothing is memorized."""


def simulated_panel(pairs: pd.DataFrame, rows: pd.DataFrame, cutoff: pd.Timestamp, n_exposed: int,
                    behaviour: PlantedBehaviour, seed: int, frequency: str = "day") -> tuple[pd.DataFrame, pd.DataFrame]:
    """(pre, post) samples of one simulated planted model (module docstring). `pairs`: the panel's unique
    (entity_id, target_date) with `direction`; `rows`: its rows (entity_id, target_date, outcome); `frequency`:
    the period of the time fixed effect ([study] frequency)."""
    rng = np.random.default_rng(seed)
    arms = corpus.assign_arms(pairs, cutoff, (0, 1), n_exposed, seed)
    exposed = (arms["exposure"] > 0).to_numpy()
    low, high = np.where(exposed[:, None], behaviour.lap_exposed, behaviour.lap_unexposed).T
    lap = rng.uniform(low, high)
    recalled = np.where(rng.uniform(size=len(arms)) < behaviour.recall_accuracy, 1, -1)
    ud = np.where(exposed, lap * arms["direction"].to_numpy() * recalled, lap * (2 * rng.uniform(size=len(arms)) - 1))
    signals = arms.assign(lap=lap, ud=ud, exposed=exposed)[["entity_id", "target_date", "lap", "ud", "exposed",
                                                            "direction", "post"]]
    panel = rows.merge(signals, on=["entity_id", "target_date"], validate="many_to_one")
    hit = rng.uniform(size=len(panel)) < behaviour.hit_rate
    guess = np.where(rng.uniform(size=len(panel)) < behaviour.up_rate, 1.0, -1.0)
    panel["mu_hat"] = np.where(panel["exposed"], np.where(hit, 1.0, -1.0) * panel["direction"], guess)
    panel["entity_num"] = integer_ids(panel["entity_id"])
    panel["period_num"] = integer_ids(period_labels(panel["target_date"], frequency)[0])
    samples = []
    for flag in (0, 1):
        sample = panel[panel["post"] == flag].copy()
        sample["high_lap"] = high_lap_flags(sample, "pooled").astype(int)
        samples.append(sample)
    return samples[0], samples[1]


def design_power(pairs: pd.DataFrame, rows: pd.DataFrame, cutoff: pd.Timestamp, n_exposed: int,
                 behaviour: PlantedBehaviour, reps: int, seed: int = 0, frequency: str = "day") -> dict[str, float]:
    """Over `reps` simulated planted models: the share whose verdict is "Contamination detected"
    (`p_contamination`); the share whose placebo is informative (`p_placebo_informative`: its minimum detectable
    share, power.csv's placebo_mde_share, at most [estimate] detectable_share) and the share where its power cannot
    be stated (`p_placebo_power_unstated`: no finite share, e.g. b1 <= 0, which the verdict does not count as
    uninformative; report.verdict.placebo_power); the share that misses
    "Contamination detected" ONLY because the placebo is uninformative (`p_only_placebo_uninformative`: significant
    beta_3, validation present, placebo passed); the median placebo_mde_share and mde_share; each label's share."""
    thresholds = EstimateConfig()
    labels, placebo_shares, informative, mde_shares, only_placebo = [], [], [], [], []
    for rep in range(reps):
        pre, post = simulated_panel(pairs, rows, cutoff, n_exposed, behaviour, seed + rep, frequency)
        found = simulate.tables(pre, post, thresholds)
        verdict = decide(found["detection"], found["validation"], found["placebo"], found["power"], thresholds,
                         found["notes"])
        power = dict(zip(found["power"]["quantity"], found["power"]["value"].astype(float)))
        labels.append(verdict.label)
        placebo_shares.append(power.get("placebo_mde_share", np.nan))
        informative.append(placebo_power(power, thresholds)[0])
        mde_shares.append(power.get("mde_share", np.nan))
        only_placebo.append(list(verdict.failed) == [PLACEBO_UNINFORMATIVE])
    labels, placebo_shares = pd.Series(labels), pd.Series(placebo_shares, dtype=float)
    return {"n_exposed": n_exposed, "hit_rate": behaviour.hit_rate, "reps": reps,
            "p_contamination": float((labels == CONTAMINATION).mean()),
            "p_placebo_informative": float(np.mean([flag is True for flag in informative])),
            "p_placebo_power_unstated": float(np.mean([flag is None for flag in informative])),
            "p_only_placebo_uninformative": float(np.mean(only_placebo)),
            "placebo_mde_share_median": float(placebo_shares.median()),
            "mde_share_median": float(pd.Series(mde_shares, dtype=float).median()),
            **{f"share {label}": float(share) for label, share in labels.value_counts(normalize=True).items()}}
