"""The stage layer: one function per stage, the documented Python API (`lapbias.run(config)`); the command line
parses options, calls one of these and prints. Each takes a TOML path or a loaded configuration."""

from .audits import calibrate, ess, leak
from .protocol import (DEMO_CONFIG, estimate, forecast, minkprob, panel, rebuild, recall, report, run,
                       validate)
from .tools import dry_run, init, reghdfe, stata_install

__all__ = ["DEMO_CONFIG", "calibrate", "dry_run", "estimate", "ess", "forecast", "init", "leak", "minkprob", "panel",
           "rebuild", "recall", "reghdfe", "report", "run", "stata_install", "validate"]
