"""Whether what a stage reads is current: the one rule, stage by stage.

Every stage records what it read, and every later stage compares that record with the files and the configuration as
they are now, refusing with a StaleResultsError (one line: what changed, and what to rerun) rather than estimating or
reporting old rows under new settings. Records written by older versions, or files written through the Python API
without one, are not compared (the panel is then compared with input.parquet row by row).

| stage | records (written by the stage) | compared here, before |
|---|---|---|
| validate | data/derived/data_source.json: the data file's sha256, the [data.columns] mapping, the target-date settings, the --sample subsample (data/validate.py) | the signal steps, panel, estimate: `source_unchanged`; rebuild draws the subsample again |
| forecast, recall, minkprob | each parquet's metadata: input.parquet's sha256 and the settings its queries read (signals/provenance.py) | panel: `signals_current` |
| panel | panel.parquet's metadata: the sha256 of input.parquet and of each signal file, the signals' settings; data/derived/.panel-manifest.json (panel.py) | estimate: `panel_current` (the Stata engine also the .dta files' manifest) |
| estimate | results/run_config.json: the configuration, the run id, the sha256 of every input; results/.estimate-manifest.json (lapbias/stage.py) | report: `results_current` |

`check(stage, config, layout)` runs what CHECKS lists for the stage; a new stage or input is one entry there."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from .config import RunConfig, settings_difference, snapshot, study_settings
from .data.derived import read_checked
from .data.validate import SOURCE_RECORD, target_date_settings, validated_record
from .io import Layout
from .panel import BUILT_FROM_KEY, SIGNAL_FILES, SIGNALS_KEY, high_lap_flags, period_labels, split
from .signals import measures, provenance
from .stage import (RERUN_AFTER_VALIDATE, VALIDATED, StaleResultsError, check_manifest, check_run, fingerprint,
                    read_run_record)


def source_unchanged(config: RunConfig, layout: Layout, **_context) -> None:
    """The data file is the one `validate` read into data/derived/input.parquet (same sha256): a data file edited
    or replaced since (a corrected outcome, rows dropped) would otherwise be panelled, estimated and reported from
    the old rows by every later step run on its own. With [data] path set, an input.parquet without the record is
    refused (the record deleted, the file then edited: the rows validated before would be reported under the
    edited file's sha256); without it (stage files written through the Python API) there is nothing to compare."""
    record_path = layout.derived_file(SOURCE_RECORD)
    rerun = ("rerun `lapbias validate`, then the later steps (`lapbias run` does all of them, answering every "
             "query already asked from the cache)")
    if not record_path.exists() and config.data.path and layout.derived_file("input.parquet").exists():
        raise StaleResultsError(f"{record_path} (the record of the data file `validate` read and its sha256) is "
                                f"missing: whether data/derived/input.parquet holds {config.data.path} as it is now "
                                f"cannot be told; {rerun} (in Python: lapbias.stages.validate(config))")
    if not record_path.exists() or not config.data.path:
        return
    try:
        recorded = json.loads(record_path.read_text(encoding="utf-8"))
        digest = str(recorded["sha256"])
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        raise StaleResultsError(f"{record_path} is damaged; {rerun}") from None
    path = Path(config.data.path)
    if not path.is_file():
        raise StaleResultsError(f"[data] path = {config.data.path!r} does not exist (data/derived/input.parquet was "
                                f"validated from {recorded.get('data')!r}); {rerun}")
    if fingerprint(path) != digest:
        was = "" if str(recorded.get("data")) == str(config.data.path) else f" (it validated {recorded.get('data')!r})"
        raise StaleResultsError(f"{config.data.path} changed since `lapbias validate` read it{was}: "
                                f"data/derived/input.parquet holds the rows validated then; {rerun}")
    if recorded.get("target_dates") != target_date_settings(config) and ("target_dates" in recorded
                                                                       or config.data.target_date_from):
        raise StaleResultsError(f"the target-date settings changed since `lapbias validate` derived the target dates "
                                f"(it used {json.dumps(recorded.get('target_dates'))}, this config "
                                f"{json.dumps(target_date_settings(config))}: [data] target_date_from and "
                                f"text_time_zone, [study] horizon and calendar): data/derived/input.parquet holds the dates derived then; {rerun}")
    chosen = recorded.get("on_conflicting_outcome", config.data.on_conflicting_outcome)  # older records lack it
    if chosen != config.data.on_conflicting_outcome:
        raise StaleResultsError(f"[data] on_conflicting_outcome changed since `lapbias validate` read the data file "
                                f"(it was {json.dumps(chosen)}, this config "
                                f"{json.dumps(config.data.on_conflicting_outcome)}): data/derived/input.parquet holds "
                                f"the rows kept then; {rerun}")
    if "columns" in recorded and recorded["columns"] != config.data.columns:  # records of older versions lack it
        raise StaleResultsError(f"[data.columns] changed since `lapbias validate` read the data file (it mapped "
                                f"{json.dumps(recorded['columns'])}, this config {json.dumps(config.data.columns)}): "
                                f"data/derived/input.parquet holds the columns mapped then; {rerun}")


def _differs(built: pd.Series, expected: pd.Series) -> pd.Series:
    """Rows where two columns differ, a missing value equal only to a missing value."""
    built, expected = built.astype("float64"), expected.astype("float64")
    return ~(np.isclose(built, expected, rtol=0, atol=1e-12) | (built.isna() & expected.isna()))




def _built_with(panel: pd.DataFrame, config: RunConfig, path) -> None:
    """The panel was built with the config's cutoff, frequency, LAP measure and high_lap rule (a config edited
    after `lapbias panel` would otherwise be estimated on the old split and recorded as the new one in
    results/run_config.json). Each column is recomputed from the panel's own columns, as `assemble` does."""
    needed = list(dict.fromkeys(["target_date", "post", "period", "lap", "lap_recall", "lap_mink",
                                 measures.configured(config).column, "high_lap", "entity_id"]))
    if any(c not in panel.columns for c in needed):
        raise StaleResultsError(f"{path} lacks column(s) {[c for c in needed if c not in panel.columns]}; rerun "
                                "`lapbias panel`")
    checks = {
        f"[study] cutoff = {config.study.cutoff}"
        + (f", release_date = {config.study.release_date}" if config.study.release_date else ""): (
            "post", panel["post"], split(panel["target_date"], config)[1]),
        f'[estimate] lap_measure = "{config.estimate.lap_measure}"': (
            "lap", panel["lap"], panel[measures.configured(config).column]),
    }
    for setting, (column, built, expected) in checks.items():
        bad = _differs(built, expected)
        if bad.any():
            row = panel.loc[bad.idxmax()]
            raise StaleResultsError(
                f"{path} was not built with {setting} (e.g. row_id {row.get('row_id', '?')}, target_date "
                f"{row['target_date']:%Y-%m-%d}: {column} = {built[bad.idxmax()]} in the panel, {expected[bad.idxmax()]} "
                "by the config); rerun `lapbias panel`, then `lapbias estimate`")
    period = period_labels(panel["target_date"], config.study.frequency)[0]
    if not period.equals(panel["period"].astype(str)):
        first = (period != panel["period"].astype(str)).idxmax()
        raise StaleResultsError(f"{path} was not built with [study] frequency = \"{config.study.frequency}\" (e.g. "
                                f"target_date {panel['target_date'][first]:%Y-%m-%d}: period {panel['period'][first]!r} "
                                f"in the panel, {period[first]!r} by the config); rerun `lapbias panel`, then "
                                "`lapbias estimate`")
    expected = pd.Series(np.nan, index=panel.index)
    for _, sample in panel.groupby("post"):
        expected[sample.index] = high_lap_flags(sample, config.panel.high_lap).astype("float64")
    bad = _differs(panel["high_lap"], expected)
    if bad.any():
        raise StaleResultsError(f"{path} was not built with [panel] high_lap = \"{config.panel.high_lap}\" ({int(bad.sum())} "
                                f"row(s) differ, e.g. row_id {panel.get('row_id', panel.index)[bad.idxmax()]}); rerun "
                                "`lapbias panel`, then `lapbias estimate`")




def _signals_settings(panel: pd.DataFrame, config: RunConfig, path) -> None:
    """The signals in the panel were derived under the config's settings (the records `build` copied from the
    signal files): a label map, prompt, model or K edited after `lapbias panel` would otherwise be estimated on the
    old signals and recorded as the new settings in results/run_config.json. Every signal step the edit concerns is
    named (a forecast prompt is also the text Min-K% scores). Panels without records (an older version, the Python
    API) are not checked."""
    stale = {task: provenance.settings_problem(recorded, config, task, path)
             for task, recorded in panel.attrs.get(SIGNALS_KEY, {}).items()}
    stale = {task: problem for task, problem in stale.items() if problem}
    if stale:
        raise StaleResultsError(_rerun_signals(stale, config, "estimate"))


AFTER_SIGNALS = {"panel": ("panel",), "estimate": ("panel", "estimate"), "report": ("panel", "estimate", "report")}
"""The steps to rerun after the signal steps, for the stage that refused."""


def _rerun_signals(stale: dict[str, str], config: RunConfig, stage: str) -> str:
    """One refusal for every stale signal file (task -> what is stale): the first problem, the other files, and every
    step to rerun, the signal steps with --yes (they ask the model, from the cache where it can answer)."""
    problems = list(stale.values())
    files = list(dict.fromkeys(problem.partition(" was ")[0] for problem in problems))  # the panel's: one file
    also = f" (so was {' and '.join(files[1:])})" if len(files) > 1 else ""
    steps = [f"`lapbias {task} --yes`" for task in stale] + [f"`lapbias {step}`" for step in AFTER_SIGNALS[stage]]
    rerun = (f"{problems[0]}{also}: rerun {', '.join(steps[:-1])}, then {steps[-1]} (the signal steps ask the model "
             f"only what the cache does not hold), {provenance.RUN_ALL}")
    if "minkprob" in stale and measures.configured(config).task != "minkprob":
        rerun += "; or remove data/derived/minkprob.parquet and rerun `lapbias panel` (the recall LAP is used)"
    return rerun


def _built_from_files(panel: pd.DataFrame, layout: Layout, path) -> None:
    """The panel was built from data/derived/input.parquet and the signal files as they are now (the sha256 `build`
    recorded): a corrected text or date validated again, or a signal file rewritten since (cache lines answered
    again, Min-K% run for the first time), would otherwise be estimated on the old panel. Panels without the record
    (an older version, the Python API) are checked by _built_from alone."""
    built_from = panel.attrs.get(BUILT_FROM_KEY)
    if not built_from:
        return
    rerun = f"rerun `lapbias panel`, then `lapbias estimate`, {provenance.RUN_ALL}"
    if built_from.get("input.parquet") != _fingerprint_or_none(layout.derived_file("input.parquet")):
        raise StaleResultsError(f"{path} was built from another data/derived/input.parquet (`lapbias validate` ran "
                                "again since `lapbias panel`): its signals answer the rows validated then; rerun the "
                                f"signal steps and `lapbias panel`, {provenance.RUN_ALL}")
    for name in SIGNAL_FILES:
        now = _fingerprint_or_none(layout.derived_file(name))
        if name in built_from and built_from[name] != now:
            raise StaleResultsError(f"data/derived/{name} {'is missing' if now is None else 'changed'} since "
                                    f"`lapbias panel` merged it into {path}; {rerun}")
        if name not in built_from and now is not None:
            raise StaleResultsError(f"data/derived/{name} was written after `lapbias panel` built {path} without it; "
                                    f"{rerun}")




def _fingerprint_or_none(path) -> str | None:
    return fingerprint(path) if path.is_file() else None




def _built_from(panel: pd.DataFrame, inputs: pd.DataFrame, path) -> None:
    """The panel holds the rows of data/derived/input.parquet as it is now (row ids in order, and every input column
    the panel carries: texts, dates, names, outcomes, moderators): a `validate` rerun after a corrected data file, a
    column mapping or --sample would otherwise leave the panel of the previous validation to be estimated and recorded
    as the new one. The only check of a panel without the record of the files it was built from (_built_from_files:
    an older version, the Python API)."""
    rerun = "rerun `lapbias panel`, then `lapbias estimate`"
    ids, built_ids = inputs["row_id"].astype(str).tolist(), panel["row_id"].astype(str).tolist()
    if ids != built_ids:
        first = next((i for i, (a, b) in enumerate(zip(ids, built_ids)) if a != b), min(len(ids), len(built_ids)))
        missing = ids[first] if first < len(ids) else built_ids[first]  # the first row where the two part
        raise StaleResultsError(f"{path} was not built from data/derived/input.parquet as it is now ({len(built_ids)} "
                                f"rows in the panel, {len(ids)} validated; e.g. row_id {missing}); {rerun}")
    for column in [c for c in inputs.columns if c in panel.columns and c != "row_id"]:
        built, validated = panel[column].reset_index(drop=True), inputs[column].reset_index(drop=True)
        if pd.api.types.is_numeric_dtype(validated) and pd.api.types.is_numeric_dtype(built):
            bad = _differs(built, validated)
        else:
            bad = ~((built.astype(str) == validated.astype(str)) | (built.isna() & validated.isna()))
        if bad.any():
            i = int(bad.idxmax())
            raise StaleResultsError(f"{path} was not built from data/derived/input.parquet as it is now (row_id "
                                    f"{ids[i]}: {column} {_shown_cell(built[i])} in the panel, "
                                    f"{_shown_cell(validated[i])} validated); {rerun}")




def _shown_cell(value) -> str:
    if isinstance(value, pd.Timestamp):
        return f"{value:%Y-%m-%d}"
    text = str(value)
    return text if len(text) <= 40 else text[:37] + "..."




def _check_settings(config: RunConfig, record: dict | None, run_id: str | None) -> None:
    """The config's study settings equal those results/run_config.json records for the estimate: a report written
    under an edited config would label the old tables with the new settings (recall-LAP coefficients shown as Min-K%
    x 10^4, an MDE computed at another alpha, another horizon or prompt in the text). StaleResultsError names the
    first setting that differs. Nothing to compare when the tables were written through the Python API (no record)."""
    if not record:
        return
    recorded, current = study_settings(record), study_settings(snapshot(config))
    differ = [key for key in current if key not in recorded or recorded[key] != current[key]]
    if differ:
        raise StaleResultsError(f"results/ come from estimate run {run_id}, made with "
                                f"{settings_difference(recorded, current, differ)}: rerun {_steps_for(differ, config)} "
                                "with this config, or report with the config that run used (its settings are in "
                                "results/run_config.json)")


PANEL_SETTINGS = ("[study] cutoff", "[study] release_date", "[study] frequency", "[estimate] lap_measure", "[panel] ")
"""Settings `panel` reads (study_settings keys, or a section prefix ending in a space): it must run again after them."""


def _steps_for(differ: list[str], config: RunConfig) -> str:
    """Every step to rerun after the settings `differ` changed: the signal steps that read one of them
    (provenance.settings), `panel` when it or a signal step does, then `estimate` and `report`."""
    tasks = [task for task in ("forecast", "recall", "minkprob")
             if set(differ) & set(provenance.settings(config, task))]
    panel = tasks or any(key == p or p.endswith(" ") and key.startswith(p) for key in differ for p in PANEL_SETTINGS)
    steps = [f"`lapbias {task} --yes`" for task in tasks] + ["`lapbias panel`"] * bool(panel) + ["`lapbias estimate`"]
    return f"{', '.join(steps)}, then `lapbias report`"




def _check_validated(layout: Layout, record: dict | None, run_id: str | None) -> None:
    """`validate` has not run again on another data file, mapping or --sample since the estimate (data_source.json
    compared by content, less the data path's spelling). Nothing to compare without a record (older versions, the
    Python API)."""
    if not record or record.get(VALIDATED) is None:
        return
    if record[VALIDATED] != validated_record(layout):
        raise StaleResultsError(f"`lapbias validate` ran again since estimate run {run_id} (data/derived/"
                                f"data_source.json: another data file, [data.columns] mapping or --sample); "
                                f"{RERUN_AFTER_VALIDATE}")


def signals_current(config: RunConfig, layout: Layout, stage: str = "panel", **_context) -> None:
    """Each signal file panel would merge was derived from input.parquet as it is now, under the config's settings
    (signals/provenance.py): a label map, prompt, model or K edited after the signal step, or a validation run
    again, would otherwise put the old signals in the panel under the new settings. One refusal names every stale
    file and every step to rerun after them, up to `stage`."""
    stale = {}
    for task in ("forecast", "recall", "minkprob"):
        path = layout.derived_file(f"{task}.parquet")
        if path.exists():
            stale[task] = provenance.problem(read_checked(path), config, layout, task, path)
    stale = {task: problem for task, problem in stale.items() if problem}
    if stale:
        raise StaleResultsError(_rerun_signals(stale, config, stage))


def panel_current(config: RunConfig, layout: Layout, engine: str = "python", **_context) -> None:
    """panel.parquet was built from input.parquet and the signal files as they are now, under this configuration's
    cutoff, frequency, LAP measure, high_lap rule and signal settings; for the Stata engine, the .dta files are
    those `lapbias panel` wrote."""
    path = layout.derived_file("panel.parquet")
    built = read_checked(path)
    _built_from_files(built, layout, path)
    _built_from(built, read_checked(layout.derived_file("input.parquet")), path)
    _built_with(built, config, path)
    _signals_settings(built, config, path)
    if engine == "stata":  # Stata estimates on the .dta files written beside panel.parquet
        check_manifest(layout.derived, "panel", None, then="estimate")


def results_current(config: RunConfig, layout: Layout, tables: dict[str, pd.DataFrame]) -> str | None:
    """The results tables the report reads come from one estimate run (their run ids, its manifest's files and
    sha256), on inputs that have not changed since, from this configuration's data file (as `estimate` checks it,
    `source_unchanged`), under this configuration's study settings; returns the run id (None for tables written
    through the Python API)."""
    run_id = check_run(layout.results, tables, layout.root)
    check_manifest(layout.results, "estimate", run_id)
    source_unchanged(config, layout)
    record = read_run_record(layout.results)
    _check_validated(layout, record, run_id)
    _check_settings(config, record, run_id)
    return run_id


CHECKS: dict[str, tuple[Callable[..., None], ...]] = {
    "signals": (source_unchanged,),
    "panel": (source_unchanged, signals_current),
    "estimate": (source_unchanged, panel_current),
}
"""What each stage compares before it reads anything (the module docstring's table; the report's comparison needs
the tables it read: `results_current`)."""


def check(stage: str, config: RunConfig, layout: Layout, **context) -> None:
    for comparison in CHECKS[stage]:
        comparison(config, layout, stage=stage, **context)


def estimate_inputs(config: RunConfig, layout: Layout, engine: str) -> dict[str, Path]:
    """The files whose sha256 results/run_config.json records, so that `report` refuses the tables once one of them
    changed (a data file, mapping or --sample validated again; data_source.json is compared by its content less the
    data path's spelling: stage.run_record's `validated`)."""
    inputs = {"panel": layout.derived_file("panel.parquet"), "input": layout.derived_file("input.parquet"),
              "validation_report": layout.derived_file("validation_report.csv")}
    if engine == "stata":
        inputs.update({dta: layout.derived_file(f"{dta}.dta") for dta in ("panel_pre", "panel_post")})
    if config.data.path and Path(config.data.path).is_file():
        inputs["data"] = Path(config.data.path)
    return inputs
