"""The bundled demo panel: reproducible from its script, valid but for its two deliberate bad rows."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from lapbias.config import load
from lapbias.data.validate import validate_file

ROOT = Path(__file__).resolve().parents[1]


def test_script_reproduces_the_committed_csv(tmp_path):
    committed = (ROOT / "data/demo/demo_panel.csv").read_bytes()
    script = (ROOT / "data/demo/make_demo.py").read_text()
    copy = tmp_path / "make_demo.py"
    copy.write_text(script)
    subprocess.run([sys.executable, str(copy)], check=True, capture_output=True)
    assert (tmp_path / "demo_panel.csv").read_bytes() == committed


def test_demo_is_valid_but_for_two_intended_drops_and_spans_the_cutoff():
    config = load(ROOT / "data/demo/demo.toml")
    result = validate_file(ROOT / "data/demo/demo_panel.csv", config)
    assert dict(zip(result.dropped["reason"], result.dropped["example_row_id"])) == {
        "target_not_after_text": "BAD-reversed-dates", "missing_outcome": "BAD-missing-outcome"}
    frame = result.frame
    assert frame["entity_id"].nunique() >= 30 and 200 <= len(frame) <= 600
    cutoff = config.study.cutoff_date.isoformat()
    assert (frame["target_date"] <= cutoff).sum() > 100 and (frame["target_date"] > cutoff).sum() > 100
    assert result.warnings == []
