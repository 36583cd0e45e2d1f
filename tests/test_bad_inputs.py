"""Bad inputs through the real CLI (issue 12): each case has an expected exit code and message fragment; none may
show a traceback, and none may exit 0 with a wrong or stale result. Model-free: stage files are synthetic
(test_panel.synthetic_stage_files) and cache lines are written directly."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from lapbias.cli import main
from lapbias.io import Layout, write_parquet
from lapbias.stage import fingerprint, manifest_path
from test_panel import synthetic_stage_files, write_hand_built_panel

DATES = [f"2024-0{m}-1{d}" for m in (3, 4, 5) for d in range(5)] + [f"2024-{m}-1{d}" for m in (10, 11) for d in range(5)]


def cli(*args: str) -> tuple[int, str]:
    """Run `lapbias ARGS` in-process; never a traceback, never an unhandled exception."""
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert "Traceback" not in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, result.output


def expect(code: int, fragment: str, *args: str) -> str:
    got, output = cli(*args)
    assert got == code and fragment in output, f"exit {got}, wanted {code} and {fragment!r} in:\n{output}"
    return output


def write_config(root: Path, text: str = "", name: str = "study.toml") -> Path:
    path = root / name
    path.write_text(f'root = "{root}"\n{text}')
    return path


STUDY = '[study]\ncutoff = 2024-06-30\n[estimate]\nbootstrap_reps = 20\n'


@pytest.fixture()
def project(tmp_path):
    """Stage files for 20 entities (pre and post rows) and a config; no model."""
    layout = Layout(tmp_path)
    layout.make_dirs()
    synthetic_stage_files(layout, n_entities=20, dates=DATES)
    return layout, write_config(tmp_path, STUDY)


@pytest.fixture(scope="module")
def _estimated_once(tmp_path_factory):
    root = tmp_path_factory.mktemp("estimated")
    layout = Layout(root)
    layout.make_dirs()
    synthetic_stage_files(layout, n_entities=20, dates=DATES)
    config = write_config(root, STUDY)
    expect(0, "panel:", "panel", config)
    expect(0, "estimate (python engine)", "estimate", config)
    expect(0, "report:", "report", config)
    return root


@pytest.fixture()
def estimated(_estimated_once, tmp_path):
    """A copy of a project after panel, estimate and report (estimated once per module: CI time)."""
    root = tmp_path / "project"
    shutil.copytree(_estimated_once, root)
    return Layout(root), write_config(root, STUDY)


def as_if_estimated(layout: Layout, name: str) -> None:
    """Record results/<name>, rewritten by a test to stand for what an estimate run could write, in that run's
    manifest (the report refuses a results file that differs from what the run wrote: stage.check_manifest)."""
    path = manifest_path(layout.results, "estimate")
    manifest = json.loads(path.read_text())
    manifest["files"][name] = fingerprint(layout.results / name)
    path.write_text(json.dumps(manifest))


def results_state(layout: Layout) -> dict[str, bytes]:
    return {p.relative_to(layout.results).as_posix(): p.read_bytes()
            for p in sorted(layout.results.rglob("*")) if p.is_file()}


# ---- items 1-2: stages all or nothing, run ids, stale files ---------------------------------------------------
def test_failed_estimate_leaves_the_previous_run_whole(estimated, monkeypatch):
    layout, config = estimated
    before = results_state(layout)
    run_id = json.loads((layout.results / "run_config.json").read_text())["run_id"]
    assert {"detection.csv", "bootstrap.csv", "magnitudes.csv", "REPORT.md"} <= set(before)
    for name in ("detection.csv", "bootstrap.csv", "magnitudes.csv", "sample.csv"):
        assert set(pd.read_csv(layout.results / name)["run_id"]) == {run_id}

    from lapbias.errors import EstimationError
    from lapbias.stages import protocol as protocol_stages

    def fail(*_args, **_kwargs):  # fault injection: the last step of the stage fails after the tables were written
        raise EstimationError("injected failure in the last step")

    monkeypatch.setattr(protocol_stages, "_label_approximated", fail)
    expect(2, "injected failure in the last step", "estimate", config)
    assert results_state(layout) == before  # no new detection table beside the old bootstrap and magnitudes
    assert not list(layout.results.glob(".estimate-staging-*"))


def test_report_refuses_tables_from_different_runs(estimated):
    layout, config = estimated
    expect(0, "report:", "report", config)
    detection = layout.results / "detection.csv"
    table = pd.read_csv(detection)
    table.assign(run_id="20240101T000000Z-00000000").to_csv(detection, index=False)  # another run's table
    expect(2, "tables from different runs", "report", config)
    table.drop(columns="run_id").to_csv(detection, index=False)  # no run id (an older version, or edited by hand)
    expect(2, "detection.csv has no run_id column", "report", config)


@pytest.mark.parametrize("name, damage", [
    ("validation.csv", "delete"), ("placebo.csv", "delete"), ("placebo.csv", "header only"),
    ("bootstrap_draws.csv", "delete"), ("figures/bootstrap.png", "delete"), ("table2.csv", "header only"),
])
def test_report_refuses_a_results_file_missing_or_emptied_since_the_estimate(estimated, name, damage):
    """Stale outputs: the report read whatever results files were there, so a deleted or header-only validation.csv or
    placebo.csv gave another verdict ("placebo infeasible", "validation missing") from one estimate run. Every file
    that run wrote is in its manifest with its sha256; the report refuses one that is gone or changed."""
    layout, config = estimated
    before = (layout.results / "REPORT.md").read_bytes()
    path = layout.results / name
    if damage == "delete":
        path.unlink()
    else:
        path.write_text(path.read_text().splitlines()[0] + "\n")
    output = expect(2, f"results/{name} ", "report", config)
    assert ("is missing" if damage == "delete" else "changed") in output and "rerun `lapbias estimate`" in output
    assert (layout.results / "REPORT.md").read_bytes() == before


def test_report_refuses_results_of_an_earlier_panel(estimated):
    layout, config = estimated
    panel = pd.read_parquet(layout.derived_file("panel.parquet"))
    write_parquet(panel.iloc[:-3], layout.derived_file("panel.parquet"))
    expect(2, "data/derived/panel.parquet changed since estimate run", "report", config)


@pytest.mark.parametrize("setting, old, new", [
    ("[estimate]\nlap_measure", '"recall"', '"minkprob"'),  # the report would label recall-LAP tables Min-K%
    ("[estimate]\ndetection_alpha", "0.05", "0.1"),       # power.csv's MDE was computed at the old alpha
    ("[study]\nhorizon", '"1 trading day"', '"1 month"'),   # the report would describe another study
])
def test_report_refuses_results_estimated_under_another_config(estimated, setting, old, new):
    layout, config = estimated
    before = (layout.results / "REPORT.md").read_bytes()
    section, key = setting.split("\n")
    edited = STUDY.replace(f"{section}\n", f"{section}\n{key} = {new}\n") if section in STUDY else \
        STUDY + f"{section}\n{key} = {new}\n"
    config = write_config(layout.root, edited, "edited.toml")
    expect(2, f"{section} {key} = {old}", "report", config)
    output = expect(2, f"this config has {new}", "report", config)
    panel = "`lapbias panel`, " if key == "lap_measure" else ""  # the panel chooses the LAP measure
    assert f"rerun {panel}`lapbias estimate`, then `lapbias report`" in output
    assert (layout.results / "REPORT.md").read_bytes() == before  # the previous report is left whole
    expect(0, "panel:", "panel", config)
    expect(0, "estimate (python engine)", "estimate", config)  # estimated under the edited config: reported
    expect(0, "report:", "report", config)


def test_report_ignores_settings_that_change_neither_numbers_nor_text(estimated):
    layout, config = estimated
    config = write_config(layout.root, STUDY + "[model]\nbatch_size = 4\nrequest_timeout = 30\n", "ops.toml")
    expect(0, "report:", "report", config)


def test_calibrate_rewrites_the_report_under_the_settings_of_its_estimate(estimated, capsys):
    """`lapbias calibrate` re-renders the root's REPORT.md (to add its section) with the settings the root's tables
    were estimated under, not with calibrate.toml's; without a readable record it leaves the report as it was."""
    from lapbias.stages.project import Log
    from lapbias.stages.protocol import report_as_estimated

    layout, _ = estimated
    report = layout.results / "REPORT.md"
    record = json.loads((layout.results / "run_config.json").read_text())
    record["study"]["horizon"] = "1 month"  # as if estimated under a study config other than the default
    (layout.results / "run_config.json").write_text(json.dumps(record))
    as_if_estimated(layout, "run_config.json")
    report.write_text("an older report\n")
    report_as_estimated(layout, Log(layout))
    text = report.read_text()
    assert "horizon 1 month" in text and "**Verdict:" in text
    (layout.results / "run_config.json").unlink()
    report.write_text("an older report\n")
    report_as_estimated(layout, Log(layout))
    assert report.read_text() == "an older report\n"
    assert "REPORT.md left as it was (results/run_config.json does not exist)" in capsys.readouterr().out


