"""`lapbias leak CONFIG --replies FILE`: replies collected elsewhere, scored through the real CLI with no model.

The replies are the vendored regression table (tests/fixtures/README.md: replies released with the NumLeak paper),
so every number is checked against the decisions of the authors' parser and against the paper's own definitions;
bad replies files end in one line per bad row.
"""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from lapbias.cli import main
from lapbias.leak.metrics import within

FIXTURE = Path(__file__).parent / "fixtures" / "numleak_anthropic_replies.jsonl"
TABLE = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
SERIES = "\n".join(["series,date,value,unit"] + [f"{s},{m}-01,{v},percent" for s, m, v in sorted(
    {(r["series"], r["date"], r["truth"]) for r in TABLE if r["variant"] == "A" and r["source"] == "sweep.jsonl"})])


def write_config(root: Path, leak: str = "") -> Path:
    (root / "leak.toml").write_text(f'root = "{root}"\n[leak]\ncutoff = "2024-12-31"\n{leak}')
    return root / "leak.toml"


def write_replies(root: Path, rows: list[dict], name: str = "replies.jsonl") -> Path:
    path = root / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def leak(root: Path, *arguments):
    return CliRunner().invoke(main, ["leak", str(root / "leak.toml"), *arguments])


@pytest.fixture(scope="module")
def sonnet(tmp_path_factory):
    """Sonnet 4.6's sweep replies (A, B, C), its multi-seed Variant-A replies (seeds as draws), its Variant-E draws,
    its fabricated-control and transmission replies."""
    root = tmp_path_factory.mktemp("replay")
    rows = [r for r in TABLE if r["model"] == "claude-sonnet-4.6" and r["source"] in (
        "sweep.jsonl", "camera_ready_multiseed.jsonl", "multiseed.jsonl", "variant_e_temperature.jsonl",
        "fabricated_expanded.jsonl", "transmission.jsonl")]
    write_config(root, 'transmission_series = "Mkt-RF"\n')
    replies = write_replies(root, rows + [dict(r, model="claude-opus-4.7") for r in rows[:3]])
    out = leak(root, "--replies", str(replies), "--model", "claude-sonnet-4.6")
    return root, rows, out


def test_scored_without_a_model(sonnet):
    root, rows, out = sonnet
    assert out.exit_code == 0, out.output
    assert "loading model" not in out.output and f"scored from {root / 'replies.jsonl'}" in out.output
    assert "leak: note: replies scored from" in out.output and "(App. R, T) are not available" in out.output
    panel = pd.read_parquet(root / "data" / "derived" / "leak" / "probes.parquet")
    assert len(panel) == len(rows)
    config = json.loads((root / "results" / "leak" / "run_config.json").read_text())
    assert config["replies_model"] == "claude-sonnet-4.6" and len(config["replies_sha256"]) == 64
    report = (root / "results" / "REPORT.md").read_text()
    assert "Replies read from" in report and "no model queried" in report


def test_every_decision_is_the_authors(sonnet):
    root, rows, _ = sonnet
    panel = pd.read_parquet(root / "data" / "derived" / "leak" / "probes.parquet")
    for row, (_, got) in zip(rows, panel.iterrows()):
        if row["variant"] == "C":
            picked = "" if got["status"] != "parsed" else (row["date"] if got["value"] == 0 else row["date2"])
            assert picked == row["authors"], row["reply"][:80]
        else:
            assert (repr(got["value"]) if got["status"] == "parsed" else "") == row["authors"], row["reply"][:80]
        assert got["truncated"] == float(row["truncated"])


