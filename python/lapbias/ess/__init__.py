"""Equivalent sample size (ESS) of an LLM's predictions (Gao, Han, Liang: "How Well Do LLMs Predict Human
Behavior? A Measure of their Pretrained Knowledge").

The ESS of the LLM rule g relative to an algorithm A is n* = min{n : R_A(n) ≤ R(g)} (Definition 2.1).
Modules: blockcv (block-out CV, §3.2), variance (eq. 4.5, B.2, the finite-K variance, bands, 4.6/4.7), inference (plug-in,
Algorithm 3.1, Remark 3.1, delta method), losses (squared, 0-1, balanced accuracy, F1), comparators (App. C),
audit (one outcome × comparator), llm_predict (persona prompts through llm/ and its cache), data (features,
§6 transformed outcome), config ([ess] section), pipeline (`lapbias ess`), report (REPORT.md section, figure),
simulation (designs with a known ESS, for the coverage study).

Python use with predictions in hand:

    from lapbias.ess import Comparator, Settings, curve, make_loss, summary
    result = curve(X, y, llm_pred, make_loss("squared", y), Comparator("lasso", discrete=False), Settings((10, 20, 40)))
    summary(result, Settings((10, 20, 40)))      # ess_plugin, ess_lower, ...

`Comparator(name, discrete, estimator=any_sklearn_estimator)` plugs in any scikit-learn estimator.
"""

from .audit import Settings, curve, summary
from .comparators import Comparator
from .losses import make_loss

__all__ = ["Comparator", "Settings", "curve", "make_loss", "summary"]
