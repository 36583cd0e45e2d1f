"""The protocol's stages (steps 0-5 and the report), each callable from Python: `validate`, `forecast`, `recall`,
`minkprob`, `panel`, `estimate`, `report`, `run` (all of them) and `rebuild` (every derived file from the cache).

Each takes a configuration (a TOML path or a loaded RunConfig), holds the project's lock while it works (lapbias/
stage.py), checks that what it reads is current (lapbias/freshness.py), and logs one summary line per result to
`echo` and logs/lapbias.log. Query batches need confirmation (protocol Step 0): `yes=True`, or the caller's own
`confirm` callable (the CLI asks interactively)."""

from __future__ import annotations

from pathlib import Path

from .. import config as config_module
from .. import freshness
from ..data.validate import SAMPLE_SEED
from ..errors import LapbiasError
from ..estimate.stata import RESULT_FILES as STATA_AND_PYTHON_RESULT_FILES
from ..io import Layout, read_parquet, write_text
from ..signals import measures
from ..signals.batch import Confirm
from .project import Echo, Log, backend_for, confirmation, opened

DEMO_CONFIG = "data/demo/demo.toml"
ESTIMATE_OUTPUTS = tuple(dict.fromkeys(("run_config.json", *STATA_AND_PYTHON_RESULT_FILES)))
"""What `estimate` wrote before stage manifests existed (removed on the first staged run when not rewritten)."""
REPORT_OUTPUTS = ("REPORT.md", "lap_distribution.csv", "recall_checks.csv", "sample.csv", "figures/lap_hist.png",
                  *(f"{name}.tex" for name in ("validation", "detection", "placebo", "placebo_validation", "table2",
                                               "table3", "table4", "table5")))
"""What `report` wrote before stage manifests existed: stale once the estimate it described is replaced."""


SAMPLING_CONSENT = ("rerun with --yes-sampling (in Python: confirm_sampling=lambda message: True) to accept the "
                    "sampling fallback's multiplied count")


def _overrides(config, allow_low_parse_rate: bool):
    return config.replace(forecast={"allow_low_parse_rate": True}) if allow_low_parse_rate else config


# ---- Step 0: input ------------------------------------------------------------------------------------------------
def validate(config, *, sample: int | None = None, seed: int = SAMPLE_SEED, echo: Echo = print):
    """Validate the input panel; write data/derived/input.parquet (protocol "Input data format")."""
    with opened(config, "validate", echo=echo) as (config, layout, log):
        return _validate(config, layout, log, sample, seed)


def _validate(config, layout: Layout, log: Log, sample: int | None = None, seed: int = SAMPLE_SEED):
    from ..data import validate as validation

    result = validation.run(config, layout, sample=sample, seed=seed)
    for line in result.messages():
        log(line)
    log(f"validate: {len(result.frame)} rows kept -> {layout.derived_file('input.parquet')}")
    return result


# ---- Steps 1-2: signals -------------------------------------------------------------------------------------------
def forecast(config, *, yes: bool = False, confirm: Confirm | None = None, allow_low_parse_rate: bool = False,
             echo: Echo = print):
    """Step 1: the forecast prompt for every row -> data/derived/forecast.parquet (mu_hat)."""
    return _signal(_forecast, "forecast", config, yes, confirm, allow_low_parse_rate, echo)


def recall(config, *, yes: bool = False, confirm: Confirm | None = None, confirm_sampling: Confirm | None = None,
           allow_low_parse_rate: bool = False, echo: Echo = print):
    """Step 2: the date-only recall query per (entity, target_date) -> data/derived/recall.parquet (lap, ud). The
    sampling fallback's multiplied query count needs its own confirmation (`confirm_sampling`; `yes` does not
    cover it)."""
    return _signal(_recall, "recall", config, yes, confirm, allow_low_parse_rate, echo,
                   confirm_sampling=confirmation(False, confirm_sampling, SAMPLING_CONSENT))


def minkprob(config, *, yes: bool = False, confirm: Confirm | None = None, allow_low_parse_rate: bool = False,
             echo: Echo = print):
    """Min-K% prob of every prompt (paper eq. 1) -> data/derived/minkprob.parquet (lap_mink)."""
    return _signal(_minkprob, "minkprob", config, yes, confirm, allow_low_parse_rate, echo)