def test_an_edited_data_file_is_not_estimated_or_reported_from_its_old_validation(tmp_path):
    """The user edits the data file after `lapbias validate` and reruns later steps only: panel, estimate and
    report must refuse (rerun validate), not build on data/derived/input.parquet from the old file."""
    layout = Layout(tmp_path)
    layout.make_dirs()
    inputs = synthetic_stage_files(layout, n_entities=20, dates=DATES)
    data = tmp_path / "panel.csv"
    inputs.assign(text_date=inputs["text_date"].dt.strftime("%Y-%m-%d"),
                  target_date=inputs["target_date"].dt.strftime("%Y-%m-%d")).to_csv(data, index=False)
    config = write_config(tmp_path, f'[data]\npath = "{data}"\n' + STUDY)
    expect(0, "validate:", "validate", config)
    for step, fragment in (("panel", "panel:"), ("estimate", "estimate (python engine)"), ("report", "report:")):
        expect(0, fragment, step, config)
    report = (layout.results / "REPORT.md").read_bytes()
    edited = pd.read_csv(data)
    edited.loc[0, "outcome"] = 99.0  # a corrected outcome
    edited.to_csv(data, index=False)
    expect(2, "changed since estimate run", "report", config)
    for step in ("forecast", "recall", "minkprob", "panel", "estimate"):  # the signal steps before any model load
        output = expect(2, "changed since `lapbias validate` read it", step, config, *(["--yes"] if step in (
            "forecast", "recall", "minkprob") else []))
        assert "rerun `lapbias validate`" in output
    assert (layout.results / "REPORT.md").read_bytes() == report
    expect(0, "validate:", "validate", config)
    expect(2, "panel.parquet was built from another data/derived/input.parquet", "estimate", config)
    for step, fragment in (("panel", "panel:"), ("estimate", "estimate (python engine)"), ("report", "report:")):
        expect(0, fragment, step, config)
    assert pd.read_parquet(layout.derived_file("panel.parquet"))["outcome"].max() == 99.0
    relative = write_config(tmp_path, f'[data]\npath = "{os.path.relpath(data)}"\n' + STUDY, "relative.toml")
    expect(0, "report:", "report", relative)  # the same file named from the working directory: the same study


def test_rerun_removes_what_the_stage_no_longer_writes(estimated):
    layout, _ = estimated
    assert (layout.results / "placebo.csv").exists() and (layout.derived_file("panel_post.dta")).exists()
    no_post = write_config(layout.root, STUDY.replace("2024-06-30", "2024-12-31"), "late.toml")
    expect(0, "no post-cutoff rows", "panel", no_post)
    assert not layout.derived_file("panel_post.dta").exists()  # item 2: no stale Stata input
    expect(0, "estimate", "estimate", no_post)
    for gone in ("placebo.csv", "placebo_validation.csv", "bootstrap.csv", "bootstrap_draws.csv", "REPORT.md",
                 "detection.tex", "figures/bootstrap.png"):
        assert not (layout.results / gone).exists(), gone
    expect(0, "report:", "report", no_post)


def test_rerun_without_pre_rows_removes_panel_pre(project, tmp_path):
    layout, config = project
    cli("panel", config)
    assert layout.derived_file("panel_pre.dta").exists()
    early = write_config(tmp_path, STUDY.replace("2024-06-30", "2023-01-31"), "early.toml")
    expect(0, "no pre-cutoff rows", "panel", early)
    assert not layout.derived_file("panel_pre.dta").exists() and layout.derived_file("panel_post.dta").exists()


# ---- items 4, 5, 9, 12, 13, 18: the input file (`lapbias validate`) ---------------------------------------------
HEADER = "row_id,entity_id,entity_name,ticker,text,text_date,target_date,outcome"
ROWS = [f"r{e}{d},E{e},Entity {e},T{e},headline {e} {d},2024-03-0{d},2024-03-0{d + 1},{(-1) ** (e + d) * 0.5}"
        for e in (1, 2) for d in (1, 2, 3)]


def csv_text(header: str = HEADER, rows: list[str] = ROWS, replace: tuple[str, str] | None = None) -> str:
    lines = [header, *rows]
    if replace:
        lines[2] = lines[2].replace(*replace)
    return "\n".join(lines) + "\n"


def validate_case(tmp_path, data: str | bytes, config: str = "") -> tuple[Path, Path]:
    path = tmp_path / "panel.csv"
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return path, write_config(tmp_path, f'[data]\npath = "{path}"\n[study]\ncutoff = 2024-06-30\n{config}')


INPUT_CASES = [  # (id, file content, extra config, exit code, message fragment)
    ("duplicate_header", csv_text(HEADER + ",outcome", [r + ",9" for r in ROWS]), "", 2,
     "duplicate column name(s) ['outcome']"),
    ("derived_name_mu_hat", csv_text(HEADER + ",mu_hat", [r + ",1" for r in ROWS]), "", 2,
     "input column(s) ['mu_hat'] have the name of a column lapbias derives"),
    ("derived_name_lap_ud", csv_text(HEADER + ",lap,ud", [r + ",1,2" for r in ROWS]), "", 2, "['lap', 'ud']"),
    ("partial_date_month", csv_text(replace=("2024-03-02,", "2024-03,")), "", 2, "not dates in YYYY-MM-DD form"),
    ("partial_date_year", csv_text(replace=("2024-03-02,", "2024,")), "", 2, "not dates in YYYY-MM-DD form"),
    ("date_after_2262", csv_text(replace=("2024-03-03,", "2300-01-01,")), "", 2, "outside the supported range"),
    ("impossible_date", csv_text(replace=("2024-03-03,", "2024-02-30,")), "", 2, "example row_id r12: '2024-02-30'"),
    ("row_id_NA", csv_text(replace=("r12,", "NA,")), "", 2, "missing-value marker as row_id (example row 2: 'NA'"),
    ("row_id_None", csv_text(replace=("r12,", "None,")), "", 2, "missing-value marker as row_id"),
    ("row_id_empty", csv_text(replace=("r12,", ",")), "", 2, "have an empty row_id"),
    ("outcome_text", csv_text(replace=(",-0.5", ",abc")), "", 2, "outcome: 1 value(s) are not finite numbers"),
    ("outcome_inf", csv_text(replace=(",-0.5", ",inf")), "", 2, "are not finite numbers"),
    ("outcome_NA_dropped_named", csv_text(replace=(",-0.5", ",NA")), "", 0, "outcome is missing ('NA')"),
    ("empty_file", "", "", 2, "is empty"),
    ("header_only", HEADER + "\n", "", 2, "has a header but no rows"),
    ("binary_file", bytes(range(256)) * 4, "", 2, "cannot be read as csv"),
    ("mapping_to_missing_column", csv_text(), '[data.columns]\noutcome = "ret"\n', 2,
     "required column 'outcome' (mapped to 'ret' by [data.columns]) is missing"),
    # round 2 (a hostile user before the next trial): encodings, separators, spreadsheet habits, row rules
    ("latin1_text", csv_text(replace=("headline 1 2", "caf\xe9")).encode("latin-1"), "", 2,
     "is not UTF-8 text (line 3: byte b'\\xe9'); save it as UTF-8"),
    ("utf16_file", csv_text().encode("utf-16"), "", 2, "is not UTF-8 text (line 1: byte b'\\xff')"),
    ("utf8_bom", "\ufeff" + csv_text(), "", 0, "6 rows kept"),
    ("semicolon_separated", csv_text().replace(",", ";"), "", 0, "read as separated by semicolons"),
    ("tab_separated", csv_text().replace(",", "\t"), "", 0, "read as separated by tabs"),
    ("quoted_newline_in_text", csv_text(replace=("headline 1 2", '"two\nlines"')), "", 0, "6 rows kept"),
    ("crlf_line_ends", csv_text().replace("\n", "\r\n"), "", 0, "6 rows kept"),
    ("excel_us_dates", csv_text(replace=("2024-03-02,2024-03-03", "03/02/2024,03/03/2024")), "", 2,
     "example row_id r12: '03/02/2024'"),
    ("excel_serial_dates", csv_text(replace=("2024-03-02,", "45353,")), "", 2, "example row_id r12: '45353'"),
    ("slash_dates", csv_text(replace=("2024-03-02,", "2024/03/02,")), "", 2, "not dates in YYYY-MM-DD form"),
    ("thousands_separator", csv_text(replace=(",-0.5", ',"1,234.5"')), "", 2, "(example row_id r12: '1,234.5')"),
    ("decimal_comma", csv_text(replace=(",-0.5", ',"0,5"')), "", 2, "outcome: 1 value(s) are not finite numbers"),
    ("percent_outcome", csv_text(replace=(",-0.5", ",5%")), "", 2, "(example row_id r12: '5%')"),
    ("outcome_true", csv_text(replace=(",-0.5", ",True")), "", 2, "(example row_id r12: 'True')"),
    ("outcome_overflow", csv_text(replace=(",-0.5", ",1e400")), "", 2, "are not finite numbers"),
    ("all_rows_dropped", csv_text(rows=[",".join(r.split(",")[:6] + r.split(",")[5:6] + r.split(",")[7:]) for r in ROWS]),
     "", 2, "no valid rows left after validation (6 rows read, all dropped: 6 rows: target_date must be after text_date "
            "(column target_date"),
    ("whitespace_only_text", csv_text(replace=("headline 1 2", "   ")), "", 0,
     "dropped 1 row: text must be non-empty (example row_id r12"),
    ("duplicated_row_id", csv_text(replace=("r12,", "r11,")), "", 2,
     "duplicate row_id: 1 value(s) name different rows"),
    ("entity_name_missing", csv_text(replace=("Entity 1,", ",")), "", 0,
     "dropped 1 row: entity_id and entity_name must be non-empty (example row_id r12"),
    ("target_equals_text_date", csv_text(replace=("2024-03-02,2024-03-03", "2024-03-02,2024-03-02")), "", 0,
     "dropped 1 row: target_date must be after text_date (example row_id r12: text_date 2024-03-02, target_date "
     "2024-03-02)"),
    ("excel_trailing_empty_rows", csv_text() + ",,,,,,,\n,,,,,,,\n", "", 2, "2 row(s) have an empty row_id (example row 7)"),
    ("ragged_row", csv_text(replace=(",-0.5", ",-0.5,extra")), "", 2, "Expected 8 fields in line 3, saw 9"),
    ("header_with_space", csv_text(HEADER.replace(",outcome", ", outcome")), "", 0, "6 rows kept"),
    ("one_row", csv_text(rows=ROWS[:1]), "", 0, "1 rows kept"),
    ("words_after_the_date", csv_text(replace=("2024-03-02,", "2024-03-02 approx,")), "", 2,
     "example row_id r12: '2024-03-02 approx'"),
    ("impossible_time", csv_text(replace=("2024-03-02,", "2024-03-02T25:99,")), "", 2, "'2024-03-02T25:99'"),
    ("time_of_day_dropped", csv_text(replace=("2024-03-02,", "2024-03-02 09:30:00,")), "", 0, "6 rows kept"),
]


