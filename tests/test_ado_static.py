"""Static checks of the Stata side (Stata cannot run here): ado structure, help files documenting every option
and every returned r(), the net-install files, and do-files calling only commands that exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ADO = ROOT / "ado"
COMMANDS = ["lapbias", "lapvalid", "lapplacebo", "lapboot"]
BUILTINS = {"version", "clear", "set", "adopath", "capture", "mkdir", "log", "do", "use", "quietly", "display",
            "exit", "if", "local", "}", "append", "save", "foreach", "confirm", "keep", "summarize", "replace"}
PACKAGES = {"reghdfe", "esttab", "eststo", "estadd", "estout"}


def joined_lines(path: Path) -> list[str]:
    """Lines with Stata's /// continuations joined and comments (* at the start) dropped."""
    text = re.sub(r"\s*///[^\n]*\n\s*", " ", path.read_text())
    return [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("*")]


def syntax_options(path: Path) -> list[str]:
    line = next(line for line in joined_lines(path) if line.startswith("syntax "))
    options = line.split(",", 1)[1]
    return [name.lower() for name in re.findall(r"([A-Za-z_][A-Za-z0-9_]*)(?:\([^)]*\))?", options)]


def returned(path: Path) -> set[str]:
    return set(re.findall(r"^\s*return (?:scalar|local|matrix) ([A-Za-z_][A-Za-z0-9_]*)", path.read_text(), re.M))


@pytest.mark.parametrize("ado", sorted(ADO.glob("*.ado")), ids=lambda p: p.name)
def test_ado_structure(ado):
    text = ado.read_text()
    assert text.startswith("*! version "), "reghdfe's header convention"
    lines = [line.strip() for line in text.splitlines()]
    defines = [line for line in lines if line.startswith("program define ")]
    assert len(defines) == lines.count("end") >= 1
    assert defines[0].split()[2].rstrip(",") == ado.stem  # the file defines the program it is named after
    assert "version 15" in lines


@pytest.mark.parametrize("command", COMMANDS)
def test_every_option_and_result_is_documented(command):
    help_text = (ADO / f"{command}.sthlp").read_text().lower().replace(":", "")
    options = syntax_options(ADO / f"{command}.ado")
    assert options, "syntax has options"
    for option in options:
        assert f"opt {option}" in help_text, f"option {option} of {command} is not in {command}.sthlp"
    results = returned(ADO / f"{command}.ado")
    assert results
    stored = help_text.split("stored results", 1)[1]
    for name in results:
        assert f"r({name.lower()})" in stored, f"r({name}) of {command} is not under Stored results"


def test_each_command_checks_its_dependencies_and_uses_the_one_sided_helper():
    for command in COMMANDS:
        assert "_lapbias_deps" in (ADO / f"{command}.ado").read_text()
    deps = (ADO / "_lapbias_deps.ado").read_text()
    assert all(f"ssc install {p}" in deps or "ssc install `pkg'" in deps for p in ("reghdfe",))
    assert "foreach pkg in reghdfe ftools estout" in deps
    onesided = (ADO / "_lapbias_onesided.ado").read_text()
    assert "`p_two' / 2" in onesided and "1 - `p_two' / 2" in onesided


def test_net_install_files_list_every_file():
    pkg = (ADO / "lapbias.pkg").read_text().splitlines()
    listed = {line[2:].strip() for line in pkg if line.startswith("f ")}
    assert listed == {p.name for p in ADO.iterdir() if p.suffix in (".ado", ".sthlp")}
    toc = (ADO / "stata.toc").read_text()
    assert re.search(r"^p lapbias ", toc, re.M) and toc.startswith("v 3")


@pytest.mark.parametrize("do_file", sorted((ROOT / "do").glob("*.do")), ids=lambda p: p.name)
def test_do_files_call_only_commands_that_exist(do_file):
    known = BUILTINS | PACKAGES | {p.stem for p in ADO.glob("*.ado")}
    for line in joined_lines(do_file):
        words = line.split()
        while words and words[0] in ("quietly", "capture", "noisily"):
            words = words[1:]
        if words:
            assert words[0].rstrip(",") in known, f"{do_file.name}: unknown command in {line!r}"
    referenced = re.findall(r'do "do/([^"]+)"', (ROOT / "do" / "master.do").read_text())
    if do_file.name == "master.do":
        assert referenced == ["01_validation.do", "02_detection.do", "03_placebo.do", "04_bootstrap.do"]