def test_summary_is_the_paper_definitions_on_the_authors_values(sonnet):
    root, rows, _ = sonnet
    summary = pd.read_csv(root / "results" / "leak" / "summary.csv")
    checked = 0
    for row in summary[summary["variant"] == "A"].itertuples():
        values = [r for r in rows if r["variant"] == "A" and r["series"] == row.series
                  and (r["date"] <= "2024-12") == (row.window == "pre")]
        parsed = [(float(r["authors"]), r["truth"]) for r in values if r["authors"]]
        assert row.n_queries == len(values) and row.n_parsed == len(parsed)
        assert row.n_truncated == sum(r["truncated"] for r in values)
        if len(parsed) < 3:
            continue
        recall, truth = np.array([p[0] for p in parsed]), np.array([p[1] for p in parsed])
        assert row.within_band == pytest.approx(within(recall, truth, 0.25).mean())       # strict 25 bps
        assert row.within_fine_band == pytest.approx(within(recall, truth, 0.05).mean())  # and 5 bps
        assert row.pearson_r == pytest.approx(np.corrcoef(recall, truth)[0, 1])
        nonzero = truth != 0
        assert row.sign_accuracy == pytest.approx((np.sign(recall[nonzero]) == np.sign(truth[nonzero])).mean())
        checked += 1
    assert checked >= 1
    controls = summary[summary["variant"].str.startswith("fabricated")]
    assert controls["n_queries"].sum() == sum(r["variant"].startswith("fabricated") for r in rows)
    assert controls["n_parsed"].sum() == 0                                                # App. K: Anthropic refuses


def test_more_than_one_model_needs_a_choice(sonnet):
    root, rows, _ = sonnet
    out = leak(root, "--replies", str(root / "replies.jsonl"))
    assert out.exit_code == 2 and out.output.strip() == (
        f"error: replies file {root / 'replies.jsonl'} holds replies of 2 models ['claude-opus-4.7', "
        "'claude-sonnet-4.6']; score one at a time with --model (e.g. --model claude-opus-4.7)")
    out = leak(root, "--replies", str(root / "replies.jsonl"), "--model", "gpt-5.4")
    assert out.exit_code == 2 and "--model gpt-5.4 is not in replies file" in out.output
    out = leak(root, "--model", "gpt-5.4")
    assert out.exit_code == 2 and "give --replies FILE with it" in out.output


def test_a_csv_replies_file_and_the_series_file_truth(tmp_path):
    # no truth column: the bundled macrodata series file gives it; a quarterly series takes a date in its quarter
    write_config(tmp_path)
    (tmp_path / "replies.csv").write_text("series,date,variant,prompt,reply,truncated\n"
                                          "unemp,1975-04-01,A,q,8.9,false\nunemp,1982-11-15,A,q,\"about 10.7%\",\n"
                                          "infl,2008-10-01,A,q,-8.0,true\n")
    out = leak(tmp_path, "--replies", str(tmp_path / "replies.csv"))
    assert out.exit_code == 0, out.output
    panel = pd.read_parquet(tmp_path / "data" / "derived" / "leak" / "probes.parquet")
    assert panel["period"].tolist() == ["1975Q2", "1982Q4", "2008Q4"]
    assert panel["truth"].tolist() == [8.9, 10.7, -8.79]                                  # macrodata
    assert panel["value"].tolist()[:2] == [8.9, 10.7] and panel["truncated"].isna().tolist() == [False, True, False]
    assert panel["reason"].iloc[2] == "number cut off at the length limit"               # "-8.0" may be "-8.05"
    summary = pd.read_csv(tmp_path / "results" / "leak" / "summary.csv").set_index("series")
    assert not summary.loc["unemp", "sign_informative"] and "uninformative" in summary.loc["unemp", "note"]