def _signal(step, name: str, config, yes, confirm, allow_low_parse_rate, echo, **consent):
    with opened(config, name, echo=echo) as (config, layout, log):
        config = _overrides(config, allow_low_parse_rate)
        freshness.check("signals", config, layout)  # before the model is loaded: no query on an edited file's rows
        with backend_for(config, echo) as backend:
            return step(config, layout, log, backend, confirmation(yes, confirm), **consent)


def _forecast(config, layout: Layout, log: Log, backend, confirm: Confirm):
    from ..signals import forecast as forecast_signal

    frame = forecast_signal.run(config, layout, backend, confirm)
    rate = forecast_signal.check_parse_rate(frame, config)
    counts = frame["label"].value_counts(dropna=False).to_dict()
    log(f"forecast: {len(frame)} rows, parse rate {rate:.1%}, labels {counts}")
    return frame


def _recall(config, layout: Layout, log: Log, backend, confirm: Confirm, confirm_sampling: Confirm):
    from ..signals import recall as recall_signal

    frame = recall_signal.run(config, layout, backend, confirm, confirm_sampling)
    if frame["approximated"].any():
        log.warning(f"recall APPROXIMATED by the sampling fallback ({config.recall.n_samples} answers per query, "
                    f"seed {config.recall.sampling_seed}): every result is labelled approximated")
    log(f"recall: {len(frame)} (entity, target_date) queries, mean LAP {frame['lap'].mean():.4f}, "
        f"mean U-D {frame['ud'].mean():+.4f}, mean residual mass {frame['residual_mass'].mean():.4f}")
    for line in recall_signal.censoring_warnings(frame, config):
        log.warning(line)
    return frame


def _minkprob(config, layout: Layout, log: Log, backend, confirm: Confirm):
    from ..signals import minkprob as minkprob_signal

    frame = minkprob_signal.run(config, layout, backend, confirm)
    log(f"minkprob: {len(frame)} rows, K = {config.minkprob.k:.0%}, mean Min-K% prob {frame['lap_mink'].mean():.4g}")
    return frame


# ---- Step 3 preprocessing -----------------------------------------------------------------------------------------
def panel(config, *, allow_low_parse_rate: bool = False, echo: Echo = print):
    """Merge the signals into data/derived/panel.parquet, panel_pre.dta and panel_post.dta (Step 3)."""
    with opened(config, "panel", echo=echo) as (config, layout, log):
        return _panel(_overrides(config, allow_low_parse_rate), layout, log)


def _panel(config, layout: Layout, log: Log):
    from .. import panel as panel_stage
    from ..signals import forecast as forecast_signal

    freshness.check("panel", config, layout)
    # Step 1's parse-rate gate on the forecast file panel merges (a stale file is named first: panel.read_signal)
    forecast_signal.check_parse_rate(panel_stage.read_signal(config, layout, "forecast"), config)
    result = panel_stage.build(config, layout)
    for line in result.warnings:
        log.warning(line)
    log(f"panel: {result.summary()}")
    return result


# ---- Steps 3-5 ----------------------------------------------------------------------------------------------------
def estimate(config, *, engine: str | None = None, echo: Echo = print) -> str:
    """Steps 3-5 (validation, detection, placebo), the paper's extended tables and the pairs bootstrap -> results/;
    returns the run id."""
    with opened(config, "estimate", echo=echo) as (config, layout, log):
        return _estimate(config, layout, log, engine or config.estimate.engine)


def _estimate(config, layout: Layout, log: Log, engine: str) -> str:
    """All or nothing (lapbias/stage.py): every output is written into a fresh folder, moved into results/ only when
    the whole stage finished; what the stage no longer writes, and the report of the old results, go."""
    from .. import stage
    from ..data.validate import validated_record
    from ..estimate import stata
    from ..estimate.specification import check_newey_lag

    name, install, message = stata.select_engine(config, engine)
    freshness.check("estimate", config, layout, engine=name)
    check_newey_lag(config.estimate.newey_lag, read_parquet(layout.derived_file("panel.parquet")))  # both engines
    log(message)
    run_id = stage.new_run_id()
    with stage.staged_outputs(layout.results, "estimate", run_id, known=ESTIMATE_OUTPUTS + REPORT_OUTPUTS,
                              retire=("report",)) as folder:
        staged = layout.staged(folder)
        write_text(staged.results / stage.RUN_RECORD, stage.run_record(
            config_module.snapshot(config), run_id, freshness.estimate_inputs(config, layout, name), layout.root,
            validated_record(layout)))
        if name == "stata":
            # The Stata driver writes only into the folder it is given (staged.results), like the Python engine;
            # a failed step (e.g. the bootstrap) is a note, and Steps 3-5 are kept.
            run = stata.run_stata(config, layout, install, results=staged.results)
            for step in run.failed:
                log.warning(f"Stata step {step} failed (see results/estimation_notes.csv and logs/stata_*.log)")
            summary = f"estimate (stata engine): {', '.join(sorted(run.tables))} -> results/"
        else:
            summary = _python_engine(config, staged, log)
        _other_measures(config, staged, log)
        _label_approximated(config, staged, log)
    log(f"{summary} (run {run_id})")
    return run_id


