"""Bad series files and bad [leak] configs: one clear line per problem, naming the line or key and the value as the
user wrote it; dates are ISO unless the config names their format (a day/month date is never guessed)."""

import datetime as dt
import io

import pandas as pd
import pytest

from lapbias.errors import ConfigError, InputDataError
from lapbias.leak import config as leak_config
from lapbias.leak import series

HEADER = "series,date,value,label,unit\n"


def write(tmp_path, body, name="series.csv"):
    path = tmp_path / name
    path.write_text(HEADER + body)
    return str(path)


def load(path, **extra):
    return series.load(leak_config.LeakConfig(path=path, **extra))


def test_good_file_and_frequency(tmp_path):
    path = write(tmp_path, "u,2020-01-01,3.5,US unemployment,percent\nu,2020-02-01,3.6,US unemployment,percent\n"
                           "u,2020-03-01,4.4,US unemployment,percent\n")
    table = load(path)
    assert table["frequency"].unique().tolist() == ["month"] and table["period"].tolist() == ["2020-01", "2020-02",
                                                                                              "2020-03"]


def test_every_bad_row_named_on_its_own_line(tmp_path):
    path = write(tmp_path, "\n".join([
        "u,2020-01-01,3.5,,percent",
        "u,2020-02-01,3.6,,percent",
        "u,2020-02-01,3.7,,percent",      # line 4: duplicate month
        "u,2020-04-01,n/a,,percent",      # line 5: missing value; 2020-03 is a gap
        "u,2020-05-01,abc,,percent",      # line 6: not a number
        "u,yesterday,4.0,,percent",       # line 7: not a date
        "u,2020-06-01,4.1,,pct",          # line 8: unknown unit
    ]) + "\n")
    with pytest.raises(InputDataError) as err:
        load(path)
    lines = str(err.value).splitlines()
    assert lines[0].endswith("problem(s)")
    text = "\n".join(lines)
    assert "line 4: duplicate month 2020-02 for series u (first on line 3)" in text
    assert "line 5: value 'n/a' of series u is missing (a gap)" in text
    assert "line 6: value 'abc' of series u is not a number" in text
    assert "line 7: date 'yesterday' is not an ISO date (YYYY-MM-DD, e.g. 1975-04-01)" in text
    assert "line 8: unit 'pct' is not a known unit" in text
    assert "gap in series u: 2020-03 is missing before 2020-04" in text


