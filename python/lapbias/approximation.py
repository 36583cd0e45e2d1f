"""Labels on everything derived from the recall sampling fallback.

Protocol Step 2: "Fallback when logprobs are unavailable: >= 25 samples per query at temperature 1, answer
frequencies in place of probabilities. [...] label all downstream results as approximated." The recall stage
marks each sampled answer (`approximated` in recall.parquet, `lap_approximated` in the panel); from there the
estimate step adds an `approximated` column to every results/*.csv it writes and the report labels REPORT.md,
each of its sections and every LaTeX caption. Because U − D (validation) and the recall LAP (detection,
placebo, bootstrap) both come from the recall answers, one sampled answer labels every table.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .config import RunConfig
from .io import write_csv
from .llm import sampling

RESULT_TABLES = ("validation", "detection", "placebo", "placebo_validation", "descriptive", "table2", "magnitudes",
                 "table3", "table4", "table5", "bootstrap")
"""The tables the estimate step writes (results/<name>.csv), all derived from the recall answers."""


def recall_note(panel: pd.DataFrame, config: RunConfig) -> str:
    """The label text when any recall answer in the panel was sampled, else ""."""
    flags = panel.get("lap_approximated")
    if flags is None or not bool(flags.fillna(False).astype(bool).any()):
        return ""
    share = float(flags.fillna(False).astype(bool).mean())
    return (f"{sampling.note(config.recall.n_samples, config.recall.sampling_seed, config.recall.sampling_temperature)}"
            f" ({share:.0%} of rows)")


def mark_results(results_dir: Path, names: list[str], note: str) -> list[Path]:
    """Add (or refresh) the column `approximated` = note on each results/<name>.csv that exists."""
    marked = []
    for name in names:
        path = Path(results_dir) / f"{name}.csv"
        if not path.exists() or not path.stat().st_size:
            continue
        table = pd.read_csv(path)
        table["approximated"] = note
        write_csv(table, path)
        marked.append(path)
    return marked