@pytest.mark.parametrize("name, data, config, code, fragment", INPUT_CASES, ids=[c[0] for c in INPUT_CASES])
def test_bad_input_file(tmp_path, name, data, config, code, fragment):
    _, config_path = validate_case(tmp_path, data, config)
    expect(code, fragment, "validate", config_path)
    if code:
        assert not (tmp_path / "data/derived/input.parquet").exists()


BASE = pd.read_csv(__import__("io").StringIO(csv_text()), dtype=str)
PARQUET_CASES = [  # (id, the input table as parquet, exit code, message fragment)
    ("bool_outcome", BASE.assign(outcome=[True, False] * 3), 2, "outcome: true/false values are not a signed numeric Y"),
    ("bytes_text", BASE.assign(text=[b"abc"] * 6), 2, "text: 6 value(s) are bytes, not text (example row_id r11: b'abc')"),
    ("integer_dates", BASE.assign(text_date=range(20240301, 20240307)), 2, "(example row_id r11: 20240301)"),
    ("float_row_id_with_nan", BASE.assign(row_id=[1.0, 2.0, np.nan, 4.0, 5.0, 6.0]), 2, "1 row(s) have an empty row_id"),
    ("tz_aware_dates", BASE.assign(text_date=pd.to_datetime(BASE.text_date).dt.tz_localize("Asia/Tokyo")), 0,
     "6 rows kept"),
]


@pytest.mark.parametrize("name, frame, code, fragment", PARQUET_CASES, ids=[c[0] for c in PARQUET_CASES])
def test_bad_parquet_input(tmp_path, name, frame, code, fragment):
    path = tmp_path / "panel.parquet"
    frame.to_parquet(path, index=False)
    config = write_config(tmp_path, f'[data]\npath = "{path}"\n[study]\ncutoff = 2024-06-30\n')
    expect(code, fragment, "validate", config)
    assert (tmp_path / "data/derived/input.parquet").exists() == (code == 0)


def test_entity_id_mapped_to_the_ticker_column(tmp_path):
    """Item 12: `entity_id = "ticker"` with a ticker column and no entity_id column: the ticker is both."""
    header = HEADER.replace("entity_id,", "")
    rows = [",".join(r.split(",")[:1] + r.split(",")[2:]) for r in ROWS]
    _, config = validate_case(tmp_path, csv_text(header, rows), '[data.columns]\nentity_id = "ticker"\n')
    expect(0, "6 rows kept", "validate", config)
    frame = pd.read_parquet(tmp_path / "data/derived/input.parquet")
    assert list(frame["entity_id"]) == list(frame["ticker"]) == ["T1"] * 3 + ["T2"] * 3


def test_mixed_offsets_keep_the_calendar_date_as_written(tmp_path):
    """Item 13: time-zone offsets that differ between rows; the date part is the date, the time is dropped."""
    text = csv_text(replace=("2024-03-02,2024-03-03", "2024-03-02T23:30:00+09:00,2024-03-03T01:00:00-05:00"))
    _, config = validate_case(tmp_path, text)
    expect(0, "6 rows kept", "validate", config)
    frame = pd.read_parquet(tmp_path / "data/derived/input.parquet").set_index("row_id")
    assert (frame.at["r12", "text_date"], frame.at["r12", "target_date"]) == (pd.Timestamp("2024-03-02"),
                                                                            pd.Timestamp("2024-03-03"))


# ---- items 6, 7, 11: the configuration ---------------------------------------------------------------------------
CONFIG_CASES = [  # (id, config text after [data] and [study] cutoff, exit code, message fragment)
    ("placebo_alpha_5", "[estimate]\nplacebo_alpha = 5\n", 2, "[estimate] placebo_alpha = 5; it must be < 1"),
    ("detection_alpha_2", "[estimate]\ndetection_alpha = 2\n", 2, "[estimate] detection_alpha = 2; it must be < 1"),
    ("max_mde_share_negative", "[estimate]\nmax_mde_share = -1\n", 2, "[estimate] max_mde_share = -1; it must be > 0"),
    ("bootstrap_reps_negative", "[estimate]\nbootstrap_reps = -5\n", 2, "bootstrap_reps = -5; it must be >= 0"),
    ("number_as_string", "[model]\nbatch_size = \"4\"\n", 2, "[model] batch_size = \"4\"; it must be a whole number"),
    ("float_for_int", "[estimate]\nbootstrap_reps = 10.5\n", 2, "bootstrap_reps = 10.5; it must be a whole number"),
    ("section_as_scalar", "model = 7\n", 2, "[model] must be a table"),
    ("bool_as_string", "[model]\nallow_external = \"false\"\n", 2, "it must be true or false"),
    ("enum_typo", "[estimate]\nengine = \"stat\"\n", 2, 'choose one of "python", "auto", "stata"'),
    ("unknown_key", "[estimate]\nbootstrap_rep = 5\n", 2, "[estimate] has unknown key(s) ['bootstrap_rep']"),
    ("label_keys_by_case", "[forecast]\nlabels = {Up = 1, up = -1}\n", 2, "differ only by case"),
    ("recall_labels_string", "[recall]\nlabels = \"abc\"\n", 2, '[recall] labels = "abc" must list three labels'),
    ("recall_labels_same", "[recall]\nlabels = [\"up\", \"Up\", \"unknown\"]\n", 2, "three different labels"),
    ("release_before_cutoff", "[study]\nrelease_date = 2024-01-01\n", 2, "release_date = 2024-01-01 is not after"),
    ("bad_regex", "[forecast]\nparse_regex = \"(\"\n", 2, "is not a valid regular expression"),
    ("date_with_time", "[study]\nrelease_date = 2024-09-01T10:00:00\n", 2, "is a date with a time of day"),
    # round 2
    ("prompt_unknown_placeholder", '[forecast]\nprompt = "News: {text} on {company}"\n', 2,
     '[forecast] prompt = "News: {text} on {company}" has the placeholder {company}, which cannot be filled'),
    ("prompt_without_text", '[forecast]\nprompt = "Will {entity_name} go up?"\n', 2,
     "has no {text}; without it every row gets the same text"),
    ("prompt_attribute", '[forecast]\nprompt = "News: {text.upper}"\n', 2, "has the placeholder {text.upper}"),
    ("prompt_positional", '[forecast]\nprompt = "News: {} {text}"\n', 2, "has the placeholder {}, which"),
    ("prompt_unbalanced_brace", '[forecast]\nprompt = "News: {text"\n', 2, "is not a valid template"),
    ("recall_template_unknown", '[recall]\ntemplate = "On {date}, {entity_name}?"\n', 2, "has the placeholder {date}"),
    ("recall_template_no_date", '[recall]\ntemplate = "Did {entity_name} go up?"\n', 2, "has no {target_date}"),
    ("max_mde_share_inf", "[estimate]\nmax_mde_share = inf\n", 2, "[estimate] max_mde_share = inf; input should be a finite"),
    ("seconds_per_query_nan", "[model]\nseconds_per_query = nan\n", 2, "[model] seconds_per_query = nan"),
    ("label_keys_by_spaces", '[forecast]\nlabels = {" up " = 1, up = -1}\n', 2, "differ only by case or surrounding"),
    ("unknown_backend", '[model]\nbackend = "llamacpp"\n', 2, 'choose one of "transformers", "vllm", "openai"'),
    ("negative_batch_size", "[model]\nbatch_size = -4\n", 2, "[model] batch_size = -4; it must be >= 1"),
    ("empty_recall_labels", "[recall]\nlabels = []\n", 2, "[recall] labels = [] must list three labels"),
    ("empty_forecast_labels", "[forecast]\nlabels = {}\n", 2, "[forecast] labels = {} is empty"),
    ("labels_as_array", '[forecast]\nlabels = ["up", "down"]\n', 2, "it must be a table of key = value pairs"),
    ("array_of_tables", '[[model]]\nbackend = "vllm"\n', 2, "[model] must be a table"),
    ("parse_rate_as_percent", "[forecast]\nmin_parse_rate = 95\n", 2, "min_parse_rate = 95; it must be <= 1"),
    ("openai_without_url", '[model]\nbackend = "openai"\n', 2, 'backend = "openai" needs base_url'),
]


@pytest.mark.parametrize("name, text, code, fragment", CONFIG_CASES, ids=[c[0] for c in CONFIG_CASES])
def test_bad_config(tmp_path, name, text, code, fragment):
    path, _ = validate_case(tmp_path, csv_text())
    extra = text.replace("[study]\n", "")
    study = "[study]\ncutoff = 2024-06-30\n" + (text.split("[study]\n", 1)[1] if "[study]\n" in text else "")
    config = tmp_path / "c.toml"
    config.write_text(f'root = "{tmp_path}"\n{extra if "[study]" not in text else ""}[data]\npath = "{path}"\n'
                      f'{study}')
    expect(code, fragment, "validate", config)


def test_toml_date_cutoff_and_release_date_are_dates(tmp_path):
    _, config = validate_case(tmp_path, csv_text(), "")  # cutoff = 2024-06-30 written as a TOML date
    expect(0, "6 rows kept", "validate", config)
    from lapbias.config import load

    study = load(config).study
    assert study.cutoff_date.isoformat() == "2024-06-30" and study.release_date_value is None


def test_config_file_problems(tmp_path):
    bad_bytes = tmp_path / "latin1.toml"
    bad_bytes.write_bytes('[study]\noutcome_description = "caf\xe9"\n'.encode("latin-1"))
    expect(2, "is not UTF-8 text", "validate", bad_bytes)
    (tmp_path / "afile").write_text("x")
    root_is_file = tmp_path / "root.toml"
    root_is_file.write_text(f'root = "{tmp_path / "afile"}"\n')
    expect(2, "is a file; it must be the project folder", "validate", root_is_file)
    expect(2, "is a directory", "validate", tmp_path)


