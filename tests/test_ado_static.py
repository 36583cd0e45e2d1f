"""Static checks of the Stata side (Stata cannot run here): ado structure, help files documenting every option (with
the abbreviation the syntax line accepts) and every stored result, the net-install files, and one check for each fix
of issue 13 that a reading of the code can see. Each test names the item it guards."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ADO = ROOT / "ado"
DO = ROOT / "do"
COMMANDS = ["lapbias", "lapvalid", "lapplacebo", "lapboot"]
ESTIMATORS = ["lapbias", "lapvalid", "lapplacebo"]
BUILTINS = {"version", "clear", "set", "adopath", "capture", "mkdir", "log", "do", "use", "quietly", "display",
            "exit", "if", "else", "local", "}", "append", "save", "foreach", "confirm", "keep", "summarize", "replace",
            "args", "tempname", "scalar", "file", "recast", "continue", "tsset", "newey", "count", "erase", "{",
            "`cmd'"}  # `cmd' is the reghdfe or newey call built just above it (01_validation.do)
PACKAGES = {"reghdfe", "esttab", "eststo", "estadd", "estout"}
DYNAMIC_RESULTS = {  # r() names built in loops (`s'_`part'), listed here so the help file check sees them too
    "lapvalid": [f"{s}_{part}" for s in ("theta", "se", "t", "p", "N", "N_clust") for part in ("pooled", "high", "low")],
    "lapplacebo": [f"{s}_{period}" for s in ("b3", "se3", "t3", "p_one", "p_two", "N", "N_clust")
                   for period in ("pre", "post")],
}


def joined_lines(path: Path) -> list[str]:
    """Lines with Stata's /// continuations joined and comments (* at the start) dropped."""
    text = re.sub(r"\s*///[^\n]*\n\s*", " ", path.read_text())
    return [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("*")]


def code(path: Path) -> str:
    return "\n".join(joined_lines(path))


def syntax_lines(path: Path) -> list[str]:
    return [line for line in joined_lines(path) if line.startswith("syntax ")]


def option_specs(line: str) -> list[str]:
    """The option declarations of a syntax line, as written (capitals = the minimal abbreviation)."""
    options = line.split(",", 1)[1] if "," in line else ""
    options = re.sub(r"\([^()]*(\([^()]*\))?[^()]*\)", "", options)  # drop (string), (integer 10000), ...
    return re.findall(r"[A-Za-z_][A-Za-z0-9_]*", options)


def minimal(spec: str) -> str:
    """Stata's minimal abbreviation of a syntax option: its leading capitals (digits after them count), after a
    lowercase "no" for a negatable option such as noHEADer -> nohead."""
    prefix, rest = ("no", spec[2:]) if spec.startswith("no") and spec[2:3].isupper() else ("", spec)
    caps = re.match(r"[A-Z][A-Z0-9]*", rest)
    return (prefix + (caps.group(0) if caps else rest)).lower()


def returned(path: Path) -> set[str]:
    return set(re.findall(r"^\s*return (?:scalar|local|matrix) ([A-Za-z_][A-Za-z0-9_]*)\b(?!`)", path.read_text(), re.M))


@pytest.mark.parametrize("ado", sorted(ADO.glob("*.ado")), ids=lambda p: p.name)
def test_ado_structure(ado):
    text = ado.read_text()
    assert text.startswith("*! version "), "reghdfe's header convention"
    lines = [line.strip() for line in text.splitlines()]
    defines = [line for line in lines if line.startswith("program define ")]
    assert len(defines) == lines.count("end") >= 1
    assert defines[0].split()[2].rstrip(",") == ado.stem  # the file defines the program it is named after
    assert "version 15" in lines
    assert len(lines) <= 150, "each ado stays thin (~150 lines)"
    assert not [line for line in lines if line.startswith("*") and "`" in line], "no macro quotes in comments"


