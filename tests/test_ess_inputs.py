"""Bad input to the ESS audit ends in a one-line LapbiasError naming the column/key, the rule and an example."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from sklearn.metrics import balanced_accuracy_score, f1_score

from lapbias.cli import main
from lapbias.errors import ConfigError, InputDataError
from lapbias.ess import config as ess_config
from lapbias.ess.data import transformed_outcome
from lapbias.ess.pipeline import run
from lapbias.io import Layout


def _write(tmp_path, n_rows=60, y=None):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x1": rng.normal(size=n_rows), "x2": rng.normal(size=n_rows)})
    frame["y"] = frame["x1"] + rng.normal(size=n_rows) if y is None else y
    frame["g"] = frame["x1"]
    frame.to_csv(tmp_path / "d.csv", index=False)


def _config(tmp_path, **changes):
    outcome = {"name": "y", "column": "y", "type": "continuous", "llm_column": "g", "comparators": ["lasso"]}
    outcome.update(changes.pop("outcome", {}))
    values = {"data": "d.csv", "covariates": ["x1", "x2"], "grid": [5, 10], "outcomes": [outcome], **changes}
    return ess_config.from_dict(values, str(tmp_path))


def _run(config, tmp_path):
    return run(config, Layout(tmp_path), backend=None, confirm=None)


def test_missing_column(tmp_path):
    _write(tmp_path)
    with pytest.raises(InputDataError, match=r"column 'income' named by \[ess\] covariates is not in the data"):
        _run(_config(tmp_path, covariates=["x1", "income"]), tmp_path)


def test_non_numeric_continuous_outcome(tmp_path):
    _write(tmp_path, y=["high", "low"] * 30)
    with pytest.raises(InputDataError, match=r"column 'y' of the continuous outcome 'y' is not numeric \(e.g. 'high'\)"):
        _run(_config(tmp_path), tmp_path)


def test_too_few_rows_for_the_grid(tmp_path):
    _write(tmp_path, n_rows=60)
    with pytest.raises(InputDataError, match=r"grid n = 40 needs at least 80 rows .* N = 60; use n ≤ 30"):
        _run(_config(tmp_path, grid=[10, 40]), tmp_path)


def test_missing_values_named_with_row(tmp_path):
    _write(tmp_path)
    frame = pd.read_csv(tmp_path / "d.csv")
    frame.loc[7, "x2"] = np.nan
    frame.to_csv(tmp_path / "d.csv", index=False)
    with pytest.raises(InputDataError, match=r"column 'x2' .* 1 missing value\(s\), first at row 7"):
        _run(_config(tmp_path), tmp_path)


def test_config_key_paths():
    with pytest.raises(ConfigError, match=r"\[ess.outcomes.0\] has unknown key\(s\) \['los'\]"):
        ess_config.from_dict({"data": "d.csv", "covariates": ["x"], "grid": [5],
                              "outcomes": [{"name": "y", "column": "y", "los": "squared", "llm_column": "g"}]})
    with pytest.raises(ConfigError, match=r'loss = "squared" does not fit type = "discrete"'):
        ess_config.from_dict({"data": "d.csv", "covariates": ["x"], "grid": [5],
                              "outcomes": [{"name": "y", "column": "y", "loss": "squared", "llm_column": "g"}]})
    with pytest.raises(ConfigError, match=r"grid = \[10, 5\]; it must be increasing"):
        ess_config.from_dict({"data": "d.csv", "covariates": ["x"], "grid": [10, 5], "outcomes": [{}]})
    with pytest.raises(ConfigError, match=r"\[ess.model\] has unknown key"):
        ess_config.from_dict({"data": "d.csv", "covariates": ["x"], "grid": [5], "model": {"modelid": "x"},
                              "outcomes": [{"name": "y", "column": "y", "llm_column": "g"}]})


def test_cli_prints_one_line_without_traceback(tmp_path):
    _write(tmp_path, n_rows=60)
    (tmp_path / "ess.toml").write_text(f'root = "{tmp_path}"\n[ess]\ndata = "d.csv"\ncovariates = ["x1", "nope"]\n'
                                       'grid = [5]\n[[ess.outcomes]]\nname = "y"\ncolumn = "y"\ntype = "continuous"\n'
                                       'llm_column = "g"\n', encoding="utf-8")
    result = CliRunner().invoke(main, ["ess", str(tmp_path / "ess.toml")])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "error: column 'nope' named by [ess] covariates is not in the data" in result.output


def test_transformed_outcome_by_hand_and_its_risk_identity():
    config = ess_config.from_dict({"data": "d.csv", "covariates": ["x"], "grid": [5], "outcomes": [
        {"name": "cate", "column": "y", "llm_column": "g", "cate": {"treatment": "d", "propensity": 0.25}}]})
    outcome = config.outcomes[0]
    assert outcome.type == "continuous" and outcome.loss == "squared"
    tiny = pd.DataFrame({"y": [2.0, 3.0], "d": [1, 0]})
    # Y* = Y (D − e)/(e(1 − e)): 2 · 0.75/0.1875 = 8 and 3 · (−0.25)/0.1875 = −4
    assert transformed_outcome(tiny, outcome) == pytest.approx([8.0, -4.0])
    # §6: E(Y* − a)² − E(Y* − b)² = E(τ − a)² − E(τ − b)², so the CATE-ESS is unchanged by Y* for τ.
    rng = np.random.default_rng(1)
    N = 400_000
    x, d = rng.normal(size=N), rng.binomial(1, 0.25, size=N)
    tau = 1 + x
    frame = pd.DataFrame({"y": x + d * tau + rng.normal(size=N), "d": d})
    y_star = transformed_outcome(frame, outcome)
    a, b = tau + 0.5, np.zeros(N)
    observed = np.mean((y_star - a) ** 2 - (y_star - b) ** 2)
    assert observed == pytest.approx(np.mean((tau - a) ** 2 - (tau - b) ** 2), abs=0.05)
    assert observed < -1                                   # E(τ − a)² − E τ² = 0.25 − 2: a real difference


def test_cate_and_arm_outcomes_with_a_plugged_in_estimator(tmp_path):
    rng = np.random.default_rng(2)
    N = 120
    frame = pd.DataFrame({"x1": rng.normal(size=N), "x2": rng.normal(size=N), "d": rng.binomial(1, 0.5, size=N)})
    frame["y"] = frame["x1"] + frame["d"] * (1 + frame["x1"]) + rng.normal(size=N)
    frame["tau_hat"] = 1.0                                    # the "LLM" effect prediction, a fixed rule
    frame["y1_hat"] = 1.0 + 2 * frame["x1"]
    frame.to_csv(tmp_path / "d.csv", index=False)
    knn = {"name": "knn", "class": "sklearn.neighbors.KNeighborsRegressor", "params": {"n_neighbors": 3}}
    config = ess_config.from_dict({"data": "d.csv", "covariates": ["x1", "x2"], "grid": [5, 10], "outcomes": [
        {"name": "cate", "column": "y", "llm_column": "tau_hat", "cate": {"treatment": "d", "propensity": 0.5},
         "comparators": ["lasso", knn]},
        {"name": "y_treated", "column": "y", "type": "continuous", "llm_column": "y1_hat",
         "arm": {"treatment": "d", "value": 1}, "comparators": [knn]}]}, str(tmp_path))
    tables = run(config, Layout(tmp_path), backend=None, confirm=None)
    llm = tables["llm"].set_index("outcome")
    y_star = frame["y"] * (frame["d"] - 0.5) / 0.25
    assert llm.loc["cate", "llm_risk"] == pytest.approx(np.mean((y_star - 1.0) ** 2))      # eq. (3.1) on Y*
    treated = frame[frame["d"] == 1]
    assert llm.loc["y_treated", "N"] == len(treated)
    assert llm.loc["y_treated", "llm_risk"] == pytest.approx(np.mean((treated["y"] - treated["y1_hat"]) ** 2))
    assert list(tables["ess"]["comparator"]) == ["lasso", "knn", "knn"]
    curve = tables["curve"]
    assert (curve.loc[curve["loss"] == "squared", "metric"] == "rmse").all()
    rmse = curve.iloc[0]
    assert rmse["metric_value"] == pytest.approx(np.sqrt(rmse["risk"]))
    assert rmse["metric_ci_high"] - rmse["metric_value"] == pytest.approx(1.959964 * rmse["se"] / (2 * np.sqrt(rmse["risk"])))


@pytest.mark.parametrize("loss", ["balanced_error", "f1_error"])
def test_discrete_alternative_losses_through_the_pipeline(tmp_path, loss):
    rng = np.random.default_rng(3)
    N = 80
    frame = pd.DataFrame({"x1": rng.normal(size=N), "x2": rng.normal(size=N)})
    frame["y"] = (frame["x1"] + rng.normal(scale=0.5, size=N) > 0.8).astype(int)        # ≈ 20% positives
    frame["g"] = (frame["x1"] > 0).astype(int)
    frame.to_csv(tmp_path / "d.csv", index=False)
    config = ess_config.from_dict({"data": "d.csv", "covariates": ["x1", "x2"], "grid": [4, 10], "outcomes": [
        {"name": "y", "column": "y", "llm_column": "g", "loss": loss, "comparators": ["l1logit"]}]}, str(tmp_path))
    tables = run(config, Layout(tmp_path), backend=None, confirm=None)
    score = balanced_accuracy_score if loss == "balanced_error" else f1_score
    assert tables["llm"]["metric_value"].iloc[0] == pytest.approx(score(frame["y"], frame["g"]))
    curve = tables["curve"]
    assert curve["metric"].iloc[0] == ("balanced_accuracy" if loss == "balanced_error" else "f1")
    assert np.isfinite(curve["risk"]).all() and (curve["se"] > 0).all()


def test_one_class_training_block_predicts_its_class():
    from sklearn.linear_model import LogisticRegression

    from lapbias.ess.comparators import fit_predict

    X = np.arange(8.0).reshape(4, 2)
    assert list(fit_predict(LogisticRegression(), X[:2], np.array([1, 1]), X, discrete=True)) == [1, 1, 1, 1]


def test_discrete_predictions_in_other_codes_than_the_outcome(tmp_path):
    _write(tmp_path, y=[0, 1] * 30)
    frame = pd.read_csv(tmp_path / "d.csv")
    frame["g"] = ["no", "yes"] * 30
    frame.to_csv(tmp_path / "d.csv", index=False)
    config = _config(tmp_path, outcome={"type": "discrete", "comparators": ["rf"]})
    with pytest.raises(InputDataError, match=r"llm_column 'g' has value\(s\) \['no', 'yes'\] that column 'y' never takes"):
        _run(config, tmp_path)


def test_llm_number_with_thousands_separators_is_read_whole():
    from lapbias.ess.llm_predict import parse_number

    # A comma followed by three digits groups thousands ("$45,000" is 45000, not 45.0); other commas are decimal.
    assert parse_number("I earn $45,000 a year") == 45000.0
    assert parse_number("1,250,000.5") == 1250000.5
    assert parse_number("about 12,5 dollars") == 12.5 and parse_number("-3.5 visits") == -3.5


def test_l1logit_comparator_is_an_l1_penalised_logit():
    # App. C's L1 logit: at a strong penalty most coefficients of pure-noise covariates are exactly 0 (an L2 logit,
    # what LogisticRegression(l1_ratio=1.0) silently is before scikit-learn 1.8, keeps them all non-zero).
    from sklearn.base import clone

    from lapbias.ess.comparators import Comparator

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 10))
    y = (X[:, 0] + rng.normal(size=200) > 0).astype(int)
    base = Comparator("l1logit", discrete=True, loss="zero_one").tune(X, y)
    model = clone(base).set_params(C=0.05).fit(X, y)
    assert (model.coef_[0, 1:] == 0).sum() >= 5 and model.coef_[0, 0] != 0


def test_cate_outcome_rejects_one_arm_and_the_treatment_as_covariate():
    # §6: the transformed outcome Y* = Y (D − e)/(e(1 − e)) needs both arms (within one arm D − e is a constant and
    # E[Y* | X] is not τ(X)), and the ML model predicts Y* from X alone (with D or e(X) among the covariates it
    # learns E[Y* | X, D] ≠ τ(X), and E(Y* − f)² = E(τ − f)² + const no longer holds).
    base = {"data": "d.csv", "grid": [5], "outcomes": [{"name": "t", "column": "y", "llm_column": "g",
                                                          "cate": {"treatment": "D", "propensity": "e"}}]}
    with pytest.raises(ConfigError, match=r'\[ess.outcomes.0\] cate: covariate "D" is the treatment'):
        ess_config.from_dict({**base, "covariates": ["x", "D"]})
    with pytest.raises(ConfigError, match=r'\[ess.outcomes.0\] cate: covariate "e" is the propensity'):
        ess_config.from_dict({**base, "covariates": ["x", "e"]})
    one_arm = [{**base["outcomes"][0], "arm": {"treatment": "D", "value": 1}}]
    with pytest.raises(ConfigError, match=r"\[ess.outcomes.0\] has both cate and arm"):
        ess_config.from_dict({**base, "covariates": ["x"], "outcomes": one_arm})
    assert ess_config.from_dict({**base, "covariates": ["x"]}).outcomes[0].cate["treatment"] == "D"


def test_report_table_gives_the_llm_error_as_rmse_for_squared_loss(tmp_path):
    # §5.1 / Table 1: for squared error the reported error is the RMSE √R̂_LLM, not the MSE.
    _write(tmp_path)
    tables = _run(_config(tmp_path), tmp_path)
    mse = float(tables["llm"]["llm_risk"].iloc[0])
    text = (tmp_path / "results" / "ess" / "ESS.md").read_text(encoding="utf-8")
    header = next(line for line in text.splitlines() if "LLM error" in line)
    row = text.splitlines()[text.splitlines().index(header) + 2]
    cells = [c.strip() for c in header.split("|")], [c.strip() for c in row.split("|")]
    value = float(cells[1][cells[0].index(next(c for c in cells[0] if c.startswith("LLM error")))])
    assert value == pytest.approx(np.sqrt(mse), rel=1e-3) and "rmse" in header


# ---- hostile input through the real CLI: one line naming the key or file, the rule and the value as written ------

BASE_ESS = {"data": '"d.csv"', "covariates": '["x1", "x2"]', "grid": "[5, 10]"}
OUTCOME = {"name": '"y"', "column": '"y"', "type": '"continuous"', "llm_column": '"g"', "comparators": '["lasso"]'}


def _toml(root, ess=None, outcome=None) -> str:
    ess = {**BASE_ESS, **(ess or {})}
    outcome = {**OUTCOME, **(outcome or {})}
    lines = [f'root = "{root}"', "[ess]"] + [f"{k} = {v}" for k, v in ess.items() if v is not None]
    lines += ["[[ess.outcomes]]"] + [f"{k} = {v}" for k, v in outcome.items() if v is not None]
    return "\n".join(lines) + "\n"


def _cli(tmp_path, toml: str):
    (tmp_path / "ess.toml").write_text(toml, encoding="utf-8")
    return CliRunner().invoke(main, ["ess", str(tmp_path / "ess.toml"), "--yes"])


CONFIG_CASES = [
    ({"rows": "-5"}, None, "[ess] rows = -5; it must be >= 0"),
    ({"seed": "-1"}, None, "[ess] seed = -1; it must be >= 0"),
    ({"seed": "4294967296"}, None, "[ess] seed = 4294967296; it must be <= 4294967295"),
    ({"trees": "0"}, None, "[ess] trees = 0; it must be >= 1"),
    ({"n_jobs": "0"}, None, "[ess] n_jobs = 0; it must be >= 1"),
    ({"alpha": '"0.05"'}, None, '[ess] alpha = "0.05"; it must be a number (no quotes)'),
    ({"alpha": "0.7"}, None, "[ess] alpha = 0.7; it must be < 0.5"),
    ({"grid": "[5, true]"}, None, "[ess] grid = [5, true]: element 2 (true) must be a whole number"),
    ({"grid": "[5, 2.5]"}, None, "[ess] grid = [5, 2.5]: element 2 (2.5) must be a whole number"),
    ({"grid": "[10, 5]"}, None, "[ess] grid = [10, 5]; it must be increasing positive integers"),
    ({"min_blocks": "2"}, None, "[ess] min_blocks = 2; it must be >= 3"),
    ({"band_level": "true"}, None, "[ess] band_level = true; it must be a number (no quotes)"),
    ({"covariates": '["x1", "y"]'}, None, '[ess.outcomes.0] column = "y" is also among [ess] covariates'),
    ({"test_variance": '"diff"'}, None, '[ess] test_variance = "diff"; choose one of "difference" or "sum"'),
    (None, {"max_new_tokens": "0"}, "[ess.outcomes.0] max_new_tokens = 0; it must be >= 1"),
    (None, {"loss": "2"}, '[ess.outcomes.0] loss = 2; choose one of "squared", "zero_one", "balanced_error" or'),
    ({"rows": "5", "rowz": "5"}, None, "[ess] has unknown key(s) ['rowz']"),
]


@pytest.mark.parametrize("ess, outcome, message", CONFIG_CASES, ids=[m[:40] for *_, m in CONFIG_CASES])
def test_config_schema_through_the_cli(tmp_path, ess, outcome, message):
    _write(tmp_path)
    result = _cli(tmp_path, _toml(tmp_path, ess, outcome))
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], result.output


def _latin1(path):
    path.write_bytes("x1,x2,y,g\n1,2,3,4\n1,2,3,caf\xe9\n".encode("latin-1"))


def _inf_y(path):
    _write(path.parent)
    frame = pd.read_csv(path)
    frame.loc[4, "y"] = np.inf
    frame.to_csv(path, index=False)


def _inf_x(path):
    _write(path.parent)
    frame = pd.read_csv(path)
    frame.loc[9, "x2"] = -np.inf
    frame.to_csv(path, index=False)


DATA_CASES = [
    ("d.csv", _latin1, "is not UTF-8 text (line 3: byte b'\\xe9', e.g. Latin-1 or Windows-1252); save it as CSV UTF-8"),
    ("d.csv", lambda p: p.write_bytes(b""), "d.csv is empty (no header, no rows)"),
    ("d.csv", lambda p: p.write_text("x1,x2,y,g\n"), "d.csv has a header but no rows"),
    ("d.csv", lambda p: p.mkdir(), "is a folder; give the data file itself"),
    ("d.xlsx", lambda p: p.write_bytes(b"PK\x03\x04 a workbook"), "d.xlsx is not a file the audit reads (an Excel workbook"),
    ("d.csv", _inf_y, "column 'y' ([ess.outcomes] 'y' column) has 1 infinite value(s), first at row 4 (inf)"),
    ("d.csv", _inf_x, "column 'x2' ([ess] covariates) has 1 infinite value(s), first at row 9 (-inf)"),
    ("d.csv", lambda p: p.write_text("x1,x1,y,g\n1,2,3,4\n"), "has duplicate column names ('x1' twice)"),
]


@pytest.mark.parametrize("name, make, message", DATA_CASES, ids=[m[:30] for *_, m in DATA_CASES])
def test_unreadable_data_through_the_cli(tmp_path, name, make, message):
    make(tmp_path / name)
    result = _cli(tmp_path, _toml(tmp_path, {"data": f'"{name}"'}))
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.output


def test_persona_with_an_empty_field_is_refused_before_the_model_is_asked(tmp_path):
    # Documented rule (data.check_persona_fields): a row whose persona field is missing or blank is refused, not
    # sent as "earns nan a year" and not silently dropped; the model is never loaded (NoModel would fail).
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x1": rng.normal(size=40), "x2": rng.normal(size=40), "y": [0, 1] * 20,
                          "income": ["$20,000"] * 40, "state": ["Ohio"] * 40})
    frame.loc[12, "income"] = np.nan
    frame.loc[17, "state"] = "  "
    frame.to_csv(tmp_path / "d.csv", index=False)
    outcome = {"type": '"discrete"', "llm_column": None, "comparators": '["rf"]', "labels": "{yes = 1, no = 0}",
               "prompt": '"You live in {state} and earn {income} a year. Yes or no?"'}
    result = _cli(tmp_path, _toml(tmp_path, {"trees": "5"}, outcome))
    assert result.exit_code == 2 and "loading model" not in result.output, result.output
    assert result.output.strip().splitlines() == [
        "error: [ess.outcomes] 'y' prompt: column 'state' is empty in 1 row(s), first at row 17, so the persona would "
        "read \"nan\" or nothing there; fill or drop those rows, or remove {state} from the prompt"]
    frame.loc[17, "state"] = "Ohio"
    frame.to_csv(tmp_path / "d.csv", index=False)
    result = _cli(tmp_path, _toml(tmp_path, {"trees": "5"}, outcome))
    assert "column 'income' is empty in 1 row(s), first at row 12" in result.output