BAD_ROWS = [
    ({"variant": "F"}, "variant 'F' is not a probe variant"),
    ({"date": "03/04/1990"}, "date '03/04/1990' is not an ISO date (YYYY-MM-DD): a day/month date is ambiguous"),
    ({"date": "sometime"}, "date 'sometime' is not an ISO date"),
    ({"series": ""}, "series is empty"),
    ({"truth": "n/a"}, "truth 'n/a' is not a finite number"),
    ({"truth": "inf"}, "truth 'inf' is not a finite number"),
    ({"draw": -1}, "draw '-1' is not a whole number 0 or more"),
    ({"draw": 1.5}, "draw '1.5' is not a whole number 0 or more"),
    ({"truncated": "maybe"}, "truncated 'maybe' is not true or false"),
    ({"reply": None}, "reply is missing (null)"),
    ({"series": "gdp", "truth": None}, "no truth for series gdp at 1990-03"),
    ({"date": "1990-03-05"}, "series 'Mkt-RF' is not in the series file, so its frequency is needed"),
    ({"frequency": "fortnight"}, "frequency 'fortnight' is not one of day, week, month, quarter, year"),
    ({"variant": "C"}, "Variant C needs date2"),
    ({"unit": "bps", "series": "gdp"}, "unit 'bps' is not one of percent, degF, degC, index"),
]


@pytest.mark.parametrize("change, message", BAD_ROWS)
def test_bad_rows_one_line_each(tmp_path, change, message):
    write_config(tmp_path)
    good = {"series": "Mkt-RF", "date": "1990-03", "variant": "A", "prompt": "q", "reply": "+2.1", "truth": 2.0}
    bad = {k: v for k, v in {**good, **change}.items() if v is not None or k == "reply"}
    replies = write_replies(tmp_path, [good, bad])
    out = leak(tmp_path, "--replies", str(replies))
    assert out.exit_code == 2 and "Traceback" not in out.output
    lines = out.output.strip().splitlines()
    assert lines[0] == f"error: replies file {replies}: 1 problem(s)"
    assert lines[1].startswith("  line 2: ") and message in lines[1], lines[1]


def test_duplicates_and_file_level_errors(tmp_path):
    write_config(tmp_path)
    row = {"series": "Mkt-RF", "date": "1990-03-15", "variant": "A", "prompt": "q", "reply": "+2.1", "truth": 2.0,
           "frequency": "month"}
    replies = write_replies(tmp_path, [row, dict(row, date="1990-03-01"), dict(row, draw=1)])
    out = leak(tmp_path, "--replies", str(replies))
    assert out.exit_code == 2 and ("line 2: repeats line 1 (series 'Mkt-RF', variant A, 1990-03, draw 0); number "
                                   "repeated queries with a draw column") in out.output
    (tmp_path / "broken.jsonl").write_text('{"series": "Mkt-RF", "date": "1990-03"\n')
    out = leak(tmp_path, "--replies", str(tmp_path / "broken.jsonl"))
    assert out.exit_code == 2 and "line 1: not JSON" in out.output
    (tmp_path / "short.csv").write_text("series,date,reply\nMkt-RF,1990-03,2.1\n")
    out = leak(tmp_path, "--replies", str(tmp_path / "short.csv"))
    assert out.exit_code == 2 and "lacks column(s) ['variant', 'prompt']" in out.output
    out = leak(tmp_path, "--replies", str(tmp_path / "none.jsonl"))
    assert out.exit_code == 2 and "does not exist" in out.output


def test_csv_errors_name_the_file_line_of_a_multiline_reply(tmp_path):
    # a narrative reply quoted over four lines: the next row starts on line 6 of the file, not on line 3
    write_config(tmp_path)
    (tmp_path / "replies.csv").write_text(
        'series,date,variant,prompt,reply,truth\n'
        'Mkt-RF,1990-03,B,q,"The market\nrose about\n2.5%\nthat month",2.0\n'
        'Mkt-RF,1990-04,F,q,+2.1,2.0\n'
        '\n'
        'Mkt-RF,1990-03,B,q,+2.5%,2.0\n')
    out = leak(tmp_path, "--replies", str(tmp_path / "replies.csv"))
    assert out.exit_code == 2 and "Traceback" not in out.output
    lines = out.output.strip().splitlines()
    assert lines[1].startswith("  line 6: variant 'F' is not a probe variant"), lines
    assert lines[2].startswith("  line 8: repeats line 2 (series 'Mkt-RF', variant B, 1990-03, draw 0)"), lines


