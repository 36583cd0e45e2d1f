"""Text-drift diagnostics: could a post-cutoff fall of a text-based LAP be new language rather than missing memory?

Texts written after the cutoff differ from those before (new names, events, words); a text-based LAP (Min-K% and
the other measures of the Min-K% pass) falls on them whether or not anything was memorized, and on date-split
benchmarks classifiers that never look at the model beat the published detectors. Three checks, on the panel's
pre- and post-cutoff rows (release-gap rows left out):

1. How well the text alone tells pre- from post-cutoff rows: the out-of-fold ROC AUC (5 folds, fixed seed, whole
   periods kept in one fold where each sample has 5 periods, so that one day's news cannot be learned from itself) of
   a logistic regression on (a) the scored text's length in characters, (b) its scored tokens (minkprob.parquet
   n_tokens), (c) a bag of words of the `text` column (TF-IDF of words seen in at least 2 texts; the text column,
   not the prompt; words of letters only, without month or weekday names, so that no date gives the answer away;
   vocabulary and weights fitted on each training fold's texts only). AUC 0.5: the texts do not differ; near 1: they
   do, and a text measure's fall after the cutoff may be theirs.
2. How well the text alone predicts LAP: the out-of-fold R^2 of a ridge regression of each text measure on the same
   bag of words (and of a linear regression on length and tokens), on the pre-cutoff rows, the detection
   regression's sample (pooled over the cutoff, a fall of LAP from missing memory would read as "predicted" by
   words that date the period), folds of whole periods where there are 5.
3. beta_3 with LAP residualised: each text measure regressed (OLS with a constant, on the pre-cutoff rows with
   values) on the scored text's tokens and its zlib-compressed bytes, the residual taken as LAP in the pre-cutoff
   detection regression (the protocol's estimator and clusters; the CRV1 p, a diagnostic: the verdict's wild
   bootstrap is not run again here): a beta_3 that survives is not carried by length or compressibility. beta_3
   does not depend on adding a constant to LAP, so the residual is not re-centred.

At most MAX_ROWS rows enter the classifiers (a seeded subsample beyond: scikit-learn's TF-IDF and logistic
regression on 10^6 texts take minutes and say no more). results/text_drift.csv: check, measure, value, N, detail.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..config import RunConfig
from ..errors import LapbiasError
from ..io import Layout, read_parquet, write_csv
from ..signals.measures import TEXT_MEASURES
from ..signals.measures.zlib_ratio import zlib_bytes
from ..signals.minkprob import scored_text
from .protocol import DETECTION_TERMS
from .specification import CLUSTERS, fit

MAX_ROWS = 20_000
FOLDS, SEED = 5, 0
COLUMNS = ["check", "measure", "value", "N", "detail"]


DATE_WORDS = ("january february march april may june july august september october november december jan feb mar "
              "apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday mon tue "
              "wed thu fri sat sun quarter").split()
"""Words left out of the bag of words with every token holding a digit (years, Q2, 10-K): they date a text."""


def _folds(periods: np.ndarray, labels: np.ndarray | None = None) -> tuple[object, np.ndarray | None, str]:
    """(splitter, groups, words): whole periods per fold where there are FOLDS periods (in each class, for the AUC's
    `labels`), else rows; stratified by class where `labels` are given."""
    from sklearn.model_selection import GroupKFold, KFold, StratifiedGroupKFold, StratifiedKFold

    classes = [periods] if labels is None else [periods[labels == c] for c in (0, 1)]
    if all(len(np.unique(part)) >= FOLDS for part in classes):
        grouped = GroupKFold if labels is None else StratifiedGroupKFold
        return grouped(FOLDS, shuffle=True, random_state=SEED), periods, "folds of whole periods"
    rows = KFold if labels is None else StratifiedKFold
    return rows(FOLDS, shuffle=True, random_state=SEED), None, "folds of rows (too few periods to group)"


def _bag_of_words():
    """The TF-IDF of words of letters seen in at least 2 texts, without DATE_WORDS (scikit-learn). It sits inside each
    model's pipeline, so that every fold fits its own vocabulary and weights on its training texts only."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(min_df=2, token_pattern=r"(?u)\b[^\W\d_]{2,}\b", stop_words=DATE_WORDS, lowercase=True)


