"""Self-validation: plant memorization in a real LLM with LoRA and show the unchanged test finds it.

`lapbias calibrate CONFIG` = `pipeline.run`: `experiment.plant` (arms, token-equalized corpus, LoRA, merged model,
one run configuration per model) -> the ordinary stages on the base and on the planted model ->
`experiment.measure` (LAP, Min-K%, P(memorized label), beta_3, placebo, verdict by arm) -> `report.figure` and the
REPORT.md section (`report.section`), staged into results/ together.
"""

from .experiment import MODELS, Plan, measure, plant
from .pipeline import run
from .report import figure, section
from .settings import CalibrateSettings, load

__all__ = ["CalibrateSettings", "MODELS", "Plan", "figure", "load", "measure", "plant", "run", "section"]