def _python_engine(config, staged: Layout, log: Log) -> str:
    """Steps 3-5, the paper's Tables I-V and the pairs bootstrap of Figure III; a bootstrap that cannot run on a
    degenerate post-cutoff sample is a note, never the end of the report."""
    from ..estimate import bootstrap, extended, protocol

    results = protocol.run(config, staged)
    extra = extended.run(config, staged)
    log(f"extended specifications (paper Tables I-V): {', '.join(sorted(extra.tables))}")
    try:
        boot = bootstrap.run(config, staged)
    except LapbiasError as err:
        boot, reason = None, (str(err).strip().splitlines() or [type(err).__name__])[0]
        for output in bootstrap.OUTPUTS:
            (staged.results / output).unlink(missing_ok=True)
        protocol.append_notes(staged, [{"model": "bootstrap", "kind": "failed",
                                        "detail": f"the pairs bootstrap could not run: {reason}"}])
        log.warning(f"bootstrap skipped: {reason}")
    if boot is not None and not boot.identified:
        protocol.append_notes(staged, [{"model": "bootstrap", "kind": "failed",
                                        "detail": f"the pairs bootstrap is not identified: {boot.reason}"}])
        log.warning(f"bootstrap not identified: {boot.reason}")
    elif boot is not None:
        log(f"bootstrap: {boot.B} draws of the post-cutoff beta_3, 95th percentile {boot.p95:.4g}, one-sided "
            f"bootstrap p of the in-sample beta_3 = {boot.p_boot:.4f}")
    if boot is not None and bootstrap.lanes.UNAVAILABLE:
        log.warning(f"{bootstrap.lanes.UNAVAILABLE}: the bootstrap ran on the numba kernel alone (the same draws to "
                    "rounding, 2-4 times slower)")
    return f"estimate (python engine): {results.summary()}"


def _other_measures(config, layout: Layout, log: Log) -> None:
    """Steps 3-5 under every LAP measure the panel carries (estimate/measures.py), for the report's robustness table,
    and the text-drift diagnostics (estimate/text_drift.py)."""
    from ..estimate import measures as measure_tables, text_drift

    names = measure_tables.run(config, layout)
    log(f"LAP measures estimated beside {config.estimate.lap_measure!r} (results/measures/): {', '.join(names)}")
    drift = text_drift.run(config, layout)
    auc = drift.loc[drift["measure"] == "bag of words of the text", "value"]
    log("text drift (results/text_drift.csv): pre vs post from the text's words alone, out-of-fold AUC "
        f"{auc.iloc[0]:.3f}" if len(auc) and auc.notna().all() else "text drift (results/text_drift.csv): "
        "not computed (no Min-K% pass, or a sample too small to cross-validate)")


def _label_approximated(config, layout: Layout, log: Log) -> None:
    """Protocol Step 2: results from the sampling fallback are labelled approximated (lapbias/approximation.py)."""
    from ..approximation import RESULT_TABLES, mark_results, recall_note
    from ..io import read_parquet

    note = recall_note(read_parquet(layout.derived_file("panel.parquet")), config)
    if note:
        marked = mark_results(layout.results, list(RESULT_TABLES), note)
        log.warning(f"APPROXIMATED results ({note}): column `approximated` added to {len(marked)} results/*.csv "
                    "tables")


# ---- the report ---------------------------------------------------------------------------------------------------
def report(config, *, echo: Echo = print) -> Path:
    """results/REPORT.md (the verdict by the protocol's rule), LaTeX tables and figures; returns its path."""
    with opened(config, "report", echo=echo) as (config, layout, log):
        return _report(config, layout, log)


def _report(config, layout: Layout, log: Log) -> Path:
    """REPORT.md, then the verdict, the sentence that explains it and the report's path on the terminal."""
    from ..report import report_with_verdict

    written = report_with_verdict(config, layout)
    log("\n".join(written.lines()))
    return written.path