def _model(estimator, text: bool):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(_bag_of_words(), estimator) if text else make_pipeline(StandardScaler(), estimator)


def _auc(features: np.ndarray, labels: np.ndarray, periods: np.ndarray, text: bool) -> tuple[float, str]:
    """Out-of-fold ROC AUC of a logistic regression (scikit-learn) on numeric features or on texts (`text`: the bag
    of words fitted within each fold) and how the folds were drawn; NaN when a class has fewer rows than folds or a
    training fold has no word in two texts."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import cross_val_predict

    if min(np.bincount(labels, minlength=2)) < FOLDS:
        return math.nan, "a sample has fewer rows than folds"
    splitter, groups, how = _folds(periods, labels)
    try:
        scores = cross_val_predict(_model(LogisticRegression(max_iter=2000), text), features, labels, cv=splitter,
                                   groups=groups, method="predict_proba")[:, 1]
    except ValueError as err:  # TfidfVectorizer: "empty vocabulary" in a training fold
        return math.nan, f"not estimable ({str(err).splitlines()[0]})"
    return float(roc_auc_score(labels, scores)), how


def _r2(features: np.ndarray, target: np.ndarray, periods: np.ndarray, text: bool) -> tuple[float, str]:
    """Out-of-fold R^2 of a ridge (bag of words, fitted within each fold) or linear regression (scikit-learn) and how
    the folds were drawn; NaN below 2 * FOLDS rows or for a constant target."""
    from sklearn.linear_model import LinearRegression, Ridge
    from sklearn.metrics import r2_score
    from sklearn.model_selection import cross_val_predict

    if len(target) < 2 * FOLDS or np.ptp(target) == 0:  # not np.std: a constant 1e-8 has std ~1e-24
        return math.nan, "too few rows or a constant LAP"
    splitter, groups, how = _folds(periods)
    try:
        predicted = cross_val_predict(_model(Ridge() if text else LinearRegression(), text), features, target,
                                      cv=splitter, groups=groups)
    except ValueError as err:
        return math.nan, f"not estimable ({str(err).splitlines()[0]})"
    return float(r2_score(target, predicted)), how


def _has_words(texts: pd.Series) -> bool:
    """Some word of letters occurs in two texts (else there is no bag of words to fit)."""
    try:
        _bag_of_words().fit(texts.astype(str))
    except ValueError:  # empty vocabulary
        return False
    return True


def diagnostics(panel: pd.DataFrame, config: RunConfig, minkprob: pd.DataFrame | None) -> pd.DataFrame:
    """results/text_drift.csv's rows (module docstring)."""
    rows: list[dict] = []
    frame = panel[panel["post"].notna()].copy()
    if minkprob is None or frame.empty:
        return pd.DataFrame([{"check": "skipped", "measure": "", "value": math.nan, "N": len(frame),
                              "detail": "no Min-K% pass (minkprob.parquet) or no row in either sample"}],
                            columns=COLUMNS)
    frame = frame.merge(minkprob[["row_id", "n_tokens"]], on="row_id", how="left", validate="one_to_one")
    scored = frame.apply(lambda row: scored_text(row, config), axis=1)
    frame["chars"] = scored.str.len()
    frame["zlib_bytes"] = scored.map(zlib_bytes)
    sample = frame.sample(MAX_ROWS, random_state=SEED) if len(frame) > MAX_ROWS else frame
    labels = sample["post"].astype(int).to_numpy()
    periods = sample["period_num"].to_numpy() if "period_num" in sample else np.arange(len(sample))
    texts = sample["text"].astype(str).to_numpy()
    words = _has_words(sample["text"])
    shown = f"{len(sample)} rows" + (f" (a seeded subsample of {len(frame)})" if len(sample) < len(frame) else "")
    for name, features, text in (("length (characters)", sample[["chars"]].to_numpy(float), False),
                                 ("scored tokens", sample[["n_tokens"]].to_numpy(float), False),
                                 ("bag of words of the text", texts if words else None, True)):
        value, how = _auc(features, labels, periods, text) if features is not None else \
            (math.nan, "no word in two texts")
        rows.append({"check": "AUC pre vs post from the text alone", "measure": name, "value": value,
                     "N": len(sample), "detail": f"logistic regression, {FOLDS}-fold out-of-fold AUC ({how}) on "
                                                 f"{shown}"})
    pre = sample[sample["post"].astype(int) == 0]
    for measure in TEXT_MEASURES.values():
        if measure.column not in pre or pre[measure.column].notna().sum() < 2 * FOLDS:
            continue
        known = pre[pre[measure.column].notna()]
        target = known[measure.column].to_numpy(float)
        known_periods = known["period_num"].to_numpy() if "period_num" in known else np.arange(len(known))
        for features, text, model in ((known[["chars", "n_tokens"]].to_numpy(float), False,
                                       "linear regression on length and scored tokens"),
                                      (known["text"].astype(str).to_numpy() if words else None, True,
                                       "ridge regression on the bag of words")):
            if features is None:
                continue
            value, how = _r2(features, target, known_periods, text)
            rows.append({"check": "R2 of LAP from the text alone", "measure": measure.name, "value": value,
                         "N": len(known), "detail": f"{model}, {FOLDS}-fold out-of-fold R2 ({how}) on the "
                                                    f"pre-cutoff rows of {shown}"})
    for measure in TEXT_MEASURES.values():
        if measure.column in frame and frame[measure.column].notna().any():
            rows += _residualised(frame, measure.name, measure.column, config)
    return pd.DataFrame(rows, columns=COLUMNS)


