"""Hostile inputs, second round, through the real CLI: each class of defect with a table of cases. Model-free:
stage files are synthetic (test_panel.synthetic_stage_files); where the environment cannot produce a failure here
(a full disk), the failing call is replaced, and the test says so."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lapbias.io import Layout, read_parquet, write_parquet
from test_bad_inputs import DATES, STUDY, expect, write_config
from test_panel import synthetic_stage_files


def _project(root, rescale: dict[str, float] | None = None) -> tuple[Layout, object]:
    layout = Layout(root)
    layout.make_dirs()
    inputs = synthetic_stage_files(layout, n_entities=20, dates=DATES)
    if rescale:
        for column, factor in rescale.items():
            if column == "outcome":
                inputs["outcome"] = inputs["outcome"] * factor
                write_parquet(inputs, layout.derived_file("input.parquet"))
            else:  # a recall column: LAP in other units
                recall = read_parquet(layout.derived_file("recall.parquet"))
                recall[column] = recall[column] * factor
                write_parquet(recall, layout.derived_file("recall.parquet"))
    return layout, write_config(root, STUDY)


def _estimate_and_report(layout: Layout, config) -> None:
    expect(0, "panel:", "panel", config)
    expect(0, "estimate (python engine)", "estimate", config)
    expect(0, "report:", "report", config)


# ---- units at the extremes: every standardization and descriptive is scale-free ------------------------------
@pytest.fixture(scope="module")
def unit_runs(tmp_path_factory):
    runs = {}
    for name, rescale in {"as is": None, "outcome x 1e300": {"outcome": 1e300},
                          "outcome x 1e-300": {"outcome": 1e-300}, "lap x 1e-300": {"lap": 1e-300}}.items():
        layout, config = _project(tmp_path_factory.mktemp("units"), rescale)
        _estimate_and_report(layout, config)
        runs[name] = layout
    return runs


@pytest.mark.parametrize("name, column, factor", [("outcome x 1e300", "outcome", 1e300),
                                                  ("outcome x 1e-300", "outcome", 1e-300),
                                                  ("lap x 1e-300", "lap", 1e-300)])
def test_standardizations_and_descriptives_do_not_see_units(unit_runs, name, column, factor):
    base, scaled = unit_runs["as is"].results, unit_runs[name].results
    b0, b1 = pd.read_csv(base / "bootstrap.csv"), pd.read_csv(scaled / "bootstrap.csv")
    assert b0["identified"].iloc[0] == 1 and b1["identified"].iloc[0] == 1, b1.to_dict("records")
    np.testing.assert_allclose(b1["p_boot"], b0["p_boot"], rtol=0, atol=1e-12)
    t0 = pd.read_csv(base / "table5.csv").query("term != '_cons'").set_index(["model", "term"])["t"]  # _cons: 0 + noise
    t1 = pd.read_csv(scaled / "table5.csv").query("term != '_cons'").set_index(["model", "term"])["t"]
    np.testing.assert_allclose(t1.loc[t0.index], t0, rtol=1e-9)
    d0 = pd.read_csv(base / "descriptive.csv").set_index(["sample", "variable"])
    d1 = pd.read_csv(scaled / "descriptive.csv").set_index(["sample", "variable"])
    for stat in ("mean", "sd"):
        np.testing.assert_allclose(d1.loc[(slice(None), column), stat] / factor,
                                   d0.loc[(slice(None), column), stat], rtol=1e-12)
    if column == "lap":
        l0 = pd.read_csv(base / "lap_distribution.csv").query("measure == 'lap_recall'")
        l1 = pd.read_csv(scaled / "lap_distribution.csv").query("measure == 'lap_recall'")
        np.testing.assert_allclose(l1["sd"].to_numpy() / factor, l0["sd"].to_numpy(), rtol=1e-12)
    m0 = pd.read_csv(base / "magnitudes.csv").set_index("quantity")["value"]
    m1 = pd.read_csv(scaled / "magnitudes.csv").set_index("quantity")["value"]
    np.testing.assert_allclose(m1["interaction_share_of_standalone"], m0["interaction_share_of_standalone"],
                               rtol=1e-9)


# ---- Table III from a CSV: the declared moderator is read as a number; the report lists only written tables ----
def _csv_project(tmp_path, rows: pd.DataFrame, extra: str = "") -> tuple[Layout, object]:
    path = tmp_path / "panel.csv"
    rows.to_csv(path, index=False)
    layout = Layout(tmp_path)
    layout.make_dirs()
    return layout, write_config(tmp_path, f'[data]\npath = "{path}"\n{STUDY}{extra}')


def _csv_rows(n_entities: int = 6, dates=DATES) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    return pd.DataFrame([{"row_id": f"E{e}-{d}", "entity_id": f"E{e}", "entity_name": f"Entity {e}", "ticker": f"E{e}",
                          "small": e % 2, "text": f"headline {e} {d}",
                          "text_date": f"{pd.Timestamp(d) - pd.Timedelta(days=1):%Y-%m-%d}", "target_date": d,
                          "outcome": round(float(rng.normal()), 4)}
                         for e in range(1, n_entities + 1) for d in dates])


def test_the_moderator_of_a_csv_is_validated_as_a_number(tmp_path):
    layout, config = _csv_project(tmp_path, _csv_rows())
    expect(0, "rows kept", "validate", config)
    validated = read_parquet(layout.derived_file("input.parquet"))
    assert pd.api.types.is_float_dtype(validated["small"]) and set(validated["small"]) == {0.0, 1.0}
    assert not pd.api.types.is_numeric_dtype(validated["entity_id"])  # other columns stay as written


def test_a_moderator_that_is_not_a_number_is_refused_naming_row_and_key(tmp_path):
    rows = _csv_rows().astype({"small": object})
    rows.loc[3, "small"] = "yes"
    _, config = _csv_project(tmp_path, rows)
    out = expect(2, "small: 1 value(s) are not finite numbers", "validate", config)
    assert "[estimate] moderator" in out and "row_id E1-2024-03-13" in out and "'yes'" in out


def test_the_report_names_only_the_extended_tables_it_wrote(tmp_path):
    layout, config = _project(tmp_path)
    inputs = read_parquet(layout.derived_file("input.parquet")).drop(columns="small")
    write_parquet(inputs, layout.derived_file("input.parquet"))
    _estimate_and_report(layout, config)
    report = (layout.results / "REPORT.md").read_text()
    assert not (layout.results / "table3.csv").exists()
    assert "Table III" not in report and "table3" not in report
    assert "Table V" in report


# ---- a row repeated under a new row_id is one observation --------------------------------------------------------
def test_a_row_repeated_under_another_row_id_is_dropped_and_counted(tmp_path):
    rows = _csv_rows()
    copy = rows.iloc[[5]].assign(row_id="COPY-1")
    layout, config = _csv_project(tmp_path, pd.concat([rows, copy], ignore_index=True))
    out = expect(0, "rows kept", "validate", config)
    assert "dropped 1 row" in out and f"repeats row_id {rows.at[5, 'row_id']}" in out and "COPY-1" in out
    assert len(read_parquet(layout.derived_file("input.parquet"))) == len(rows)


def test_identical_rows_without_row_ids_are_dropped_not_refused(tmp_path):
    rows = _csv_rows().drop(columns="row_id")
    layout, config = _csv_project(tmp_path, pd.concat([rows, rows.iloc[[2]]], ignore_index=True))
    expect(0, "dropped 1 row", "validate", config)
    assert len(read_parquet(layout.derived_file("input.parquet"))) == len(rows)
    other_outcome = pd.concat([rows, rows.iloc[[2]].assign(outcome=9.5)], ignore_index=True)
    _, config = _csv_project(tmp_path / "b", other_outcome) if (tmp_path / "b").mkdir() is None else (None, None)
    expect(2, "share entity_id, text_date (the day), target_date and text but differ in outcome", "validate", config)


# ---- column names: one rule from the schema for derived names, Stata-safe names in the .dta ----------------------
@pytest.mark.parametrize("name", ["censoring_bound", "lap_exact", "release_gap", "label_token", "exact", "n_samples",
                                  "p_up_topk", "period", "high_lap", "mu_hat", "run_id"])
def test_an_input_column_named_like_a_derived_column_is_refused(tmp_path, name):
    _, config = _csv_project(tmp_path, _csv_rows().assign(**{name: 1}))
    out = expect(2, f"{name!r}", "validate", config)
    assert "name of a column lapbias derives" in out


def test_every_column_a_stage_writes_is_a_derived_name(tmp_path):
    from lapbias import panel
    from lapbias.config import from_dict
    from lapbias.data import schema
    from lapbias.signals import forecast, minkprob, recall

    layout = Layout(tmp_path)
    layout.make_dirs()
    inputs = synthetic_stage_files(layout)
    built = panel.build(from_dict({"root": str(tmp_path), "study": {"cutoff": "2024-06-30"}}), layout).panel
    assert set(built.columns) - set(inputs.columns) <= set(schema.DERIVED)
    assert list(recall.COLUMNS) == list(schema.RECALL_COLUMNS)
    for module in (forecast, minkprob):  # the signal files are built from the schema's column lists
        assert "schema." in open(module.__file__).read()


def test_columns_stata_cannot_name_are_renamed_with_their_name_as_label(tmp_path):
    import pyreadstat

    rows = _csv_rows().assign(**{"Return next day": 0.5, "2nd_source": 1.0, "x" * 40: 2.0, "_cons": 3.0,
                                 "Größe": 4.0})
    layout, config = _csv_project(tmp_path, rows)
    synthetic_stage_files(Layout(tmp_path / "signals"), n_entities=6, dates=DATES)
    for name in ("forecast", "recall", "minkprob"):
        (layout.derived_file(f"{name}.parquet")).write_bytes((tmp_path / "signals" / "data" / "derived" /
                                                               f"{name}.parquet").read_bytes())
    expect(0, "rows kept", "validate", config)
    out = expect(0, "panel:", "panel", config)
    assert "renamed in panel_pre.dta" in out and "'Return next day' -> Return_next_day" in out
    frame, meta = pyreadstat.read_dta(layout.derived_file("panel_pre.dta"))
    labels = meta.column_names_to_labels
    assert labels["Return_next_day"] == "Return next day" and labels["_2nd_source"] == "2nd_source"
    assert labels["x" * 32] == "x" * 40 and labels["__cons"] == "_cons" and labels["Gr__e"] == "Größe"
    assert (frame["Return_next_day"] == 0.5).all()  # an extra CSV column of numbers is kept, as numbers


# ---- two runs at once: one project lock; a live run's staging folder is never removed ---------------------------
def _hold_lock(logs):
    """A second process holding the project's lock, as a running `lapbias` command does."""
    import subprocess
    import sys

    code = ("import sys, time; from pathlib import Path; from lapbias.stage import project_lock\n"
            "with project_lock(Path(sys.argv[1]), 'estimate'):\n    print('held', flush=True); time.sleep(60)\n")
    holder = subprocess.Popen([sys.executable, "-c", code, str(logs)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder


def test_a_second_command_on_a_busy_project_stops_at_once(estimated_copy):
    layout, config = estimated_copy
    before = sorted(p.name for p in layout.results.iterdir())
    holder = _hold_lock(layout.logs)
    try:
        for command in ("estimate", "panel", "report", "validate"):
            out = expect(2, "another lapbias run is using this folder", command, config)
            assert "`lapbias estimate` (pid" in out
    finally:
        holder.kill()
        holder.wait()
    assert sorted(p.name for p in layout.results.iterdir()) == before
    expect(0, "estimate (python engine)", "estimate", config)  # the lock went with its process


def test_a_live_runs_staging_folder_is_left_alone(estimated_copy):
    import subprocess
    import sys

    layout, config = estimated_copy
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        live = layout.results / f".estimate-staging-20260101T000000Z-00000000.{sleeper.pid}"
        dead = layout.results / ".estimate-staging-20250101T000000Z-00000000.999999999"
        for folder in (live, dead):
            folder.mkdir()
            (folder / "detection.csv").write_text("x\n")
        expect(0, "estimate (python engine)", "estimate", config)
        assert live.is_dir() and not dead.exists()
    finally:
        sleeper.kill()
        sleeper.wait()


@pytest.fixture()
def estimated_copy(tmp_path):
    layout, config = _project(tmp_path)
    _estimate_and_report(layout, config)
    return layout, config


# ---- outputs never overwrite inputs --------------------------------------------------------------------------------
def test_reghdfe_save_refuses_to_write_over_its_data(tmp_path):
    data = tmp_path / "data.csv"
    pd.DataFrame({"y": [1.0, 2, 3, 4, 5, 7], "x": [1.0, 0, 3, 2, 5, 4], "g": [1, 1, 2, 2, 3, 3]}).to_csv(data, index=False)
    before = data.read_bytes()
    expect(2, "--save", "reghdfe", data, "y", "x", "--save", data)
    expect(2, "would be written over", "reghdfe", data, "y", "x", "--save", tmp_path / "." / "data.csv")
    assert data.read_bytes() == before
    expect(0, "x", "reghdfe", data, "y", "x", "--save", tmp_path / "coef.csv")


def test_init_refuses_to_write_its_config_over_the_data(tmp_path):
    data = tmp_path / "panel.toml"  # a data file the config would be named after
    data.write_text("entity_id,text\n")
    before = data.read_bytes()
    expect(2, "would be written over", "init", data, "--output", data, "--force")
    assert data.read_bytes() == before


# ---- reghdfe's options checked before the library sees them ---------------------------------------------------------
@pytest.mark.parametrize("extra, fragment", [
    (("--absorb", "g", "--absorb", "g"), "absorb(g g): g given more than once"),
    (("--cluster", "g", "--cluster", "g"), "cluster(g g): g given more than once"),
])
def test_repeated_absorb_or_cluster_is_one_line(tmp_path, extra, fragment):
    data = tmp_path / "data.csv"
    rng = np.random.default_rng(1)
    pd.DataFrame({"y": rng.normal(size=40), "x": rng.normal(size=40), "g": np.repeat(np.arange(8), 5)}).to_csv(
        data, index=False)
    expect(2, fragment, "reghdfe", data, "y", "x", *extra)


def test_a_variable_named_cons_is_refused(tmp_path):
    data = tmp_path / "data.csv"
    rng = np.random.default_rng(1)
    pd.DataFrame({"y": rng.normal(size=20), "_cons": rng.normal(size=20)}).to_csv(data, index=False)
    expect(2, "a variable named _cons cannot enter the regression", "reghdfe", data, "y", "_cons")


def test_a_model_folder_without_a_model_is_named(tmp_path):
    layout, _ = _project(tmp_path)
    empty = tmp_path / "my_model"
    empty.mkdir()
    (empty / "notes.txt").write_text("weights to come")
    config = write_config(tmp_path, f'[model]\nmodel_id = "{empty}"\n{STUDY}')
    write_parquet(read_parquet(layout.derived_file("input.parquet")), layout.derived_file("input.parquet"))
    (layout.raw / "forecast.jsonl").unlink(missing_ok=True)
    out = expect(2, "is a folder that holds no Hugging Face model", "forecast", config, "--yes")
    assert "notes.txt" in out


# ---- prompts longer than the model's context are refused before anything is asked --------------------------------
@pytest.mark.parametrize("step", ["minkprob", "forecast"])
def test_a_text_longer_than_the_context_is_refused_before_any_query(tmp_path, step):
    layout, _ = _project(tmp_path)
    config = write_config(tmp_path, STUDY.replace("[study]", "[minkprob]\nscored_text = \"text\"\n[study]"))
    inputs = read_parquet(layout.derived_file("input.parquet"))
    inputs.loc[7, "text"] = " ".join(f"word{i}" for i in range(9000))  # well over SmolLM2's 8,192 tokens
    write_parquet(inputs, layout.derived_file("input.parquet"))
    out = expect(2, "longer than the model's context of 8,192 tokens", step, config, "--yes")
    assert f"row {inputs.loc[7, 'row_id']}" in out and "1 prompt(s)" in out and "nothing was asked" in out
    assert not layout.raw_file(step).exists() or layout.raw_file(step).stat().st_size == 0


# ---- the environment: a folder in the way, a file that cannot be written, a full disk -----------------------------
def _immutable(path):
    """chattr +i: even root cannot write there (the read-only folder a user meets); skipped where unsupported."""
    import subprocess

    if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not supported on this file system (the permission case needs it: tests run as root)")
    return lambda: subprocess.run(["chattr", "-i", str(path)], check=True)


@pytest.mark.parametrize("blocked", ["REPORT.md", "sample.csv", "figures/lap_hist.png"])
def test_a_folder_where_a_report_file_goes_is_one_line_and_nothing_moves(estimated_copy, blocked):
    layout, config = estimated_copy
    (layout.results / blocked).unlink()
    (layout.results / blocked).mkdir()
    before = {p.relative_to(layout.results): p.read_bytes() for p in layout.results.rglob("*") if p.is_file()}
    out = expect(2, blocked.split("/")[-1], "report", config)
    assert "Is a directory" in out and "a folder is in the way" in out
    after = {p.relative_to(layout.results): p.read_bytes() for p in layout.results.rglob("*") if p.is_file()}
    assert after == before  # run-stamped files (e.g. lap_distribution.csv) would carry the new run's id
    assert not list(layout.results.glob(".report-staging-*"))


def test_results_that_cannot_be_written_is_one_line(estimated_copy):
    layout, config = estimated_copy
    undo = _immutable(layout.results)
    try:
        out = expect(2, "cannot make the staging folder", "estimate", config)
        assert "Operation not permitted (EPERM)" in out and str(layout.results) in out
    finally:
        undo()


def test_a_log_that_cannot_be_appended_is_one_line(estimated_copy):
    layout, config = estimated_copy
    (layout.logs / "lapbias.log").touch()
    undo = _immutable(layout.logs / "lapbias.log")
    try:
        expect(2, "cannot append to the log", "report", config)
    finally:
        undo()


def _answers(n: int):
    from lapbias.llm.cache import Query

    return [(Query("forecast", "m", f"r{i}", f"prompt {i}", {"p": 1}),
             {"text": "up", "tokens": [[1, "up", -0.1]], "first_top": [[1, "up", -0.1]]}) for i in range(n)]


def test_answers_that_cannot_be_cached_are_kept_and_counted(tmp_path, monkeypatch):
    from lapbias.errors import CacheWriteError
    from lapbias.llm.cache import ResponseCache

    path = tmp_path / "forecast.jsonl"
    cache = ResponseCache(path)
    cache.append(_answers(2))
    undo = _immutable(path)
    try:
        with pytest.raises(CacheWriteError) as caught:
            ResponseCache(path).append(_answers(5)[2:])
    finally:
        undo()
    message = str(caught.value)
    assert "cannot append 3 new answer(s)" in message and "EPERM" in message and "2 answers cached before" in message
    kept = message.split("they are kept in ")[1].split(":")[0]
    path.write_text(path.read_text() + open(kept).read())  # what the message says to do
    assert len(ResponseCache(path)) == 5
    # a full disk, where the fallback cannot be written either: a test double for what cannot happen here
    import errno
    import tempfile

    def full(*_args, **_kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("lapbias.llm.cache.os.fsync", full)
    monkeypatch.setattr(tempfile, "mkstemp", full)
    with pytest.raises(CacheWriteError, match=r"these 1 answers are lost \(the 5 answers cached before are kept\)"):
        ResponseCache(path).append(_answers(6)[5:])


def test_a_symlinked_cache_cut_short_is_repaired_where_it_lives(tmp_path):
    from lapbias.llm.cache import ResponseCache

    shared = tmp_path / "shared"
    shared.mkdir()
    ResponseCache(shared / "forecast.jsonl").append(_answers(3))
    text = (shared / "forecast.jsonl").read_text()
    (shared / "forecast.jsonl").write_text(text[: len(text) - 20])  # the last line cut by a crash
    link = tmp_path / "project" / "forecast.jsonl"
    link.parent.mkdir()
    link.symlink_to(shared / "forecast.jsonl")
    with pytest.warns(UserWarning, match="dropped damaged line 3"):
        assert len(ResponseCache(link)) == 2
    assert link.is_symlink() and len(ResponseCache(shared / "forecast.jsonl")) == 2
    assert list(shared.glob("forecast.jsonl.damaged-*")) and not list(link.parent.glob("*.damaged-*"))
