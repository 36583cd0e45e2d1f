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
p95 as it always does.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyreadstat

from ..errors import EstimationError
from .bootstrap import ABSORB, VARIABLES, pairs_bootstrap


def draws(pool: pd.DataFrame, variables: list[str], resample: str, reps: int, seed: int) -> np.ndarray:
    """beta_3 of each draw of `pairs_bootstrap` on `pool`, whose `variables` are depvar, forecast, lap and the two
    fixed effects (the first one the resampling unit of resample="entity")."""
    if len(variables) != 5:
        raise EstimationError(f"lapboot's kernel takes depvar forecast lap fe1 fe2, got {variables}")
    missing = [v for v in variables if v not in pool.columns]
    if missing:
        raise EstimationError(f"the saved bootstrap pool lacks {missing}")
    sample = pool[variables].set_axis(VARIABLES + ABSORB, axis=1)
    return pairs_bootstrap(sample, 0.0, B=reps, seed=seed, resample=resample, progress=False).draws


def write_draws(pool_path: str, draws_path: str, variables: str, resample: str, reps: int, seed: int) -> None:
    """Read the pool (.dta), compute the draws (`draws`), write them (.dta: draw, beta3) for lapboot."""
    names = variables.split()
    pool, _ = pyreadstat.read_dta(pool_path, usecols=list(dict.fromkeys(names)))
    beta3 = draws(pool, names, resample, int(reps), int(seed))
    frame = pd.DataFrame({"draw": np.arange(1, len(beta3) + 1, dtype=np.int32), "beta3": beta3})
    pyreadstat.write_dta(frame, draws_path)
    print(f"(lapbias kernel: {len(beta3)} draws, {int(np.isnan(beta3).sum())} unidentified)")
