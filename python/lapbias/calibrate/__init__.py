"""Self-validation: plant memorization in a real LLM with LoRA and show the unchanged test finds it.

`lapbias calibrate CONFIG` = `experiment.plant` (arms, token-equalized corpus, LoRA, merged model, one run
configuration per model) -> the ordinary stages on the base and on the planted model -> `experiment.measure`
(LAP, Min-K%, beta_3, placebo, verdict by arm) -> `report.figure` and the REPORT.md section (`report.section`).
"""

from .experiment import MODELS, Plan, measure, plant
from .report import figure, section
from .settings import CalibrateSettings, load

__all__ = ["CalibrateSettings", "MODELS", "Plan", "figure", "load", "measure", "plant", "section"]
