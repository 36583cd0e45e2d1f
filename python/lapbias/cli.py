"""`lapbias` command line: each subcommand parses its options, calls one stage and prints a summary.

Errors a user can cause (LapbiasError) are printed as their message, one line per problem, with exit status 2;
`lapbias --debug ...` shows the traceback instead.
"""

from __future__ import annotations

import datetime as dt
import sys
import warnings
from pathlib import Path

import click

from . import config as config_module
from .data.validate import MAX_SEED, SAMPLE_SEED
from .errors import LapbiasError
from .estimate.stata import RESULT_FILES as STATA_AND_PYTHON_RESULT_FILES
from .io import Layout, write_text

DEMO_CONFIG = "data/demo/demo.toml"
ESTIMATE_OUTPUTS = tuple(dict.fromkeys(("run_config.json", *STATA_AND_PYTHON_RESULT_FILES)))
"""What `estimate` wrote before stage manifests existed (removed on the first staged run when not rewritten)."""
REPORT_OUTPUTS = ("REPORT.md", "lap_distribution.csv", "recall_checks.csv", "sample.csv", "figures/lap_hist.png",
                  *(f"{name}.tex" for name in ("validation", "detection", "placebo", "placebo_validation", "table2",
                                               "table3", "table4", "table5")))
"""What `report` wrote before stage manifests existed: stale once the estimate it described is replaced."""


class LapbiasGroup(click.Group):
    """The one error boundary: LapbiasError becomes its message (exit 2); any other exception becomes one line
    naming the stage and its input, with the full traceback written to logs/ (exit 1). --debug shows tracebacks."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except LapbiasError as err:
            if ctx.params.get("debug"):
                raise
            for line in str(err).splitlines() or ["(no message)"]:
                click.secho(line if line.startswith("  ") else f"error: {line}", err=True, fg="red")
            ctx.exit(2)
        except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort, KeyboardInterrupt):
            raise
        except Exception as err:  # the last line of defence, not a substitute for the checks of each stage
            if ctx.params.get("debug"):
                raise
            stage = ctx.invoked_subcommand or "lapbias"
            where = ctx.meta.get("lapbias.input", "")
            log = _write_traceback(ctx.meta.get("lapbias.logs"), stage)
            first = (str(err).splitlines() or [""])[0][:200]
            click.secho(f"error: `lapbias {stage}`{f' on {where}' if where else ''} stopped on an unexpected "
                        f"{type(err).__name__}: {first}", err=True, fg="red")
            click.secho(f"  full traceback: {log} (rerun with `lapbias --debug {stage} ...` to show it; please "
                        "report it as a bug)", err=True, fg="red")
            ctx.exit(1)


def _write_traceback(logs: Path | None, stage: str) -> Path:
    """The current exception's traceback in logs/traceback-<stage>-<time>.log (./logs when no config was read)."""
    import tempfile
    import traceback

    stamp = dt.datetime.now().strftime("%Y%m%dT%H%M%S")
    for folder in (logs, Path("logs"), Path(tempfile.gettempdir())):
        if folder is None:
            continue
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"traceback-{stage}-{stamp}.log"
            path.write_text(traceback.format_exc(), encoding="utf-8")
            return path
        except OSError:
            continue
    return Path("(not written)")


def _load(config_path: str, load=config_module.load):
    """(what `load(CONFIG)` returns, the Layout of its root, folders made): a run configuration by default; the
    audits pass their own loader (leak, ess), calibrate's returns (run configuration, [calibrate] settings), whose
    first item names the root. The error boundary learns the CONFIG and the logs/ of this command."""
    meta = click.get_current_context().meta
    meta["lapbias.input"] = config_path
    loaded = load(config_path)
    config = loaded[0] if isinstance(loaded, tuple) else loaded
    layout = Layout(Path(config.root))
    try:
        layout.make_dirs()
    except OSError as err:
        raise LapbiasError(f"cannot make the project folders under root = {config.root!r} ({err.strerror}: "
                           f"{err.filename})") from None
    meta["lapbias.logs"] = layout.logs
    return loaded, layout


