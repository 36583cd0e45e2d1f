"""`lapbias` command line: each subcommand parses its options, calls one stage function (lapbias/stages) and
prints. Errors a user can cause (LapbiasError) are printed as their message, one line per problem, with exit
status 2; `lapbias --debug ...` shows the traceback instead."""

from __future__ import annotations

import datetime as dt
import sys
import tempfile
import tomllib
import traceback
import warnings
from pathlib import Path

import click

from . import stages
from .data.validate import MAX_SEED, SAMPLE_SEED
from .errors import LapbiasError
from .io import os_hint, os_reason


class LapbiasGroup(click.Group):
    """The one error boundary: LapbiasError becomes its message (exit 2), an OSError the path and the system's
    reason (exit 2: the environment, not a bug); any other exception one line naming the stage and its input, with
    the full traceback written to logs/ (exit 1). --debug shows tracebacks."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort, KeyboardInterrupt):
            raise
        except Exception as err:
            if ctx.params.get("debug"):
                raise
            stage, where = ctx.invoked_subcommand or "lapbias", ctx.meta.get("lapbias.input", "")
            if isinstance(err, (LapbiasError, OSError)):  # what the user (or the environment) can fix: exit 2
                lines = str(err).splitlines() if isinstance(err, LapbiasError) else [f"`lapbias {stage}` could not "
                    f"read or write {err.filename or where}: {os_reason(err)}; {os_hint(err)}"]
                for line in lines or ["(no message)"]:  # a note or an indented example is not an error of its own
                    click.secho(line if line.startswith(("  ", "note: ")) else f"error: {line}", err=True, fg="red")
                ctx.exit(2)
            log = _write_traceback(stage, where)
            click.secho(f"error: `lapbias {stage}`{f' on {where}' if where else ''} stopped on an unexpected "
                        f"{type(err).__name__}: {(str(err).splitlines() or [''])[0][:200]}", err=True, fg="red")
            click.secho(f"  full traceback: {log} (rerun with `lapbias --debug {stage} ...` to show it; please "
                        "report it as a bug)", err=True, fg="red")
            ctx.exit(1)


def _write_traceback(stage: str, config_path: str) -> Path:
    """The current exception's traceback in logs/traceback-<stage>-<time>.log under the config's root (else ./logs,
    else the temp folder)."""
    stamp = dt.datetime.now().strftime("%Y%m%dT%H%M%S")
    try:
        with open(config_path, "rb") as handle:
            root = Path(str(tomllib.load(handle).get("root", ".")))
    except (OSError, ValueError, TypeError):
        root = Path(".")
    for folder in (root / "logs", Path("logs"), Path(tempfile.gettempdir())):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"traceback-{stage}-{stamp}.log"
            path.write_text(traceback.format_exc(), encoding="utf-8")
            return path
        except OSError:
            continue
    return Path("(not written)")


def _ask(rerun_with: str, subject: str, question: str, given: bool = False):
    """A confirmation given up front by a flag (None: the stage's `yes`), or asked on the terminal; with no terminal
    to ask on, declined before the model is loaded, saying which flag to rerun with."""
    if given:
        return None
    how = f"no terminal to confirm {subject} on: rerun with {rerun_with}"
    if not sys.stdin.isatty():
        return stages.protocol.confirmation(False, how=how)

    def ask(message: str) -> bool:
        click.echo(message, err=True)
        return click.confirm(question, default=False, err=True)

    return ask


def _consent(yes: bool = False, yes_sampling: bool | None = None) -> dict:
    """Protocol Step 0: a query batch goes ahead with --yes or after a question; Step 2: the sampling fallback's
    multiplied query count needs its own (--yes-sampling), which --yes does not cover."""
    consent = {"yes": yes, "confirm": _ask("--yes to go ahead", "the query batch", "go ahead?", yes)}
    if yes_sampling is not None:
        consent["confirm_sampling"] = (stages.protocol.confirmation(True) if yes_sampling else _ask(
            "--yes-sampling to accept the multiplied query count", "the sampling fallback",
            "go ahead with the sampling fallback?"))
    return consent


def _stage_command(name: str, options: list, doc: str) -> None:
    """`lapbias NAME CONFIG [options]`: the stage function of that name with the options as keywords (--yes and
    --yes-sampling become the stage's confirmations)."""
    def command(config_path: str, **options) -> None:
        click.get_current_context().meta["lapbias.input"] = config_path
        if options.pop("dry_run", False):
            click.echo(stages.dry_run(config_path))
            return
        consent = _consent(options.pop("yes", False), options.pop("yes_sampling", None)) if "yes" in options else {}
        getattr(stages, name)(config_path, echo=click.echo, **options, **consent)

    main.command(name=name, help=doc)(_with([config_argument, *options], command))


config_argument = click.argument("config_path", metavar="CONFIG", type=click.Path(dir_okay=False))
YES = click.option("--yes", "-y", is_flag=True, help="Go ahead with model query batches without asking.")
SAMPLING = click.option("--yes-sampling", is_flag=True, help="Accept the sampling fallback's multiplied query count "
                        "([recall] fallback = \"sampling\", protocol Step 2) without asking.")
LOW_PARSE = click.option("--allow-low-parse-rate", is_flag=True,
                         help="Go on although fewer forecasts parse than [forecast] min_parse_rate (Step 1).")
SAMPLE = [click.option("--sample", type=int, default=None, help="Keep a random subsample of N rows."),
          click.option("--seed", type=click.IntRange(0, MAX_SEED), default=SAMPLE_SEED, show_default=True,
                       help="Seed of the subsample.")]
ENGINE = click.option("--engine", type=click.Choice(["auto", "python", "stata"]), default=None,
                      help="Estimation engine (default: [estimate] engine of the config).")
DRY_RUN = click.option("--dry-run", is_flag=True, help="Only estimate the run's time and memory here: the first "
                       "batches of each stage's uncached queries are asked and timed (answers kept in the cache).")
REPLIES = [click.option("--replies", type=click.Path(dir_okay=False), default=None, help="Score the replies in this "
                        ".jsonl or .csv file (collected elsewhere) instead of asking the model (docs/leak.md)."),
           click.option("--model", default=None, help="With --replies: the model whose replies to score, when the "
                        "file holds several.")]
DEMO = click.option("--config", "config_path", default=stages.DEMO_CONFIG, show_default=True,
                    type=click.Path(dir_okay=False), help="The demo's configuration.")


def _with(options: list, command):
    for option in reversed(options):
        command = option(command)
    return command


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


STAGE_COMMANDS = [
    ("validate", SAMPLE, "Validate the input panel and write data/derived/input.parquet.", "validate"),
    ("forecast", [YES, LOW_PARSE], "Step 1: ask the forecast prompt for every row -> forecast.parquet (mu_hat).",
     "forecast --yes"),
    ("recall", [YES, LOW_PARSE, SAMPLING], "Step 2: date-only recall query per (entity, target_date) -> "
     "recall.parquet (lap, ud).", "recall --yes"),
    ("minkprob", [YES, LOW_PARSE], "Min-K% prob of every prompt (paper eq. 1) -> minkprob.parquet (lap_mink).",
     "minkprob --yes"),
    ("panel", [LOW_PARSE], "Merge the signals into the panel; write panel.parquet, panel_pre.dta, panel_post.dta.",
     "panel"),
    ("estimate", [ENGINE], "Steps 3-5: validation, detection and placebo regressions -> results/*.csv.",
     "estimate --engine python"),
    ("report", [], "Write results/REPORT.md (verdict by the protocol's rule), LaTeX tables and figures; print the "
     "verdict.", "report"),
    ("run", [YES, LOW_PARSE, *SAMPLE, SAMPLING, DRY_RUN], "All steps from one TOML config: validate, forecast, "
     "recall, minkprob, panel, estimate, report.", "run --yes", "run --dry-run"),
    ("rebuild", [], "Regenerate every derived file from the input and the raw JSONL cache alone (no model call); a "
     "--sample subsample of the last `validate` is drawn again (same rows).", "rebuild"),
    ("calibrate", [YES], "Self-validation: plant memorization with LoRA, run the protocol on base and planted model, "
     "compare.", "calibrate --yes"),
    ("leak", [*REPLIES, YES], "NumLeak audit: probe the model for a public series' value at a date, or score "
     "replies collected elsewhere (results/leak/, REPORT.md section).", "leak --yes",
     "leak --replies replies.jsonl --model claude-sonnet-4.6"),
    ("ess", [YES], "Equivalent sample size of the LLM: block-out CV error curves, sequential CI, results/ess/.",
     "ess --yes"),
]
"""(command, options, help, example arguments): `lapbias COMMAND CONFIG` calls the stage function of that name."""
EXAMPLE_CONFIG = {"calibrate": "data/demo/calibrate.toml", "leak": "data/demo/leak.toml", "ess": "data/demo/ess.toml",
                  "run": "my_study.toml"}
for _name, _options, _doc, *_examples in STAGE_COMMANDS:  # help: the text, then "Example:" and each example
    _stage_command(_name, _options, _doc + "\n\n\b\nExample:\n" + "\n".join(
        f"  lapbias {_name} {EXAMPLE_CONFIG.get(_name, 'data/demo/demo.toml')} {example.partition(' ')[2]}".rstrip()
        for example in _examples))


@main.command()
@YES
@DEMO
def demo(yes: bool, config_path: str) -> None:
    """The whole protocol on the bundled demo panel with the bundled SmolLM2-135M-Instruct (run from the repo).

    \b
    Example:
      lapbias demo --yes
    """
    stages.run(config_path, echo=click.echo, **_consent(yes))


@main.command()
@click.argument("data", type=click.Path(dir_okay=False))
@click.option("--output", "-o", type=click.Path(dir_okay=False), default=None,
              help="Where to write the config (default: DATA's name with .toml, in the current folder).")
@click.option("--force", is_flag=True, help="Overwrite an existing config file.")
def init(data: str, output: str | None, force: bool) -> None:
    """Write a starter config for a data file: each column guess shown with its type and first values, target dates
    from the horizon when there is no target-date column, the cutoff a TODO.

    \b
    Example:
      lapbias init my_panel.csv                # writes my_panel.toml; set [study] cutoff in it, then
      lapbias run my_panel.toml --yes
    """
    click.echo("\n".join(stages.init(data, output, force)))


@main.command("stata-install")
@click.option("--copy-to", type=click.Path(file_okay=False), default=None,
              help="Also copy the ado and do files to DIR/ado and DIR/do and name those copies.")
def stata_install(copy_to: str | None) -> None:
    """Print the Stata commands that install lapbias's ado files from this installation and run its do-files.

    \b
    Example:
      lapbias stata-install --copy-to stata_lapbias
    """
    click.echo(stages.stata_install(copy_to))


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
    click.get_current_context().meta["lapbias.input"] = data
    click.echo(stages.reghdfe(data, y, list(x), list(absorb), vce, list(cluster), save))