@pytest.mark.parametrize("command", COMMANDS)
def test_every_option_and_result_is_documented(command):
    help_text = (ADO / f"{command}.sthlp").read_text().lower().replace(":", "")
    for line in syntax_lines(ADO / f"{command}.ado"):
        for option in option_specs(line):
            assert f"opt {option.lower()}" in help_text, f"option {option} of {command} is not in {command}.sthlp"
    results = returned(ADO / f"{command}.ado") | set(DYNAMIC_RESULTS.get(command, []))
    assert results
    stored = help_text.split("stored results", 1)[1]
    for name in results:
        assert f"r({name.lower()})" in stored, f"r({name}) of {command} is not under Stored results"


@pytest.mark.parametrize("command", COMMANDS)
def test_documented_abbreviations_are_what_the_syntax_accepts(command):
    """Item 5: {opt noh:eader} documented while the syntax needs nohead is r(198) for the user."""
    specs = {spec.lower(): minimal(spec) for line in syntax_lines(ADO / f"{command}.ado") for spec in option_specs(line)}
    documented = re.findall(r"\{(?:opt|opth|cmdab)\s+([a-z0-9_]+):([a-z0-9_]+)", (ADO / f"{command}.sthlp").read_text())
    assert documented
    for short, tail in documented:
        full = short + tail
        assert full in specs, f"{command}.sthlp documents {full}, which the syntax does not have"
        assert short == specs[full], f"{command}.sthlp: {short}:{tail} but the syntax's minimal abbreviation is {specs[full]}"
    # and an option documented without a colon is written out in full in the syntax's sense (no shorter form claimed)
    for name in re.findall(r"\{opt ([a-z0-9_]+)[}(]", (ADO / f"{command}.sthlp").read_text()):
        assert name in specs, f"{command}.sthlp documents {name}, which the syntax does not have"


def test_minimal_abbreviation_rule():
    assert [minimal(s) for s in ("noHEADer", "NOABsorb", "Absorb", "B3", "SEED", "CUToff")] == \
        ["nohead", "noab", "a", "b3", "seed", "cut"]


def test_each_command_checks_its_dependencies_and_uses_the_one_sided_helper():
    for command in COMMANDS:
        assert "_lapbias_deps" in (ADO / f"{command}.ado").read_text()
    deps = (ADO / "_lapbias_deps.ado").read_text()
    assert "ssc install `pkg'" in deps and "foreach pkg in require reghdfe ftools estout" in deps
    onesided = (ADO / "_lapbias_onesided.ado").read_text()
    assert "`p_two') / 2" in onesided and "1 - scalar(`p_two') / 2" in onesided
    assert "_lapbias_onesided `t3' `p_two'" in code(ADO / "lapbias.ado")  # scalar names, not values


def test_net_install_files_list_every_file():
    pkg = (ADO / "lapbias.pkg").read_text().splitlines()
    listed = {line[2:].strip() for line in pkg if line.startswith("f ")}
    assert listed == {p.name for p in ADO.iterdir() if p.suffix in (".ado", ".sthlp")}
    toc = (ADO / "stata.toc").read_text()
    assert re.search(r"^p lapbias ", toc, re.M) and toc.startswith("v 3")
    for name in listed - {f"{c}.sthlp" for c in COMMANDS}:
        assert Path(name).stem in toc, f"stata.toc does not mention {name}"


def test_string_clusters_are_kept_in_the_sample():
    """Item 1: markout without strok zeroes the sample for a string cluster variable."""
    for path in ADO.glob("*.ado"):
        for line in joined_lines(path):
            if line.startswith("markout ") and "`time'" not in line and "`date'" not in line:
                assert line.endswith(", strok"), f"{path.name}: {line}"
    for command in ESTIMATORS + ["lapboot"]:
        text = code(ADO / f"{command}.ado")
        assert "_lapbias_sample `touse'" in text, command
        assert re.search(r"CLuster\((varlist|varname)\)", text), f"{command}: cluster() must accept string variables"
    assert "markout `touse' `vars', strok" in code(ADO / "_lapbias_sample.ado")


def test_every_log_is_closed_before_it_is_opened():
    """Item 2: a log left open by a failed run stops the next run with r(604)."""
    for path in DO.glob("*.do"):
        lines = joined_lines(path)
        opens = [i for i, line in enumerate(lines) if line.startswith("log using")]
        for i in opens:
            assert "capture log close _all" in lines[:i], path.name
            name = re.search(r"name\((\w+)\)", lines[i]).group(1)
            assert f"log close {name}" in lines, f"{path.name} never closes {name}"