def test_config_file_habits(tmp_path, monkeypatch):
    """A BOM (Windows editors), a Windows path in double quotes, and ~ for the home folder."""
    data, _ = validate_case(tmp_path, csv_text())
    body = f'[data]\npath = "{data}"\n[study]\ncutoff = 2024-06-30\n'
    bom = tmp_path / "bom.toml"
    bom.write_bytes(b"\xef\xbb\xbf" + f'root = "{tmp_path}"\n{body}'.encode())
    expect(0, "6 rows kept", "validate", bom)
    windows = tmp_path / "windows.toml"
    windows.write_text('[data]\npath = "C:\\Users\\me\\data.csv"\n')
    expect(2, "write Windows paths in single quotes", "validate", windows)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "home").mkdir()
    shutil.copy(data, tmp_path / "home" / "panel.csv")
    tilde = tmp_path / "tilde.toml"
    tilde.write_text('root = "~/study"\n[data]\npath = "~/panel.csv"\n[study]\ncutoff = 2024-06-30\n')
    expect(0, "6 rows kept", "validate", tilde)
    assert (tmp_path / "home/study/data/derived/input.parquet").exists() and not (tmp_path / "~").exists()


# ---- items 3, 8, 14: the raw cache (`lapbias rebuild`, no model) -------------------------------------------------
LABEL_IDS = {"up": [1], "down": [2], "unknown": [3]}


@pytest.fixture(scope="module")
def _cached_once(tmp_path_factory):
    """Input validated, every forecast and recall answer cached (lines written through the cache module), the
    label tokenization recorded as `lapbias recall` records it; `rebuild` works on it without a model."""
    from lapbias.config import load
    from lapbias.llm.cache import ResponseCache
    from lapbias.signals import forecast, recall

    tmp_path = tmp_path_factory.mktemp("cached")
    _, config_path = validate_case(tmp_path, csv_text())
    expect(0, "6 rows kept", "validate", config_path)
    config, layout = load(config_path), Layout(tmp_path)
    frame = pd.read_parquet(layout.derived_file("input.parquet"))
    answer = {"text": "up", "tokens": [[1, "up", -0.1]], "first_top": [[1, "up", -0.1], [2, "down", -2.5]]}
    ResponseCache(layout.raw_file("forecast")).append((q, answer) for q in forecast.queries(frame, config))
    top = {"top": [[1, "up", -1.0], [2, "down", -1.5], [3, "unknown", -2.0]]}
    ResponseCache(layout.raw_file("recall")).append((q, top) for q in recall.queries(recall.recall_pairs(frame), config))
    record_labels(layout, config.model.model_id, LABEL_IDS)
    return tmp_path


@pytest.fixture()
def cached(_cached_once, tmp_path):
    """A copy of the cached project (built once per module: CI time), its config pointing at the copy."""
    shutil.copytree(_cached_once, tmp_path, dirs_exist_ok=True)
    config = write_config(tmp_path, f'[data]\npath = "{tmp_path / "panel.csv"}"\n[study]\ncutoff = 2024-06-30\n')
    return Layout(tmp_path), config


def record_labels(layout: Layout, model_id: str, labels: dict, tokenizer: str | None = None) -> None:
    (layout.raw / "recall.tokenizer.json").write_text(json.dumps({model_id: {"labels": labels,
                                                                             "tokenizer": tokenizer}}))


def edit_line(layout: Layout, number: int, edit, task: str = "recall") -> None:
    """Replace line `number` (1-based) of data/raw/<task>.jsonl by edit(parsed line) (a str is written as is)."""
    path = layout.raw_file(task)
    lines = path.read_text().splitlines(keepends=True)
    new = edit(json.loads(lines[number - 1]))
    lines[number - 1] = new if isinstance(new, str) else json.dumps(new) + "\n"
    path.write_text("".join(lines))


def with_response(response):
    return lambda record: {**record, "response": response}


def test_cached_project_rebuilds_without_a_model(cached):
    layout, config = cached
    expect(0, "panel:", "rebuild", config)
    recall_frame = pd.read_parquet(layout.derived_file("recall.parquet"))
    assert recall_frame["p_up"].round(6).eq(round(np.exp(-1.0), 6)).all()


CACHE_CASES = [  # (id, how the cache is damaged, exit code, message fragment)
    ("logprob_positive", lambda l: edit_line(l, 2, with_response({"top": [[1, "up", 5.0], [3, "unknown", -2.0]]})),
     2, "recall.jsonl line 2 of 6 response top[0] has log-prob +5 > 0"),
    ("forecast_logprob_positive", lambda l: edit_line(l, 4, lambda r: {**r, "response": {
        **r["response"], "tokens": [[1, "up", 2.0]]}}, "forecast"), 2,
     "forecast.jsonl line 4 of 6 response tokens[0] has log-prob +2 > 0"),
    ("mass_above_one", lambda l: edit_line(l, 1, with_response({"top": [[1, "up", -0.1], [2, "down", -0.2]]})),
     2, "sum to 1.724 > 1"),
    ("logprob_text", lambda l: edit_line(l, 1, with_response({"top": [[1, "up", "high"]]})), 2,
     "has log-prob 'high', not a number"),
    ("response_wrong_shape", lambda l: edit_line(l, 3, with_response([1, 2, 3])), 2,
     "line 3 of 6 response is a JSON list, not an object"),
    ("response_missing_key", lambda l: edit_line(l, 3, with_response({"tops": []})), 2, "response lacks key(s) ['top']"),
    ("line_is_a_list", lambda l: edit_line(l, 2, lambda r: "[1, 2, 3]\n"), 2, "line 2 of 6 is a JSON list"),
    ("line_lacks_key", lambda l: edit_line(l, 2, lambda r: json.dumps({"key": r["key"]}) + "\n"), 2,
     "lacks key(s) ['task', 'model_id'"),
    ("blank_line_mid_file", lambda l: edit_line(l, 2, lambda r: "\n"), 2, "line 2 of 6 is blank"),
    ("damaged_line_mid_file", lambda l: edit_line(l, 2, lambda r: json.dumps(r)[:50] + "\n"), 2,
     "line 2 of 6 is not UTF-8 JSON"),
    ("non_utf8_line", lambda l: l.raw_file("recall").write_bytes(l.raw_file("recall").read_bytes() + b"\xff\xfe\n"),
     2, "line 7 of 7 is not UTF-8 JSON"),
    ("cache_is_a_folder", lambda l: (l.raw_file("recall").unlink(), l.raw_file("recall").mkdir()), 2,
     "recall.jsonl is not a file"),
    ("label_never_checked", lambda l: record_labels(l, "bundled:SmolLM2-135M-Instruct", {"up": [1], "down": [2]}),
     2, "recall label 'unknown' was never checked on the tokenizer"),
    ("label_multi_token", lambda l: record_labels(l, "bundled:SmolLM2-135M-Instruct", {**LABEL_IDS, "up": [7, 8]}),
     2, "recall label 'up' is 2 tokens [7, 8]"),
    ("no_tokenizer_record", lambda l: (l.raw / "recall.tokenizer.json").unlink(), 2,
     "no tokenizer is recorded for model bundled:SmolLM2-135M-Instruct"),
    # round 2
    ("key_repeated_with_other_response", lambda l: append_line(l, 1, {"top": [[1, "up", -0.01]]}), 2,
     "line 7 of 7 repeats the key of line 1 (recall query 'E1|2024-03-02') with a different response"),
    ("key_not_matching_content", lambda l: edit_line(l, 2, lambda r: {**r, "query_id": "E9|2024-01-01"}), 2,
     "recall.jsonl line 2: stored key does not match its task, model, query, prompt and params"),
    ("line_of_another_model", lambda l: l.raw_file("recall").write_text(
        l.raw_file("recall").read_text().replace("SmolLM2", "Other")), 2, "line 1: stored key does not match"),
    ("unicode_cut_mid_file", lambda l: cut_inside_character(l), 2, "forecast.jsonl line 2 of 6 is not UTF-8 JSON"),
    ("response_null", lambda l: edit_line(l, 1, with_response(None)), 2, "response is a JSON NoneType, not an object"),
    ("forecast_text_number", lambda l: edit_line(l, 1, lambda r: {**r, "response": {**r["response"], "text": 5}},
                                                 "forecast"), 2, "forecast.jsonl line 1 of 6 response text is not a string"),
    ("logprob_NaN_literal", lambda l: edit_line(l, 1, lambda r: json.dumps(r).replace("-1.0", "NaN", 1) + "\n"), 2,
     "response top[0] has log-prob nan, not a number"),
    ("logprob_Infinity_literal", lambda l: edit_line(l, 1, lambda r: json.dumps(r).replace("-1.0", "Infinity", 1)
                                                     + "\n"), 2, "has log-prob +inf > 0"),
    ("token_id_as_text", lambda l: edit_line(l, 1, with_response({"top": [["1", "up", -1.0]]})), 2,
     "response top[0] has token id '1', not an integer"),
    ("n_samples_negative", lambda l: edit_line(l, 1, with_response({"top": [[1, "up", -1.0]], "n_samples": -2})), 2,
     "response n_samples = -2 is not a count"),
    ("line_is_a_string", lambda l: edit_line(l, 2, lambda r: '"hello"\n'), 2, "line 2 of 6 is a JSON str"),
    ("bom_at_start", lambda l: l.raw_file("recall").write_bytes(b"\xef\xbb\xbf" + l.raw_file("recall").read_bytes()),
     2, "line 1 of 6 is not UTF-8 JSON (Unexpected UTF-8 BOM"),
    ("tokenizer_ids_not_lists", lambda l: record_labels(l, "bundled:SmolLM2-135M-Instruct", {"up": 1, "down": 2}), 2,
     "recall.tokenizer.json is damaged (label 'up' of 'bundled:SmolLM2-135M-Instruct' has token ids 1, not a list"),
    ("tokenizer_entry_not_object", lambda l: (l.raw / "recall.tokenizer.json").write_text('{"bundled:SmolLM2-135M-'
                                                                                        'Instruct": "x"}'), 2,
     "is damaged (the entry of 'bundled:SmolLM2-135M-Instruct' is 'x', not an object)"),
    ("tokenizer_record_is_a_folder", lambda l: ((l.raw / "recall.tokenizer.json").unlink(),
                                                (l.raw / "recall.tokenizer.json").mkdir()), 2,
     "recall.tokenizer.json is not a file (a folder?)"),
    ("tokenizer_json_damaged", lambda l: record_labels(l, "bundled:SmolLM2-135M-Instruct", {}, "not a tokenizer"), 2,
     "the tokenizer recorded for bundled:SmolLM2-135M-Instruct is damaged"),
]


