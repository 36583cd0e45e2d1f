"""The sibling audits as stages: `calibrate` (planted memorization through the unchanged protocol), `leak` (NumLeak
numeric-recall probes) and `ess` (the LLM's equivalent sample size). Each writes its own results/<audit>/ files and
its REPORT.md section, results/<audit>/SECTION.md, staged with them; the protocol's REPORT.md includes the sections
it finds intact (report/sections.py)."""

from __future__ import annotations

from ..report import sections
from ..signals.batch import Confirm
from .project import Echo, Log, backend_for, confirmation, opened
from .protocol import report_as_estimated, run_all


def calibrate(config, *, yes: bool = False, confirm: Confirm | None = None, echo: Echo = print) -> dict:
    """Plant memorization with LoRA, run the protocol on the base and the planted model, compare
    (results/calibration/); returns the calibration's tables."""
    from ..calibrate import expect, load, pipeline
    from ..calibrate.report import section as calibration_section

    with opened(config, "calibrate", load=load, echo=echo) as ((run_config, settings), layout, log):
        ask = confirmation(yes, confirm)

        def write_section():
            sections.write_staged(layout.results, "calibrate", lambda: calibration_section(
                layout.results, alpha=run_config.estimate.detection_alpha))

        try:
            tables = pipeline.run(run_config, settings, layout,
                                  lambda model_config, model_layout: run_all(
                                      model_config, model_layout, Log(model_layout, echo), ask, confirmation(False)),
                                  ask, log)
        except expect.CalibrationNotMet:  # the tables are staged: the section shows what was not met
            write_section()
            raise
        write_section()
        if layout.derived_file("panel.parquet").exists() and (layout.results / "detection.csv").exists():
            # a protocol run under the same root: its REPORT.md gets the section; that study's own verdict goes to
            # the log only, so that the command ends with the calibration's result
            report_as_estimated(layout, Log(layout, echo=lambda message: None))
            log("calibrate: results/REPORT.md (the study already run under this root) now carries the "
                "self-validation section")
        log(pipeline.summary(tables))
        return tables


def leak(config, *, replies: str | None = None, model: str | None = None, yes: bool = False,
         confirm: Confirm | None = None, echo: Echo = print):
    """NumLeak audit: probe the model for a public series' value at a date, or score `replies` collected elsewhere
    (of `model`, when the file holds several; docs/leak.md) without asking a model (results/leak/, its REPORT.md
    section)."""
    from ..leak import config as leak_config
    from ..leak.pipeline import audit

    with opened(config, "leak", load=leak_config.load, echo=echo) as (leak_run, layout, log):
        with backend_for(leak_run, echo) as backend:  # loaded only when a query is asked: never with `replies`
            result = audit(leak_run, layout, backend, confirmation(yes, confirm), replies, model)
        parsed = result.summary.loc[result.summary["variant"] == "A"]
        source = f"scored from {replies}" if replies else f"{result.n_asked} asked now"
        log(f"leak: {len(result.panel)} probe replies ({source}), Variant A parse rate "
            f"{parsed['n_parsed'].sum()}/{parsed['n_queries'].sum()}; results/leak/*.csv, "
            "results/figures/leak_calibration.png, results/leak/SECTION.md (in results/REPORT.md)")
        for note in result.notes:
            log(f"leak: note: {note}")
        return result


def ess(config, *, yes: bool = False, confirm: Confirm | None = None, echo: Echo = print) -> dict:
    """Equivalent sample size of the LLM: block-out CV error curves, sequential CI (results/ess/)."""
    from ..ess import config as ess_config
    from ..ess.pipeline import results_dir, run as run_ess
    from ..ess.report import cli_lines

    with opened(config, "ess", load=ess_config.load, echo=echo) as (ess_run, layout, log):
        with backend_for(ess_run, echo) as backend:
            tables = run_ess(ess_run, layout, backend, confirmation(yes, confirm))
        for line in cli_lines(tables):
            log(line)
        log(f"ess: wrote {results_dir(layout)}/ess.csv, curve.csv, llm.csv, ESS.md, SECTION.md and "
            f"{layout.figures / 'ess_curve.png'}")
        return tables
