"""Text-drift diagnostics: could a post-cutoff fall of a text-based LAP be new language rather than missing memory?

Texts written after the cutoff differ from those before (new names, events, words); a text-based LAP (Min-K% and
the other measures of the Min-K% pass) falls on them whether or not anything was memorized, and on date-split
benchmarks classifiers that never look at the model beat the published detectors. Three checks, on the panel's
pre- and post-cutoff rows (release-gap rows left out). Every fold holds whole periods (period_num), so that one
period's news cannot be learned from itself: min(5, the periods of each sample) folds, seed 0 (stratified by
sample for the AUC; leave one period out at the limit); a sample with a single period gets no number, said so.

1. How well the text alone tells pre- from post-cutoff rows: the out-of-fold ROC AUC of a logistic regression on
   (a) the scored text's length in characters, (b) its scored tokens (minkprob.parquet n_tokens), (c) a bag of
   words of the `text` column (TF-IDF of words seen in at least 2 texts; the text column, not the prompt; words of
   letters only, without month or weekday names, so that no date gives the answer away; vocabulary and weights
   fitted on each training fold's texts only). The AUC is each held-out fold's own, averaged with the folds' pre x
   post pairs as weights (folds holding both samples in their held-out and training rows): scores pooled over
   the folds' models, whose intercepts differ with each training fold's share of post-cutoff rows, read below 0.5
   when nothing differs (0.42 on identical texts). AUC 0.5: the texts do not differ; near 1: they do, and a text
   measure's fall after the cutoff may be theirs.
2. How well the text alone predicts LAP: the out-of-fold R^2 (predictions of every held-out fold against the
   measure's own variance) of a ridge regression of each text measure on the same bag of words, and of a linear
   regression on length and tokens, on the pre-cutoff rows, the detection regression's sample (pooled over the
   cutoff, a fall of LAP from missing memory would read as "predicted" by words that date the period); at least
   10 rows with a value.
3. beta_3 with LAP residualised: each text measure regressed (OLS with a constant) on the scored text's tokens and
   its zlib-compressed bytes over the pre-cutoff rows the detection regression can use (outcome, forecast, the
   measure, tokens and the fixed-effect and cluster ids all present; reghdfe then drops singletons), the residual
   taken as LAP in the pre-cutoff detection regression (the protocol's estimator, with its standard errors: CRV1,
   or Newey-West on a single entity; a diagnostic: the verdict's wild bootstrap is not run again here): a beta_3
   that survives is not carried by length or compressibility. beta_3 does not depend on adding a constant to LAP,
   so the residual is not re-centred. A measure that tokens and zlib bytes explain entirely (a constant LAP, or an
   exact linear function of them) has no residualised beta_3, said so.

At most MAX_ROWS rows enter the classifiers (a seeded subsample beyond: scikit-learn's TF-IDF and logistic
regression on 10^6 texts take minutes and say no more). results/text_drift.csv: check, measure, value, se,
p_one_sided (the beta_3 rows'), N, detail; every check of every measure with a value is a row, NaN with its reason
where it cannot be computed (a measure without any value, not computed, has none, as in the robustness table).
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
COLUMNS = ["check", "measure", "value", "se", "p_one_sided", "N", "detail"]
EXPLAINED = 1e-12
"""Tokens and zlib bytes explain LAP entirely where the residual sum of squares is at most this share of LAP's total
sum of squares (an R2 of 1 to 12 digits), or where LAP's range is at most this share of its size (a constant but for
its last bits): float32 log-probs resolve neither, and the regression's rescaling would turn the rest into a
regressor."""


DATE_WORDS = ("january february march april may june july august september october november december jan feb mar "
              "apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday mon tue "
              "wed thu fri sat sun quarter").split()
"""Words left out of the bag of words with every token holding a digit (years, Q2, 10-K): they date a text."""


def _folds(periods: np.ndarray, labels: np.ndarray | None = None) -> tuple[object | None, str]:
    """(splitter, how): min(FOLDS, periods) folds of whole periods -- the periods of each sample for the AUC's
    `labels`, stratified by sample -- or None with the reason where a sample has fewer than 2 periods. A period that
    straddles the cutoff counts in both samples."""
    from sklearn.model_selection import GroupKFold, StratifiedGroupKFold

    classes = [periods] if labels is None else [periods[labels == c] for c in (0, 1)]
    folds = min(FOLDS, *(len(np.unique(part)) for part in classes))
    if folds < 2:
        return None, "a sample has fewer than 2 periods: no period can be held out"
    grouped = GroupKFold if labels is None else StratifiedGroupKFold
    return grouped(folds, shuffle=True, random_state=SEED), f"{folds} folds of whole periods"


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
    """The mean of the held-out folds' ROC AUCs, each weighted by its pre x post pairs, of a logistic regression
    (scikit-learn) on numeric features or on texts (`text`: the bag of words fitted within each fold), and how the
    folds were drawn. A fold is scored where its held-out and its training rows both hold both samples; NaN with the
    reason where none is (a period that straddles the cutoff counts in both samples, so 3 pre-cutoff periods, a
    straddling one and one post-cutoff period give 2 folds with one sample each) or a training fold has no word in
    two texts."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score

    splitter, how = _folds(periods, labels)
    if splitter is None:
        return math.nan, how
    aucs, pairs = [], []
    try:
        for train, test in splitter.split(features, labels, periods):
            if len(np.unique(labels[train])) < 2 or len(np.unique(labels[test])) < 2:
                continue
            model = _model(LogisticRegression(max_iter=2000), text).fit(features[train], labels[train])
            aucs.append(roc_auc_score(labels[test], model.predict_proba(features[test])[:, 1]))
            pairs.append(int(labels[test].sum()) * int((1 - labels[test]).sum()))
    except ValueError as err:  # TfidfVectorizer: "empty vocabulary" in a training fold
        return math.nan, f"not estimable ({str(err).splitlines()[0]})"
    if not aucs:
        return math.nan, f"{how}: no fold holds both samples in its held-out and its training rows"
    return float(np.average(aucs, weights=pairs)), f"{how}, the mean of {len(aucs)} folds' AUCs"