def append_line(layout: Layout, number: int, response, task: str = "recall") -> None:
    """Append a copy of line `number` with another response (same key: two answers to one query)."""
    path = layout.raw_file(task)
    record = json.loads(path.read_text().splitlines()[number - 1])
    path.write_text(path.read_text() + json.dumps({**record, "response": response}) + "\n")


def cut_inside_character(layout: Layout) -> None:
    """Line 2 of the forecast cache cut inside a multi-byte character, its newline kept."""
    path = layout.raw_file("forecast")
    lines = path.read_bytes().splitlines(keepends=True)
    record = json.loads(lines[1])
    text = json.dumps({**record, "response": {**record["response"], "text": "上がる"}}, ensure_ascii=False).encode()
    lines[1] = text[:text.index("上".encode()) + 2] + b"\n"
    path.write_bytes(b"".join(lines))


@pytest.mark.parametrize("name, damage, code, fragment", CACHE_CASES, ids=[c[0] for c in CACHE_CASES])
def test_bad_cache(cached, name, damage, code, fragment):
    layout, config = cached
    damage(layout)
    damaged = {task: layout.raw_file(task).read_bytes() for task in ("forecast", "recall")
               if layout.raw_file(task).is_file()}
    expect(code, fragment, "rebuild", config)
    assert not layout.derived_file("recall.parquet").exists()  # nothing derived from a bad cache
    assert not layout.derived_file("panel.parquet").exists()
    for task, content in damaged.items():
        assert layout.raw_file(task).read_bytes() == content  # the user's file is never rewritten