def test_missing_columns_and_mixed_units(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("name,when,value\nu,2020-01-01,1\n")
    with pytest.raises(InputDataError, match=r"lacks column\(s\) \['series', 'date'\]"):
        load(str(bad))
    path = write(tmp_path, "u,2020-01-01,3.5,,percent\nu,2020-02-01,3.6,,index\n")
    with pytest.raises(InputDataError, match="line 3: series u has unit 'index' but 'percent' on line 2"):
        load(path)


def test_date_outside_the_series():
    leak = leak_config.LeakConfig(dates=("1975-04-01", "2015-01-01"))
    table = series.load(leak)
    with pytest.raises(InputDataError, match=r"dates\[1\] = 2015-01-01 is outside series"):
        series.sample_dates(table, leak, dt.date(2024, 6, 30))


def test_unknown_series_named(tmp_path):
    with pytest.raises(ConfigError, match=r'\[leak\] series = \["gdp"\]; "gdp" is not in the series file'):
        series.load(leak_config.LeakConfig(series=("gdp",)))


def test_bundled_macrodata():
    table = series.load(leak_config.LeakConfig())
    unemp = table[table["series"] == "unemp"]
    assert len(unemp) == 203 and unemp["period"].iloc[0] == "1959Q1" and unemp["period"].iloc[-1] == "2009Q3"
    assert unemp["value"].iloc[0] == 5.8                     # statsmodels macrodata, 1959 Q1
    assert table.loc[table["series"] == "infl", "period"].iloc[0] == "1959Q2"


@pytest.mark.parametrize("toml, message", [
    ('[leak]\nn_dates = "8"\n', r'^\[leak\] n_dates = "8"; it must be a whole number \(no quotes, no decimal point\) '
                                 r'\(e.g. n_dates = 8\)$'),
    ("[leak]\nn_dates = 8.0\n", r"^\[leak\] n_dates = 8.0; it must be a whole number"),
    ("[leak]\nn_dates = true\n", r"^\[leak\] n_dates = true; it must be a whole number"),
    ('[leak]\nvariants = ["A", "Z"]\n', r'^\[leak\] variants = \["A", "Z"\]; "Z" is not a variant'),
    ("[leak]\nvariants = []\n", r"^\[leak\] variants = \[\]; list at least one \(e.g. variants = \[\"A\", \"C\"\]\)$"),
    ('[leak]\nvariants = ["A", "A"]\n', r'^\[leak\] variants = \["A", "A"\]; "A" is listed twice'),
    ("[leak]\nndates = 8\n", r'^\[leak\] has unknown key\(s\) \["ndates"\]'),
    ('[leak]\ncutoff = "June 2024"\n', r'^\[leak\] cutoff = "June 2024"; it must be a date in YYYY-MM-DD form'),
    ("[leak]\ncutoff = 2024-06-31\n", r"is not valid TOML"),
    ('[leak]\ndates = ["1975-04-01", "1975-13-01"]\n', r'^\[leak\] dates = \["1975-04-01", "1975-13-01"\]; it must '
                                                     r'be a date in YYYY-MM-DD form'),
    ('[leak]\ndate_format = "day first"\n', r'^\[leak\] date_format = "day first"; it must be a strftime format'),
    ("[leak]\nseed = -1\n", r"^\[leak\] seed = -1; it must be from 0 to 4294967295"),
    ("[leak]\ntop_logprobs = 3\n", r"^\[leak\] top_logprobs = 3; it must be from 5 to 20"),
    ('[leak]\nparser = "regex"\n', r'^\[leak\] parser = "regex"; choose one of \["paper", "explicit_estimate"\]'),
    ("[leak.band]\npercent = -1\n", r"^\[leak.band\] percent = -1; it must be a positive number"),
    ("[leak.band]\npercent = inf\n", r"^\[leak.band\] percent = inf; it must be a positive number"),
    ("[leak.band]\nbps = 1\n", r"^\[leak.band\] bps = 1; bps is not a unit"),
    ("[leak.fine_band]\npercent = 0.5\n", r"^\[leak.fine_band\] percent = 0.5; it must not exceed \[leak.band\] "
                                          r"percent"),
    ('[leak]\nranking = "yes"\n', r'^\[leak\] ranking = "yes"; it must be true or false'),
    ('[leak]\nfabricated_fund = ""\n', r'^\[leak\] fabricated_fund = ""; name the fund'),
    ("root = 3\n", r"^root = 3; it must be a folder path in quotes"),
    ('[study]\ncutoff = "2024-06-30"\n', r'unknown: \["study"\]'),
    ('[model]\nbackend = "tgi"\n', r'\[model\] backend = "tgi"'),
])
def test_config_errors_name_the_key(tmp_path, toml, message):
    """Through the real CLI: one line, `error: ` and the message (nothing is loaded or asked)."""
    from click.testing import CliRunner

    from lapbias.cli import main

    path = tmp_path / "leak.toml"
    path.write_text(toml)
    with pytest.raises(ConfigError, match=message):
        leak_config.load(path)
    out = CliRunner().invoke(main, ["leak", str(path), "--yes"])
    assert out.exit_code == 2 and len(out.output.strip().splitlines()) == 1 and out.output.startswith("error: ")


@pytest.mark.parametrize("load", ["leak", "ess"])
def test_audit_config_files_get_the_run_configs_file_checks(tmp_path, load):
    """A non-UTF-8 byte, a folder or a data file given as the config of `lapbias leak` / `lapbias ess` is one
    ConfigError naming the problem, as for the run configuration (lapbias.config.read_toml)."""
    from lapbias.ess import config as ess_config

    loader = {"leak": leak_config.load, "ess": ess_config.load}[load]
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b"[leak]\nn_dates = 3 # caf\xe9\n")
    with pytest.raises(ConfigError, match="is not UTF-8 text"):
        loader(bad)
    with pytest.raises(ConfigError, match="is not a file"):
        loader(tmp_path)
    with pytest.raises(ConfigError, match="is a data file, not a run configuration"):
        loader(tmp_path / "series.csv")


