"""lapbias: test whether an LLM's in-sample forecasts are contaminated by lookahead bias.

Gao, Jiang and Yan, "A Test of Lookahead Bias in LLM Forecasts"; the operating protocol's five steps
(forecast, recall, validation, detection, placebo) from a panel CSV to results/REPORT.md.

The Python API is the stage layer, lapbias.stages: one function per stage of a configuration (a TOML path or a
loaded RunConfig), e.g.

    import lapbias
    report = lapbias.run("my_study.toml", yes=True)            # every step; returns results/REPORT.md's path
    lapbias.stages.estimate("my_study.toml", engine="python")  # one stage
"""

__version__ = "0.1.0"


def __getattr__(name: str):
    """`lapbias.run` and `lapbias.stages`, imported on first use (`import lapbias` stays light)."""
    if name in ("run", "stages"):
        import importlib

        stages = importlib.import_module(f"{__name__}.stages")  # `from . import stages` would come back here
        return stages if name == "stages" else stages.run
    raise AttributeError(f"module 'lapbias' has no attribute {name!r}")
