"""lapbias: test whether an LLM's in-sample forecasts are contaminated by lookahead bias.

Gao, Jiang and Yan, "A Test of Lookahead Bias in LLM Forecasts"; the operating protocol's five steps
(forecast, recall, validation, detection, placebo) from a panel CSV to results/REPORT.md.
"""

__version__ = "0.1.0"