def test_inestimable_models_are_captured_and_only_models_that_ran_are_exported():
    """Item 3: one inestimable half must not abort the run; eststo only the models that ran."""
    validation = joined_lines(DO / "01_validation.do")
    assert "capture noisily `cmd'" in validation
    i = validation.index("capture noisily `cmd'")
    assert validation[i + 1] == "if _rc {" and "_lapbias_note" in validation[i + 2] and validation[i + 3] == "continue"
    assert validation.index("eststo `m'") > i and "local ran `ran' `m'" in validation
    assert 'if ("`ran\'" != "") _lapbias_export `name\' using `"`results\'"\', models(`ran\')' in validation
    detection = code(DO / "02_detection.do")
    assert "capture noisily lapbias outcome mu_hat lap" in detection and "_lapbias_note" in detection
    for line in joined_lines(DO / "master.do") + joined_lines(DO / "03_placebo.do"):
        if line.startswith(("do ", "capture noisily do")) or " do `" in line:
            assert line.startswith("capture noisily do "), line
    lapvalid = code(ADO / "lapvalid.ado")
    assert "capture quietly reghdfe" in lapvalid and "not estimable" in lapvalid


def test_bootstrap_saves_before_the_graph_and_runs_on_its_own():
    """Item 4: the draws are saved first, graph export cannot discard them, and master.do does not run the bootstrap
    (the driver runs do/04_bootstrap.do separately, so its failure keeps Steps 3-5)."""
    lapboot = code(ADO / "lapboot.ado")
    assert lapboot.index("save `\"`saving'\"', replace") < lapboot.index("graph export")
    assert re.search(r"capture noisily \{\s*histogram beta3.*\n\s*graph export", lapboot)
    assert "04_bootstrap" not in code(DO / "master.do")


def test_project_ado_files_come_first_on_the_adopath():
    """Item 6: adopath + appends, so a net-installed older lapbias in PLUS would win."""
    for path in DO.glob("*.do"):
        for line in joined_lines(path):
            if line.startswith("adopath"):
                assert line.startswith("adopath ++ "), f"{path.name}: {line}"
    assert all("adopath ++" in code(DO / name) for name in ("master.do", "04_bootstrap.do"))


def test_missing_post_cutoff_p_is_not_a_pass_and_missing_dates_are_out():
    """Items 8, 9: missing > 0.10 is true in Stata; date > cutoff is true for a missing date."""
    placebo = code(ADO / "lapplacebo.ado")
    assert "if missing(`p_one_post') scalar `pass' = ." in placebo
    assert "else scalar `pass' = `p_one_post' > `alpha'" in placebo
    assert "markout `touse' `date'" in placebo
    assert placebo.index("markout `touse' `date'") < placebo.index("capture noisily lapbias")


def test_omitted_draws_are_missing_break_stops_and_reps_is_validated():
    """Item 10."""
    lapboot = code(ADO / "lapboot.ado")
    assert "cond(_se[`term'] > 0 & _se[`term'] < ., _b[`term'], .)" in lapboot
    assert "post `sim' (`r') (scalar(`draw'))" in lapboot and "(_b[" not in lapboot.split("post `sim'")[1][:20]
    assert re.search(r"local rc = _rc\s*if \(`rc' == 1\) \{\s*postclose `sim'\s*exit 1", lapboot)
    assert "if (`reps' < 1) {" in lapboot


def test_bootstrap_settings_come_from_the_config_as_arguments():
    """Item 11: no hard-coded reps, seed or unit; the driver passes [estimate] bootstrap_* (test_stata_driver)."""
    do = code(DO / "04_bootstrap.do")
    assert "args data results logs ado reps seed resample" in do
    call = next(line for line in joined_lines(DO / "04_bootstrap.do") if line.startswith("lapboot "))
    assert "reps(`reps') seed(`seed') `unit'" in call and "10000" not in call and "20251222" not in call
    assert "Monte Carlo error" in (DO / "04_bootstrap.do").read_text()