def _log(layout: Layout, message: str) -> None:
    """Print a summary line and append it, time-stamped, to logs/lapbias.log."""
    click.echo(message)
    stamp = dt.datetime.now().isoformat(timespec="seconds")
    with open(layout.logs / "lapbias.log", "a", encoding="utf-8") as handle:
        for line in message.splitlines():
            handle.write(f"{stamp} {line}\n")


def _confirmation(given: bool, rerun_with: str, subject: str, question: str):
    """A confirmation given up front by a flag, or asked interactively; with no terminal to ask on, an error
    saying which flag to rerun with."""
    from .signals.batch import always

    if given:
        return always

    def ask(message: str) -> bool:
        click.echo(message, err=True)
        if not sys.stdin.isatty():
            raise LapbiasError(f"no terminal to confirm {subject} on: rerun with {rerun_with}")
        return click.confirm(question, default=False, err=True)

    return ask


def _confirm(yes: bool):
    """Protocol Step 0: the batch goes ahead with --yes, or after an interactive confirmation."""
    return _confirmation(yes, "--yes to go ahead", "the query batch", "go ahead?")


def _confirm_sampling(yes_sampling: bool):
    """Protocol Step 2: the sampling fallback's multiplied query count needs its own confirmation, given by
    --yes-sampling or interactively; --yes alone does not cover it."""
    return _confirmation(yes_sampling, "--yes-sampling to accept the multiplied query count",
                         "the sampling fallback", "go ahead with the sampling fallback?")


def _backend(config):
    """The configured backend, loaded only when a query is not cached."""
    from .llm import LazyBackend

    def announce(model) -> None:
        click.echo(f"loading model {model.model_id} ({model.backend}) ...", err=True)

    backend = LazyBackend(config.model, on_load=announce)
    context = click.get_current_context(silent=True)
    if context is not None:
        context.call_on_close(backend.close)
    return backend


config_argument = click.argument("config_path", metavar="CONFIG", type=click.Path(dir_okay=False))
yes_option = click.option("--yes", "-y", is_flag=True, help="Go ahead with model query batches without asking.")
sampling_option = click.option("--yes-sampling", is_flag=True,
                               help="Accept the sampling fallback's multiplied query count ([recall] fallback = "
                                    "\"sampling\", protocol Step 2) without asking.")
low_parse_option = click.option("--allow-low-parse-rate", is_flag=True,
                                help="Go on although fewer forecasts parse than [forecast] min_parse_rate (Step 1).")


def _with_overrides(config, allow_low_parse_rate: bool = False):
    return config.replace(forecast={"allow_low_parse_rate": True}) if allow_low_parse_rate else config


