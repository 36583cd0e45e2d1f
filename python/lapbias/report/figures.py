"""Figures: the LAP distribution before and after the training cutoff (protocol Step 2 sanity check)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from ..io import atomic_write  # noqa: E402


def lap_histogram(panel: pd.DataFrame, path, measure: str = "lap") -> None:
    """Overlaid histograms of LAP for pre- and post-cutoff rows on common bins."""
    values = panel[measure].dropna()
    bins = np.linspace(values.min(), values.max(), 31) if len(values) and values.max() > values.min() else 10
    figure, axes = plt.subplots(figsize=(7, 4))
    for flag, label, color in ((0, "pre-cutoff (in sample)", "tab:red"), (1, "post-cutoff (placebo)", "tab:blue")):
        part = panel.loc[panel["post"] == flag, measure].dropna()
        if len(part):
            axes.hist(part, bins=bins, alpha=0.55, color=color, label=f"{label}, N = {len(part)}")
    axes.set_xlabel(f"LAP ({measure})")
    axes.set_ylabel("observations")
    axes.set_title("Lookahead propensity before and after the training cutoff")
    axes.legend()
    figure.tight_layout()
    atomic_write(path, lambda tmp: figure.savefig(tmp, format="png", dpi=120))
    plt.close(figure)
