"""`lapbias run --dry-run` (issue 17, item 3): per-stage time and memory from a timed probe of the real bundled
model, cached per machine and model, and the H100 line; nothing is written under the run's folders."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from click.testing import CliRunner

from lapbias.cli import main

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
    # moderator `small`: 2 x (3 validation + detection), Tables II (2), III (2), IV (2, no confidence_regex),
    # V (2 + 2), and the bootstrap's draws
    (estimate,) = [line for line in first.output.splitlines() if line.strip().startswith("estimate")]
    assert "estimate  18 regressions + 10,000 bootstrap draws" in estimate and "queries" not in estimate
    rates = json.loads((tmp_path / "cache" / "probe_rates.json").read_text(encoding="utf-8"))
    (probe,) = rates.values()
    assert set(probe) == {"forecast", "recall", "minkprob"} and all(r["tokens_per_s"] > 0 for r in probe.values())
    second = CliRunner().invoke(main, ["run", str(tmp_path / "study.toml"), "--dry-run"])
    assert second.exit_code == 0 and "from the cache of an earlier probe" in second.output
    assert not (tmp_path / "study").exists()  # a dry run writes nothing under the run's folders
