"""The audits' sections of results/REPORT.md through the real CLI: `lapbias leak` (replies released with the NumLeak
paper, scored with no model) and `lapbias ess` (predictions the user has, `llm_column`) each write
results/<audit>/SECTION.md with their tables, staged and listed with sha256 in their manifests; `lapbias report`
includes the sections it finds intact and puts one line naming the file and the reason in place of a damaged one,
writing the rest of the report. The protocol's stage files are synthetic (test_panel.synthetic_stage_files)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lapbias.ess.report import TITLE
from lapbias.io import Layout
from lapbias.leak.report import HEADING
from lapbias.stage import fingerprint, manifest_path, new_run_id, staged_outputs
from test_bad_inputs import DATES, STUDY, expect, write_config
from test_panel import synthetic_stage_files

FIXTURE = Path(__file__).parent / "fixtures" / "numleak_anthropic_replies.jsonl"
REPLIES = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
PACKAGE = Path(__file__).parents[1] / "python" / "lapbias"


def _audits(root: Path) -> tuple[Path, Path, Path]:
    """The study, leak and ess configurations of one project under `root`."""
    study = write_config(root, STUDY)
    leak = write_config(root, '[leak]\ncutoff = "2024-12-31"\n', "leak.toml")
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x1": rng.normal(size=60), "x2": rng.normal(size=60)})
    frame["y"] = frame["x1"] + rng.normal(size=60)
    frame["g"] = frame["x1"]  # the predictions the user has for y
    frame.to_csv(root / "d.csv", index=False)
    ess = write_config(root, '[ess]\ndata = "d.csv"\ncovariates = ["x1", "x2"]\ngrid = [5, 10]\n[[ess.outcomes]]\n'
                             'name = "y"\ncolumn = "y"\ntype = "continuous"\nllm_column = "g"\n'
                             'comparators = ["lasso"]\n', "ess.toml")
    return study, leak, ess


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished protocol run with both audits beside it: panel, estimate, leak, ess, then report."""
    tmp_path = tmp_path_factory.mktemp("sections")
    layout = Layout(tmp_path)
    layout.make_dirs()
    synthetic_stage_files(layout, n_entities=20, dates=DATES)
    study, leak, ess = _audits(tmp_path)
    replies = tmp_path / "replies.jsonl"
    replies.write_text("".join(json.dumps(r) + "\n" for r in REPLIES
                               if r["model"] == "claude-sonnet-4.6" and r["source"] == "sweep.jsonl"))
    expect(0, "panel:", "panel", study)
    expect(0, "estimate (python engine)", "estimate", study)
    expect(0, "leak:", "leak", leak, "--replies", replies)
    expect(0, "ess:", "ess", ess, "--yes")
    expect(0, "report:", "report", study)
    return layout, study


@pytest.fixture()
def project(finished):
    """The finished project; what a test damages under results/ is put back after it."""
    layout, study = finished
    kept = {p: p.read_bytes() for p in layout.results.rglob("*") if p.is_file()}
    yield layout, study
    for path in layout.results.rglob("*"):
        if path.is_file() and path not in kept:
            path.unlink()
    for path, content in kept.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)


def test_each_audit_writes_its_section_with_a_manifest_and_the_report_includes_it(project):
    layout, _ = project
    report = (layout.results / "REPORT.md").read_text(encoding="utf-8")
    for audit, heading in (("leak", HEADING), ("ess", f"## {TITLE}")):
        section = (layout.results / audit / "SECTION.md").read_text(encoding="utf-8")
        assert section.startswith(heading) and section.rstrip("\n") in report
        manifest = json.loads(manifest_path(layout.results, audit).read_text())
        for name, digest in manifest["files"].items():  # every file the audit wrote, recorded with its sha256
            assert fingerprint(layout.results / name) == digest
        assert f"{audit}/SECTION.md" in manifest["files"]
        assert not list(layout.results.glob(f".{audit}-staging-*"))
        for name in (n for n in manifest["files"] if n.endswith(".csv")):  # one run id, as the protocol's stages
            assert set(pd.read_csv(layout.results / name)["run_id"]) == {manifest["run_id"]}
    assert report.index("## 6. Verdict") < report.index(HEADING) < report.index(f"## {TITLE}") < \
        report.index("## Estimation notes")


def _latin1(path: Path) -> None:
    path.write_bytes(path.read_text(encoding="utf-8").encode("utf-8") + "café\n".encode("latin-1"))


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _drop_column(path: Path) -> None:
    pd.read_csv(path).drop(columns=["parse_rate"]).to_csv(path, index=False)


