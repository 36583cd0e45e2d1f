"""`lapbias calibrate CONFIG`: plant, run the ordinary protocol on each model, tabulate, check what the design
expects, stage the outputs.

The protocol itself is not called from here but passed in (`protocol(config, layout)`: the CLI's whole run,
validate ... report), so every model goes through exactly the stages a user's run goes through, and this package
never imports the CLI. Under `control = "shuffled"` a third run reads the planted model's answers with the recall
answers and Min-K% scores permuted (experiment.shuffled_answers). The calibration's own outputs
(results/calibration/*.csv, REPORT.md, the run configurations of the models and results/figures/calibration.png)
are written into a staging folder and moved in together when everything has finished (lapbias/stage.py), stamped
with one run id; then an unmet expectation (expect.py) ends the command with a one-line error naming it.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Callable

from ..config import RunConfig
from ..io import Layout, write_csv, write_text
from ..stage import new_run_id, staged_outputs
from . import expect, experiment
from .report import FOLDER, figure, section
from .settings import CalibrateSettings

STAGE = "calibrate"


def run(config: RunConfig, settings: CalibrateSettings, layout: Layout,
        protocol: Callable[[RunConfig, Layout], None], confirm, log: Callable[[str], None]) -> dict:
    """Plant, run `protocol` on the base and the planted model (each under its own root in the work directory),
    tabulate them (experiment.measure), check the expectations (expect.check) and stage the calibration's outputs
    into results/; raise expect.CalibrationNotMet after staging when an expectation is not met."""
    clock = time.monotonic()
    plan = experiment.plant(config, settings, confirm, log)
    seconds = {"plant": time.monotonic() - clock}
    for name, model_config in plan.configs.items():
        clock = time.monotonic()
        model_layout = Layout(Path(model_config.root))
        model_layout.make_dirs()
        if name == experiment.SHUFFLED:
            experiment.shuffled_answers(plan.configs["planted"], model_config, plan.arms, settings.assignment_seed)
            log("calibrate: the planted model's recall answers and Min-K% scores permuted over the pre-cutoff pairs "
                f"(control = \"shuffled\"), then the ordinary protocol on them ({plan.config_files[name]})")
        else:
            log(f"calibrate: the ordinary protocol on the {name} model ({plan.config_files[name]})")
        protocol(model_config, model_layout)
        seconds[f"protocol_{name}"] = time.monotonic() - clock
        for (model, key), alternative in plan.lap_configs.items():
            if model != name:
                continue
            clock = time.monotonic()
            experiment.seed_answers(model_config, alternative)
            log(f"calibrate: the {name} model under LAP configuration {key} (the same answers from the cache; only "
                f"what it scores anew is asked) -> {alternative.root}")
            protocol(alternative, Layout(Path(alternative.root)))
            seconds[f"protocol_{name}_{key}"] = time.monotonic() - clock
    tables = experiment.measure(plan, seconds)
    tables["expected"] = expect.check(settings.control, tables, config.forecast.min_parse_rate,
                                      config.estimate.detection_alpha, config.estimate.lap_measure)
    with staged_outputs(layout.results, STAGE, new_run_id()) as folder:
        out = layout.staged(folder)
        results = out.results / FOLDER
        arms = plan.arms.assign(target_date=plan.arms["target_date"].dt.strftime("%Y-%m-%d"))
        write_csv(arms, results / "arms.csv")
        for name in ("training_loss.csv", "corpus.csv", "decoys.csv"):
            if (plan.model_dir / name).exists():  # decoys.csv: only with decoys
                write_text(results / name, (plan.model_dir / name).read_text(encoding="utf-8"))
        write_text(results / "training.json", json.dumps(plan.training, indent=2) + "\n")
        for name, path in plan.config_files.items():
            write_text(results / f"{name}.toml", Path(path).read_text(encoding="utf-8"))
        for name, table in tables.items():
            write_csv(table, results / f"{name}.csv")
        figure(tables["lap_by_arm"], tables["beta3_by_arm"], out.figures / "calibration.png",
               config.estimate.lap_measure)
        lines = section(out.results, tables, plan.training, alpha=config.estimate.detection_alpha)
        write_text(results / "REPORT.md", "# Self-validation report\n\n" + "\n".join(lines[2:]) + "\n")
    missed = expect.failures(tables["expected"])
    if missed:
        log(summary(tables))
        raise expect.CalibrationNotMet(f"calibrate: expected results not met ({missed}); see "
                                       "results/calibration/REPORT.md")
    log(f"calibrate: every expected result met ({len(tables['expected'])} checks, control = \"{settings.control}\")")
    return tables


def summary(tables: dict) -> str:
    """The calibration's own last lines: each model's verdict under every LAP configuration (the configured one
    first) and where the calibration report is."""
    verdicts = tables["verdicts"]
    lines = []
    for model, rows in verdicts.groupby("model", sort=False):
        rows = rows.sort_values("configured", ascending=False, kind="stable")
        first = rows.iloc[0]
        others = "; ".join(f"{key}: {verdict}" for key, verdict in zip(rows["lap_configuration"].iloc[1:],
                                                                        rows["verdict"].iloc[1:]))
        lines.append(f"calibrate: {model} model: {first['verdict']} (LAP {first['lap_configuration']})"
                     + (f"; under the other LAP configurations {others}" if others else ""))
    return "\n".join(lines + [f"calibration report: results/{FOLDER}/REPORT.md (tables results/{FOLDER}/*.csv, "
                               "figure results/figures/calibration.png)"])