def test_labels_checked_on_the_recorded_tokenizer_without_the_model(cached, tmp_path):
    """Item 3: a label never asked about is encoded with the tokenizer recorded at ask time (no weights)."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    layout, _ = cached
    tokenizer = Tokenizer(models.WordLevel({"up": 1, "down": 2, "unknown": 3, "not": 4, "sure": 5, "[UNK]": 0},
                                           unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    record_labels(layout, "bundled:SmolLM2-135M-Instruct", {}, tokenizer.to_str())
    config = write_config(layout.root, f'[data]\npath = "{tmp_path / "panel.csv"}"\n[study]\ncutoff = 2024-06-30\n'
                                       '[recall]\nlabels = ["up", "down", "not sure"]\n', "labels.toml")
    expect(2, "recall label 'not sure' is 2 tokens [4, 5]", "rebuild", config)


def test_interrupted_last_line_is_dropped_and_the_original_kept(cached):
    layout, config = cached
    path = layout.raw_file("recall")
    original = path.read_bytes()
    path.write_bytes(original[:-40])  # a crash in the middle of the last line
    with pytest.warns(UserWarning, match="cut short by an interrupted write"):
        expect(2, "has no response for recall query", "rebuild", config)  # that query must be asked again
    backups = list(layout.raw.glob("recall.jsonl.damaged-*"))
    assert len(backups) == 1 and backups[0].read_bytes() == original[:-40]
    assert path.read_bytes() == b"".join(original.splitlines(keepends=True)[:5])


# ---- item 15: derived files and results files ---------------------------------------------------------------------
def rewrite(layout: Layout, name: str, change) -> None:
    path = layout.derived_file(name)
    write_parquet(change(pd.read_parquet(path)), path)


DERIVED_CASES = [  # (id, damage, exit code, message fragment)
    ("truncated_parquet", lambda l: l.derived_file("forecast.parquet").write_bytes(
        l.derived_file("forecast.parquet").read_bytes()[:300]), 2, "forecast.parquet is damaged or not a parquet file"),
    ("missing_column", lambda l: rewrite(l, "recall.parquet", lambda f: f.drop(columns="p_up")), 2,
     "recall.parquet lacks column(s) ['p_up']; rerun `lapbias recall`"),
    ("text_for_numbers", lambda l: rewrite(l, "forecast.parquet", lambda f: f.assign(mu_hat="up")), 2,
     "forecast.parquet, column mu_hat: 500 value(s) are not a finite number or missing (e.g. row 1: 'up')"),
    ("inf_lap", lambda l: rewrite(l, "recall.parquet", lambda f: f.assign(lap=np.where(f.index == 3, np.inf, f.lap))),
     2, "column lap: 1 value(s) are not a probability in [0, 1]"),
    ("probability_above_one", lambda l: rewrite(l, "minkprob.parquet", lambda f: f.assign(lap_mink=3.0)), 2,
     "column lap_mink: 500 value(s) are not a probability in [0, 1]"),
    ("derived_is_a_folder", lambda l: (l.derived_file("forecast.parquet").unlink(),
                                       l.derived_file("forecast.parquet").mkdir()), 2, "is not a file (a folder?)"),
    # round 2
    ("renamed_column", lambda l: rewrite(l, "recall.parquet", lambda f: f.rename(columns={"lap": "LAP"})), 2,
     "recall.parquet lacks column(s) ['lap']"),
    ("dates_as_text", lambda l: rewrite(l, "recall.parquet", lambda f: f.assign(
        target_date=f.target_date.dt.strftime("%Y-%m-%d"))), 2, "column target_date: 500 value(s) are not a date"),
    ("dates_with_time_zone", lambda l: rewrite(l, "input.parquet", lambda f: f.assign(
        target_date=f.target_date.dt.tz_localize("UTC"))), 2, "input.parquet, column target_date: 500 value(s) are not "
                                                                "a date (without a time zone)"),
    ("ids_as_integers", lambda l: rewrite(l, "recall.parquet", lambda f: f.assign(entity_id=range(len(f)))), 2,
     "column entity_id: 500 value(s) are not text (e.g. row 1: 0)"),
    ("numbers_as_text", lambda l: rewrite(l, "input.parquet", lambda f: f.assign(outcome=f.outcome.astype(str))), 2,
     "input.parquet, column outcome: 500 value(s) are not a finite number or missing"),
    ("no_rows", lambda l: rewrite(l, "input.parquet", lambda f: f.iloc[:0]), 2, "input.parquet has no rows; rerun "
                                                                               "`lapbias validate`"),
    ("lap_negative", lambda l: rewrite(l, "recall.parquet", lambda f: f.assign(lap=-0.5)), 2,
     "column lap: 500 value(s) are not a probability in [0, 1]"),
    ("flag_as_text", lambda l: rewrite(l, "forecast.parquet", lambda f: f.assign(parsed="yes")), 2,
     "column parsed: 500 value(s) are not true/false"),
    ("fewer_forecast_rows", lambda l: rewrite(l, "forecast.parquet", lambda f: f.iloc[:-5]), 2,
     "5 input rows have no match in forecast on ['row_id']"),
    ("repeated_forecast_row", lambda l: rewrite(l, "forecast.parquet", lambda f: pd.concat([f, f.iloc[:1]])), 2,
     "forecast has 2 rows with a repeated key ['row_id']"),
    ("forecast_missing", lambda l: l.derived_file("forecast.parquet").unlink(), 2,
     "forecast.parquet does not exist: run the step that writes it first"),
]


@pytest.mark.parametrize("name, damage, code, fragment", DERIVED_CASES, ids=[c[0] for c in DERIVED_CASES])
def test_bad_derived_file(project, name, damage, code, fragment):
    layout, config = project
    damage(layout)
    expect(code, fragment, "panel", config)
    assert not layout.derived_file("panel.parquet").exists()


STALE_CONFIGS = [  # (id, config edited after `lapbias panel`, message fragment)
    ("cutoff", STUDY.replace("2024-06-30", "2024-04-15"), "was not built with [study] cutoff = 2024-04-15 (e.g. row_id"),
    ("frequency", STUDY.replace("[estimate]", 'frequency = "month"\n[estimate]'),
     "was not built with [study] frequency = \"month\""),
    ("high_lap", STUDY + '[panel]\nhigh_lap = "entity_mean"\n', "was not built with [panel] high_lap = \"entity_mean\""),
    ("lap_measure", STUDY.replace("[estimate]", '[estimate]\nlap_measure = "minkprob"'),
     "was not built with [estimate] lap_measure = \"minkprob\""),
]


def test_estimate_refuses_a_panel_built_with_another_config(project):
    """A config edited after `lapbias panel` must not be estimated on the old split (and recorded as the new one)."""
    layout, config = project
    expect(0, "panel:", "panel", config)
    for name, text, fragment in STALE_CONFIGS:
        edited = write_config(layout.root, text, f"{name}.toml")
        expect(2, fragment, "estimate", edited)
        assert not (layout.results / "detection.csv").exists(), name


def test_a_panel_built_before_the_recalled_direction_is_refused(project):
    """The validation test reads the panel's ud_dir = (P(up) - P(down)) / (P(up) + P(down)); a panel.parquet built by
    an earlier version has none: `lapbias estimate` names the column and the stage that writes it, no traceback."""
    layout, config = project
    expect(0, "panel:", "panel", config)
    rewrite(layout, "panel.parquet", lambda f: f.drop(columns="ud_dir"))
    output = expect(2, "panel.parquet lacks column(s) ['ud_dir']; rerun `lapbias panel`", "estimate", config)
    assert "Traceback" not in output and not (layout.results / "detection.csv").exists()


DEGENERATE_PANELS = [  # (id, edit of a built panel, fragment of REPORT.md or the notes): the run ends in a report
    # that names the reason (issue 11 item 2), never a traceback or a number from an overflow
    ("outcome_1e308", lambda f: f.assign(outcome=np.where(f.index == 0, 1e308, f.outcome)), "outcome"),
    ("outcome_constant", lambda f: f.assign(outcome=0.0), "the outcome outcome is constant"),
    ("model_always_up", lambda f: f.assign(mu_hat=1.0), "mu_hat is constant (= 1) on all 12 rows with post = 0"),
]


def test_degenerate_panels_are_named(tmp_path):
    layout = Layout(tmp_path)  # a small panel (6 entities x 4 dates)
    layout.make_dirs()
    synthetic_stage_files(layout)
    config = write_config(tmp_path, STUDY)
    expect(0, "panel:", "panel", config)
    built = pd.read_parquet(layout.derived_file("panel.parquet"))
    inputs = pd.read_parquet(layout.derived_file("input.parquet"))
    for name, edit, fragment in DEGENERATE_PANELS:
        write_hand_built_panel(layout, edit(built), inputs)
        expect(0, "estimate (python engine)", "estimate", config)
        expect(0, "report:", "report", config)
        said = (layout.results / "REPORT.md").read_text() + (layout.results / "estimation_notes.csv").read_text() \
            + (layout.results / "extended_notes.csv").read_text()
        assert fragment in said and "**Verdict:" in said, name
        assert "inf" not in pd.read_csv(layout.results / "detection.csv").to_string(), name


REPORT_CASES = [  # (id, new text of results/detection.csv, exit code, message fragment)
    ("garbage_csv", b"\x00\x01garbage\xff\n\x02", 2, "detection.csv"),
    ("not_a_table", b"hello,world\n1,2\n", 2, "detection.csv lacks column(s) ['model', 'term', 'coef'"),
    ("text_coef", None, 2, "detection.csv row 2, column coef: 'big' is not a finite number"),
    ("p_above_one", None, 2, "column p_one_sided: 7.0 is not a p-value in [0, 1]"),
    ("header_only", None, 2, "results/detection.csv has no rows"),
    ("empty_run_id", None, 2, "results/detection.csv has 4 row(s) with an empty run_id"),
]


@pytest.mark.parametrize("name, text, code, fragment", REPORT_CASES, ids=[c[0] for c in REPORT_CASES])
def test_bad_results_file_given_to_report(estimated, name, text, code, fragment):
    layout, config = estimated
    detection = layout.results / "detection.csv"
    if text is None:
        table = pd.read_csv(detection, dtype=str)
        if name == "header_only":
            table = table.iloc[:0]
        elif name == "empty_run_id":
            table["run_id"] = ""
        else:
            column, value = ("coef", "big") if name == "text_coef" else ("p_one_sided", "7.0")
            table.loc[0, column] = value
        table.to_csv(detection, index=False)
    else:
        detection.write_bytes(text)
    before = (layout.results / "REPORT.md").read_bytes()
    expect(code, fragment, "report", config)
    assert (layout.results / "REPORT.md").read_bytes() == before  # no report written from it


def test_beta3_without_a_p_value_is_not_no_evidence(estimated):
    """A beta_3 with no p-value (no standard error) means the test could not be run, not "not significant"."""
    layout, config = estimated
    detection = layout.results / "detection.csv"
    table = pd.read_csv(detection, dtype=str, keep_default_na=False)
    table.loc[(table.model == "pre") & (table.term == "c.mu_hat#c.lap"), ["se", "t", "p", "p_one_sided"]] = ""
    table.to_csv(detection, index=False)
    as_if_estimated(layout, "detection.csv")
    expect(0, "report:", "report", config)
    report = (layout.results / "REPORT.md").read_text()
    assert "**Verdict: Mixed/invalid.**" in report and "gives it no p-value" in report


# ---- item 16 (input side): `lapbias reghdfe` -------------------------------------------------------------------
def regression_file(tmp_path, kind: str) -> Path:
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"y": rng.normal(size=40), "x": rng.normal(size=40), "g": np.repeat(np.arange(8), 5)})
    path = tmp_path / "data.csv"
    if kind == "string_regressor":
        frame.assign(x=frame.x.astype(str).where(frame.index != 4, "n/a-ish")).to_csv(path, index=False)
    elif kind == "empty":
        path.write_text("")
    elif kind == "header_only":
        path.write_text("y,x,g\n")
    elif kind == "inf":
        frame.assign(x=frame.x.where(frame.index != 6, np.inf)).to_csv(path, index=False)
    elif kind == "corrupt_dta":
        path = tmp_path / "data.dta"
        path.write_bytes(b"<stata_dta><header><release>118</release>" + bytes(range(200)))
    elif kind == "binary":
        path.write_bytes(bytes(range(256)) * 8)
    elif kind == "missing_variable":
        frame.drop(columns="x").to_csv(path, index=False)
    elif kind == "duplicate_header":
        path.write_text("y,x,x,g\n" + "\n".join(f"{i},{i % 3},{i % 5},{i % 4}" for i in range(20)) + "\n")
    return path


REGHDFE_CASES = [  # (id, file kind, exit code, message fragment)
    ("string_regressor", "string_regressor", 2, "x is not numeric (e.g. row 5: 'n/a-ish'); a regressor must be a number"),
    ("empty_csv", "empty", 2, "is empty (no header, no rows)"),
    ("header_only_csv", "header_only", 2, "has no rows (columns: ['y', 'x', 'g'])"),
    ("inf_regressor", "inf", 2, "x has 1 infinite value(s) (e.g. row 7: inf)"),
    ("corrupt_dta", "corrupt_dta", 2, "cannot be read as Stata .dta"),
    ("binary_file", "binary", 2, "is not a text CSV"),
    ("missing_variable", "missing_variable", 2, "variable(s) ['x'] not found"),
    ("duplicate_header", "duplicate_header", 2, "duplicate column names"),
]


@pytest.mark.parametrize("name, kind, code, fragment", REGHDFE_CASES, ids=[c[0] for c in REGHDFE_CASES])
def test_bad_reghdfe_input(tmp_path, name, kind, code, fragment):
    path = regression_file(tmp_path, kind)
    expect(code, fragment, "reghdfe", path, "y", "x", "--absorb", "g", "--save", tmp_path / "out.csv")
    assert not (tmp_path / "out.csv").exists()


REGHDFE_ARG_CASES = [  # (id, edit of a clean file, arguments after the file, exit code, message fragment)
    ("absorb_missing", None, ("y", "x", "--absorb", "firm"), 2, "variable(s) ['firm'] not found"),
    ("factor_in_interaction", None, ("y", "x", "c.x#g"), 2,
     "term 'c.x#g': 'g' has no c. prefix, which Stata reads as a factor variable (i.g)"),
    ("bare_interaction", None, ("y", "x#z"), 2, "'x' has no c. prefix"),
    ("factor_variable", None, ("y", "i.g"), 2, "term 'i.g' is not a variable name"),
    ("lag_operator", None, ("y", "L.x"), 2, "term 'L.x' is not a variable name"),
    ("y_is_a_regressor", None, ("y", "y", "x"), 2, "the dependent variable y is also a regressor"),
    ("regressor_twice", None, ("y", "x", "x"), 2, "regressor(s) ['x'] given more than once"),
    ("weights_option", None, ("y", "x", "--weights", "z"), 2, "No such option '--weights'"),
    ("stata_weights", None, ("y", "x", "[aw=z]"), 2, "variable(s) ['[aw=z]'] not found"),
    ("robust_with_cluster", None, ("y", "x", "--vce", "robust", "--cluster", "g"), 2,
     "--cluster g with --vce robust: the cluster variable would be ignored"),
    ("cluster_vce_without_cluster", None, ("y", "x", "--vce", "cluster"), 2, "vce(cluster) needs at least one cluster"),
    ("one_cluster", lambda f: f.assign(c=1), ("y", "x", "--cluster", "c"), 2, "vce(cluster c) with 1 cluster"),
    ("all_singletons", lambda f: f.assign(g=range(len(f))), ("y", "x", "--absorb", "g"), 2,
     "all 40 are singletons (alone in a level of g)"),
    ("collinear_with_fe", lambda f: f.assign(x=f.g * 1.0), ("y", "x", "--absorb", "g"), 2,
     "x collinear with the fixed effects"),
    ("y_1e308", lambda f: f.assign(y=np.where(f.index == 3, 1e308, f.y)), ("y", "x"), 0,  # estimated in its units
     "Root MSE          = 1.5773e+307"),
    ("y_constant", lambda f: f.assign(y=1.0), ("y", "x"), 2, "the outcome y is constant"),
    ("n_below_k", lambda f: f.iloc[:3], ("y", "x", "z", "g"), 2, "N = 3 observation(s) for K = 2 regressor(s) and a constant"),
    ("y_all_missing", lambda f: f.assign(y=np.nan), ("y", "x"), 2, "no observations left for y"),
    ("cluster_with_missing", lambda f: f.assign(c=np.where(f.index % 7 == 0, np.nan, f.g)),
     ("y", "x", "--absorb", "g", "--cluster", "c"), 0, "Number of obs     =         34"),
]


@pytest.mark.parametrize("name, edit, args, code, fragment", REGHDFE_ARG_CASES, ids=[c[0] for c in REGHDFE_ARG_CASES])
def test_bad_reghdfe_call(tmp_path, name, edit, args, code, fragment):
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"y": rng.normal(size=40), "x": rng.normal(size=40), "z": rng.normal(size=40),
                          "g": np.repeat(np.arange(8), 5)})
    (edit(frame) if edit else frame).to_csv(tmp_path / "data.csv", index=False)
    expect(code, fragment, "reghdfe", tmp_path / "data.csv", *args, "--save", tmp_path / "out.csv")
    assert (tmp_path / "out.csv").exists() == (code == 0)


# ---- item 17: the error boundary -----------------------------------------------------------------------------------
def test_unexpected_error_is_one_line_with_the_traceback_in_logs(project, monkeypatch):
    layout, config = project
    from lapbias import panel

    def broken(*_args, **_kwargs):  # fault injection: a bug, not a user error
        raise ZeroDivisionError("division by zero inside the panel stage")

    monkeypatch.setattr(panel, "build", broken)
    output = expect(1, "error: `lapbias panel` on", "panel", config)
    assert "stopped on an unexpected ZeroDivisionError: division by zero inside the panel stage" in output
    logs = list(layout.logs.glob("traceback-panel-*.log"))
    assert len(logs) == 1 and "ZeroDivisionError" in logs[0].read_text() and str(logs[0]) in output
    result = CliRunner().invoke(main, ["--debug", "panel", str(config)])
    assert isinstance(result.exception, ZeroDivisionError)  # --debug shows the exception itself


def test_a_missing_compiled_bootstrap_kernel_is_said_and_the_draws_are_unchanged(project, monkeypatch):
    """Issue 17: where the C kernel of the bootstrap was not compiled (no C compiler at install), `estimate` says so
    and runs the numba kernel, with the same draws."""
    layout, config = project
    from lapbias.estimate import bootstrap_lanes

    expect(0, "panel:", "panel", config)
    output = expect(0, "estimate (python engine)", "estimate", config)
    assert "numba kernel" not in output
    compiled = pd.read_csv(layout.results / "bootstrap_draws.csv")
    monkeypatch.setattr(bootstrap_lanes, "UNAVAILABLE", "the compiled bootstrap kernel is not built (test)")
    output = expect(0, "estimate (python engine)", "estimate", config)
    assert "warning: the compiled bootstrap kernel is not built (test): the bootstrap ran on the numba kernel" in output
    np.testing.assert_allclose(pd.read_csv(layout.results / "bootstrap_draws.csv")["beta3"], compiled["beta3"],
                               rtol=0, atol=1e-12)


# ---- stale signals: a derived signal file from other settings or another validated input ----------------------
SIGNAL_SETTING_EDITS = [  # (id, config text added, the signal file refused, the setting named)
    ("forecast_labels", '[forecast]\nlabels = {up = 2.0, down = -1.0}\n', "forecast.parquet",
     '[forecast] labels = {"up": 1.0, "down": -1.0}; this config has {"up": 2.0, "down": -1.0}'),
    ("forecast_parse_regex", '[forecast]\nparse_regex = "(up|down)"\n', "forecast.parquet", "[forecast] parse_regex"),
    ("forecast_prompt", '[forecast]\nprompt = "Will {entity_name} go up or down? {text}"\n', "forecast.parquet",
     "[forecast] prompt"),
    ("model_dtype", '[model]\ndtype = "bfloat16"\n', "forecast.parquet", '[model] dtype = "float32"'),
    ("recall_template_text", '[study]\ncutoff = 2024-06-30\noutcome_description = "the bond yield"\n', "recall.parquet",
     '[study] outcome_description = "the closing stock price"'),
    ("recall_labels", '[recall]\nlabels = ["Up", "down", "unknown"]\n', "recall.parquet", "[recall] labels"),
]


@pytest.mark.parametrize("case", SIGNAL_SETTING_EDITS, ids=[c[0] for c in SIGNAL_SETTING_EDITS])
def test_panel_and_estimate_refuse_signals_derived_under_other_settings(cached, case):
    """Stale outputs: a setting that changes a derived signal (its prompt, parser, label map, model precision, the
    recall template's wording), edited after the signal step, made `panel` merge the old signals and `estimate`
    record the new setting beside them. Now both refuse, naming the file, the setting and both values; rerunning
    the signal step (from the cache here) lets them go on."""
    _, extra, refused, setting = case
    layout, config = cached
    expect(0, "panel:", "rebuild", config)
    config.write_text(config.read_text().replace("[study]\ncutoff = 2024-06-30\n", "") + extra
                      if extra.startswith("[study]") else config.read_text() + extra)
    output = expect(2, f"{refused} was derived with {setting}", "panel", config)
    assert "rerun `lapbias " in output
    built = layout.derived_file("panel.parquet").read_bytes()
    output = expect(2, f"panel.parquet was derived with {setting}", "estimate", config)
    assert layout.derived_file("panel.parquet").read_bytes() == built
    assert not (layout.results / "detection.csv").exists()


def test_settings_that_change_no_signal_leave_the_panel_alone(cached):
    layout, config = cached
    expect(0, "panel:", "rebuild", config)
    config.write_text(config.read_text() + '[forecast]\nmin_parse_rate = 0.5\n[recall]\ncensoring_warning = 0.9\n'
                                           '[model]\nbatch_size = 3\nseconds_per_query = 2.0\n[estimate]\n'
                                           'bootstrap_reps = 7\nplacebo_alpha = 0.2\n')
    expect(0, "panel:", "panel", config)


def test_signals_derived_from_an_earlier_validation_are_refused(cached):
    """A corrected data file validated again, then `panel` without the signal steps: the forecasts answered the
    old texts. Refused; the signal step (from the cache where it can) makes them current."""
    layout, config = cached
    expect(0, "panel:", "rebuild", config)
    data = layout.root / "panel.csv"
    data.write_text(data.read_text().replace("headline 1 2", "headline 1 2 corrected"))
    expect(0, "6 rows kept", "validate", config)
    expect(2, "forecast.parquet was derived from another data/derived/input.parquet", "panel", config)


def test_a_signal_file_without_a_record_is_not_checked(cached):
    """Files written by an older version or through the Python API carry no record: panel goes on, as before."""
    layout, config = cached
    expect(0, "panel:", "rebuild", config)
    for task in ("forecast", "recall"):
        frame = pd.read_parquet(layout.derived_file(f"{task}.parquet"))
        frame.attrs = {}
        write_parquet(frame, layout.derived_file(f"{task}.parquet"))
    config.write_text(config.read_text() + '[forecast]\nlabels = {up = 2.0, down = -1.0}\n')
    expect(0, "panel:", "panel", config)


def test_minkprob_reads_the_forecast_prompt_only_when_it_scores_the_prompt():
    from lapbias.config import RunConfig
    from lapbias.signals import provenance

    prompt = RunConfig().replace(minkprob={"scored_text": "prompt"})
    text = RunConfig().replace(minkprob={"scored_text": "text"})
    assert "[forecast] prompt" in provenance.settings(prompt, "minkprob")
    assert "[forecast] prompt" not in provenance.settings(text, "minkprob")
    assert "[minkprob] k" in provenance.settings(text, "minkprob")
    assert not any(key.startswith("[forecast]") for key in provenance.settings(prompt, "recall"))
    assert "[model] base_url" not in provenance.settings(prompt, "forecast")  # where the model is asked: no matter


def test_a_changed_column_mapping_is_refused_until_validate_runs_again(cached):
    """Stale outputs: `validate` recorded the data file's sha256 only, so a changed [data.columns] mapping (another
    column as the outcome, say) went unnoticed by panel and estimate until `validate` ran again."""
    layout, config = cached
    expect(0, "panel:", "rebuild", config)
    plain = config.read_text()
    config.write_text(plain + '[data.columns]\nentity_name = "ticker"\n')
    for step in ("panel", "estimate", "forecast"):
        expect(2, "[data.columns] changed since `lapbias validate` read", step, config)
    config.write_text(plain)
    expect(0, "panel:", "panel", config)


def test_a_subsample_is_recorded_in_run_config_and_the_report(cached):
    """`--sample` was written to the log only: REPORT.md called the subsample "rows in the input file",
    results/run_config.json did not say that a subsample, or which seed, was used, and `rebuild` validated all rows."""
    layout, config = cached
    expect(0, "kept a random subsample of 4 of 6 valid rows (seed 11)", "validate", config, "--sample", "4",
           "--seed", "11")
    expect(0, "panel:", "rebuild", config)  # the recorded subsample again, not all rows
    assert len(pd.read_parquet(layout.derived_file("panel.parquet"))) == 4
    expect(0, "estimate (python engine)", "estimate", config)
    record = json.loads((layout.results / "run_config.json").read_text())
    assert record["validated"]["subsample"] == {"rows": 4, "seed": 11} and record["validated"]["valid_rows"] == 6
    expect(0, "report:", "report", config)
    sample = pd.read_csv(layout.results / "sample.csv").set_index("item")["value"]
    assert sample["rows in the input file"] == "6"
    assert sample["rows left out by --sample 4 (a random subsample of the valid rows, seed 11)"] == "2"
    assert "--sample 4" in (layout.results / "REPORT.md").read_text()
    sample_table = (layout.results / "sample.csv").read_text()
    assert "forecast parse rate,100.0%" in sample_table  # of the 4 rows estimated (from the panel)
    expect(0, "6 rows kept", "validate", config)  # all rows again: the results are of the subsample
    output = expect(2, "data/derived/input.parquet changed since estimate run", "report", config)
    assert "lapbias run CONFIG" in output


def test_estimate_refuses_a_panel_built_from_an_earlier_validation(cached):
    """Review finding: estimate compared the panel with input.parquet by row ids and outcomes only, so a corrected
    target date (across the cutoff here) or text, validated again, was estimated on the old panel and its old signals;
    the report's own advice after the new validation ("rerun estimate") led there. The panel records the sha256 of the
    input and of each signal file it merged; estimate refuses once one differs, and the advice names `lapbias run`."""
    layout, config = cached
    expect(0, "panel:", "rebuild", config)
    expect(0, "estimate (python engine)", "estimate", config)
    data = layout.root / "panel.csv"
    data.write_text(data.read_text().replace("r13,E1,Entity 1,T1,headline 1 3,2024-03-03,2024-03-04",
                                             "r13,E1,Entity 1,T1,headline 1 3,2024-03-03,2024-09-04"))
    expect(0, "6 rows kept", "validate", config)
    output = expect(2, "data/derived/input.parquet changed since estimate run", "report", config)
    assert "lapbias run" in output
    output = expect(2, "panel.parquet was built from another data/derived/input.parquet", "estimate", config)
    assert "lapbias run" in output


def test_estimate_refuses_a_panel_older_than_its_signal_files(cached):
    """Review finding: a signal file rewritten after `panel` under the same settings (cache lines answered again,
    or Min-K% run for the first time) left estimate on the old panel."""
    layout, config = cached
    expect(0, "panel:", "rebuild", config)
    path = layout.raw_file("forecast")
    # answered again: a new answer and its tokens (an answer edited alone is refused: test_hostile_ids)
    path.write_text(path.read_text().replace('"text":"up","tokens":[[1,"up",-0.1]]',
                                             '"text":"down","tokens":[[2,"down",-0.1]]'))
    expect(0, "forecast", "forecast", config)  # answered from the (edited) cache
    expect(2, "forecast.parquet changed since `lapbias panel` merged it", "estimate", config)
    expect(0, "panel:", "panel", config)
    expect(0, "estimate (python engine)", "estimate", config)
    assert pd.read_parquet(layout.derived_file("panel.parquet"))["mu_hat"].eq(-1).all()


def test_a_stale_minkprob_file_unused_by_the_config_can_be_removed(cached):
    """Review finding: a Min-K% file derived under other settings, with lap_measure = "recall", was refused with the
    advice to rerun `lapbias minkprob`, which a backend without prompt log-probs cannot do: a loop. The message also
    offers removing the file."""
    from lapbias.config import load
    from lapbias.llm.cache import ResponseCache
    from lapbias.signals import minkprob

    layout, config = cached
    frame = pd.read_parquet(layout.derived_file("input.parquet"))
    ResponseCache(layout.raw_file("minkprob")).append(
        (q, {"tokens": [[1, "a", -1.0], [2, "b", -2.0]]}) for q in minkprob.queries(frame, load(config)))
    expect(0, "panel:", "rebuild", config)
    config.write_text(config.read_text() + '[minkprob]\nk = 0.5\n')
    output = expect(2, "minkprob.parquet was derived with [minkprob] k = 0.2", "panel", config)
    assert "or remove data/derived/minkprob.parquet" in output
    layout.derived_file("minkprob.parquet").unlink()
    expect(0, "panel:", "panel", config)


def test_settings_outside_the_cache_key_and_derivation_leave_the_signals_alone(cached):
    """Review finding: [model] settings that enter no cache key and no derivation (device, max_model_len, tokenizer,
    the served name, and the backend for forecasts) made panel refuse signals that a rerun would answer identically
    from the cache."""
    layout, config = cached
    expect(0, "panel:", "rebuild", config)
    config.write_text(config.read_text() + '[model]\ndevice = "cuda"\nmax_model_len = 4096\nmax_logprobs = 40\n'
                                           'tokenizer = "some/tokenizer"\nserved_model_name = "m"\n')
    expect(0, "panel:", "panel", config)


def test_panel_checks_the_forecast_file_before_its_parse_rate(cached):
    """Review finding: with a parse_regex fixed in the config but forecast.parquet derived under the old one, panel
    reported the old file's parse rate as if the new parser had failed; it names the stale file instead."""
    layout, config = cached
    config.write_text(config.read_text() + '[forecast]\nparse_regex = "(sideways)"\n')
    expect(0, "forecast", "forecast", config, "--allow-low-parse-rate")
    config.write_text(config.read_text().replace('parse_regex = "(sideways)"', 'parse_regex = "^(up|down)"'))
    expect(2, '[forecast] parse_regex = "(sideways)"', "panel", config)