def test_standardization_rule_doubles_and_flag():
    """Item 12: complete rows (absorb and cluster variables included) before singletons, as estimate/bootstrap.py
    (standardize_within on dropna(VARIABLES + ABSORB)); doubles inside preserve; flagged in e()."""
    lapbias = code(ADO / "lapbias.ado")
    assert lapbias.index("_lapbias_sample `touse'") < lapbias.index("preserve") < lapbias.index("recast double `v'")
    assert lapbias.index("recast double `v'") < lapbias.index("summarize `v' if `touse'") < lapbias.index("`show' `cmd'")
    assert 'estadd local predict "lapbias_p"' in lapbias and "`standardize'" in code(ADO / "_lapbias_rows.ado") + lapbias
    assert "exit 459" in code(ADO / "lapbias_p.ado")
    assert "BEFORE" in (ADO / "lapbias.ado").read_text() and "before singletons" in (DO / "04_bootstrap.do").read_text()
    boot = code(DO / "04_bootstrap.do")
    assert "keep if !missing(outcome, mu_hat, lap, entity_num, period_num)" in boot and "recast double `v'" in boot
    from lapbias.estimate import bootstrap

    assert bootstrap.VARIABLES + bootstrap.ABSORB == ["outcome", "mu_hat", "lap", "entity_num", "period_num"]


def test_values_go_through_scalars_not_macros():
    """Item 13: the median and the beta_3 arithmetic."""
    for command in COMMANDS:
        text = code(ADO / f"{command}.ado")
        assert not re.search(r"local \w+ = (_b|_se)\[", text), command
        assert not re.search(r"local median = r\(p50\)", text), command
    lapvalid = code(ADO / "lapvalid.ado")
    assert "scalar `median' = r(p50)" in lapvalid and "`lap' > scalar(`median')" in lapvalid
    assert "tempname b3 se3 t3 p_two p_one" in code(ADO / "lapbias.ado")
    assert 'b3(`=strofreal(`b3\', "%21.0g")\')' in code(DO / "04_bootstrap.do")  # %21.0g: as many digits as fit


def test_cmd2_and_esttab_rows():
    """Item 17: e(cmd2) and the Firm FE / Date FE / cluster / standardized rows; se3, p_one, p_two estadded."""
    rows = code(ADO / "_lapbias_rows.ado")
    for name in ("cmd2 \"lapbias\"", "entity_fe", "period_fe", "clustvar", "standardized"):
        assert f"estadd local {name}" in rows, name
    lapbias = code(ADO / "lapbias.ado")
    for name in ("b3", "se3", "t3", "p_one", "p_two"):
        assert f"estadd scalar {name} = scalar(`{name}')" in lapbias
    for source in (ADO / "lapbias.ado", ADO / "lapvalid.ado", DO / "01_validation.do"):
        assert "_lapbias_rows, absorb(`absorb') vce(`vce')" in code(source), source.name


def test_weights_level_replay_and_two_way_clusters():
    """Item 18."""
    for command in ESTIMATORS:
        text = code(ADO / f"{command}.ado")
        assert "[fw aw pw]" in syntax_lines(ADO / f"{command}.ado")[-1], command
        call = "lapbias `varlist' `wgt'" if command == "lapplacebo" else "reghdfe `depvar' "
        assert "`wgt'" in text.split(call, 1)[1].split("\n")[0] or call.endswith("`wgt'"), command
    for command in COMMANDS:
        assert "Level(cilevel)" in syntax_lines(ADO / f"{command}.ado")[-1], command
    lapbias = code(ADO / "lapbias.ado")
    assert lapbias.index("if replay() {") < lapbias.index("_lapbias_deps")
    replay = lapbias.split("if replay() {", 1)[1].split("_lapbias_deps", 1)[0]
    assert "syntax [, Level(cilevel) noHEADer]" in replay and "Summary `level'" in replay and "error 301" in replay
    sample = code(ADO / "_lapbias_sample.ado")
    assert 'subinstr local absorb "#" " ", all' in sample  # absorb(firm#year), firm##c.x
    assert 'inlist("`vcetype\'", "cl", "clu", "clus", "clust", "cluste", "cluster")' in sample  # vce(cluster a b)


