"""README.md stays true: its first two commands are the demo and the tests, every `lapbias` command line in its code
blocks parses with the command line's own options, every Python block names what the package has, and every file
it points to exists in the repository."""

from __future__ import annotations

import ast
import re
import shlex
from pathlib import Path

import click
import pytest

from lapbias.cli import main

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```(\w*)\n(.*?)```", README, re.DOTALL)


def _commands() -> list[str]:
    """Every `lapbias ...` command of the README's bash blocks, continuation lines joined, comments dropped."""
    found = []
    for language, body in BLOCKS:
        if language not in ("bash", "sh", "console"):
            continue
        for line in body.replace("\\\n", " ").splitlines():
            line = line.strip().removeprefix("$ ")
            if re.match(r"(\S*/)?lapbias ", line):
                found.append(shlex.split(line, comments=True))
    return found


def test_the_first_two_commands_run_the_demo_and_the_tests():
    first = next(body for language, body in BLOCKS if language == "bash")
    commands = [line.split("#")[0].strip() for line in first.splitlines() if line.strip()]
    assert commands == ["make demo", "make test"]
    assert "make test" in (ROOT / ".ci" / "run").read_text()


@pytest.mark.parametrize("words", _commands(), ids=lambda words: " ".join(words)[:60])
def test_every_lapbias_command_parses(words):
    """click parses the arguments exactly as the shell would pass them (a renamed option or command fails here);
    a data file the README's command reads need not exist here."""
    command = main.get_command(click.Context(main), words[1])
    assert command is not None, f"no command {words[1]!r}"
    try:
        command.make_context(words[1], list(words[2:]))
    except click.BadParameter as err:
        assert "does not exist" in str(err), err


def test_the_readme_shows_commands():
    assert len(_commands()) >= 3


@pytest.mark.parametrize("text", sorted(set(re.findall(r"`((?:\S*/)?lapbias [a-z][^`]*)`", README))),
                         ids=lambda text: text[:60])
def test_every_inline_command_names_a_command_and_its_options(text):
    """The README's inline commands (`lapbias estimate CONFIG --engine stata`): the command exists and every
    --option it shows is one of that command's options (placeholders such as CONFIG are not parsed)."""
    words = text.split()
    command = main.get_command(click.Context(main), words[1])
    assert command is not None, f"no command {words[1]!r}"
    known = {opt for param in command.params for opt in getattr(param, "opts", [])}
    shown = {word.strip("[]").split("=")[0] for word in words[2:] if word.strip("[]").startswith("--")}
    assert shown <= known, f"{sorted(shown - known)} not options of `lapbias {words[1]}`"


def test_python_blocks_compile_and_name_what_exists():
    import importlib

    for language, body in BLOCKS:
        if language != "python":
            continue
        tree = ast.parse(body)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("lapbias"):
                module = importlib.import_module(node.module)
                assert all(hasattr(module, alias.name) for alias in node.names), node.module


def test_every_file_the_readme_points_to_exists():
    paths = set(re.findall(r"\]\(((?!https?:)[^)#]+)\)", README))  # Markdown links
    paths |= set(re.findall(r'<img src="([^"]+)"', README))  # embedded figures
    paths |= {p for p in re.findall(r"`((?:docs|data/demo|benchmarks|ado|do|python|tests)/[\w./-]+)`", README)
              if "*" not in p}
    missing = sorted(p for p in paths if not (ROOT / p).exists())
    assert not missing, missing


def test_the_docs_name_the_verdict_thresholds_as_the_config_does():
    """docs/contracts.md states the verdict rule with the [estimate] keys the config has, each with its default;
    the upper bound's threshold is max_ucb_share, its old name max_mde_share appearing only as the old name (it was
    read as the minimum detectable share's threshold, which is detectable_share); docs/protocol.md does not call
    20% of the standalone effect "a fifth of the paper's point estimate" (it is 54% of it)."""
    from lapbias.config import EstimateConfig

    contracts = (ROOT / "docs" / "contracts.md").read_text(encoding="utf-8")
    rule = contracts[contracts.index("## Verdict rule"):]
    defaults = EstimateConfig()
    for key in ("placebo_alpha", "detection_alpha", "validation_alpha", "max_ucb_share", "detectable_share",
                "min_lap_gap", "min_lap_relative_gap", "wild_below_clusters"):
        value = getattr(defaults, key)
        assert re.search(rf"`{key}`\s+\({value:g}", rule), (key, value)
    for name in ("README.md", "docs/contracts.md", "docs/protocol.md"):
        text = (ROOT / name).read_text(encoding="utf-8")
        for match in re.finditer("max_mde_share", text):
            assert "old name" in " ".join(text[max(0, match.start() - 80):match.end() + 80].split()), name
    assert "a fifth of the paper" not in (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")


def test_your_own_study_says_what_the_commands_do():
    """README's "Your own study" against the code: the target-date rule as docs/own-study.md and data/target_dates.py
    state it (the actual close, 1 p.m. on early-close days; it said "the paper's 4 p.m. rule"), the model steps with
    the --yes they need without a terminal, the default answer length (max_new_tokens), the first answers the parse
    rate is checked on, and the section name the starter config and docs/own-study.md cite."""
    from lapbias.config import ForecastConfig
    from lapbias.signals.timing import FIRST_ANSWERS

    section = README.split("## Your own study", 1)[1].split("\n## ", 1)[0]
    words = " ".join(section.split())
    assert "4 p.m. rule" not in words and "1 p.m. on an early-close day" in words and "actual close" in words
    assert "early close, e.g. 1 p.m. on the day after Thanksgiving, is the close" in \
        " ".join((ROOT / "docs" / "own-study.md").read_text(encoding="utf-8").split())
    for stage in ("forecast", "recall", "minkprob"):
        assert f"| `lapbias {stage} CONFIG --yes` |" in section
    assert f"`[forecast] max_new_tokens` ({ForecastConfig().max_new_tokens} tokens)" in words
    assert f"first {FIRST_ANSWERS} answers" in words
    for path in (ROOT / "docs" / "own-study.md", ROOT / "python" / "lapbias" / "data" / "starter.py"):
        assert "Running your own study" not in path.read_text(encoding="utf-8")