def report_as_estimated(layout: Layout, log: Log) -> None:
    """Rewrite results/REPORT.md (with the sections of the audits run since) under the settings its estimate run
    recorded in results/run_config.json, which need not be the calling command's config (`lapbias calibrate
    calibrate.toml` after `lapbias demo` in one root). Left as it is, with a warning, when that record is missing or
    cannot be read back as a config: a report never labels tables with settings they were not estimated under."""
    from ..stage import read_run_record

    try:
        record = read_run_record(layout.results)
        if not record:
            raise LapbiasError("results/run_config.json does not exist")
        settings = {key: value for key, value in record.items() if key not in ("run_id", "inputs", "validated")}
        _report(config_module.from_dict({**settings, "root": str(layout.root)}), layout, log)
    except LapbiasError as err:
        log.warning(f"results/REPORT.md left as it was ({err})")


# ---- whole runs ---------------------------------------------------------------------------------------------------
def run(config=DEMO_CONFIG, *, yes: bool = False, confirm: Confirm | None = None,
        confirm_sampling: Confirm | None = None, allow_low_parse_rate: bool = False, sample: int | None = None,
        seed: int = SAMPLE_SEED, echo: Echo = print) -> Path:
    """Every step from one configuration: validate, forecast, recall, minkprob, panel, estimate, report; returns
    the path of results/REPORT.md. The default configuration is the bundled demo's."""
    with opened(config, "run", echo=echo) as (config, layout, log):
        return run_all(_overrides(config, allow_low_parse_rate), layout, log, confirmation(yes, confirm),
                       confirmation(False, confirm_sampling, SAMPLING_CONSENT), sample, seed)


def run_all(config, layout: Layout, log: Log, confirm: Confirm, confirm_sampling: Confirm,
            sample: int | None = None, seed: int = SAMPLE_SEED) -> Path:
    """`run` inside an opened project (also the protocol `lapbias calibrate` runs on each model's own root)."""
    _validate(config, layout, log, sample, seed)
    with backend_for(config, log.echo) as backend:
        _forecast(config, layout, log, backend, confirm)
        _recall(config, layout, log, backend, confirm, confirm_sampling)
        # An HTTP endpoint other than a vLLM server returns no prompt log-probs: Min-K% is unavailable there, and the
        # recall LAP is the measure (docs/backends.md). Asked before any confirmation or query.
        unavailable = config.model.backend == "openai" and backend.prompt_scoring_unavailable()
        if unavailable and measures.configured(config).task != "minkprob":
            layout.derived_file("minkprob.parquet").unlink(missing_ok=True)
            log.warning(f"minkprob skipped, the recall LAP is used: {unavailable}")
        else:
            _minkprob(config, layout, log, backend, confirm)
    _panel(config, layout, log)
    _estimate(config, layout, log, config.estimate.engine)
    return _report(config, layout, log)


def rebuild(config, *, echo: Echo = print):
    """Every derived file again from the input and the raw JSONL cache alone (no model call); a --sample subsample
    of the last `validate` is drawn again (the same rows)."""
    from ..data.validate import recorded_subsample
    from ..llm.cache import CacheError
    from ..signals import forecast as forecast_signal, minkprob as minkprob_signal, recall as recall_signal

    with opened(config, "rebuild", echo=echo) as (config, layout, log):
        subsample = recorded_subsample(layout)  # the rows validated last time, drawn again
        _validate(config, layout, log, *((subsample["rows"], subsample["seed"]) if subsample else ()))
        for signal in (forecast_signal, recall_signal, minkprob_signal):
            if signal is minkprob_signal and not layout.raw_file(signal.TASK).exists():
                layout.derived_file("minkprob.parquet").unlink(missing_ok=True)
                log("rebuild: no minkprob cache (Min-K% was skipped or never run); the recall LAP is used")
                continue
            try:
                frame = signal.derive(config, layout)
            except CacheError as err:
                if signal is not minkprob_signal or measures.configured(config).task == "minkprob":
                    raise
                # a Min-K% cache of another model or of texts corrected since, which this config does not use
                layout.derived_file("minkprob.parquet").unlink(missing_ok=True)
                log(f"rebuild: {err}; minkprob.parquet removed (this config estimates with the recall LAP)")
                continue
            log(f"rebuild: {signal.TASK}.parquet, {len(frame)} rows from {layout.raw_file(signal.TASK)}")
        return _panel(config, layout, log)
