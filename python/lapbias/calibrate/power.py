"""Power of the calibration design from MEASURED behaviour: how often the protocol's verdict is "Contamination
detected" for a planted model, and for the base model, on a calibration panel of a given size, when each (entity,
target_date) pair behaves as the trained models measurably behave.

The behaviour is not assumed: `Behaviour.from_pairs` reads the per-pair answers of a real run of the models
(results/calibration/pairs.csv of `lapbias calibrate`: for every pair its firm, its arm, the LAP measure the
calibration uses, the recall LAP, the recalled direction ud = P(up) − P(down), the parsed forecast mu_hat and the
realized direction). A simulated panel (`simulated_panel`) has the calibration panel's data-generating process
(data/demo/make_calibrate_panel.py: `Design`) at a chosen size, and its pairs answer with measured records, drawn
with replacement FIRM BY FIRM (a block bootstrap): each simulated firm answers as one measured firm, each of its
pairs drawing a record of that firm in the pair's arm (of any firm where that firm has none), the LAP jointly with
the answers. The block keeps what a firm's answers share: MEASURED 2026-11-28 on the planted model (80 exposed
pairs), the recalled direction of never-exposed pairs was mostly the firm's (within-firm SD 0.35 of a total
0.79), so after the firm fixed effect little of it is left to estimate theta_low with, and the validation
difference's standard error is large; records drawn pair by pair had put the validation pattern in 98% of
simulated panels while the real run's difference missed (one-sided p = 0.052).
What is kept relative to the simulated truth: an EXPOSED pair's forecast is the measured mu_hat x (measured
direction) x (simulated direction), i.e. a forecast that was right is right again with its size, one that was
wrong is wrong again (unparsed stays unparsed), and its ud likewise: the model read that outcome. A never-exposed
or post-cutoff pair answers as measured: in the panel's process its outcome is independent of everything the
model is shown (the headline does not move it), so whatever link its measured answers have with the measured
outcome is that panel's chance, not behaviour to repeat in every simulated panel.
Each simulated panel then goes through the protocol's regressions and the verdict rule as the report applies them
(lapbias.simulate.tables, report.verdict.decide): entity and monthly period effects, entity clusters, the wild
cluster restricted bootstrap below 42 clusters, the validation pattern, the placebo and its informativeness.
`design_power` gives, over simulated panels, the share of each label and of each of the tests the label needs.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from .. import simulate
from ..config import EstimateConfig
from ..errors import ConfigError
from ..panel import high_lap_flags, integer_ids, recall_direction
from ..report.verdict import BETA3, CONTAMINATION, decide, placebo_judgement, term_row, validation_pattern
from . import corpus

ARMS = ("exposed", "never", "post")
"""Arms of a record: an exposed pre-cutoff pair, a never-exposed pre-cutoff pair, a post-cutoff pair."""
RECORD_COLUMNS = ["entity", "arm", "lap", "lap_recall", "ud", "mu_hat", "direction"]
SIMULATION_WILD_REPS = 999
"""Wild bootstrap draws per simulated panel (the product's 9,999 would multiply the simulation's time by ten for
a p-value whose Monte Carlo error at p = 0.05 is 0.007 with 999 draws)."""


@dataclass(frozen=True)
class Design:
    """A calibration panel's size and data-generating process (data/demo/make_calibrate_panel.py): `entities`
    firms, each on its own trading day in each of `pre_periods` months before the cutoff and `post_periods` after
    (one pair a firm-month; the time fixed effect is the month); outcome = sentiment_effect x the headline's
    sentiment (+1, 0, -1 with equal probability) + a firm effect N(0, firm_sd^2) + a day effect N(0, day_sd^2) +
    N(0, outcome_noise^2); `exposed_share` of the pre-cutoff pairs are exposed (half up, half down)."""

    entities: int = 40
    pre_periods: int = 8
    post_periods: int = 12
    exposed_share: float = 0.375
    outcome_noise: float = 1.5
    sentiment_effect: float = 0.0
    firm_sd: float = 0.3
    day_sd: float = 0.8

    def describe(self) -> str:
        return (f"{self.entities} firms x ({self.pre_periods} pre + {self.post_periods} post) months, "
                f"{self.exposed_share:.0%} of pre-cutoff pairs exposed, outcome noise SD {self.outcome_noise:g}")


@dataclass(frozen=True)
class Behaviour:
    """Measured per-pair records (RECORD_COLUMNS) of one model, by arm. `planted`: the model was shown the exposed
    pairs' outcomes; the base model (never shown anything) has planted False, and its arms are pooled."""

    name: str
    records: pd.DataFrame
    planted: bool = True

    @classmethod
    def from_pairs(cls, pairs: pd.DataFrame, model: str, lap_column: str, planted: bool = True) -> "Behaviour":
        """The records of `model` in results/calibration/pairs.csv, LAP read from `lap_column` (lap_mink or
        lap_recall), the recall LAP P(up) + P(down) beside it (|ud| where a file lacks it: the least mass that
        gives ud); a ConfigError naming what is missing when an arm has no record. One record per panel row, as
        pairs.csv holds them (a pair with several headline rows weighs as many). `planted`: False for a model that
        was not shown the exposed pairs' outcomes (the base model; the shuffled control's answers, permuted over the
        pairs), whose arms the simulation pools."""
        for column in (lap_column, "entity_id"):
            if column not in pairs:
                raise ConfigError(f"pairs.csv has no column {column!r} (columns: {list(pairs.columns)})")
        rows = pairs[pairs["model"] == model]
        if rows.empty:
            raise ConfigError(f"pairs.csv has no row of model {model!r} (models: {sorted(set(pairs['model']))})")
        recall = rows["lap_recall"] if "lap_recall" in rows else rows["ud"].abs()
        frame = pd.DataFrame({"entity": rows["entity_id"].astype(str).to_numpy(), "arm": rows["arm"].to_numpy(),
                              "lap": rows[lap_column].to_numpy(float),
                              "lap_recall": recall.to_numpy(float), "ud": rows["ud"].to_numpy(float),
                              "mu_hat": rows["mu_hat"].to_numpy(float),
                              "direction": rows["direction"].to_numpy(float)})
        frame = frame.dropna(subset=["lap"]).reset_index(drop=True)
        missing = [arm for arm in ARMS if not (frame["arm"] == arm).any()]
        if missing:
            raise ConfigError(f"pairs.csv: model {model!r} has no pair of arm(s) {missing} with a {lap_column}; "
                              "the power calculation draws every arm from measured pairs")
        return cls(model, frame, planted=planted)

    def summary(self) -> pd.DataFrame:
        """Per arm: pairs, mean LAP and its SD, forecast parse and hit rates, mean ud x direction."""
        frame = self.records
        hit = (np.sign(frame["mu_hat"]) == frame["direction"]).where(frame["mu_hat"].notna())
        return (frame.assign(hit=hit, recall=frame["ud"] * frame["direction"], parsed=frame["mu_hat"].notna())
                .groupby("arm").agg(pairs=("lap", "size"), lap_mean=("lap", "mean"), lap_sd=("lap", "std"),
                                    parse_rate=("parsed", "mean"), hit_rate=("hit", "mean"),
                                    ud_x_truth=("recall", "mean")).reindex(list(ARMS)))