@click.group(cls=LapbiasGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show tracebacks for errors (for bug reports).")
@click.version_option(package_name="lapbias")
def main(debug: bool) -> None:
    """Test an LLM's forecasts for lookahead bias (Gao, Jiang, Yan), from a panel CSV to results/REPORT.md.

    \b
    Example:
      lapbias demo --yes                       # the whole protocol on the bundled demo panel
      lapbias run my_study.toml --yes          # all steps from one TOML config
    """
    warnings.simplefilter("default", UserWarning)


# ---- Step 0 / input ---------------------------------------------------------------------------------------------
@main.command()
@click.argument("data", type=click.Path(dir_okay=False))
@click.option("--output", "-o", type=click.Path(dir_okay=False), default=None,
              help="Where to write the config (default: DATA's name with .toml, in the current folder).")
@click.option("--force", is_flag=True, help="Overwrite an existing config file.")
def init(data: str, output: str | None, force: bool) -> None:
    """Write a commented starter config for a data file: column map guessed from its header, cutoff a TODO.

    \b
    Example:
      lapbias init my_panel.csv                # writes my_panel.toml; set [study] cutoff, then
      lapbias validate my_panel.toml
    """
    from .data import starter

    target = Path(output or f"{Path(data).stem}.toml")
    if target.exists() and not force:
        raise LapbiasError(f"{target} already exists; choose another --output or add --force to overwrite it")
    columns = starter.header(data)
    guessed = starter.guess_columns(columns)
    write_text(target, starter.render(data, columns, guessed))
    click.echo(f"wrote {target} for {data}; column map (protocol column <- your column):")
    for name, found in guessed.items():
        shown = "NOT FOUND: name it in [data.columns]" if found is None else found
        click.echo(f"  {name:<12} <- {shown}")
    click.echo(f"next: set [study] cutoff (the model's training cutoff) and check the [forecast] prompt in {target}, "
               f"then run `lapbias validate {target}`")


@main.command()
@config_argument
@click.option("--sample", type=int, default=None, help="Keep a random subsample of N rows (large panels).")
@click.option("--seed", type=click.IntRange(0, MAX_SEED), default=SAMPLE_SEED, show_default=True,
              help="Seed of the subsample.")
def validate(config_path: str, sample: int | None, seed: int) -> None:
    """Validate the input panel and write data/derived/input.parquet.

    \b
    Example:
      lapbias validate data/demo/demo.toml
    """
    config, layout = _load(config_path)
    _validate(config, layout, sample, seed)


def _validate(config, layout: Layout, sample: int | None = None, seed: int = SAMPLE_SEED) -> None:
    from .data import validate as validation

    result = validation.run(config, layout, sample=sample, seed=seed)
    for line in result.messages():
        _log(layout, line)
    _log(layout, f"validate: {len(result.frame)} rows kept -> {layout.derived_file('input.parquet')}")


# ---- Steps 1-2: signals ------------------------------------------------------------------------------------------
def _forecast(config, layout, backend, yes: bool) -> None:
    from .signals import forecast

    frame = forecast.run(config, layout, backend, _confirm(yes))
    rate = forecast.check_parse_rate(frame, config)
    counts = frame["label"].value_counts(dropna=False).to_dict()
    _log(layout, f"forecast: {len(frame)} rows, parse rate {rate:.1%}, labels {counts}")


def _recall(config, layout, backend, yes: bool, yes_sampling: bool = False) -> None:
    from .signals import recall

    frame = recall.run(config, layout, backend, _confirm(yes), _confirm_sampling(yes_sampling))
    if frame["approximated"].any():
        _log(layout, f"warning: recall APPROXIMATED by the sampling fallback ({config.recall.n_samples} answers per "
                     f"query, seed {config.recall.sampling_seed}): every result is labelled approximated")
    _log(layout, f"recall: {len(frame)} (entity, target_date) queries, mean LAP {frame['lap'].mean():.4f}, "
                 f"mean U-D {frame['ud'].mean():+.4f}, mean residual mass {frame['residual_mass'].mean():.4f}")
    for line in recall.censoring_warnings(frame, config):
        _log(layout, f"warning: {line}")


def _minkprob(config, layout, backend, yes: bool) -> None:
    from .signals import minkprob

    frame = minkprob.run(config, layout, backend, _confirm(yes))
    _log(layout, f"minkprob: {len(frame)} rows, K = {config.minkprob.k:.0%}, "
                 f"mean Min-K% prob {frame['lap_mink'].mean():.4g}")


def _signal_command(name: str, step, doc: str, sampling: bool = False):
    def command(config_path: str, yes: bool, allow_low_parse_rate: bool, **consent) -> None:
        from .data.validate import check_source

        config, layout = _load(config_path)
        config = _with_overrides(config, allow_low_parse_rate)
        check_source(config, layout)  # before the model is loaded: no query is spent on rows of an edited file
        step(config, layout, _backend(config), yes, **consent)

    for decorator in ([sampling_option] if sampling else []) + [low_parse_option, yes_option, config_argument,
                                                               main.command(name=name, help=doc)]:
        command = decorator(command)
    return command


_signal_command("forecast", _forecast, """Step 1: ask the forecast prompt for every row -> forecast.parquet (mu_hat).

\b
Example:
  lapbias forecast data/demo/demo.toml --yes
""")
_signal_command("recall", _recall, """Step 2: date-only recall query per (entity, target_date) -> recall.parquet (lap, ud).

\b
Example:
  lapbias recall data/demo/demo.toml --yes
""", sampling=True)
_signal_command("minkprob", _minkprob, """Min-K% prob of every prompt (paper eq. 1) -> minkprob.parquet (lap_mink).

\b
Example:
  lapbias minkprob data/demo/demo.toml --yes
""")


# ---- Step 3 preprocessing, estimation, report -------------------------------------------------------------------
@main.command()
@config_argument
@low_parse_option
def panel(config_path: str, allow_low_parse_rate: bool) -> None:
    """Merge the signals into the panel; write panel.parquet, panel_pre.dta, panel_post.dta.

    \b
    Example:
      lapbias panel data/demo/demo.toml
    """
    config, layout = _load(config_path)
    _panel(_with_overrides(config, allow_low_parse_rate), layout)


def _panel(config, layout: Layout) -> None:
    from . import panel as panel_stage
    from .data.validate import check_source
    from .signals import forecast

    check_source(config, layout)
    forecast.check_parse_rate(panel_stage.read_signal(config, layout, "forecast"), config)  # stale file named first
    result = panel_stage.build(config, layout)
    for line in result.warnings:
        _log(layout, f"warning: {line}")
    _log(layout, f"panel: {result.summary()}")


@main.command()
@config_argument
@click.option("--engine", type=click.Choice(["auto", "python", "stata"]), default=None,
              help="Estimation engine (default: [estimate] engine of the config).")
def estimate(config_path: str, engine: str | None) -> None:
    """Steps 3-5: validation, detection and placebo regressions -> results/*.csv.

    \b
    Example:
      lapbias estimate data/demo/demo.toml --engine python
    """
    config, layout = _load(config_path)
    _estimate(config, layout, engine or config.estimate.engine)


def _estimate(config, layout: Layout, engine: str) -> None:
    """All or nothing (lapbias/stage.py): every output is written into a fresh folder, moved into results/ only
    when the whole stage finished; what the stage no longer writes, and the report of the old results, go."""
    from . import stage
    from .data.derived import read_checked
    from .estimate import bootstrap, extended, protocol, stata

    from .data.validate import check_source, validated_record
    from .panel import check_built_from, check_built_from_files, check_built_with, check_signals

    check_source(config, layout)
    built = read_checked(layout.derived_file("panel.parquet"))
    check_built_from_files(built, layout, layout.derived_file("panel.parquet"))
    check_built_from(built, read_checked(layout.derived_file("input.parquet")), layout.derived_file("panel.parquet"))
    check_built_with(built, config, layout.derived_file("panel.parquet"))
    check_signals(built, config, layout.derived_file("panel.parquet"))
    name, install, message = stata.select_engine(config, engine)
    if name == "stata":  # Stata estimates on the .dta files: those `lapbias panel` wrote beside panel.parquet
        stage.check_manifest(layout.derived, "panel", None, then="estimate")
    click.echo(message, err=True)
    run_id = stage.new_run_id()
    # the report refuses the tables once one of these changes (a data file, mapping or --sample validated again;
    # data_source.json is compared by its content less the data path's spelling: stage.run_record's `validated`)
    inputs = {"panel": layout.derived_file("panel.parquet"), "input": layout.derived_file("input.parquet"),
              "validation_report": layout.derived_file("validation_report.csv")}
    if name == "stata":
        inputs.update({dta: layout.derived_file(f"{dta}.dta") for dta in ("panel_pre", "panel_post")})
    if config.data.path and Path(config.data.path).is_file():
        inputs["data"] = Path(config.data.path)
    with stage.staged_outputs(layout.results, "estimate", run_id, known=ESTIMATE_OUTPUTS + REPORT_OUTPUTS,
                              retire=("report",)) as folder:
        staged = layout.staged(folder)
        write_text(staged.results / stage.RUN_RECORD, stage.run_record(
            config_module.snapshot(config), run_id, inputs, layout.root, validated_record(layout)))
        if name == "stata":
            # The Stata driver writes only into the folder it is given (staged.results), like the Python engine;
            # a failed step (e.g. the bootstrap) is a note, and Steps 3-5 are kept.
            run = stata.run_stata(config, layout, install, results=staged.results)
            for step in run.failed:
                _log(layout, f"warning: Stata step {step} failed (see results/estimation_notes.csv and "
                             "logs/stata_*.log)")
            summary = f"estimate (stata engine): {', '.join(sorted(run.tables))} -> results/"
        else:
            results = protocol.run(config, staged)
            extra = extended.run(config, staged)
            _log(layout, f"extended specifications (paper Tables I-V): {', '.join(sorted(extra.tables))}")
            try:
                boot = bootstrap.run(config, staged)
            except Exception as err:  # noqa: BLE001 — a supplementary figure: a degenerate post-cutoff sample must
                # not stop the report (issue 11 item 2); the reason is kept in estimation_notes.csv and the log.
                boot = None
                for output in bootstrap.OUTPUTS:
                    (staged.results / output).unlink(missing_ok=True)
                reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
                protocol.append_notes(staged, [{"model": "bootstrap", "kind": "failed",
                                                "detail": f"the pairs bootstrap could not run: {reason}"}])
                _log(layout, f"warning: bootstrap skipped: {reason}")
            if boot is not None and not boot.identified:
                protocol.append_notes(staged, [{"model": "bootstrap", "kind": "failed",
                                                "detail": f"the pairs bootstrap is not identified: {boot.reason}"}])
                _log(layout, f"warning: bootstrap not identified: {boot.reason}")
            elif boot is not None:
                _log(layout, f"bootstrap: {boot.B} draws of the post-cutoff beta_3, 95th percentile {boot.p95:.4g}, "
                             f"one-sided bootstrap p of the in-sample beta_3 = {boot.p_boot:.4f}")
            if boot is not None and bootstrap.lanes.UNAVAILABLE:
                _log(layout, f"warning: {bootstrap.lanes.UNAVAILABLE}: the bootstrap ran on the numba kernel alone "
                             "(the same draws to rounding, 2-4 times slower)")
            summary = f"estimate (python engine): {results.summary()}"
        _label_approximated(config, staged)
    _log(layout, f"{summary} (run {run_id})")


def _label_approximated(config, layout: Layout) -> None:
    """Protocol Step 2: results from the sampling fallback are labelled approximated (lapbias/approximation.py)."""
    from .approximation import RESULT_TABLES, mark_results, recall_note
    from .io import read_parquet

    note = recall_note(read_parquet(layout.derived_file("panel.parquet")), config)
    if note:
        marked = mark_results(layout.results, list(RESULT_TABLES), note)
        _log(layout, f"warning: APPROXIMATED results ({note}): column `approximated` added to "
                     f"{len(marked)} results/*.csv tables")


@main.command()
@config_argument
def report(config_path: str) -> None:
    """Write results/REPORT.md (verdict by the protocol's rule), LaTeX tables and figures.

    \b
    Example:
      lapbias report data/demo/demo.toml
    """
    config, layout = _load(config_path)
    _report(config, layout)


def _report(config, layout: Layout) -> None:
    from .report import write_report

    path = write_report(config, layout)
    _log(layout, f"report: {path}")


def _report_as_estimated(layout: Layout) -> None:
    """Rewrite results/REPORT.md (with the sections of the audits run since) under the settings its estimate run
    recorded in results/run_config.json, which need not be the calling command's config (`lapbias calibrate
    calibrate.toml` after `lapbias demo` in one root). Left as it is, with a warning, when that record is missing or
    cannot be read back as a config: a report never labels tables with settings they were not estimated under."""
    from .stage import read_run_record

    try:
        record = read_run_record(layout.results)
        if not record:
            raise LapbiasError("results/run_config.json does not exist")
        settings = {key: value for key, value in record.items() if key not in ("run_id", "inputs", "validated")}
        config = config_module.from_dict({**settings, "root": str(layout.root)})
        _report(config, layout)
    except LapbiasError as err:
        _log(layout, f"warning: results/REPORT.md left as it was ({err})")


@main.command("stata-install")
@click.option("--copy-to", type=click.Path(file_okay=False), default=None,
              help="Also copy the ado and do files to DIR/ado and DIR/do and name those copies.")
def stata_install(copy_to: str | None) -> None:
    """Print the Stata commands that install lapbias's ado files from this installation and run its do-files.

    \b
    Example:
      lapbias stata-install --copy-to stata_lapbias
    """
    from .estimate.stata import install_instructions

    click.echo(install_instructions(Path(copy_to) if copy_to else None))


# ---- whole runs -------------------------------------------------------------------------------------------------
def _run_all(config, layout: Layout, yes: bool, sample: int | None, seed: int, yes_sampling: bool = False) -> None:
    _validate(config, layout, sample, seed)
    backend = _backend(config)
    _forecast(config, layout, backend, yes)
    _recall(config, layout, backend, yes, yes_sampling)
    # An HTTP endpoint other than a vLLM server returns no prompt log-probs: Min-K% is unavailable there, and
    # the recall LAP is the measure (issue "backends", item 4). Asked before any confirmation or query.
    unavailable = config.model.backend == "openai" and backend.prompt_scoring_unavailable()
    if unavailable and config.estimate.lap_measure == "recall":
        layout.derived_file("minkprob.parquet").unlink(missing_ok=True)
        _log(layout, f"warning: minkprob skipped, the recall LAP is used: {unavailable}")
    else:
        _minkprob(config, layout, backend, yes)
    _panel(config, layout)
    _estimate(config, layout, config.estimate.engine)
    _report(config, layout)


@main.command()
@config_argument
@yes_option
@low_parse_option
@click.option("--sample", type=int, default=None, help="Keep a random subsample of N rows (large panels).")
@click.option("--seed", type=click.IntRange(0, MAX_SEED), default=SAMPLE_SEED, show_default=True,
              help="Seed of the subsample.")
@sampling_option
@click.option("--dry-run", is_flag=True, help="Only estimate each stage's time and memory (a short timed probe of "
              "the model, cached per machine); ask nothing else, write nothing under the run's folders.")
def run(config_path: str, yes: bool, allow_low_parse_rate: bool, sample: int | None, seed: int,
        yes_sampling: bool, dry_run: bool) -> None:
    """All steps from one TOML config: validate, forecast, recall, minkprob, panel, estimate, report.

    \b
    Example:
      lapbias run my_study.toml --yes
      lapbias run my_study.toml --dry-run
    """
    if dry_run:
        from .cost import dry_run as estimate_study

        click.echo(estimate_study(config_module.load(config_path)))
        return
    config, layout = _load(config_path)
    _run_all(_with_overrides(config, allow_low_parse_rate), layout, yes, sample, seed, yes_sampling)


@main.command()
@yes_option
@click.option("--config", "config_path", default=DEMO_CONFIG, show_default=True, type=click.Path(dir_okay=False),
              help="The demo's configuration.")
def demo(yes: bool, config_path: str) -> None:
    """The whole protocol on the bundled demo panel with the bundled SmolLM2-135M-Instruct (run from the repo).

    \b
    Example:
      lapbias demo --yes
    """
    config, layout = _load(config_path)
    _run_all(config, layout, yes, None, SAMPLE_SEED)


@main.command()
@config_argument
@yes_option
def calibrate(config_path: str, yes: bool) -> None:
    """Self-validation: plant memorization with LoRA, run the protocol on base and planted model, compare.

    \b
    Example:
      lapbias calibrate data/demo/calibrate.toml --yes
    """
    from .calibrate import load, pipeline

    (run_config, settings), layout = _load(config_path, load)
    pipeline.run(run_config, settings, layout,
                 lambda config, model_layout: _run_all(config, model_layout, yes, None, SAMPLE_SEED),
                 _confirm(yes), lambda line: _log(layout, line))
    if layout.derived_file("panel.parquet").exists() and (layout.results / "detection.csv").exists():
        _report_as_estimated(layout)  # a protocol run under the same root: its REPORT.md gets the section


@main.command()
@config_argument
def rebuild(config_path: str) -> None:
    """Regenerate every derived file from the input and the raw JSONL cache alone (no model call); a --sample
    subsample of the last `validate` is drawn again (same rows).

    \b
    Example:
      lapbias rebuild data/demo/demo.toml
    """
    from .data.validate import recorded_subsample
    from .llm.cache import CacheError
    from .signals import forecast, minkprob, recall

    config, layout = _load(config_path)
    subsample = recorded_subsample(layout)  # the rows validated last time, drawn again
    _validate(config, layout, *((subsample["rows"], subsample["seed"]) if subsample else ()))
    for stage in (forecast, recall, minkprob):
        if stage is minkprob and not layout.raw_file(stage.TASK).exists():
            layout.derived_file("minkprob.parquet").unlink(missing_ok=True)
            _log(layout, "rebuild: no minkprob cache (Min-K% was skipped or never run); the recall LAP is used")
            continue
        try:
            frame = stage.derive(config, layout)
        except CacheError as err:
            if stage is not minkprob or config.estimate.lap_measure != "recall":
                raise
            # a Min-K% cache of another model or of texts corrected since, which this config does not use
            layout.derived_file("minkprob.parquet").unlink(missing_ok=True)
            _log(layout, f"rebuild: {err}; minkprob.parquet removed (this config estimates with the recall LAP)")
            continue
        _log(layout, f"rebuild: {stage.TASK}.parquet, {len(frame)} rows from {layout.raw_file(stage.TASK)}")
    _panel(config, layout)


@main.command()
@config_argument
@yes_option
def leak(config_path: str, yes: bool) -> None:
    """NumLeak audit: probe the model for a public series' value at a date (results/leak/, REPORT.md section).

    \b
    Example:
      lapbias leak data/demo/leak.toml --yes
    """
    from .leak import config as leak_config
    from .leak.pipeline import run as run_leak

    leak_run, layout = _load(config_path, leak_config.load)
    result = run_leak(leak_run, layout, _backend(leak_run), _confirm(yes))
    parsed = result.summary.loc[result.summary["variant"] == "A"]
    _log(layout, f"leak: {len(result.panel)} probe replies ({result.n_asked} asked now), Variant A parse rate "
                 f"{parsed['n_parsed'].sum()}/{parsed['n_queries'].sum()}; results/leak/*.csv, "
                 "results/figures/leak_calibration.png, results/REPORT.md")


@main.command(name="ess")
@config_argument
@yes_option
def ess_command(config_path: str, yes: bool) -> None:
    """Equivalent sample size of the LLM: block-out CV error curves, sequential CI, results/ess/ (its [ess] section).

    \b
    Example:
      lapbias ess data/demo/ess.toml --yes
    """
    from .ess import config as ess_config
    from .ess.pipeline import results_dir, run as run_ess

    config, layout = _load(config_path, ess_config.load)
    tables = run_ess(config, layout, _backend(config), _confirm(yes))
    for row in tables["ess"].itertuples():
        plug = f"> {row.grid_max}" if row.plugin_beyond_grid else int(row.ess_plugin)
        _log(layout, f"ess: {row.outcome} vs {row.comparator}: LLM error {row.llm_error:.4g}, plug-in ESS {plug}, "
                     f"one-sided {1 - row.alpha:.0%} CI [{row.ess_lower}, ∞)")
    _log(layout, f"ess: wrote {results_dir(layout)}/ess.csv, curve.csv, llm.csv, ESS.md and "
                 f"{layout.figures / 'ess_curve.png'}")


@main.command(name="reghdfe")
@click.argument("data", type=click.Path(exists=True, dir_okay=False))
@click.argument("y")
@click.argument("x", nargs=-1, required=True)
@click.option("--absorb", "-a", multiple=True, help="An absorbed fixed effect (repeat for several).")
@click.option("--vce", type=click.Choice(["unadjusted", "robust", "cluster"]), default=None,
              help="Variance estimator (default: cluster if --cluster is given, else unadjusted).")
@click.option("--cluster", "-c", multiple=True, help="A cluster variable (repeat for multiway clustering).")
@click.option("--save", type=click.Path(dir_okay=False), default=None, help="Write the coefficient table as CSV.")
def reghdfe_command(data: str, y: str, x: tuple[str, ...], absorb, vce, cluster, save) -> None:
    """reghdfe in Python: Y on X absorbing fixed effects, reghdfe's conventions (CSV, parquet or .dta input).

    \b
    Example:
      lapbias reghdfe data/derived/panel_pre.dta outcome mu_hat lap c.mu_hat#c.lap \\
          --absorb entity_num --absorb period_num --cluster entity_num
    """
    from .data.regression_input import check_variables, read_data
    from .estimate import reghdfe
    from .estimate.table import format_result
    from .io import write_csv

    click.get_current_context().meta["lapbias.input"] = data
    frame = read_data(data)
    check_variables(frame, data, y, list(x), list(absorb), list(cluster))
    if cluster and vce in ("unadjusted", "robust"):
        raise LapbiasError(f"--cluster {' '.join(cluster)} with --vce {vce}: the cluster variable would be ignored; "
                           "use --vce cluster (or drop --cluster)")
    result = reghdfe(frame, y, list(x), absorb=list(absorb), vce=vce or ("cluster" if cluster else "unadjusted"),
                     cluster=list(cluster))
    click.echo(format_result(result, y))
    if save:
        write_csv(result.to_rows("reghdfe"), Path(save))
