"""`lapbias run --dry-run` (issue 17, item 3): per-stage time and memory from a timed probe of the real bundled
model, cached per machine and model, and the H100 line; nothing is written under the run's folders."""

from __future__ import annotations

import importlib
import json
import pkgutil
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


def test_dry_run_estimates_each_stage_from_a_cached_probe(tmp_path, monkeypatch):
    monkeypatch.setenv("LAPBIAS_CACHE_DIR", str(tmp_path / "cache"))
    demo = pd.read_csv(DEMO / "demo_panel.csv")
    pd.concat([demo[demo["target_date"] <= "2024-06-30"].head(6), demo[demo["target_date"] > "2024-06-30"].head(6)]) \
        .to_csv(tmp_path / "panel.csv", index=False)
    config = (DEMO / "demo.toml").read_text(encoding="utf-8")
    config = config.replace('root = "."', f'root = "{tmp_path / "study"}"').replace(
        'path = "data/demo/demo_panel.csv"', f'path = "{tmp_path / "panel.csv"}"')
    (tmp_path / "study.toml").write_text(config, encoding="utf-8")
    first = CliRunner().invoke(main, ["run", str(tmp_path / "study.toml"), "--dry-run"])
    assert first.exit_code == 0, first.output
    assert "12 rows" in first.output and "measured now" in first.output
    for stage in ("forecast", "recall", "minkprob", "estimate"):
        assert any(line.strip().startswith(stage) and "peak" in line for line in first.output.splitlines())
    assert "one H100 (benchmarks/RESULTS.md" in first.output and "under an hour" in first.output
    # the estimate line counts what `estimate` runs: the demo slice has pre- and post-cutoff rows and the 0/1
    # moderator `small`: 2 x (3 validation + detection), the power's standalone regression, Tables II (2), III (2),
    # IV (2, no confidence_regex), V (2 + 2), the bootstrap's in-sample beta_3 and its draws
    (estimate,) = [line for line in first.output.splitlines() if line.strip().startswith("estimate")]
    assert "estimate  22 regressions + 10,000 bootstrap draws" in estimate and "queries" not in estimate
    rates = json.loads((tmp_path / "cache" / "probe_rates.json").read_text(encoding="utf-8"))
    (probe,) = rates.values()
    assert set(probe) == {"forecast", "recall", "minkprob"} and all(r["tokens_per_s"] > 0 for r in probe.values())
    second = CliRunner().invoke(main, ["run", str(tmp_path / "study.toml"), "--dry-run"])
    assert second.exit_code == 0 and "from the cache of an earlier probe" in second.output
    assert not (tmp_path / "study").exists()  # a dry run writes nothing under the run's folders


PRE = [f"2024-0{m}-1{d}" for m in (3, 4, 5) for d in range(3)]
POST = [f"2024-{m}-1{d}" for m in (10, 11, 12) for d in range(3)]


@pytest.mark.parametrize("dates", [PRE + POST, PRE, POST], ids=["both_samples", "pre_only", "post_only"])
def test_the_planned_regressions_are_those_estimate_runs(tmp_path, monkeypatch, dates):
    """The dry run's count against a real `lapbias estimate` on the same rows, every reghdfe fit on a sample with
    rows counted wherever estimate calls it (it missed the power's standalone regression and the bootstrap's
    in-sample beta_3, and counted Tables II-IV on an empty pre-cutoff sample)."""
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
    settings = {"root": str(tmp_path), "study": {"cutoff": "2024-06-30"}, "estimate": {"bootstrap_reps": 20}}
    build(from_dict(settings), layout)
    (tmp_path / "study.toml").write_text(f'root = "{tmp_path}"\n[study]\ncutoff = 2024-06-30\n[estimate]\n'
                                         "bootstrap_reps = 20\n")
    result = CliRunner().invoke(main, ["estimate", str(tmp_path / "study.toml")])
    assert result.exit_code == 0, result.output
    regressions, draws = planned_estimation(inputs, from_dict(settings))
    assert regressions == sum(n > 0 for n in fits)
    assert draws == (20 if dates == PRE + POST else 0)
