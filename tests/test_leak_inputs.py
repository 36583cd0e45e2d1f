"""Bad series files and bad [leak] configs: one clear line per problem, naming the line or key (issue 14, item 9)."""

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
    assert "line 7: date 'yesterday' is not a date" in text
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
    with pytest.raises(ConfigError, match=r"\[leak\] series lists \['gdp'\]"):
        series.load(leak_config.LeakConfig(series=("gdp",)))


def test_bundled_macrodata():
    table = series.load(leak_config.LeakConfig())
    unemp = table[table["series"] == "unemp"]
    assert len(unemp) == 203 and unemp["period"].iloc[0] == "1959Q1" and unemp["period"].iloc[-1] == "2009Q3"
    assert unemp["value"].iloc[0] == 5.8                     # statsmodels macrodata, 1959 Q1
    assert table.loc[table["series"] == "infl", "period"].iloc[0] == "1959Q2"


@pytest.mark.parametrize("toml, message", [
    ("[leak]\nn_dates = \"8\"\n", r"\[leak\] n_dates = '8'; it must be a whole number"),
    ("[leak]\nvariants = [\"A\", \"Z\"]\n", r"unknown variant\(s\) \['Z'\]"),
    ("[leak]\nndates = 8\n", r"\[leak\] has unknown key\(s\) \['ndates'\]"),
    ("[leak]\ncutoff = \"June 2024\"\n", r"\[leak\] cutoff = 'June 2024' is not a date"),
    ("[leak.band]\npercent = -1\n", r"\[leak.band\] percent = -1; it must be a positive number"),
    ("[leak.band]\nbps = 1\n", r"\[leak.band\] bps is not a known unit"),
    ("[leak]\nranking = \"yes\"\n", r"\[leak\] ranking = 'yes'; it must be true or false"),
    ("[study]\ncutoff = \"2024-06-30\"\n", r"unknown: \['study'\]"),
    ("[model]\nbackend = \"tgi\"\n", r'\[model\] backend = "tgi"'),
])
def test_config_errors_name_the_key(tmp_path, toml, message):
    path = tmp_path / "leak.toml"
    path.write_text(toml)
    with pytest.raises(ConfigError, match=message):
        leak_config.load(path)


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
    assert run.leak.band["percent"] == 0.10


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
