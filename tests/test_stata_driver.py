"""The Stata driver against a labelled stand-in executable (tests/stata_standin/stata-mp, a test double: Stata cannot
exist on these machines). The stand-in writes what the do-files write -- esttab exports holding the Python engine's
numbers, notes, lapboot's draws and summary -- so the driver's side is tested for real: finding Stata, the batch
command, reading the exports back, a failing bootstrap keeping Steps 3-5, no stale result surviving an engine switch,
and the Stata bootstrap draws becoming results/bootstrap.csv."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyreadstat
import pytest
from click.testing import CliRunner

from lapbias import stages
from lapbias.cli import main
from lapbias.config import from_dict
from lapbias.errors import LapbiasError
from lapbias.estimate import stata
from lapbias.estimate.bootstrap import ABSORB, VARIABLES, in_sample_beta3, pairs_bootstrap
from lapbias.estimate.extended import standardize_within
from lapbias.estimate.protocol import estimate_panel
from lapbias.io import Layout
from lapbias.panel import build
from lapbias.stage import StaleResultsError, manifest_path
from test_panel import synthetic_stage_files

ROOT = Path(__file__).resolve().parents[1]
REPS = 40


def _standin(directory: Path, name: str = "stata-mp") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    wrapper = directory / name
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} {ROOT / 'tests/stata_standin/stata-mp'} \"$@\"\n")
    wrapper.chmod(0o755)
    return wrapper


def standin_table(table: pd.DataFrame) -> pd.DataFrame:
    """The rows the do-files export for `table`: lapvalid's fourth model, high_minus_low, is exported by esttab with
    every term of its regression (outcome on c.ud_dir_std#c.high_lap, ud_dir_std and reghdfe's _cons), of which the
    results contract keeps the interaction only; the two other rows get numbers of their own, so that one read back
    instead of the interaction is seen."""
    difference = table[table["model"] == "high_minus_low"]
    extra = [difference.assign(term=term, coef=difference["coef"] + shift) for term, shift in (("ud_dir_std", 1.0),
                                                                                                 ("_cons", 2.0))]
    return pd.concat([table, *extra], ignore_index=True)


@pytest.fixture(scope="module")
def panel_files(tmp_path_factory):
    """One synthetic panel (pre and post cutoff) for every test of this module, and what the stand-in reports for
    it: the Python engine's tables and a pairs bootstrap (REPS draws, seed 7, by entity, 3 draws unidentified)."""
    root = tmp_path_factory.mktemp("panel")
    layout = Layout(root)
    layout.make_dirs()
    config = from_dict({"root": str(root), "study": {"cutoff": "2024-06-30"}})
    dates = [f"2024-0{m}-1{d}" for m in (3, 4, 5) for d in range(5)] + [f"2024-{m}-1{d}" for m in (10, 11) for d in range(5)]
    synthetic_stage_files(layout, n_entities=25, dates=dates)
    build(config, layout)
    tables = root / "standin"
    boot = tables / f"boot-{REPS}-7-entity"
    boot.mkdir(parents=True)
    pre = pyreadstat.read_dta(str(layout.derived_file("panel_pre.dta")))[0]
    post = pyreadstat.read_dta(str(layout.derived_file("panel_post.dta")))[0]
    expected = estimate_panel(pre, post).tables
    for name, table in expected.items():
        standin_table(table).to_csv(tables / f"{name}.csv", index=False)
    pre, post = (standardize_within(frame.dropna(subset=VARIABLES + ABSORB).assign(post=0), VARIABLES)
                 for frame in (pre, post))
    result = pairs_bootstrap(post, in_sample_beta3(pre), B=REPS, seed=7, resample="entity", progress=False)
    draws = result.draws.copy()
    draws[:3] = np.nan  # as lapboot posts a draw whose interaction is omitted
    pyreadstat.write_dta(pd.DataFrame({"draw": np.arange(1, REPS + 1, dtype=np.int32), "beta3": draws}),
                         str(boot / "stata_bootstrap_draws.dta"))
    kept = draws[~np.isnan(draws)]
    pd.DataFrame([{"b3_in_sample": result.b3_in_sample, "p_boot": np.mean(kept >= result.b3_in_sample),
                   "p95": np.percentile(kept, 95, method="averaged_inverted_cdf"), "B": REPS, "seed": 7,
                   "resampling": "entity", "N": result.N, "n_unidentified": 3, "identified": 1, "note": "",
                   "method": "python"}]).to_csv(boot / "stata_bootstrap.csv", index=False)
    # 04_bootstrap.do when lapboot finds beta_3 not identified on the whole post-cutoff sample: the summary says so
    # (identified 0, the note), every draw missing (seed 8)
    unidentified = tables / f"boot-{REPS}-8-entity"
    unidentified.mkdir()
    pyreadstat.write_dta(pd.DataFrame({"draw": np.arange(1, REPS + 1, dtype=np.int32), "beta3": np.full(REPS, np.nan)}),
                         str(unidentified / "stata_bootstrap_draws.dta"))
    (unidentified / "stata_bootstrap.csv").write_text(
        "b3_in_sample,p_boot,p95,B,seed,resampling,N,n_unidentified,identified,note,method\n"
        f'{result.b3_in_sample!r},.,.,{REPS},8,entity,{result.N},{REPS},0,"lap has no variation in the bootstrap sample '
        '(every value .5): beta_3 is not identified",none\n')
    return root, expected


@pytest.fixture()
def project(tmp_path, monkeypatch, panel_files):
    source, _ = panel_files
    shutil.copytree(source / "data", tmp_path / "data")
    layout = Layout(tmp_path)
    layout.make_dirs()
    config = from_dict({"root": str(tmp_path), "study": {"cutoff": "2024-06-30"},
                        "estimate": {"bootstrap_reps": REPS, "bootstrap_seed": 7, "bootstrap_resample": "entity"}})
    bin_dir = _standin(tmp_path / "bin").parent
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("STANDIN_RECORD", str(tmp_path / "standin_args.txt"))
    monkeypatch.setenv("STANDIN_TABLES", str(source / "standin"))
    for name in ("STATA_PATH", "STANDIN_FAIL", "STANDIN_FAIL_BOOTSTRAP", "STANDIN_INESTIMABLE", "STANDIN_STEP_ERROR"):
        monkeypatch.delenv(name, raising=False)
    return config, layout


def test_auto_finds_the_executable_and_results_round_trip(project, panel_files):
    config, layout = project
    engine, install, message = stata.select_engine(config, "auto")
    assert engine == "stata" and install.kind == "batch" and "stata-mp" in message
    run = stata.run_stata(config, layout, install)
    ado, do = stata.stata_files()
    calls = (layout.root / "standin_args.txt").read_text().splitlines()
    d, r, lg = (str(p.resolve()) for p in (layout.derived, layout.results, layout.logs))
    # paths and the config's bootstrap settings reach the do-files as arguments (items 11, 16)
    assert calls == [f'-b do "{do}/master.do" "{d}" "{r}" "{lg}" "{ado}" "{do}" "-1" "entity_num"',
                     f'-b do "{do}/04_bootstrap.do" "{d}" "{r}" "{lg}" "{ado}" "{REPS}" "7" "entity" "{sys.executable}"']
    # batch logs and the do-files' own logs are distinct files (item 15)
    for log in ("stata_batch_master.log", "stata_batch_04_bootstrap.log", "stata_steps.log", "stata_bootstrap.log"):
        assert (layout.logs / log).exists(), log
    expected = panel_files[1]
    for name in ("validation", "detection", "placebo", "placebo_validation"):
        got = pd.read_csv(layout.results / f"{name}.csv")
        assert set(got["engine"]) == {"stata"}  # the high-minus-low validation test too: lapvalid's fourth model
        want = expected[name]
        assert list(got["term"]) == list(want["term"]) and list(got["model"]) == list(want["model"])
        for column in ("coef", "se", "t", "p", "p_one_sided", "ci_low", "ci_high", "N", "N_clust", "df_r", "r2"):
            # results/*.csv keep 10 significant digits (io.write_csv)
            np.testing.assert_allclose(got[column], want[column], rtol=1e-9, err_msg=f"{name}.{column}")
    assert set(run.tables) == {"validation", "detection", "placebo", "placebo_validation"} and run.failed == []


def test_batch_error_line_fails_with_the_log_excerpt(project, monkeypatch):
    config, layout = project
    monkeypatch.setenv("STANDIN_FAIL", "1")
    _, install, _ = stata.select_engine(config, "stata")
    with pytest.raises(stata.StataError, match=r"(?s)no detection table.*error r\(198\).*invalid syntax"):
        stata.run_stata(config, layout, install)


@pytest.mark.parametrize("table", ["validation", "placebo_validation", "placebo"])
def test_a_step_that_stops_for_an_error_stops_the_run(project, monkeypatch, table):
    """Review W1: an error that is not a data outcome (here require's r(2226), reghdfe next to an older ftools) must
    stop the run with its message, not become a verdict. The do-files now raise such an error instead of noting the
    model "not estimable"; master.do notes the step as `error`, and the driver stops with it (the bootstrap alone
    stays a note that keeps Steps 3-5)."""
    config, layout = project
    monkeypatch.setenv("STANDIN_STEP_ERROR", table)
    with pytest.raises(stata.StataError, match=rf"{table}: do/0\d_\w+\.do stopped with r\(2226\).*stata_steps.log"):
        stata.run_stata(config, layout, stata.select_engine(config, "stata")[1])


def test_failing_bootstrap_keeps_steps_3_to_5(project, monkeypatch):
    config, layout = project
    monkeypatch.setenv("STANDIN_FAIL_BOOTSTRAP", "1")
    _, install, _ = stata.select_engine(config, "stata")
    run = stata.run_stata(config, layout, install)
    assert run.failed == ["bootstrap"]
    for name in ("validation", "detection", "placebo", "placebo_validation"):
        assert (layout.results / f"{name}.csv").exists(), name
    assert not (layout.results / "bootstrap.csv").exists()
    notes = pd.read_csv(layout.results / "estimation_notes.csv")
    row = notes[notes["model"] == "bootstrap"].iloc[0]
    assert row["kind"] == "error" and "04_bootstrap.do failed" in row["detail"] and "r(603)" in row["detail"]


def test_an_inestimable_half_is_a_note_and_the_other_models_stay(project, monkeypatch):
    config, layout = project
    monkeypatch.setenv("STANDIN_INESTIMABLE", "high_lap")
    stata.run_stata(config, layout, stata.select_engine(config, "stata")[1])
    assert sorted(set(pd.read_csv(layout.results / "validation.csv")["model"])) == ["high_minus_low", "low_lap",
                                                                                   "pooled"]
    notes = pd.read_csv(layout.results / "estimation_notes.csv")
    assert "not estimable in Stata, r(2001)" in notes.set_index("model").loc["validation:high_lap", "detail"]


def test_the_stata_engine_carries_the_python_engines_wild_bootstrap_p_values(project):
    """The do-files have no wild cluster bootstrap: the Python engine computes it on the same exported panel
    (panel_pre.dta, panel_post.dta), so detection.csv and placebo.csv carry the columns of either engine with the
    same values, and REPORT.md says where they come from."""
    config, layout = project
    stata.run_stata(config, layout, stata.select_engine(config, "stata")[1])
    pre, post = (pyreadstat.read_dta(str(layout.derived_file(f"panel_{s}.dta")))[0] for s in ("pre", "post"))
    python = estimate_panel(pre, post, wild_reps=config.estimate.wild_bootstrap_reps,
                            wild_seed=config.estimate.bootstrap_seed).tables
    for name in ("detection", "placebo"):
        got = pd.read_csv(layout.results / f"{name}.csv").set_index("term")
        want = python[name].set_index("term")
        assert got.loc["c.mu_hat#c.lap", "engine"] == "stata"
        for column in ("p_wild", "p_wild_one_sided"):
            assert got.loc["c.mu_hat#c.lap", column] == pytest.approx(want.loc["c.mu_hat#c.lap", column], rel=1e-9)
            assert got.drop(index="c.mu_hat#c.lap")[column].isna().all()
    from lapbias.report import write_report

    report = write_report(config, layout).read_text()
    assert "Computed by the Python engine on the same exported panel" in report


def test_the_validation_difference_test_is_read_from_statas_own_export(project, panel_files):
    """Review C3: the verdict's validation pattern reads theta_high - theta_low (model high_minus_low), which the
    Python engine used to add to the Stata engine's tables. lapvalid now estimates it as its fourth model and
    01_validation.do exports it (esttab: every term of the regression); the driver keeps the interaction, the
    contract's one row, with engine stata, and the Python engine adds no row of its own."""
    config, layout = project
    stata.run_stata(config, layout, stata.select_engine(config, "stata")[1])
    for name in ("validation", "placebo_validation"):
        got = pd.read_csv(layout.results / f"{name}.csv")
        want = panel_files[1][name]
        got, want = got[got["model"] == "high_minus_low"], want[want["model"] == "high_minus_low"]
        assert len(got) == 1 and list(got["term"]) == list(want["term"]) and list(got["engine"]) == ["stata"]
        assert got["term"].iloc[0] == "c.ud_dir_std#c.high_lap"  # on the recalled direction, as both engines
        for column in ("coef", "se", "p_one_sided", "N", "N_clust", "df_r"):
            np.testing.assert_allclose(got[column], want[column], rtol=1e-9, err_msg=f"{name}.{column}")


def test_stata_bootstrap_draws_become_results_bootstrap_csv(project):
    config, layout = project
    stata.run_stata(config, layout, stata.select_engine(config, "stata")[1])
    draws = pyreadstat.read_dta(str(layout.results / "stata_bootstrap_draws.dta"))[0]["beta3"].to_numpy()
    summary = pd.read_csv(layout.results / "bootstrap.csv").iloc[0]
    kept = draws[~np.isnan(draws)]
    assert (summary["engine"], summary["B"], summary["seed"], summary["resampling"]) == ("stata", REPS, 7, "entity")
    assert summary["n_unidentified"] == 3 and summary["standardized"] == 1
    assert summary["p_boot"] == pytest.approx(np.mean(kept >= summary["b3_in_sample"]), rel=1e-9)
    assert summary["p95"] == pytest.approx(np.percentile(kept, 95, method="averaged_inverted_cdf"), rel=1e-9)
    written = pd.read_csv(layout.results / "bootstrap_draws.csv")
    assert list(written["draw"]) == list(range(1, REPS + 1)) and written["beta3"].isna().sum() == 3
    np.testing.assert_allclose(written["beta3"][3:], draws[3:], rtol=1e-9)
    assert (layout.figures / "bootstrap.png").stat().st_size > 0
    notes = pd.read_csv(layout.results / "estimation_notes.csv")
    assert not (notes["model"] == "bootstrap").any(), "lapboot's own summary agrees with the draws"


def test_no_stale_result_survives_an_engine_switch(project):
    config, layout = project
    for name in ("stata_detection.csv", "stata_bootstrap_draws.dta", "stata_notes.csv"):  # from an earlier Stata run
        (layout.results / name).write_text("stale")
    stages.estimate(config, engine="python")
    assert not list(layout.results.glob("stata_*")), "the Python engine removes the Stata engine's files too"
    for name in ("placebo.csv", "table2.csv", "table5.csv", "bootstrap.csv"):
        assert (layout.results / name).exists(), name
    layout.derived_file("panel_post.dta").unlink()  # this Stata run can write no placebo and no bootstrap
    manifest = manifest_path(layout.derived, "panel")  # as `lapbias panel` leaves a panel without post-cutoff rows
    record = json.loads(manifest.read_text())
    del record["files"]["panel_post.dta"]
    manifest.write_text(json.dumps(record))
    stages.estimate(config, engine="stata")
    for name in ("placebo.csv", "placebo_validation.csv", "table2.csv", "table5.csv", "bootstrap.csv",
                 "bootstrap_draws.csv", "figures/bootstrap.png", "extended_notes.csv"):
        assert not (layout.results / name).exists(), f"stale {name} from the Python run survived"
    for path in layout.results.glob("*.csv"):
        table = pd.read_csv(path)
        if "engine" in table.columns:  # every table, the validation difference test included
            assert set(table["engine"]) == {"stata"}, path.name
    from lapbias.report import write_report

    report = write_report(config, layout).read_text()
    assert "Source: `results/detection.csv`, LaTeX `results/detection.tex`; engine: stata." in report
    assert "engine: python." not in report and "engine: python, stata." not in report


def test_the_stata_engine_refuses_dta_files_changed_since_panel(project):
    """Re-review finding: the Stata engine estimates on panel_pre.dta and panel_post.dta, which estimate did not
    check: a .dta re-saved in Stata (or left by another panel run) was estimated, and the results recorded under
    panel.parquet's sha256. The panel's manifest lists them with their sha256; the Python engine reads only
    panel.parquet."""
    config, layout = project
    path = layout.derived_file("panel_pre.dta")
    frame, _ = pyreadstat.read_dta(str(path))
    frame.loc[0, "outcome"] += 1.0
    pyreadstat.write_dta(frame, str(path))
    with pytest.raises(StaleResultsError, match="panel_pre.dta changed since panel run .*; rerun `lapbias panel`"):
        stages.estimate(config, engine="stata")
    assert not (layout.results / "detection.csv").exists()
    stages.estimate(config, engine="python")


def test_engine_choice_without_stata_lists_what_was_tried(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("STATA_PATH", raising=False)
    config = from_dict({})
    assert stata.select_engine(config, "auto")[0] == "python"
    with pytest.raises(LapbiasError, match="--engine stata: no Stata found; tried") as err:
        stata.select_engine(config, "stata")
    for place in ("stata-mp on PATH", "StataMP-64.exe on PATH", "/usr/local/stata*/stata-mp",
                  "/Applications/Stata*/StataMP.app/Contents/MacOS/stata-mp", "C:/Program Files/Stata*/StataMP-64.exe"):
        assert place in str(err.value)


def test_stata_path_forms(tmp_path, monkeypatch):
    """STATA_PATH: Stata 17+ directory -> pystata; Stata 15/16 directory -> batch; a macOS bundle; an executable."""
    config = from_dict({})
    modern, old, mac = tmp_path / "stata18", tmp_path / "stata16", tmp_path / "Stata"
    (modern / "utilities" / "pystata").mkdir(parents=True)
    _standin(modern, "stata-mp")
    _standin(old, "stata-se")
    _standin(mac / "StataMP.app" / "Contents" / "MacOS", "stata-mp")
    monkeypatch.setenv("STATA_PATH", str(modern))
    assert stata.find_stata(config) == stata.StataInstall("pystata", str(modern), "mp", str(modern / "stata-mp"))
    monkeypatch.setenv("STATA_PATH", str(old))
    assert stata.find_stata(config).kind == "batch" and stata.find_stata(config).location == str(old / "stata-se")
    monkeypatch.setenv("STATA_PATH", str(mac))
    assert stata.find_stata(config).location.endswith("StataMP.app/Contents/MacOS/stata-mp")
    monkeypatch.setenv("STATA_PATH", str(old / "stata-se"))
    assert stata.find_stata(config).kind == "batch"
    monkeypatch.setenv("STATA_PATH", str(tmp_path / "nowhere"))
    with pytest.raises(LapbiasError, match="neither a directory nor an executable"):
        stata.find_stata(config)
    do = Path("/x/do/master.do")
    assert stata.batch_command("C:/Program Files/Stata18/StataMP-64.exe", do, ["a b"])[1:] == ["/e", "do", '"/x/do/master.do"', '"a b"']
    assert stata.batch_command("/usr/local/stata18/stata-mp", do, [])[1] == "-b"


def test_pystata_that_cannot_start_falls_back_to_batch(project, monkeypatch):
    """Stata 17+ directory whose pystata cannot start (here: stata_setup is not installed) runs in batch mode."""
    config, layout = project
    modern = layout.root / "stata18"
    (modern / "utilities" / "pystata").mkdir(parents=True)
    _standin(modern, "stata-mp")
    monkeypatch.setenv("STATA_PATH", str(modern))
    engine, install, _ = stata.select_engine(config, "stata")
    assert install.kind == "pystata"
    run = stata.run_stata(config.replace(estimate={"bootstrap_reps": 0}), layout, install)
    assert "detection" in run.tables and (layout.logs / "stata_batch_master.log").exists()


def test_esttab_excel_quoting_is_read(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text('="",="pre",="",="",="",="",=""\n="",="b",="se",="t",="p",="ci_l",="ci_u"\n'
                    '="c.mu_hat#c.lap",="0.5",="0.2",="2.5",="0.02",="0.1",="0.9"\n="N",="100",,,,,\n'
                    '="p_one",="0.01",,,,,\n')
    table = stata.parse_esttab_csv(path)
    row = table.iloc[0]
    assert len(table) == 1 and (row["model"], row["term"], row["coef"], row["N"]) == ("pre", "c.mu_hat#c.lap", 0.5, 100)
    assert row["p_one_sided"] == pytest.approx(0.01)


def test_stata_install_names_the_installed_files(tmp_path):
    result = CliRunner().invoke(main, ["stata-install", "--copy-to", str(tmp_path / "st")])
    assert result.exit_code == 0, result.output
    ado = (tmp_path / "st" / "ado").resolve()
    assert f'net install lapbias, from("{ado}") replace' in result.output
    assert f'do "{tmp_path.resolve() / "st" / "do" / "master.do"}" "data/derived" "results" "logs"' in result.output
    # the bootstrap line names this Python, where lapbias is installed: lapboot's fast path (Stata 16+) imports it
    assert f'"{ado}" 10000 20251222 obs "{sys.executable}"' in result.output
    assert {"lapbias.pkg", "stata.toc", "lapbias.ado", "lapbias.sthlp"} <= {p.name for p in ado.iterdir()}


def test_setup_ships_ado_and_do_as_package_data():
    """`pip install .` puts ado/ and do/ into lapbias/stata_ado and lapbias/stata_do (estimate/stata.py
    stata_files), so an installed lapbias finds them without a source checkout: every file of ado/ and do/ matches
    a package_data pattern (a wheel built from this setup.py was checked to hold all 22 files)."""
    import ast
    import fnmatch

    call = next(node for node in ast.walk(ast.parse((ROOT / "setup.py").read_text()))
                if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "setup")
    kwargs = {k.arg: k.value for k in call.keywords}
    package_dir, package_data = ast.literal_eval(kwargs["package_dir"]), ast.literal_eval(kwargs["package_data"])
    assert "lapbias.stata_ado" in ast.unparse(kwargs["packages"]) and "lapbias.stata_do" in ast.unparse(kwargs["packages"])
    for package, folder in (("lapbias.stata_ado", "ado"), ("lapbias.stata_do", "do")):
        assert package_dir[package] == folder
        for path in (ROOT / folder).iterdir():
            assert any(fnmatch.fnmatch(path.name, pattern) for pattern in package_data[package]), path.name


def _fake_pystata(folder: Path, monkeypatch) -> None:
    """A test double of stata_setup and pystata on sys.path, labelled as such (the real ones ship with Stata 17+, which
    cannot be installed here). As the real pystata, Stata runs inside this Python process, which has one working
    directory: `cd "<dir>"` is a real os.chdir, and a do-file that changes directory (FAKE_DOFILE_CD) changes this
    process's. A `do` command is carried out by the Stata stand-in (tests/stata_standin/stata-mp, its run_do);
    FAKE_PYSTATA_FAIL makes it fail as pystata reports a Stata error (SystemError)."""
    (folder / "pystata").mkdir(parents=True)
    (folder / "stata_setup.py").write_text("CALLS = []\ndef config(path, edition, splash=True):\n"
                                           "    CALLS.append(('config', path, edition, splash))\n")
    (folder / "pystata" / "__init__.py").write_text("")
    (folder / "pystata" / "stata.py").write_text(f"""\
\"\"\"TEST DOUBLE of pystata.stata (Stata runs inside this process; its cd is this process's chdir).\"\"\"
import importlib.util
import os
import shlex
from importlib.machinery import SourceFileLoader

_LOADER = SourceFileLoader("stata_standin", {str(ROOT / "tests" / "stata_standin" / "stata-mp")!r})
STANDIN = importlib.util.module_from_spec(importlib.util.spec_from_loader("stata_standin", _LOADER))
_LOADER.exec_module(STANDIN)
COMMANDS = []


def run(cmd, quietly=False, echo=False, inline=None):
    COMMANDS.append((cmd, quietly, echo))
    words = shlex.split(cmd)
    if words[0] == "cd":
        os.chdir(words[1])
    elif words[0] == "do":
        if os.environ.get("FAKE_DOFILE_CD"):
            os.chdir(os.environ["FAKE_DOFILE_CD"])
        print("HDFE Linear regression (TEST DOUBLE: pystata prints Stata's output through Python's stdout)")
        if os.environ.get("FAKE_PYSTATA_FAIL"):
            raise SystemError("variable outcome not found\\nr(111);")
        STANDIN.run_do(words[1], words[2:])
""")
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setattr(stata, "_PYSTATA", {})


@pytest.fixture()
def pystata_project(project, tmp_path, monkeypatch):
    """The project with STATA_PATH naming a Stata 17+ folder (utilities/pystata) and the pystata test double."""
    config, layout = project
    _fake_pystata(tmp_path / "fake_pystata", monkeypatch)
    modern = tmp_path / "stata18"
    (modern / "utilities" / "pystata").mkdir(parents=True)
    monkeypatch.setenv("STATA_PATH", str(modern))
    for name in ("FAKE_DOFILE_CD", "FAKE_PYSTATA_FAIL"):
        monkeypatch.delenv(name, raising=False)
    yield config, layout, modern
    for name in ("stata_setup", "pystata", "pystata.stata", "stata_standin"):
        sys.modules.pop(name, None)


def test_pystata_leaves_the_working_directory_of_lapbias_where_it_was(pystata_project, tmp_path, monkeypatch, capsys):
    """Review F1: under pystata, Stata runs inside the lapbias process, so the driver's `cd "<logs>"` moved lapbias
    itself into logs/: with the default root "." every relative path after Stata finished pointed into logs/ (the
    panel read for the report's labels, the log appended to) and `lapbias estimate --engine stata` failed after Stata
    had done its work. No cd is sent, and a do-file that changes directory does not move lapbias either. Review N13:
    the do-files run quietly (their named logs are the record), as batch mode prints nothing."""
    config, layout, modern = pystata_project
    monkeypatch.chdir(layout.root)
    relative = config.replace(root=".")  # the default: every path of the project relative to the working directory
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.setenv("FAKE_DOFILE_CD", str(elsewhere))
    stages.estimate(relative, engine="stata")
    from pystata import stata as fake_stata

    assert Path.cwd() == layout.root
    assert (layout.results / "detection.csv").exists() and (layout.results / "bootstrap.csv").exists()
    assert [cmd for cmd, _, _ in fake_stata.COMMANDS if cmd.startswith("cd ")] == []
    runs = [(cmd, quietly) for cmd, quietly, _ in fake_stata.COMMANDS if cmd.startswith("do ")]
    ado, do = stata.stata_files()
    assert [cmd.split('"')[1] for cmd, _ in runs] == [str(do / "master.do"), str(do / "04_bootstrap.do")]
    assert all(quietly for _, quietly in runs)
    assert "HDFE Linear regression" not in capsys.readouterr().out, \
        "Stata review round 5, N13: pystata's output reached the terminal of lapbias estimate"


def test_pystata_maps_statas_errors_and_still_restores_the_working_directory(pystata_project, monkeypatch, capsys):
    """A Stata error (pystata raises SystemError) becomes a StataError naming the do-file; the working directory is
    the one lapbias had, also after a do-file that changed it."""
    config, layout, modern = pystata_project
    install = stata.StataInstall("pystata", str(modern), "se", "")
    monkeypatch.chdir(layout.root)
    monkeypatch.setenv("FAKE_DOFILE_CD", str(layout.logs))
    monkeypatch.setenv("FAKE_PYSTATA_FAIL", "1")
    with pytest.raises(stata.StataError, match=r"(?s)error in master.do.*r\(111\).*Stata's last lines:\nHDFE"):
        stata._run(install, layout.logs, Path("/x/do/master.do"), ["a b", "c"])
    assert "HDFE" not in capsys.readouterr().out  # captured, and shown in the error instead
    import stata_setup

    assert stata_setup.CALLS == [("config", str(modern), "se", False)]
    assert Path.cwd() == layout.root


def test_bootstrap_without_identified_draws_reads_statas_missing_values(tmp_path):
    """Review: when no draw identifies beta_3, lapboot's r(p_boot) and r(p95) are missing and 04_bootstrap.do writes
    them as Stata's "." (strofreal of missing); pandas reads "." as text, and comparing it with the draws' NaN raised a
    TypeError (a traceback, not a note). A 10-digit seed must come back exactly (written %21.0g, not e-notation)."""
    results = tmp_path / "results"
    (results / "figures").mkdir(parents=True)
    pyreadstat.write_dta(pd.DataFrame({"draw": np.arange(1, 6, dtype=np.int32), "beta3": np.full(5, np.nan)}),
                         str(results / "stata_bootstrap_draws.dta"))
    (results / "stata_bootstrap.csv").write_text("b3_in_sample,p_boot,p95,B,seed,resampling,N,n_unidentified,"
                                                 "identified,note,method\n"
                                                 ".4142135623730951,.,.,5,2147483647,obs,120,5,1,,reghdfe\n")
    run = stata.StataRun()
    stata._write_bootstrap(results, run)
    summary = pd.read_csv(results / "bootstrap.csv").iloc[0]
    assert np.isnan(summary["p_boot"]) and np.isnan(summary["p95"]) and summary["n_unidentified"] == 5
    assert summary["seed"] == 2147483647 and summary["b3_in_sample"] == pytest.approx(0.4142135623730951, rel=1e-9)
    assert [n for n in run.notes if "differs" in n["detail"]] == [], "missing in both is agreement, not a difference"
    boot = (ROOT / "do" / "04_bootstrap.do").read_text()
    between = boot.split("\tlapboot outcome", 1)[1].split("file open", 1)[0]  # r() read before any other command
    assert 'local line `line\',`=strofreal(r(`r\'), "%21.0g")\'' in between, "file write's default shows ~9 digits"
    fields = re.findall(r"foreach r in ([\w ]+) \{", between)
    assert fields == ["p_boot p95 reps seed", "N n_unidentified identified"] and "local line `line',`resample'" in between
    assert "local line `line',\"`r(note)'\",`r(method)'" in between
    header = '"' + ",".join(stata.BOOTSTRAP_SUMMARY) + '" _n `"`line\'"\' _n'
    assert header in boot, "the do-file writes the columns the driver reads"


def test_windows_batch_mode_passes_one_command_line_with_plain_quotes(tmp_path, monkeypatch):
    """Review: the batch arguments carry Stata's own double quotes ('"C:/My Project/do/master.do"'). Given as a list
    on Windows, subprocess (list2cmdline) escapes them as \\" and Stata reads the backslashes as part of the file name;
    on Windows the command line is therefore handed over as one string, quotes as Stata expects them."""
    seen = []

    def fake_run(command, cwd, **kwargs):
        seen.append(command)
        (Path(cwd) / "master.log").write_text(". do master.do\nend of do-file\n")

    monkeypatch.setattr(stata.subprocess, "run", fake_run)
    monkeypatch.setattr(stata.sys, "platform", "win32")
    exe, do_file = "C:/Program Files/Stata18/StataMP-64.exe", Path("C:/My Project/do/master.do")
    stata._run_batch(exe, tmp_path, do_file, ["C:/My Project/data/derived", "-1"])
    assert seen == [f'"{exe}" /e do "{do_file}" "C:/My Project/data/derived" "-1"']
    monkeypatch.setattr(stata.sys, "platform", "linux")
    stata._run_batch("/usr/local/stata18/stata-mp", tmp_path, do_file, ["a b"])
    assert seen[1] == ["/usr/local/stata18/stata-mp", "-b", "do", f'"{do_file}"', '"a b"']


def test_an_inestimable_detection_is_an_empty_table_and_an_underpowered_report(project, monkeypatch):
    """docs/contracts.md: detection.csv is always written, without rows when the regression cannot be estimated,
    and the notes say why; Stata used to stop with an error and no report where the Python engine reports."""
    from lapbias.report import write_report

    config, layout = project
    monkeypatch.setenv("STANDIN_INESTIMABLE", "pre")
    stata.run_stata(config, layout, stata.select_engine(config, "stata")[1])
    assert pd.read_csv(layout.results / "detection.csv").empty
    notes = pd.read_csv(layout.results / "estimation_notes.csv").set_index("model")
    assert notes.loc["detection:pre", "kind"] == "failed"
    assert "**Verdict: Underpowered.**" in write_report(config, layout).read_text()


def test_an_omitted_term_in_esttab_is_a_row_with_empty_estimates(tmp_path):
    """esttab keeps an omitted term as b = 0 without a standard error: read back as omitted (empty estimates, as the
    Python engine writes it), not as an estimate of 0."""
    path = tmp_path / "t.csv"
    path.write_text('"","low_lap","","","","",""\n"","b","se","t","p","ci_l","ci_u"\n'
                    '"ud","0",".",".",".","0","0"\n"N","50",,,,,\n')
    row = stata.parse_esttab_csv(path).iloc[0]
    assert (row["model"], row["term"], row["N"]) == ("low_lap", "ud", 50)
    assert row[["coef", "se", "t", "p", "p_one_sided"]].isna().all()


def test_a_bootstrap_stata_finds_not_identified_is_written_as_the_python_engine_writes_it(project):
    """Review W4: a post-cutoff variable without variation made 04_bootstrap.do stop (0/0 z-scores, no rows) and the
    driver note "bootstrap failed", where the Python engine reports the bootstrap as not identified. lapboot now
    says so (identified 0, the note, no draw); the driver writes what the Python engine writes: bootstrap.csv with
    identified = 0 and the note, no draws file, no figure, and a `failed` note "the pairs bootstrap is not
    identified: ..." (the words of the Python engine, stages.protocol)."""
    from lapbias.estimate.bootstrap import BootstrapResult

    config, layout = project
    config = config.replace(estimate={"bootstrap_seed": 8})
    run = stata.run_stata(config, layout, stata.select_engine(config, "stata")[1])
    assert "bootstrap" not in run.failed
    summary = pd.read_csv(layout.results / "bootstrap.csv")
    python_columns = list(BootstrapResult(np.full(2, np.nan), 0.1, 2, 8, "entity", 10).summary().columns)
    assert list(summary.columns) == python_columns + ["engine"]
    row = summary.iloc[0]
    assert (row["identified"], row["n_unidentified"], row["B"], row["engine"]) == (0, REPS, REPS, "stata")
    assert np.isnan(row["p_boot"]) and np.isnan(row["p95"]) and "lap has no variation" in row["note"]
    assert not (layout.results / "bootstrap_draws.csv").exists() and not (layout.figures / "bootstrap.png").exists()
    notes = pd.read_csv(layout.results / "estimation_notes.csv")
    boot = notes[notes["model"] == "bootstrap"]
    assert list(boot["kind"]) == ["failed"]
    assert boot["detail"].iloc[0].startswith("the pairs bootstrap is not identified: lap has no variation")


def test_a_collapsed_post_cutoff_lap_passes_the_placebo_in_both_engines(project, panel_files, tmp_path, monkeypatch):
    """Review W1 (the contract between the do-files and the driver): a post-cutoff LAP constant within the fixed
    effects leaves lap and beta_3 omitted. lapbias used to stop with r(498), so 02_detection.do wrote no placebo and
    the verdict read "placebo infeasible" (Mixed/invalid) where the Python engine's collapse rule passes it. Now the
    do-files export the model with its omitted rows as esttab writes them (b = 0, no standard error); read back, the
    verdict's placebo check is the Python engine's: collapsed, passes."""
    from lapbias.report.verdict import placebo_check

    config, layout = project
    pre = pyreadstat.read_dta(str(layout.derived_file("panel_pre.dta")))[0]
    post = pyreadstat.read_dta(str(layout.derived_file("panel_post.dta")))[0].assign(lap=0.25)
    python = estimate_panel(pre, post)
    placebo = python.tables["placebo"].set_index("term")
    assert placebo.loc[["lap", "c.mu_hat#c.lap"], "coef"].isna().all(), "the collapse this test is about"
    tables = tmp_path / "collapsed"
    shutil.copytree(panel_files[0] / "standin", tables)
    for name, table in python.tables.items():
        table.to_csv(tables / f"{name}.csv", index=False)
    monkeypatch.setenv("STANDIN_TABLES", str(tables))
    stata.run_stata(config.replace(estimate={"bootstrap_reps": 0}), layout, stata.select_engine(config, "stata")[1])
    got = pd.read_csv(layout.results / "placebo.csv")
    assert list(got["term"]) == list(python.tables["placebo"]["term"])
    assert got.set_index("term").loc[["lap", "c.mu_hat#c.lap"], ["coef", "se", "p_one_sided"]].isna().all().all()
    notes = pd.read_csv(layout.results / "estimation_notes.csv")
    feasible, passes, sentence = placebo_check(got, notes, 0.10)
    python_notes = pd.DataFrame(python.notes, columns=["model", "kind", "detail"])
    assert (feasible, passes, sentence) == placebo_check(python.tables["placebo"], python_notes, 0.10)
    assert passes and "collapsed" in sentence


def test_bootstrap_seed_is_one_statas_set_seed_takes():
    """Review F4: a bootstrap_seed above 2^31 - 1 passed the config and stopped the Stata bootstrap (set seed takes
    0 to 2147483647); the config refuses it, naming the key and the bound."""
    from lapbias.errors import ConfigError

    assert from_dict({"estimate": {"bootstrap_seed": 2**31 - 1}}).estimate.bootstrap_seed == 2147483647
    with pytest.raises(ConfigError, match=r"^\[estimate\] bootstrap_seed = 2147483648; it must be <= 2147483647"):
        from_dict({"estimate": {"bootstrap_seed": 2**31}})


def test_lapboots_fast_path_draws_are_the_python_engines(tmp_path):
    """Review C3: lapboot ran a full reghdfe per draw (15-60 minutes for 10,000 draws, silent). On Stata 16+ it saves
    the pool and calls lapbias.estimate.lapboot_kernel.write_draws through Stata's Python: the draws are the Python
    engine's pairs bootstrap on those rows, for any variable names, a string fixed effect, and resampling whole
    levels of the first fixed effect (lapboot puts its cluster() variable first)."""
    from lapbias.estimate import lapboot_kernel

    rng = np.random.default_rng(3)
    n = 300
    pool = pd.DataFrame({"ret": rng.normal(size=n), "fc": rng.choice([-1.0, 1.0], n),
                         "mink": rng.uniform(0, 1e-8, n), "firm": [f"F{i % 23}" for i in range(n)],
                         "day": rng.integers(1, 15, n).astype(np.int32), "other": 1.0})
    path = tmp_path / "pool.dta"
    pyreadstat.write_dta(pool, str(path))
    for resample in ("obs", "entity"):
        out = tmp_path / f"draws-{resample}.dta"
        lapboot_kernel.write_draws(str(path), str(out), "ret fc mink firm day", resample, 25, 11)
        written = pyreadstat.read_dta(str(out))[0]
        assert list(written["draw"]) == list(range(1, 26))
        sample = pool.rename(columns={"ret": "outcome", "fc": "mu_hat", "mink": "lap", "firm": "entity_num",
                                      "day": "period_num"})
        expected = pairs_bootstrap(sample, 0.0, B=25, seed=11, resample=resample, progress=False).draws
        np.testing.assert_array_equal(written["beta3"].to_numpy(), expected)
        assert np.isfinite(expected).sum() > 20
    with pytest.raises(LapbiasError, match="takes depvar forecast lap fe1 fe2"):
        lapboot_kernel.bootstrap(pool, ["ret", "fc", "mink", "firm"], "obs", 5, 1)


def test_lapboots_fast_path_says_why_beta3_is_not_identified(tmp_path):
    """Review N9: when the kernel's own check (pairs_bootstrap) finds beta_3 not identified, its draws came back all
    missing and lapboot reported r(identified) = 1 with no note. The draws file now carries the kernel's reason in a
    variable `note` (lapboot reads it into r(note) and drops it), the words of the Python engine's bootstrap.csv."""
    from lapbias.estimate import lapboot_kernel

    rng = np.random.default_rng(7)
    n = 60
    pool = pd.DataFrame({"y": rng.normal(size=n), "f": rng.choice([-1.0, 1.0], n), "l": 0.5,
                         "e": np.arange(n) % 6, "t": np.arange(n) % 5})
    path, out = tmp_path / "pool.dta", tmp_path / "draws.dta"
    pyreadstat.write_dta(pool, str(path))
    lapboot_kernel.write_draws(str(path), str(out), "y f l e t", "obs", 8, 3)
    written = pyreadstat.read_dta(str(out))[0]
    expected = pairs_bootstrap(pool.set_axis(VARIABLES + ABSORB, axis=1), 0.0, B=8, seed=3, progress=False)
    assert not expected.identified and list(written["draw"]) == list(range(1, 9)) and written["beta3"].isna().all()
    assert set(written["note"]) == {expected.reason} and "has no variation" in expected.reason
    varying = tmp_path / "varying.dta"
    pyreadstat.write_dta(pool.assign(l=rng.uniform(0, 1, n)), str(varying))
    lapboot_kernel.write_draws(str(varying), str(out), "y f l e t", "obs", 8, 3)
    assert list(pyreadstat.read_dta(str(out))[0].columns) == ["draw", "beta3"]


def test_lapboots_fast_path_runs_where_the_os_has_no_cpu_affinity(tmp_path, monkeypatch):
    """macOS and Windows have no os.sched_getaffinity: the Python engine's bootstrap (and lapboot's fast path, which
    calls it from Stata's Python) stopped there with AttributeError. The draws use os.cpu_count() threads then, and
    are the same draws (the thread count never changes a draw)."""
    from lapbias.estimate import lapboot_kernel

    rng = np.random.default_rng(5)
    n = 200
    pool = pd.DataFrame({"y": rng.normal(size=n), "f": rng.choice([-1.0, 1.0], n), "l": rng.uniform(0, 1, n),
                         "e": np.arange(n) % 17, "t": np.arange(n) % 9})
    expected = lapboot_kernel.bootstrap(pool, ["y", "f", "l", "e", "t"], "obs", 12, 3).draws
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    np.testing.assert_array_equal(lapboot_kernel.bootstrap(pool, ["y", "f", "l", "e", "t"], "obs", 12, 3).draws,
                                  expected)


def test_a_bootstrap_sample_too_small_to_resample_is_a_note_as_in_the_python_engine(project):
    """Second review: the Python engine refuses a post-cutoff sample of fewer than 10 complete rows (the pairs
    bootstrap "could not run": a `failed` note, no bootstrap.csv); the Stata engine ran lapboot on it and wrote a
    p_boot. The driver applies the same rule to the .dta panels and does not run 04_bootstrap.do then."""
    from lapbias.errors import EstimationError

    config, layout = project
    path = layout.derived_file("panel_post.dta")
    post, meta = pyreadstat.read_dta(str(path))
    small = post.dropna(subset=VARIABLES + ABSORB).head(6)
    pyreadstat.write_dta(small, str(path), column_labels=meta.column_labels,
                         variable_format={"target_date": "%td", "text_date": "%td"})
    with pytest.raises(EstimationError) as python:
        pairs_bootstrap(small, 0.0, B=REPS, seed=7, progress=False)
    run = stata.run_stata(config, layout, stata.select_engine(config, "stata")[1])
    calls = (layout.root / "standin_args.txt").read_text()
    assert "04_bootstrap.do" not in calls and not (layout.results / "bootstrap.csv").exists()
    note = next(n for n in run.notes if n["model"] == "bootstrap")
    assert note == {"model": "bootstrap", "kind": "failed",
                    "detail": f"the pairs bootstrap could not run: {python.value}"}
    assert "bootstrap" not in run.failed