def test_a_respelled_data_path_is_not_a_changed_validation(cached):
    """Review finding: data_source.json entered run_config.json's inputs byte for byte, with the data path's spelling,
    so validating the same file named by another path made report refuse the results."""
    layout, config = cached
    expect(0, "panel:", "rebuild", config)
    expect(0, "estimate (python engine)", "estimate", config)
    relative = Path(os.path.relpath(layout.root / "panel.csv"))
    config.write_text(config.read_text().replace(f'path = "{layout.root / "panel.csv"}"', f'path = "{relative}"'))
    expect(0, "6 rows kept", "validate", config)
    expect(0, "report:", "report", config)


def test_report_after_run_with_the_parse_rate_override(cached):
    """Review finding: `lapbias run --allow-low-parse-rate` records [forecast] allow_low_parse_rate = true, and the
    report with the same config file (no such flag) was refused; the override and min_parse_rate change neither a
    number nor the report's text."""
    layout, config = cached
    expect(0, "panel:", "rebuild", config)
    expect(0, "estimate (python engine)", "estimate", config)
    record = json.loads((layout.results / "run_config.json").read_text())  # as `run --allow-low-parse-rate` records
    record["forecast"]["allow_low_parse_rate"], record["forecast"]["min_parse_rate"] = True, 0.5
    (layout.results / "run_config.json").write_text(json.dumps(record))
    as_if_estimated(layout, "run_config.json")
    expect(0, "report:", "report", config)