def test_demo_config_loads():
    run = leak_config.load("data/demo/leak.toml")
    assert run.leak.series == ("unemp", "infl") and run.model.model_id == "bundled:SmolLM2-135M-Instruct"
    assert run.leak.band["percent"] == 0.25 and run.leak.fine_band["percent"] == 0.05     # §2: 25 and 5 bps
    assert (run.leak.max_new_tokens, run.leak.narrative_tokens) == (48, 384)               # the authors' caps
    assert len(run.leak.fabricated_series) == 4 and "Holbrooke" in run.leak.fabricated_fund  # App. K's five names


def test_a_toml_date_is_a_date():
    import datetime

    run = leak_config.from_dict({"leak": {"cutoff": datetime.date(2023, 10, 1), "famous_dates": [
        datetime.date(2008, 10, 1)]}})
    assert run.leak.cutoff == "2023-10-01" and run.leak.famous_dates == ("2008-10-01",)


def test_variant_c_order_is_not_always_chronological():
    # a strictly rising series: with the earlier date always named first, every pair's truth was 1.0 (second
    # higher), so a model that always names the second date scored 100% instead of the 0.5 chance of App. J
    from lapbias.leak.probes import REGISTRY, Plan

    rows = "".join(f"rise,{1990 + q // 4}-{3 * (q % 4) + 1:02d}-01,{q / 10:.1f},rising,percent\n" for q in range(40))
    table = series.validate(pd.read_csv(io.StringIO(HEADER + rows), dtype=str), "percent")
    leak = leak_config.LeakConfig(n_dates=20, seed=7)
    sampled = series.sample_dates(table, leak, dt.date(2024, 6, 30))
    items = REGISTRY["C"].items(Plan(sampled, table, leak))
    assert len(items) == 10 and sorted(i.truth for i in items) == [0.0] * 5 + [1.0] * 5
    value = dict(zip(table["period"], table["value"]))
    for item in items:  # truth: 0.0 when the date the prompt names first is higher
        assert item.truth == (0.0 if value[item.period] > value[item.other["other_period"]] else 1.0)
        assert item.prompt.index(series.human_date(item.date, "quarter")) < item.prompt.index(
            series.human_date(item.other["other_date"], "quarter"))
    again = REGISTRY["C"].items(Plan(series.sample_dates(table, leak, dt.date(2024, 6, 30)), table, leak))
    assert [i.prompt for i in again] == [i.prompt for i in items]


def test_snapshot_writes_the_model_section_as_a_table():
    # run_config.json's [model] was one str(ModelConfig) string, so the report's model.get(...) crashed
    import json

    snap = json.loads(json.dumps(leak_config.snapshot(leak_config.load("data/demo/leak.toml")), default=str))
    assert snap["model"]["model_id"] == "bundled:SmolLM2-135M-Instruct" and snap["model"]["backend"] == "transformers"
    assert snap["leak"]["n_dates"] == 6 and snap["root"] == "."


