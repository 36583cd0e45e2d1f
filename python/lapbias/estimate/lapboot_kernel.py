"""lapboot's fast path (ado/_lapbias_pyboot.ado, Stata 16 and later): the draws of the Python engine's pairs
bootstrap (estimate/bootstrap.py `pairs_bootstrap`, the compiled kernel) on the resampling pool `lapboot` saved, so
that Stata's bootstrap takes seconds and its draws are the Python engine's for the same seed, instead of one reghdfe
call per draw.

Stata calls it through its Python integration, after saving the pool (the rows of the sample, standardized when
`lapboot, standardize` was asked):

    python: lapbias.estimate.lapboot_kernel.write_draws(r"<pool.dta>", r"<draws.dta>",
                                                        "depvar forecast lap fe1 fe2", "obs", reps, seed)

`fe1 fe2` are the two absorbed fixed effects; resample "entity" draws whole levels of `fe1` (lapboot puts its
cluster() variable first), "obs" draws rows. The draws file holds `draw` (1..reps) and `beta3` (missing where a
draw leaves beta_3 unidentified), the layout of lapboot's own loop, which lapboot reads back to compute p_boot and
p95 as it always does; and, when pairs_bootstrap's own check finds beta_3 not identified in any draw (every draw then
missing), `note`: its reason, which lapboot returns as r(note) with r(identified) = 0, as the Python engine's
bootstrap.csv has it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyreadstat

from ..errors import EstimationError
from .bootstrap import ABSORB, VARIABLES, BootstrapResult, pairs_bootstrap


def bootstrap(pool: pd.DataFrame, variables: list[str], resample: str, reps: int, seed: int) -> BootstrapResult:
    """`pairs_bootstrap` on `pool`, whose `variables` are depvar, forecast, lap and the two fixed effects (the first
    one the resampling unit of resample="entity"): beta_3 of each draw, and whether beta_3 is identified (why not)."""
    if len(variables) != 5:
        raise EstimationError(f"lapboot's kernel takes depvar forecast lap fe1 fe2, got {variables}")
    missing = [v for v in variables if v not in pool.columns]
    if missing:
        raise EstimationError(f"the saved bootstrap pool lacks {missing}")
    sample = pool[variables].set_axis(VARIABLES + ABSORB, axis=1)
    return pairs_bootstrap(sample, 0.0, B=reps, seed=seed, resample=resample, progress=False)


def write_draws(pool_path: str, draws_path: str, variables: str, resample: str, reps: int, seed: int) -> None:
    """Read the pool (.dta), bootstrap it (`bootstrap`), write the draws (.dta: draw, beta3, and note when beta_3 is
    not identified) for lapboot."""
    names = variables.split()
    pool, _ = pyreadstat.read_dta(pool_path, usecols=list(dict.fromkeys(names)))
    result = bootstrap(pool, names, resample, int(reps), int(seed))
    frame = pd.DataFrame({"draw": np.arange(1, len(result.draws) + 1, dtype=np.int32), "beta3": result.draws})
    if not result.identified:
        frame["note"] = result.reason
    pyreadstat.write_dta(frame, draws_path)
    print(f"(lapbias kernel: {len(result.draws)} draws, {int(np.isnan(result.draws).sum())} unidentified"
          + (f"; {result.reason}" if not result.identified else "") + ")")