def test_csv_file_errors_and_a_missing_date_name_the_replies_file(tmp_path):
    write_config(tmp_path)
    for name, content, message in (("empty.csv", b"", "is empty"),
                                   ("header.csv", b"series,date,variant,prompt,reply\n", "has a header but no rows"),
                                   ("latin1.csv", "series,date,variant,prompt,reply\nMkt-RF,1990-03,A,q,résumé\n"
                                    .encode("latin-1"), "is not UTF-8 text")):
        (tmp_path / name).write_bytes(content)
        out = leak(tmp_path, "--replies", str(tmp_path / name))
        assert out.exit_code == 2 and len(out.output.strip().splitlines()) == 1, out.output
        assert out.output.startswith(f"error: replies file {tmp_path / name} ") and message in out.output, out.output
    good = {"series": "Mkt-RF", "date": "1990-03", "variant": "A", "prompt": "q", "reply": "+2.1", "truth": 2.0}
    replies = write_replies(tmp_path, [good, dict(good, date=None, draw=1)])
    out = leak(tmp_path, "--replies", str(replies))
    assert out.exit_code == 2 and "  line 2: date is missing (null); give the probed date, e.g. 1975" in out.output
    (tmp_path / "blank.csv").write_text("series,date,variant,prompt,reply,truth\nMkt-RF,,A,q,+2.1,2.0\n")
    out = leak(tmp_path, "--replies", str(tmp_path / "blank.csv"))
    assert out.exit_code == 2 and "  line 2: date is missing (empty); give the probed date" in out.output, out.output


def test_a_control_answered_with_a_number_the_rules_do_not_read_is_not_a_zero_commit_rate(tmp_path):
    # App. K's control answered with a bare number in a long reply (the bundled model's "... factor is -0.75."):
    # the paper's parser reads no value, so the commit rate is 0 by its definition, but the replies are answers,
    # not refusals, and the report must say so rather than present "commit rate 0.00"
    write_config(tmp_path)
    name = "the Gleason-Zeta volatility-conditioned residual factor"
    rows = [{"series": "Mkt-RF", "date": f"1990-0{m}", "variant": "A", "prompt": "q", "reply": "+2.1%", "truth": 2.0}
            for m in (1, 2, 3)]
    rows += [{"series": name, "date": f"1990-0{m}", "variant": "fabricated_series", "prompt": "q",
              "reply": "The Gleason-Zeta volatility-conditioned residual factor is -0.75.", "truncated": False}
             for m in (1, 2, 3)]
    rows += [{"series": name, "date": "1990-04", "variant": "fabricated_series", "prompt": "q",
              "reply": "I don't know.", "truncated": False}]
    out = leak(tmp_path, "--replies", str(write_replies(tmp_path, rows)))
    assert out.exit_code == 0, out.output
    panel = pd.read_parquet(tmp_path / "data" / "derived" / "leak" / "probes.parquet")
    assert panel["unread_number"].tolist() == [False] * 3 + [True] * 3 + [False]
    summary = pd.read_csv(tmp_path / "results" / "leak" / "summary.csv").set_index("variant")
    control = summary.loc["fabricated_series"]
    assert (control.n_parsed, control.n_refusal, control.n_unread_number) == (0, 1, 3)
    assert "3 of 4 replies hold a number the parser does not read" in control.note
    report = (tmp_path / "results" / "REPORT.md").read_text()
    row = next(line for line in report.splitlines() if line.startswith("| fabricated_series |"))
    assert "0.00 [0.00, 0.49] by the parser; 3 of 4 replies hold a number it does not read: a lower bound" in row
    assert "3 replies hold a number the parser does not read" in report