def test_fixed_dates_in_the_same_period_are_refused():
    # 1975-04-01 and 1975-05-15 are both 1975Q2: the probe was asked and scored twice, silently
    leak = leak_config.LeakConfig(series=("unemp",), dates=("1975-04-01", "1975-05-15"))
    with pytest.raises(InputDataError, match=r"dates\[1\] = 1975-05-15 is in the same quarter 1975Q2 .*dates\[0\]"):
        series.sample_dates(series.load(leak), leak, dt.date(2024, 6, 30))


# Dates through the real CLI: a series file with day/month dates is refused unless the config names the order, and
# then read in that order (01/02/2020 is 1 February, not 2 January); nothing is asked of a model on the way.

SERIES = "series,date,value,unit\n" + "".join(f"u,{d:02d}/{m:02d}/2020,{3 + m / 10:.1f},percent\n"
                                            for m in range(1, 13) for d in (1,))


def run_cli(tmp_path, leak_lines: str, *extra):
    from click.testing import CliRunner

    from lapbias.cli import main

    (tmp_path / "leak.toml").write_text(f'root = "{tmp_path}"\n[leak]\n{leak_lines}')
    return CliRunner().invoke(main, ["leak", str(tmp_path / "leak.toml"), "--yes", *extra])


def test_day_month_dates_refused_without_a_format(tmp_path):
    (tmp_path / "series.csv").write_text(SERIES)
    out = run_cli(tmp_path, f'path = "{tmp_path / "series.csv"}"\n')
    assert out.exit_code == 2
    assert "line 2: date '01/01/2020' is not an ISO date (YYYY-MM-DD): a day/month date is ambiguous" in out.output
    assert 'date_format = "%d/%m/%Y"' in out.output and "Traceback" not in out.output


def test_day_month_dates_read_in_the_named_order(tmp_path):
    (tmp_path / "series.csv").write_text(SERIES)
    (tmp_path / "replies.csv").write_text(
        "series,date,variant,prompt,reply\nu,01/02/2020,A,q,+3.2\nu,01/03/2020,A,q,3.3\nu,01/04/2020,A,q,3.9\n")
    out = run_cli(tmp_path, f'path = "{tmp_path / "series.csv"}"\ndate_format = "%d/%m/%Y"\n',
                  "--replies", str(tmp_path / "replies.csv"))
    assert out.exit_code == 0, out.output
    panel = pd.read_parquet(tmp_path / "data" / "derived" / "leak" / "probes.parquet")
    assert panel["period"].tolist() == ["2020-02", "2020-03", "2020-04"]          # monthly, not 2, 3, 4 January
    assert panel["truth"].tolist() == [3.2, 3.3, 3.4]


def test_empty_variants_and_an_unknown_transmission_series_through_the_cli(tmp_path):
    out = run_cli(tmp_path, "variants = []\n")
    assert out.exit_code == 2 and out.output.strip() == (
        'error: [leak] variants = []; list at least one (e.g. variants = ["A", "C"])')
    out = run_cli(tmp_path, 'series = ["unemp"]\ntransmission_series = "gdp"\n')
    assert out.exit_code == 2 and out.output.strip() == (
        'error: [leak] transmission_series = "gdp" is not a probed series; name one of ["unemp"] ("" = the first)')


def test_famous_dates_probed_and_flagged():
    leak = leak_config.LeakConfig(series=("unemp", "infl"), n_dates=3, famous_dates=("2008-10-01", "1975-04-01"))
    sampled = series.sample_dates(series.load(leak), leak, dt.date(2024, 6, 30))
    famous = sampled[sampled["famous"]]
    assert sorted(set(famous["period"])) == ["1975Q2", "2008Q4"] and len(famous) == 4     # both series
    assert (~sampled["famous"]).sum() == 6
    with pytest.raises(InputDataError, match=r"famous_dates\[0\] = 2015-01-01 is outside series"):
        bad = leak_config.LeakConfig(series=("unemp",), famous_dates=("2015-01-01",))
        series.sample_dates(series.load(bad), bad, dt.date(2024, 6, 30))