def test_single_series_branch_uses_newey():
    """Item 19: one entity -> no FE, Newey-West, as the Python engine (estimate/protocol.py)."""
    lapbias = code(ADO / "lapbias.ado")
    assert "newey `depvar' c.`forecast'##c.`lap' `wgt' if `touse', lag(`lag') force" in lapbias
    assert "floor(4 * (r(N) / 100)^(2 / 9))" in lapbias
    assert "noabsorb time(period_num)" in code(DO / "02_detection.do")
    assert "newey outcome ud `cond', lag(" in code(DO / "01_validation.do")
    assert "local single = r(min) == r(max)" in code(DO / "master.do")


def test_lapvalid_and_lapplacebo_store_models_and_return_se_p_n_clust():
    """Item 20."""
    assert "estimates store `store'_`part'" in code(ADO / "lapvalid.ado")
    assert 'store(`store\'_`period\')' in code(ADO / "lapplacebo.ado")
    for name in ("se_pooled", "p_high", "N_clust_low"):
        assert name in DYNAMIC_RESULTS["lapvalid"]
    loop = code(ADO / "lapplacebo.ado").split("foreach r in b3 se3 t3 p_one p_two N N_clust {")
    assert len(loop) >= 3  # initialised, filled and returned for both periods


def test_latex_notes_say_stars_are_two_sided_and_the_test_one_sided():
    """Item 21."""
    export = code(ADO / "_lapbias_export.ado")
    assert "two-sided" in export and "one-sided" in export and "p_one" in export


@pytest.mark.parametrize("command", COMMANDS)
def test_help_files_have_also_see_author_and_replay(command):
    """Item 22."""
    text = (ADO / f"{command}.sthlp").read_text()
    assert "{title:Also see}" in text and "{title:Author}" in text
    if command == "lapbias":
        assert "{title:Replay}" in text and "lapbias, level(90)" in text
    if command == "lapboot":
        postfile = re.search(r"postfile `sim' (.+) using", code(ADO / "lapboot.ado")).group(1).split()
        saved = text.split("{title:Saved draws}", 1)[1].split("{title:", 1)[0]
        for variable in postfile[1::2]:  # long draw double beta3
            assert f"{{cmd:{variable}}}" in saved, variable


@pytest.mark.parametrize("do_file", sorted(DO.glob("*.do")), ids=lambda p: p.name)
def test_do_files_call_only_commands_that_exist_and_find_data_through_arguments(do_file):
    """Item 16: every path is an argument (defaults only when none is given)."""
    assert not [l for l in do_file.read_text().splitlines() if l.startswith("*") and "`" in l], "macro quote in a comment"
    known = BUILTINS | PACKAGES | {p.stem for p in ADO.glob("*.ado")}
    for line in joined_lines(do_file):
        words = line.split()
        while words and words[0] in ("quietly", "capture", "noisily"):
            words = words[1:]
        if words and words[0] == "if" and words[1:2] == ["_rc"]:
            words = words[2:]
        if words:
            assert words[0].rstrip(",") in known, f"{do_file.name}: unknown command in {line!r}"
        if line.startswith(("use ", "log using", "capture confirm file")):
            assert "`data'" in line or "`logs'" in line, f"{do_file.name}: a path not from the arguments: {line}"
    assert any(line.startswith("args ") for line in joined_lines(do_file)[:4]), "paths come in as arguments"
    if do_file.name == "master.do":
        referenced = re.findall(r'do `"`dofiles\'/([^"]+)"\'', do_file.read_text())
        assert referenced == ["01_validation.do", "02_detection.do", "03_placebo.do"]


def test_positional_argument_before_the_comma_is_split_off_at_the_comma():
    """Review: callers write `_lapbias_sample `touse', absorb(...)` with no blank before the comma. gettoken's default
    parse(" ") returns "__000001," as the token and leaves "absorb(...) vce(...)" without its comma, so syntax fails
    (r(198)) in every command; parse(" ,") is needed wherever a program peels its first argument off `0'."""
    peeled = []
    for path in ADO.glob("*.ado"):
        for line in joined_lines(path):
            if re.match(r"gettoken \w+ 0 : 0\b", line):
                peeled.append(path.name)
                assert 'parse(" ,")' in line, f"{path.name}: {line}"
    assert "_lapbias_sample.ado" in peeled
    callers = [line for command in ESTIMATORS + ["lapboot"] for line in joined_lines(ADO / f"{command}.ado")
               if line.startswith("_lapbias_sample ")]
    assert callers and all(line.startswith("_lapbias_sample `touse', ") for line in callers)


