"""Self-validation: plant memorization in a real LLM with LoRA and show the unchanged test finds it.

`lapbias calibrate CONFIG` = `pipeline.run`: `experiment.plant` (arms, corpus of articles -- the pair's text and
what happened next -- and recall answers, LoRA, merged model, one run configuration per model) -> the ordinary
stages on the base and on the planted model -> `experiment.measure` (LAP, Min-K%, P(memorized label), beta_3,
placebo, verdict by arm) -> `expect.check` (what the design expects, by `[calibrate] control`) -> `report.figure`
and REPORT.md (`report.section`), staged into results/ together. `power.design_power` sizes a design by simulation from the
measured per-pair behaviour (results/calibration/pairs.csv).
"""

from .experiment import MODELS, Plan, measure, plant
from .expect import CalibrationNotMet
from .pipeline import run
from .report import figure, section
from .settings import CalibrateSettings, load

__all__ = ["CalibrateSettings", "CalibrationNotMet", "MODELS", "Plan", "figure", "load", "measure", "plant", "run",
           "section"]
