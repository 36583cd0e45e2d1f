"""lapbias: test whether an LLM's in-sample forecasts are contaminated by lookahead bias.

Gao, Jiang and Yan, "A Test of Lookahead Bias in LLM Forecasts"; the operating protocol's five steps
(forecast, recall, validation, detection, placebo) from a panel CSV to results/REPORT.md.

The Python API is the stage layer, lapbias.stages: one function per stage of a configuration (a TOML path or a
loaded RunConfig), e.g.

    import lapbias
    report = lapbias.run("my_study.toml", yes=True)            # every step; returns results/REPORT.md's path
    lapbias.stages.estimate("my_study.toml", engine="python")  # one stage
"""

import os
import sys

__version__ = "0.1.0"

if "torch" not in sys.modules and "GOMP_SPINCOUNT" not in os.environ:
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    # torch's CPU kernels are OpenMP parallel regions ending in a barrier; by default a thread that reaches it spins
    # on its core. With another process holding one of two cores, its partner then waits for a core to run on, and
    # every small region of a step costs a scheduler time slice. MEASURED (benchmarks/results/contention.md, 2
    # cores): beside one busy process, LoRA steps 2.9x slower spinning, 1.1x passive; Min-K% batches 3.5x / 1.3x;
    # generation 2.5x / 1.5x; alone, passive waiting costs about a third (0.38 -> 0.51 s a step). The arithmetic, and
    # so every result, is unchanged. libgomp reads it when torch is loaded: set only when torch is not loaded yet,
    # never over the user's OMP_WAIT_POLICY or GOMP_SPINCOUNT (GOMP_SPINCOUNT=300000 restores libgomp's spinning on
    # a dedicated machine). Child processes (Stata, a vLLM server) inherit it.


def __getattr__(name: str):
    """`lapbias.run` and `lapbias.stages`, imported on first use (`import lapbias` stays light)."""
    if name in ("run", "stages"):
        import importlib

        stages = importlib.import_module(f"{__name__}.stages")  # `from . import stages` would come back here
        return stages if name == "stages" else stages.run
    raise AttributeError(f"module 'lapbias' has no attribute {name!r}")