def _r2(features: np.ndarray, target: np.ndarray, periods: np.ndarray, text: bool) -> tuple[float, str]:
    """Out-of-fold R^2 of a ridge (bag of words, fitted within each fold) or linear regression (scikit-learn) and how
    the folds were drawn; NaN with the reason for a constant target or fewer than 2 periods."""
    from sklearn.linear_model import LinearRegression, Ridge
    from sklearn.metrics import r2_score
    from sklearn.model_selection import cross_val_predict

    if np.ptp(target) == 0:  # not np.std: a constant 1e-8 has std ~1e-24
        return math.nan, "a constant LAP"
    splitter, how = _folds(periods)
    if splitter is None:
        return math.nan, how
    try:
        predicted = cross_val_predict(_model(Ridge() if text else LinearRegression(), text), features, target,
                                      cv=splitter, groups=periods)
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


def _numeric(frame: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """Rows of `frame` whose `columns` are all finite (a minkprob.parquet without a row's token count)."""
    return np.isfinite(frame[columns].to_numpy(float)).all(axis=1)


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
    words = _has_words(sample["text"])
    shown = f"{len(sample)} rows" + (f" (a seeded subsample of {len(frame)})" if len(sample) < len(frame) else "")
    for name, columns in (("length (characters)", ["chars"]), ("scored tokens", ["n_tokens"]),
                          ("bag of words of the text", None)):
        used = sample[_numeric(sample, columns)] if columns else sample
        labels, periods = used["post"].astype(int).to_numpy(), used["period_num"].to_numpy()
        if columns and used.empty:
            value, how = math.nan, "no row has a value (minkprob.parquet without these rows)"
        elif columns:
            value, how = _auc(used[columns].to_numpy(float), labels, periods, False)
        else:
            value, how = _auc(used["text"].astype(str).to_numpy(), labels, periods, True) if words else \
                (math.nan, "no word in two texts")
        rows.append({"check": "AUC pre vs post from the text alone", "measure": name, "value": value,
                     "N": len(used), "detail": f"logistic regression, out-of-fold AUC ({how}) on {shown}"})
    pre = sample[sample["post"].astype(int) == 0]
    for measure in TEXT_MEASURES.values():
        if measure.column not in frame or not frame[measure.column].notna().any():
            continue  # not computed (no reference model; no moments from the endpoint), as in the robustness table
        for columns, model in ((["chars", "n_tokens"], "linear regression on length and scored tokens"),
                               (None, "ridge regression on the bag of words")):
            known = pre[_numeric(pre, [measure.column, *(columns or [])])]
            target, periods = known[measure.column].to_numpy(float), known["period_num"].to_numpy()
            if len(known) < 2 * FOLDS:
                value, how = math.nan, f"{len(known)} pre-cutoff rows with a value, fewer than {2 * FOLDS}"
            elif columns:
                value, how = _r2(known[columns].to_numpy(float), target, periods, False)
            else:
                value, how = _r2(known["text"].astype(str).to_numpy(), target, periods, True) if words else \
                    (math.nan, "no word in two texts")
            rows.append({"check": "R2 of LAP from the text alone", "measure": measure.name, "value": value,
                         "N": len(known), "detail": f"{model}, out-of-fold R2 ({how}) on the pre-cutoff rows of "
                                                    f"{shown}"})
        rows += _residualised(frame, measure.name, measure.column, config)
    return pd.DataFrame(rows, columns=COLUMNS)


def _residualised(frame: pd.DataFrame, name: str, column: str, config: RunConfig) -> list[dict]:
    """beta_3 of the pre-cutoff detection regression with LAP as is and with LAP residualised on tokens and zlib
    bytes (module docstring, check 3)."""
    clusters = list(CLUSTERS[config.estimate.cluster])
    needed = [column, "n_tokens", "zlib_bytes", "outcome", "mu_hat", "entity_num", "period_num", *clusters]
    pre = frame[frame[list(dict.fromkeys(needed))].notna().all(axis=1) & (frame["post"] == 0)]
    design = np.column_stack([np.ones(len(pre)), pre[["n_tokens", "zlib_bytes"]].to_numpy(float)])
    values = pre[column].to_numpy(float)
    residual, unexplained = None, f"{len(pre)} pre-cutoff rows, not more than the residualisation's coefficients"
    if len(pre) and len(pre) > np.linalg.matrix_rank(design):
        coef, *_ = np.linalg.lstsq(design, values, rcond=None)  # numpy's least squares: three columns, no inference
        left = values - design @ coef
        total = float(np.sum((values - values.mean()) ** 2))
        if np.ptp(values) <= EXPLAINED * np.abs(values).max() or float(np.sum(left ** 2)) <= EXPLAINED * total:
            unexplained = "tokens and zlib bytes explain LAP entirely (a constant, or a linear function of them)"
        else:
            residual = pd.Series(left, index=pre.index)
    rows = []
    for how, lap in (("as is", pre[column]), ("residualised on tokens and zlib bytes", residual)):
        check = f"beta_3, LAP {how}"
        if lap is None:
            rows.append({"check": check, "measure": name, "value": math.nan, "N": len(pre),
                         "detail": f"beta_3 with LAP {how}: not estimable ({unexplained})"})
            continue
        try:
            result = fit(pre.assign(lap=lap), "outcome", DETECTION_TERMS, config.estimate.newey_lag,
                         CLUSTERS[config.estimate.cluster])
            row = result.to_rows("pre").set_index("term").loc["c.mu_hat#c.lap"]
            value, n = float(row["coef"]), int(result.N)
            errors = "CRV1" if result.vce == "cluster" else result.vce.replace("newey", "Newey-West")
            detail = (f"beta_3 with LAP {how}: se {row['se']:.4g}, t {row['t']:.3g}, one-sided p "
                      f"{row['p_one_sided']:.4f} ({errors} in both rows, a like-for-like comparison: the verdict's "
                      "p may be the wild bootstrap's)" if math.isfinite(value) else
                      f"beta_3 with LAP {how}: omitted (collinear)")
            se, p = (float(row["se"]), float(row["p_one_sided"])) if math.isfinite(value) else (math.nan, math.nan)
        except (LapbiasError, KeyError, ValueError, np.linalg.LinAlgError) as err:
            reason = str(err).splitlines()[0] if str(err) else type(err).__name__
            value, se, p, n, detail = math.nan, math.nan, math.nan, len(pre), \
                f"beta_3 with LAP {how}: not estimable ({reason})"
        rows.append({"check": check, "measure": name, "value": value, "se": se, "p_one_sided": p, "N": n,
                     "detail": detail})
    return rows


def run(config: RunConfig, layout: Layout) -> pd.DataFrame:
    """results/text_drift.csv from the panel and minkprob.parquet (when the Min-K% pass ran)."""
    panel = read_parquet(layout.derived_file("panel.parquet"))
    path = layout.derived_file("minkprob.parquet")
    table = diagnostics(panel, config, read_parquet(path) if path.exists() else None)
    write_csv(table, layout.results / "text_drift.csv")
    return table