def test_file_paths_in_ado_files_are_in_compound_quotes():
    """Review: a path held in a macro (saving(), graph(), a tempfile) goes unquoted to save/use/postfile/graph export
    in lapboot; syntax strips the quotes of a string option, so a results folder or a Windows temp folder with a
    blank in its name ("My Project", "C:/Users/Jane Doe/...") stops the bootstrap with r(198)/r(603)."""
    pattern = re.compile(r"^(?:if \(.*?\) )?(?:quietly |capture |noisily )*"
                         r"(save|use|graph export|postfile .+ using)\s+(\S+)")
    seen = 0
    for path in ADO.glob("*.ado"):
        for line in joined_lines(path):
            hit = pattern.match(line)
            if hit:
                seen += 1
                assert hit.group(2).startswith('`"`'), f"{path.name}: unquoted path in {line!r}"
    assert seen >= 6  # lapboot: save and use of the sample, postfile, use of the draws, saving(), graph export


def test_latex_export_prints_interactions_with_labels_not_a_raw_hash():
    """Review: without `label`, esttab writes the coefficient name c.mu_hat#c.lap into the .tex file; its tex
    substitute() escapes only "_", so the raw "#" (LaTeX's macro parameter character) stops pdflatex. With `label`
    esttab joins the variable labels with its tex interaction() default " $\\times$ " (estout CompileVarl)."""
    tex = next(line for line in joined_lines(ADO / "_lapbias_export.ado") if "stata_`name'.tex" in line)
    options = tex.split(",", 1)[1]
    assert re.search(r"(^|\s)label(\s|$)", options) and "booktabs" in options
    assert "interaction(" not in options or "times" in options


def test_newey_lag_of_the_config_reaches_every_single_series_regression():
    """Review: the Python engine uses [estimate] newey_lag (>= 0) for the single-series branch, but master.do had no
    argument for it and 01/02 always used floor(4 (T/100)^(2/9)): with newey_lag set the engines disagreed."""
    master = code(DO / "master.do")
    assert "args data results logs ado dofiles lag" in master
    assert re.search(r"01_validation\.do\"' .* pre validation `lag'", master)
    assert re.search(r"02_detection\.do\"' .* pre detection `lag'", master)
    assert re.search(r"03_placebo\.do\"' .* `\"`dofiles'\"' `lag'", master)
    placebo = code(DO / "03_placebo.do")
    assert "args data results single dofiles lag" in placebo
    assert re.search(r"02_detection\.do\"' .* post placebo `lag'", placebo)
    assert re.search(r"01_validation\.do\"' .* post placebo_validation `lag'", placebo)
    validation = code(DO / "01_validation.do")
    assert "args data results single sample name lag" in validation
    assert "cond(`lag' >= 0, `lag', floor(4 * (r(N) / 100)^(2 / 9)))" in validation
    detection = code(DO / "02_detection.do")
    assert "args data results single sample name lag" in detection
    assert "noabsorb time(period_num) lag(`lag')" in detection
    for do_file in ("master.do", "01_validation.do", "02_detection.do", "03_placebo.do"):
        assert 'if "`lag\'" == "" local lag -1' in code(DO / do_file), do_file


def test_replay_needs_lapbias_own_results_not_only_cmd2():
    """Review: _lapbias_rows sets e(cmd2) = "lapbias" on lapvalid's and 01_validation.do's reghdfe models too, so
    `lapbias` typed after lapvalid replayed a beta_3 summary of missing values; replay needs e(lapbias_term)."""
    replay = code(ADO / "lapbias.ado").split("if replay() {", 1)[1].split("_lapbias_deps", 1)[0]
    guard = replay.splitlines()[1]
    assert "error 301" in guard and "e(lapbias_term)" in guard and "e(cmd2)" in guard
    assert 'estadd local lapbias_term "`term\'"' in code(ADO / "lapbias.ado")
    assert "lapbias_term" not in code(ADO / "_lapbias_rows.ado") + code(ADO / "lapvalid.ado")