def _outcomes(design: Design, rng: np.random.Generator) -> pd.DataFrame:
    """One pair per firm and month: entity, period (months 1.. pre, then post), post flag, outcome, direction."""
    months = design.pre_periods + design.post_periods
    entity = np.repeat(np.arange(design.entities), months)
    period = np.tile(np.arange(months), design.entities)
    outcome = (design.sentiment_effect * rng.choice([-1.0, 0.0, 1.0], size=entity.size)
               + rng.normal(0.0, design.firm_sd, design.entities)[entity]
               + rng.normal(0.0, design.day_sd, entity.size) + rng.normal(0.0, design.outcome_noise, entity.size))
    return pd.DataFrame({"entity_id": [f"F{e:03d}" for e in entity], "period": period,
                         "target_date": pd.Timestamp("2000-01-03") + pd.to_timedelta(period * 31, unit="D"),
                         "post": (period >= design.pre_periods).astype(int), "outcome": outcome,
                         "direction": np.where(outcome > 0, 1, -1)})


def simulated_panel(design: Design, behaviour: Behaviour, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(pre, post) samples of one simulated panel answered with `behaviour` (module docstring)."""
    rng = np.random.default_rng(seed)
    pairs = _outcomes(design, rng)
    n_pre = int((pairs["post"] == 0).sum())
    n_exposed = 2 * int(round(design.exposed_share * n_pre / 2))
    cutoff = pairs.loc[pairs["post"] == 0, "target_date"].max()
    arms = corpus.assign_arms(pairs, cutoff, (0, 1), n_exposed, int(rng.integers(2 ** 31)))
    arm = np.where(arms["post"] == 1, "post", np.where(arms["exposure"] > 0, "exposed", "never"))
    records = behaviour.records
    measured_firms = records["entity"].unique()
    firm_of = dict(zip(pairs["entity_id"].unique(), rng.choice(measured_firms, design.entities)))
    answering = arms["entity_id"].map(firm_of).to_numpy()
    lap, lap_recall, ud, mu = (np.empty(len(arms)) for _ in range(4))
    for name in ARMS:
        # a model never shown anything answers an "exposed" pair as any other pre-cutoff pair: its arms are pooled,
        # else its chance hit rate on the exposed arm (34% of 120) would become anti-skill in every simulated panel
        source = (name,) if behaviour.planted or name == "post" else ("exposed", "never")
        pool = records[records["arm"].isin(source)]
        by_firm = pool.groupby("entity").indices  # firm -> positions in pool
        for firm in np.unique(answering[arm == name]):
            where = np.flatnonzero((arm == name) & (answering == firm))
            own = by_firm.get(firm, np.arange(len(pool)))
            drawn = pool.iloc[own[rng.integers(len(own), size=where.size)]]
            lap[where], lap_recall[where] = drawn["lap"].to_numpy(), drawn["lap_recall"].to_numpy()
            relative = (drawn["direction"].to_numpy() * arms["direction"].to_numpy()[where]
                        if name == "exposed" and behaviour.planted
                        else 1.0)  # planted, exposed: right again relative to the simulated truth; else as measured
            mu[where] = drawn["mu_hat"].to_numpy() * relative
            ud[where] = drawn["ud"].to_numpy() * relative
    panel = arms.assign(lap=lap, lap_recall=lap_recall, ud=ud, mu_hat=mu, arm=arm)
    panel["ud_dir"] = recall_direction(panel["ud"], panel["lap_recall"])  # as `lapbias panel` derives it
    panel["entity_num"] = integer_ids(panel["entity_id"])
    panel["period_num"] = panel["period"] + 1
    panel["date_num"] = panel["period_num"]  # every simulated firm of a month on one date (_outcomes)
    samples = []
    for flag in (0, 1):
        sample = panel[panel["post"] == flag].copy()
        sample["high_lap"] = high_lap_flags(sample, "pooled").astype(int)
        samples.append(sample.dropna(subset=["mu_hat"]))
    return samples[0], samples[1]


def _state(found: dict, thresholds: EstimateConfig) -> dict[str, float]:
    """The tests behind one simulated verdict: beta_3's and b1's t, the validation pattern, the placebo."""
    beta3 = term_row(found["detection"], "pre", BETA3)
    power = dict(zip(found["power"]["quantity"], found["power"]["value"].astype(float)))
    pattern = validation_pattern(found["validation"], found["notes"], thresholds.validation_alpha,
                                 thresholds.wild_below_clusters)
    feasible, passes, _ = placebo_judgement(found["placebo"], found["notes"], power, thresholds)
    return {"t_beta3": float(beta3["t"]) if beta3 is not None else math.nan,
            "t_b1": power.get("t_b1_standalone", math.nan),
            "beta3_share": power.get("beta3_share", math.nan),
            "validation": float(pattern.present), "placebo_passes": float(feasible and passes)}


def design_power(design: Design, behaviour: Behaviour, reps: int, seed: int = 0,
                 thresholds: EstimateConfig | None = None) -> dict[str, float]:
    """Over `reps` simulated panels of `design` answered with `behaviour`: the share of each verdict label
    ("share <label>"), `p_contamination`, the share with the validation pattern and with a passing placebo, the
    median t of beta_3 and of the standalone b1, and the median interaction share (power.csv's beta3_share)."""
    thresholds = thresholds or EstimateConfig(wild_bootstrap_reps=SIMULATION_WILD_REPS)
    labels, states = [], []
    for rep in range(reps):
        pre, post = simulated_panel(design, behaviour, seed + rep)
        found = simulate.tables(pre, post, thresholds)
        labels.append(decide(found["detection"], found["validation"], found["placebo"], found["power"],
                             thresholds, found["notes"]).label)
        states.append(_state(found, thresholds))
    labels, states = pd.Series(labels), pd.DataFrame(states)
    return {**asdict(design), "model": behaviour.name, "reps": reps,
            "p_contamination": float((labels == CONTAMINATION).mean()),
            "p_validation": float(states["validation"].mean()),
            "p_placebo_passes": float(states["placebo_passes"].mean()),
            "t_beta3_median": float(states["t_beta3"].median()), "t_b1_median": float(states["t_b1"].median()),
            "beta3_share_median": float(states["beta3_share"].median()),
            **{f"share {label}": float(share) for label, share in labels.value_counts(normalize=True).items()}}


def redrawn_panel(records: pd.DataFrame, seed: int, design: Design = Design(),
                  planted: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(pre, post) samples of the REAL panel of one model's pairs.csv rows with the outcomes redrawn from the panel's
    process (data/demo/make_calibrate_panel.py: firm N(0, firm_sd²) + trading-day N(0, day_sd²) shared by every firm
    on the same target date + noise N(0, outcome_noise²); its sentiment effect is 0) and everything else held: the
    firms, dates, arms, answers and LAP as measured. Where `simulated_panel` draws a new panel, this one keeps the
    date structure that makes answers and outcomes share a date component (the base model's recalled direction
    correlates 0.51 across firms on a date; 86-89% of pairs share their date), which a per-pair day effect hides.
    `planted`: an exposed pair's forecast and ud are right (or wrong) again relative to the redrawn direction, as in
    simulated_panel; for the base model (planted=False, a model never shown anything) the arms are pooled and every
    answer is held as measured (re-aligning its exposed pairs would turn that panel's chance hit rate into
    systematic anti-skill in every redraw)."""
    rng = np.random.default_rng(seed)
    frame = records.copy()
    entity, date = integer_ids(frame["entity_id"]) - 1, integer_ids(frame["target_date"]) - 1
    outcome = (rng.normal(0.0, design.firm_sd, entity.max() + 1)[entity]
               + rng.normal(0.0, design.day_sd, date.max() + 1)[date]
               + rng.normal(0.0, design.outcome_noise, len(frame)))
    direction = np.where(outcome > 0, 1, -1)
    if planted:
        relative = np.where(frame["arm"].to_numpy() == "exposed", frame["direction"].to_numpy() * direction, 1)
        frame["mu_hat"], frame["ud"] = frame["mu_hat"] * relative, frame["ud"] * relative
    frame = frame.assign(outcome=outcome, direction=direction)
    frame["ud_dir"] = recall_direction(frame["ud"], frame["lap_recall"])
    frame["entity_num"] = integer_ids(frame["entity_id"])
    frame["date_num"] = integer_ids(frame["target_date"])
    frame["period_num"] = integer_ids(pd.to_datetime(frame["target_date"]).dt.to_period("M").astype(str))
    samples = []
    for flag in (0, 1):
        sample = frame[frame["post"] == flag].dropna(subset=["mu_hat", "lap"]).copy()
        sample["high_lap"] = high_lap_flags(sample, "pooled").astype(int)
        samples.append(sample)
    return samples[0], samples[1]
