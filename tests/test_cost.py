"""`lapbias run --dry-run`: the run's time on this machine from the first batches of each stage, asked and timed
with the real bundled model (their answers kept in the cache), counting only the queries the cache lacks; the stage's
own confirmation shows the same estimate (one function, signals/timing.py); the estimate stage's regressions."""

from __future__ import annotations

import importlib
import pkgutil
import re
import sys
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from lapbias.cli import main
from lapbias.config import from_dict
from lapbias.cost import planned_estimation
from lapbias.io import Layout
from lapbias.panel import build
from test_panel import synthetic_stage_files

DEMO = Path(__file__).resolve().parent.parent / "data" / "demo"


def test_the_dry_run_times_the_first_batches_counts_only_what_the_cache_lacks_and_the_stage_agrees(tmp_path):
    """The dry run said 2.3 h before a run of 47 minutes, still 2.3 h with every answer cached (the run: 35 s),
    while the forecast stage announced 7.6 min (rough, from the model's size) and took 25 min. Now the dry run asks
    and times the first 32 queries of each stage (kept in the cache), estimates the rest from them, and the stage's
    confirmation shows the very same estimate; with every answer cached the dry run asks nothing, loads no model and
    puts no model time in the total."""
    demo = pd.read_csv(DEMO / "demo_panel.csv")
    pd.concat([demo[demo["target_date"] <= "2024-06-30"].head(20), demo[demo["target_date"] > "2024-06-30"].head(20)]) \
        .to_csv(tmp_path / "panel.csv", index=False)
    config = (DEMO / "demo.toml").read_text(encoding="utf-8")
    config = config.replace('root = "."', f'root = "{tmp_path / "study"}"').replace(
        'path = "data/demo/demo_panel.csv"', f'path = "{tmp_path / "panel.csv"}"').replace(
        "batch_size = 16", "batch_size = 8")
    (tmp_path / "study.toml").write_text(config, encoding="utf-8")
    first = CliRunner().invoke(main, ["run", str(tmp_path / "study.toml"), "--dry-run"])
    assert first.exit_code == 0, first.output
    assert "dry run of `lapbias run`: 40 rows" in first.output
    said = {}
    for stage in ("forecast", "recall", "minkprob"):
        (line,) = [line for line in first.output.splitlines() if line.startswith(f"  {stage} ")]
        assert f"  {stage:9s} 8 of 40 queries to ask: about " in line and "(32 asked now to time them, kept in" in line
        said[stage] = re.search(r"about [^)]*\)", line).group(0)
        assert len((tmp_path / "study" / "data" / "raw" / f"{stage}.jsonl").read_text().splitlines()) == 32
    assert "parse rate of these 32 answers" in first.output and "loading the model" in first.output
    assert "one H100 (benchmarks/RESULTS.md" in first.output and "under an hour" in first.output
    # the estimate line counts what `estimate` runs: the slice has pre- and post-cutoff rows and the 0/1 moderator
    # `small`: 2 x (3 validation + the difference + detection), the power's standalone regression, Tables II (2),
    # III (2), IV (2, no confidence_regex), V (2 + 2), the bootstrap's in-sample beta_3 and its draws
    (estimate,) = [line for line in first.output.splitlines() if line.strip().startswith("estimate")]
    assert "estimate  87 regressions + 10,000 bootstrap draws: about" in estimate and "queries" not in estimate
    assert not (tmp_path / "study" / "data" / "derived" / "input.parquet").exists()  # validated, not written

    run = CliRunner().invoke(main, ["run", str(tmp_path / "study.toml"), "--yes"])
    assert run.exit_code == 0, run.output
    for stage in ("forecast", "recall", "minkprob"):  # the stage's own confirmation: the dry run's estimate
        assert f"{stage}: 8 queries to ask (32 of 40 already cached); estimated time {said[stage]}" in run.output

    cached = CliRunner().invoke(main, ["run", str(tmp_path / "study.toml"), "--dry-run"])
    assert cached.exit_code == 0, cached.output
    for stage in ("forecast", "recall", "minkprob"):
        assert f"  {stage:9s} 0 of 40 queries to ask: no model call" in cached.output
    assert "no model load (every query is cached)" in cached.output and "H100" not in cached.output


PRE = [f"2024-0{m}-1{d}" for m in (3, 4, 5) for d in range(3)]
POST = [f"2024-{m}-1{d}" for m in (10, 11, 12) for d in range(3)]


@pytest.mark.parametrize("dates, min_k_pass", [(PRE + POST, True), (PRE, True), (POST, True), (PRE + POST, False)],
                         ids=["both_samples", "pre_only", "post_only", "without_the_min_k_pass"])
def test_the_planned_regressions_are_those_estimate_runs(tmp_path, monkeypatch, dates, min_k_pass):
    """The dry run's count against a real `lapbias estimate` on the same rows, every reghdfe fit on a sample with
    rows counted wherever estimate calls it (it missed the power's standalone regression and the bootstrap's
    in-sample beta_3, and counted Tables II-IV on an empty pre-cutoff sample); without the Min-K% pass (a server
    without prompt log-probs, the recall LAP configured) no text measure is estimated, nor counted."""
    import lapbias.estimate
    from lapbias.estimate.reghdfe import reghdfe as reghdfe_function

    fits = []

    def counted(sample, *args, **kwargs):
        fits.append(len(sample))
        return reghdfe_function(sample, *args, **kwargs)

    for found in pkgutil.iter_modules(lapbias.estimate.__path__, "lapbias.estimate."):
        importlib.import_module(found.name)  # imported now, each binds the real reghdfe, patched below for this test
    for name, module in list(sys.modules.items()):
        if name.startswith("lapbias.") and name != "lapbias.estimate.reghdfe" and \
                getattr(module, "reghdfe", None) is reghdfe_function:
            monkeypatch.setattr(module, "reghdfe", counted)
    layout = Layout(tmp_path)
    layout.make_dirs()
    inputs = synthetic_stage_files(layout, n_entities=12, dates=dates)
    if not min_k_pass:
        layout.derived_file("minkprob.parquet").unlink()
    settings = {"root": str(tmp_path), "study": {"cutoff": "2024-06-30"}, "estimate": {"bootstrap_reps": 20}}
    build(from_dict(settings), layout)
    (tmp_path / "study.toml").write_text(f'root = "{tmp_path}"\n[study]\ncutoff = 2024-06-30\n[estimate]\n'
                                         "bootstrap_reps = 20\n")
    result = CliRunner().invoke(main, ["estimate", str(tmp_path / "study.toml")])
    assert result.exit_code == 0, result.output
    regressions, draws = planned_estimation(inputs, from_dict(settings), text_measures=min_k_pass)
    assert regressions == sum(n > 0 for n in fits)
    assert draws == (20 if dates == PRE + POST else 0)
