"""`lapbias ess CONFIG`: every outcome × comparator of the [ess] section, written under results/ess/.

Files (ARCHITECTURE.md: the ESS audit owns data/derived/ess/ and results/ess/):
  data/derived/ess/llm_predictions.parquet   the LLM prediction of every analysis row (and the cached answer)
  results/ess/curve.csv                      error curve with intervals and per-n tests, per outcome × comparator
  results/ess/ess.csv                        ESS plug-in and one-sided lower bound per outcome × comparator
                                             (the paper's Table 1)
  results/ess/llm.csv                        the LLM's error per outcome (eq. 3.1) with its interval
  results/ess/run_config.json                the [ess] configuration of the run
  results/ess/ESS.md                         the section as a page of its own (figure links from results/ess/)
  results/ess/SECTION.md                     the section results/REPORT.md includes (report/sections.py)
  results/figures/ess_curve.png              error curves with bands, the LLM's line, the ESS marked
Everything under results/ is staged and moved in together when the audit has finished, each CSV stamped with the
run's `run_id` and every file listed with its sha256 in results/.ess-manifest.json (lapbias/stage.py).
"""

from __future__ import annotations

import json
import sys

import pandas as pd
from tqdm import tqdm

from ..io import Layout, write_csv, write_parquet, write_text
from ..llm.cache import ResponseCache
from ..stage import new_run_id, staged_outputs
from . import data as ess_data
from .audit import Settings, curve, llm_risk, metric_interval, reference_risks, summary
from .comparators import from_spec
from .config import EssConfig, Outcome, snapshot
from .llm_predict import TASK, UNANSWERED, predict
from .losses import make_loss


def results_dir(layout: Layout):
    return layout.results / "ess"


def _outcome_data(frame: pd.DataFrame, config: EssConfig, outcome: Outcome, backend, cache, confirm):
    ess_data.check_columns(frame, config, outcome)
    sample = ess_data.analysis_sample(frame, outcome)
    if outcome.prompt:
        ess_data.check_persona_fields(sample, outcome)
    ess_data.check_grid(config.grid, len(sample), outcome.name)
    X = ess_data.features(sample, config)
    y = ess_data.transformed_outcome(sample, outcome) if outcome.cate else sample[outcome.column].to_numpy()
    if not outcome.discrete:
        y = y.astype(float)
    if outcome.llm_column:
        answers = pd.DataFrame({"ess_row": sample["ess_row"], "response": "", "llm_prediction": sample[outcome.llm_column],
                                "cache_key": ""})
    else:
        answers = predict(sample, config, outcome, backend, cache, confirm)
    llm_pred = answers["llm_prediction"].to_numpy(float if not outcome.discrete else object)
    return X, y, llm_pred, answers


def answer_counts(outcome: Outcome, answers: pd.DataFrame) -> dict:
    """What the LLM answered: how many rows have a prediction and how many are unanswered, how many distinct
    predictions there are (a constant rule is worth stating), the count of each label (discrete outcomes) and the
    most common unanswered answers, as JSON."""
    predicted = answers["llm_prediction"]
    unanswered = (predicted == UNANSWERED) if outcome.discrete else pd.Series(False, index=answers.index)
    counts, top = {}, []
    if outcome.discrete:
        values = predicted[~unanswered]
        if outcome.prompt:
            words: dict = {}
            for word, value in outcome.labels.items():
                words.setdefault(value, word)                   # a value's first label names it
            counts = {word: int((values == value).sum()) for value, word in words.items()}
        else:
            counts = {str(v): int(n) for v, n in values.value_counts().items()}
        top = [[text[:60], int(n)] for text, n in answers.loc[unanswered, "response"].value_counts().head(3).items()]
    return {"llm_answered": int((~unanswered).sum()), "llm_unanswered": int(unanswered.sum()),
            "llm_distinct": int(predicted[~unanswered].nunique()),
            "llm_answers": json.dumps(counts, ensure_ascii=False),
            "llm_unanswered_examples": json.dumps(top, ensure_ascii=False)}


def run(config: EssConfig, layout: Layout, backend, confirm) -> dict[str, pd.DataFrame]:
    """The whole audit (module docstring); returns the tables it wrote."""
    frame = ess_data.read(config)
    ess_data.check_value_labels(frame, config)
    cache = ResponseCache(layout.raw_file(TASK))
    settings = Settings(tuple(config.grid), config.alpha, config.band_level, config.test_variance,
                        config.min_blocks, config.seed)
    curves, table, llm_rows, predictions = [], [], [], []
    prepared = [(outcome, *_outcome_data(frame, config, outcome, backend, cache, confirm)) for outcome in config.outcomes]
    total = sum(len(o.comparators) * (len(y) // n) for o, _, y, _, _ in prepared for n in config.grid)
    with tqdm(total=total, desc="ess block-out CV", unit="fit", file=sys.stderr) as bar:
        for outcome, X, y, llm_pred, answers in prepared:
            loss = make_loss(outcome.loss, y, outcome.positive, f"[ess.outcomes] {outcome.name!r} loss")
            risk, se = llm_risk(loss, y, llm_pred)
            value, low, high = metric_interval(loss, risk, se, config.band_level)
            constant_risk, one_observation_risk = reference_risks(loss, y, outcome.discrete)
            llm_rows.append({"outcome": outcome.name, "loss": loss.name, "metric": loss.metric(risk)[0], "N": len(y),
                             "llm_risk": risk, "llm_se": se, "metric_value": value, "metric_ci_low": low,
                             "metric_ci_high": high, **answer_counts(outcome, answers),
                             "constant_rule_risk": constant_risk, "one_observation_risk": one_observation_risk,
                             "source": outcome.llm_column or "prompt", "cate": bool(outcome.cate),
                             "arm": json.dumps(outcome.arm) if outcome.arm else ""})
            unanswered = llm_rows[-1]["llm_unanswered"]
            predictions.append(answers.assign(outcome=outcome.name, llm_prediction=answers["llm_prediction"].astype(str)))
            for index, spec in enumerate(outcome.comparators):
                comparator = from_spec(spec, outcome.discrete, loss.name, config.seed, config.n_jobs, config.trees,
                                       f"[ess.outcomes] {outcome.name!r} comparators[{index}]")
                result = curve(X, y, llm_pred, loss, comparator, settings, outcome.name, tick=lambda _: bar.update())
                curves.append(result)
                table.append({"outcome": outcome.name, "loss": loss.name, "llm_error": risk, "N": len(y),
                              "llm_unanswered": unanswered, **summary(result, settings)})
    tables = {"curve": pd.concat(curves, ignore_index=True), "ess": pd.DataFrame(table), "llm": pd.DataFrame(llm_rows)}
    write_parquet(pd.concat(predictions, ignore_index=True), layout.derived / "ess" / "llm_predictions.parquet")
    from ..report import sections
    from .report import figure, markdown, section

    # results/ess/, the figure and the section are moved in together and listed in results/.ess-manifest.json
    with staged_outputs(layout.results, TASK, new_run_id()) as folder:
        staged = layout.staged(folder)
        out = results_dir(staged)
        for name, table_frame in tables.items():
            write_csv(table_frame, out / f"{name}.csv")
        write_text(out / "run_config.json", json.dumps(snapshot(config), indent=2, default=str) + "\n")
        figure(tables, staged.figures / "ess_curve.png")
        write_text(out / "ESS.md", "\n".join(markdown(out, "../figures")) + "\n")
        sections.write(staged.results, TASK, lambda: section(out))
    return tables