def _residualised(frame: pd.DataFrame, name: str, column: str, config: RunConfig) -> list[dict]:
    """beta_3 of the pre-cutoff detection regression with LAP as is and with LAP residualised on tokens and zlib bytes."""
    pre = frame[frame[[column, "n_tokens", "zlib_bytes"]].notna().all(axis=1) & (frame["post"] == 0)]
    if len(pre) < 3:
        return []
    design = np.column_stack([np.ones(len(pre)), pre[["n_tokens", "zlib_bytes"]].to_numpy(float)])
    values = pre[column].to_numpy(float)
    coef, *_ = np.linalg.lstsq(design, values, rcond=None)  # numpy's least squares: three columns, no inference
    residual = pd.Series(values - design @ coef, index=pre.index)
    rows = []
    for how, lap in (("as is", pre[column]), ("residualised on tokens and zlib bytes", residual)):
        try:
            result = fit(pre.assign(lap=lap), "outcome", DETECTION_TERMS, config.estimate.newey_lag,
                         CLUSTERS[config.estimate.cluster])
            row = result.to_rows("pre").set_index("term").loc["c.mu_hat#c.lap"]
            value, n = float(row["coef"]), int(result.N)
            detail = (f"beta_3 with LAP {how}: se {row['se']:.4g}, t {row['t']:.3g}, one-sided p "
                      f"{row['p_one_sided']:.4f} (CRV1 in both rows, a like-for-like comparison: the verdict's "
                      "p may be the wild bootstrap's)" if math.isfinite(value) else
                      f"beta_3 with LAP {how}: omitted (collinear)")
        except (LapbiasError, KeyError, ValueError, np.linalg.LinAlgError) as err:
            reason = str(err).splitlines()[0] if str(err) else type(err).__name__
            value, n, detail = math.nan, len(pre), f"beta_3 with LAP {how}: not estimable ({reason})"
        rows.append({"check": f"beta_3, LAP {how}", "measure": name, "value": value, "N": n, "detail": detail})
    return rows


def run(config: RunConfig, layout: Layout) -> pd.DataFrame:
    """results/text_drift.csv from the panel and minkprob.parquet (when the Min-K% pass ran)."""
    panel = read_parquet(layout.derived_file("panel.parquet"))
    path = layout.derived_file("minkprob.parquet")
    table = diagnostics(panel, config, read_parquet(path) if path.exists() else None)
    write_csv(table, layout.results / "text_drift.csv")
    return table