DAMAGE = [  # (file under results/, what is done to it, the line REPORT.md shows instead of the audit's section)
    ("ess/ess.csv", _latin1, "results/ess/ess.csv is damaged (not UTF-8): rerun `lapbias ess CONFIG`"),
    ("leak/summary.csv", _latin1, "results/leak/summary.csv is damaged (not UTF-8): rerun `lapbias leak CONFIG`"),
    ("leak/summary.csv", _truncate, "results/leak/summary.csv is damaged (changed since `lapbias leak` wrote it"),
    ("leak/summary.csv", _drop_column, "results/leak/summary.csv is damaged (changed since `lapbias leak` wrote it"),
    ("ess/curve.csv", lambda p: p.unlink(), "results/ess/curve.csv is damaged (missing): rerun `lapbias ess CONFIG`"),
    ("ess/SECTION.md", _latin1, "results/ess/SECTION.md is damaged (not UTF-8): rerun `lapbias ess CONFIG`"),
    ("leak/SECTION.md", lambda p: p.write_text("## edited\n"),
     "results/leak/SECTION.md is damaged (changed since `lapbias leak` wrote it"),
    (".ess-manifest.json", lambda p: p.unlink(),
     "results/ess/SECTION.md is damaged (its manifest results/.ess-manifest.json is missing): rerun `lapbias ess"),
    (".leak-manifest.json", lambda p: p.write_bytes(b"\xff{"),
     "results/leak/SECTION.md is damaged (its manifest results/.leak-manifest.json cannot be read)"),
]


@pytest.mark.parametrize("name, damage, line", DAMAGE, ids=[f"{n}-{d.__name__}" for n, d, _ in DAMAGE])
def test_a_damaged_audit_is_one_line_and_the_report_is_written(project, name, damage, line):
    layout, study = project
    damage(layout.results / name)
    expect(0, "report:", "report", study)
    report = (layout.results / "REPORT.md").read_text(encoding="utf-8")
    assert line in report and "## 6. Verdict" in report and "## Estimation notes" in report
    damaged, intact = ((HEADING, f"## {TITLE}") if name.startswith((".leak", "leak")) else (f"## {TITLE}", HEADING))
    assert damaged not in report and intact in report  # the other audit's section is unaffected
    assert sum(1 for text in report.splitlines() if "is damaged" in text) == 1


def test_a_rerun_audit_replaces_the_damaged_line(project):
    layout, study = project
    _latin1(layout.results / "ess" / "ess.csv")
    expect(0, "SECTION.md", "ess", layout.root / "ess.toml", "--yes")
    expect(0, "report:", "report", study)
    assert f"## {TITLE}" in (layout.results / "REPORT.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("damage, reason", [(_latin1, "not UTF-8"), (_drop_column, "column(s) parse_rate missing"),
                                            (lambda p: p.write_text(""), "empty")])
def test_a_table_damaged_when_the_section_is_built_is_named(project, damage, reason):
    """The section builders read their tables through sections.read_table: a damaged one gives the one line."""
    from lapbias.leak.report import section
    from lapbias.report import sections

    layout, _ = project
    damage(layout.results / "leak" / "summary.csv")
    text = sections.build(layout.results, "leak", lambda: section(layout.results))
    assert text == f"_results/leak/summary.csv is damaged ({reason}): rerun `lapbias leak CONFIG`._\n"


def test_calibrate_section_from_tables_damaged_since_its_pipeline(tmp_path):
    """calibrate's section is built after its pipeline moved its tables in (stage `calibrate`): a table changed since
    gives the line, staged as SECTION.md (stage `calibrate-section`), which the report then shows. The tables here
    are stand-ins written through the real staging (a calibration trains LoRA adapters: minutes)."""
    from lapbias.report import sections

    results = tmp_path / "results"
    with staged_outputs(results, "calibrate", new_run_id()) as folder:
        (folder / "calibration").mkdir()
        pd.DataFrame({"model": ["base", "planted"], "verdict": ["x", "y"]}).to_csv(folder / "calibration" /
                                                                                    "verdicts.csv", index=False)
    _latin1(results / "calibration" / "verdicts.csv")
    sections.write_staged(results, "calibrate", lambda: pytest.fail("a damaged table was read"))
    line = "_results/calibration/verdicts.csv is damaged (not UTF-8): rerun `lapbias calibrate CONFIG`._"
    assert (results / "calibration" / "SECTION.md").read_text(encoding="utf-8") == line + "\n"
    assert sections.section_lines(results) == [line, ""]


def _imports(path: Path) -> set[str]:
    """The modules a file imports, relative imports resolved against the package lapbias.report."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = ["lapbias", "report"][: 2 - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            names |= {module} | {f"{module}.{alias.name}" for alias in node.names}
    return names


def test_the_report_imports_no_audit():
    """The audits sit beside signals/ and reuse report/; report/ reads their SECTION.md files, never their code."""
    for path in sorted((PACKAGE / "report").glob("*.py")):
        upward = sorted(n for n in _imports(path) if n.split(".")[:2] in (["lapbias", "leak"], ["lapbias", "ess"],
                                                                       ["lapbias", "calibrate"]))
        assert not upward, f"{path.name} imports {upward}"