def test_clustvar_is_never_set_to_a_word_that_is_not_a_variable():
    """Review: e(clustvar) is Stata's standard name for the cluster variables (reghdfe sets it when it clusters);
    margins, vce(unconditional) and boottest read it. Setting it to "None" on an unclustered model sends them to a
    variable None that does not exist (r(111)); _lapbias_rows sets it only to the cluster variables themselves."""
    rows = code(ADO / "_lapbias_rows.ado")
    assert '"None"' not in rows
    line = next(line for line in rows.splitlines() if "estadd local clustvar" in line)
    assert line.startswith('if ("`clustvar\'" != "") '), line
    assert '"None"' not in (ADO / "lapbias.sthlp").read_text()


def test_single_series_tssets_only_the_estimation_sample():
    """Review: `lapbias y f lap if firm == 1, noabsorb time(date)` on a panel ran tsset on every row, so the other
    entities' dates were repeated time values (r(451)) although the series itself is fine (the Python engine fits the
    subset). The noabsorb branch keeps the sample inside preserve before tsset, and e(sample) is carried back by the
    row id (Mata st_store on the ids), not by position."""
    lapbias = code(ADO / "lapbias.ado")
    block = lapbias.split("capture noisily {", 1)[1].split("local rc = _rc", 1)[0]
    assert re.search(r'if \("`noabsorb\'" != ""\) quietly keep if `touse\'\s*if \("`noabsorb\'" != ""\) quietly tsset `time\'',
                     block)
    assert "mata: `es' = st_data(., (\"`id'\", \"`esample'\"))" in block
    after = lapbias.split("local rc = _rc", 1)[1].split("if (`rc') exit `rc'", 1)[0]
    assert after.index("restore") < after.index("generate byte `esample' = 0")
    assert "mata: st_store(`es'[., 1], \"`esample'\", `es'[., 2])" in after
    assert after.index("st_store(") < after.index("estimates esample: if `esample' == 1, replace")


def test_conflicting_vce_and_cluster_is_an_error_in_every_estimator():
    """Review: lapplacebo passed both vce() and cluster() on to lapbias, whose r(198) it catches as "not estimable",
    so a typing slip became 'placebo not estimable' instead of an error; each estimator refuses the pair up front."""
    for command in ESTIMATORS:
        text = code(ADO / f"{command}.ado")
        check = text.index('if ("`cluster\'" != "" & "`vce\'" != "") {')
        assert "exit 198" in text[check:check + 200], command
        first_estimate = min(i for i in (text.find("capture noisily lapbias"), text.find("capture quietly reghdfe"),
                                         text.find("`show' `cmd'")) if i >= 0)
        assert check < first_estimate, command


def test_require_package_of_reghdfe_613_is_checked_and_installed():
    """Review: reghdfe 6.13 stops with r(9) unless the `require` package is installed. lapvalid, lapplacebo, lapboot
    and the do-files run reghdfe under capture, so a missing `require` became "not estimable, r(9)" for every model
    (every bootstrap draw unidentified) instead of one clear install message; the dependency check and the install
    lines (README, lapbias stata-install) name it."""
    from lapbias.estimate import stata

    assert "foreach pkg in require " in code(ADO / "_lapbias_deps.ado")
    assert "ssc install require, replace" in stata.install_instructions()
    assert "ssc install require, replace" in (ROOT / "README.md").read_text()
    assert "require" in (ADO / "lapbias.pkg").read_text()


def test_do_files_check_dependencies_before_any_captured_step():
    """A missing reghdfe (or ftools, require, estout) must stop the run with _lapbias_deps' install line, not be
    captured model by model as "not estimable in Stata, r(199)" (review finding)."""
    for name in ("master.do", "04_bootstrap.do"):
        lines = joined_lines(DO / name)
        deps = lines.index("_lapbias_deps")
        assert deps > next(i for i, line in enumerate(lines) if line.startswith("adopath ++")), name
        assert deps < next(i for i, line in enumerate(lines) if line.startswith(("capture noisily", "use "))), name