def test_a_panel_without_a_build_record_is_compared_with_the_input_column_by_column(cached):
    """Re-review finding: a panel without the record of what it was built from (an older version, the Python API)
    was compared with input.parquet by row ids and outcomes only, so a corrected target date or text went through."""
    layout, config = cached
    expect(0, "panel:", "rebuild", config)
    panel = pd.read_parquet(layout.derived_file("panel.parquet"))
    panel.attrs = {}
    write_parquet(panel, layout.derived_file("panel.parquet"))
    data = layout.root / "panel.csv"
    data.write_text(data.read_text().replace("r13,E1,Entity 1,T1,headline 1 3,2024-03-03,2024-03-04",
                                             "r13,E1,Entity 1,T1,headline 1 3,2024-03-03,2024-09-04"))
    expect(0, "6 rows kept", "validate", config)
    expect(2, "row_id r13: target_date 2024-03-04 in the panel, 2024-09-04 validated", "estimate", config)


def test_rebuild_drops_a_min_k_file_the_config_does_not_use_when_its_cache_is_incomplete(cached):
    """Re-review finding: with lap_measure = "recall" and a Min-K% cache lacking the current queries (another model,
    corrected texts), `rebuild` stopped on it and told to run `lapbias minkprob`, which a backend without prompt
    log-probs cannot do. It now removes minkprob.parquet with a note, as when there is no Min-K% cache."""
    from lapbias.config import load
    from lapbias.llm.cache import ResponseCache
    from lapbias.signals import minkprob

    layout, config = cached
    frame = pd.read_parquet(layout.derived_file("input.parquet"))
    queries = minkprob.queries(frame, load(config))[:-1]  # the last row's text never scored
    ResponseCache(layout.raw_file("minkprob")).append((q, {"tokens": [[1, "a", -1.0]]}) for q in queries)
    output = expect(0, "panel:", "rebuild", config)
    assert "minkprob.parquet removed" in output and not layout.derived_file("minkprob.parquet").exists()
    config.write_text(config.read_text() + '[estimate]\nlap_measure = "minkprob"\n')
    expect(2, "run `lapbias minkprob --yes`", "rebuild", config)  # the config needs it: the missing answer is an error


def test_settings_the_report_never_states_do_not_refuse_it(cached):
    """Re-review finding: where the model runs (device), its context length, tokenizer and served name appear in no
    table and no sentence of the report, so a report under a config that differs only there is not refused."""
    layout, config = cached
    expect(0, "panel:", "rebuild", config)
    expect(0, "estimate (python engine)", "estimate", config)
    config.write_text(config.read_text() + '[model]\ndevice = "cuda"\nmax_model_len = 4096\nmax_logprobs = 40\n'
                                           'tokenizer = "some/tokenizer"\nserved_model_name = "m"\n')
    expect(0, "report:", "report", config)


def test_the_recall_reads_its_mode_not_the_backend_name(cached):
    """Re-review finding: transformers and vLLM both ask exact label probabilities (the same cache keys), so
    switching between them does not make the recall file stale; an OpenAI server (top-k sums, other keys) does."""
    layout, config = cached
    expect(0, "panel:", "rebuild", config)
    plain = config.read_text()
    config.write_text(plain + '[model]\nbackend = "vllm"\n')
    expect(0, "panel:", "panel", config)
    config.write_text(plain + '[model]\nbackend = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n')
    expect(2, "recall.parquet was derived with [recall] label probabilities = \"exact\"; this config has \"top-k\"",
           "panel", config)


@pytest.mark.parametrize("seed", ["-5", str(2 ** 32)])
def test_a_sample_seed_out_of_range_is_a_usage_error(cached, seed):
    """Re-review finding: a negative seed, or one of 2^32 or more, ended in numpy's ValueError as an unexpected bug."""
    _, config = cached
    expect(2, "Invalid value for '--seed'", "validate", config, "--sample", "4", "--seed", seed)


@pytest.mark.parametrize("subsample", ['{"rows": true, "seed": 1}', '{"rows": 4, "seed": -1}', "[4]"])
def test_rebuild_refuses_a_damaged_subsample_record(cached, subsample):
    layout, config = cached
    expect(0, "kept a random subsample", "validate", config, "--sample", "4")
    path = layout.derived_file("data_source.json")
    record = json.loads(path.read_text())
    path.write_text(json.dumps({**record, "subsample": json.loads(subsample)}))
    expect(2, "data_source.json is damaged", "rebuild", config)
    path.write_text(path.read_text()[:20])  # truncated: not read as "no subsample"
    expect(2, "data_source.json is damaged", "rebuild", config)
