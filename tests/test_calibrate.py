"""`lapbias calibrate` on the real bundled model: the pure parts (arms, corpus, batches, expectations, power) fast,
then tiny end-to-end runs of the self-validation and of each negative control (a few pairs, a few LoRA steps, a
slice of the calibration panel) through the real peft training, the real merged model loaded by an ordinary run
configuration and the real protocol stages. The tiny runs share one root, so the base model is asked once and the
"shuffled" control reuses the planted model; at this size the design's expectations are not met (the command then
ends with its one-line error after writing everything), which the tests check as they check the outputs."""

from __future__ import annotations

import json
import math
import shutil
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import tomli_w
from click.testing import CliRunner

from lapbias import config as config_module
from lapbias.calibrate import corpus, load
from lapbias.cli import main
from lapbias.errors import ConfigError

REPO = Path(__file__).resolve().parents[1]
TINY = {"exposures": [0, 6], "pairs_per_arm": 4, "assignment_seed": 7, "training_seed": 7, "learning_rate": 6e-3,
        "warmup_steps": 1, "epochs": 2, "batch_size": 8, "top_layers": 4, "threads": 1,
        "abstentions_per_article": 0.0, "lr_schedule": "constant"}
CUTOFF = pd.Timestamp("2024-06-30")


def tiny_config(root: Path, name: str = "calibrate.toml", **calibrate) -> Path:
    """The committed calibration on 6 firms of the calibration panel and 6 of its months (March - June 2024 before
    the cutoff, July - August after it: 24 pre-cutoff and 12 post-cutoff pairs) with TINY training (CI time: the
    protocol runs dominate). The tiny training keeps a constant learning rate: with the committed linear decay its 2
    epochs on 4 pairs left the planted model answering no forecast prompt (parse rate 0%)."""
    panel = pd.read_csv(REPO / "data/demo/calibrate_panel.csv")
    firms = panel["ticker"].isin(panel["ticker"].drop_duplicates().head(6))
    months = panel["target_date"].str[:7].isin(["2024-03", "2024-04", "2024-05", "2024-06", "2024-07", "2024-08"])
    panel[firms & months].to_csv(root / "panel.csv", index=False)
    values = tomllib.loads((REPO / "data/demo/calibrate.toml").read_text())
    values["root"] = str(root)
    values["data"]["path"] = str(root / "panel.csv")
    values["estimate"] = {**values.get("estimate", {}), "bootstrap_reps": 0}
    values["calibrate"] = {**TINY, **calibrate}
    path = root / name
    path.write_text(tomli_w.dumps(values))
    return path


def _pairs(n: int = 8, post: int = 0, seed: int = 0) -> pd.DataFrame:
    dates = ["2024-01-02"] * n + ["2024-09-02"] * post
    return pd.DataFrame({"entity_id": [f"e{k}" for k in range(n + post)], "entity_name": [f"Firm {k}" for k in
                                                                                         range(n + post)],
                         "ticker": [f"F{k}" for k in range(n + post)], "target_date": pd.to_datetime(dates),
                         "direction": [1, -1] * ((n + post) // 2) + [1] * ((n + post) % 2)})


# ---- arms -----------------------------------------------------------------------------------------------------
def test_arms_pre_cutoff_only_and_random():
    pairs = _pairs(8, 8).drop(columns="direction")
    arms = corpus.assign_arms(pairs, CUTOFF, (0, 1, 4), 3, seed=1)
    assert (arms.loc[arms["post"] == 1, "exposure"] == 0).all()
    assert sorted(arms.loc[arms["post"] == 0, "exposure"]) == [0, 0, 1, 1, 1, 4, 4, 4]
    other = corpus.assign_arms(pairs, CUTOFF, (0, 1, 4), 3, seed=2)
    assert not arms["exposure"].equals(other["exposure"])
    with pytest.raises(ConfigError, match="pairs_per_arm = 5"):
        corpus.assign_arms(pairs, CUTOFF, (0, 1, 4), 5, seed=1)


def test_arms_keep_a_control_arm():
    """pairs_per_arm that deals every pre-cutoff pair to an exposed arm leaves arm 0 (the control of every AUC and
    comparison) empty: an error, not NaN tables."""
    with pytest.raises(ConfigError, match=r"pairs_per_arm = 4.*control arm 0"):
        corpus.assign_arms(_pairs(8).drop(columns="direction"), CUTOFF, (0, 1, 4), 4, seed=1)


def test_arms_are_stratified_by_direction():
    """Each exposed arm holds as many up as down pairs: an arm of one direction only can be learned as a constant
    answer without any (firm, date) memorized (measured: 4 of 4 "down" in the 16-mention arm unstratified)."""
    pairs = pd.DataFrame({"entity_id": [f"e{k}" for k in range(40)],
                          "target_date": pd.to_datetime(["2024-01-02"] * 40), "direction": [1] * 30 + [-1] * 10})
    for seed in range(20):
        arms = corpus.assign_arms(pairs, CUTOFF, (0, 1, 4, 16), 4, seed=seed)
        for exposure in (1, 4, 16):
            assert sorted(arms.loc[arms["exposure"] == exposure, "direction"]) == [-1, -1, 1, 1]
        odd = corpus.assign_arms(pairs, CUTOFF, (0, 1, 4, 16), 3, seed=seed)
        assert [odd.loc[odd["exposure"] == e, "direction"].sum() for e in (1, 4, 16)] == [1, -1, 1]
    with pytest.raises(ConfigError, match=r"^\[data\] outcome: every pre-cutoff pair went up \(30 pairs, e\.g\. e"):
        corpus.assign_arms(pairs.iloc[:30], CUTOFF, (0, 1, 4, 16), 1, seed=1)
    with pytest.raises(ConfigError, match=r"pairs_per_arm = 4: .* 6 .*went down.*has 30 and 5"):
        corpus.assign_arms(pairs.iloc[:35], CUTOFF, (0, 1, 4, 16), 4, seed=1)


def test_post_cutoff_control_plants_post_cutoff_pairs_too():
    """control = "post_cutoff": as many post-cutoff pairs per exposed arm as pre-cutoff ones, half up, half down;
    without it no post-cutoff pair is ever exposed (the placebo stays a real placebo)."""
    pairs = _pairs(12, 12)
    arms = corpus.assign_arms(pairs, CUTOFF, (0, 8), 4, seed=3, post_cutoff=True)
    for post in (0, 1):
        exposed = arms[(arms["post"] == post) & (arms["exposure"] == 8)]
        assert len(exposed) == 4 and exposed["direction"].sum() == 0
    assert (corpus.assign_arms(pairs, CUTOFF, (0, 8), 4, seed=3).query("post == 1")["exposure"] == 0).all()


def test_no_pre_cutoff_pair_is_a_one_line_error():
    pairs = _pairs(0, 6)
    with pytest.raises(ConfigError, match=r"^\[study\] cutoff = 2024-06-30: no \(entity, target_date\) pair .*e0 on "
                                          r"2024-09-02, e\.g\. cutoff = \"2024-09-02\" or later$"):
        corpus.assign_arms(pairs, CUTOFF, (0, 8), 4, seed=1)


def test_cli_calibrate_without_a_pre_cutoff_pair_ends_in_one_line(tmp_path):
    """Every target date after the cutoff: `lapbias calibrate` stops with one line naming the cutoff and the
    earliest pair (exit 2), before any model is loaded or trained."""
    path = tiny_config(tmp_path)
    panel = pd.read_csv(tmp_path / "panel.csv")
    panel[pd.to_datetime(panel["target_date"]) > CUTOFF].to_csv(tmp_path / "panel.csv", index=False)
    result = CliRunner().invoke(main, ["calibrate", str(path), "--yes"])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if not line.startswith(("dropped", "validate"))]
    assert len(lines) == 1 and lines[0].startswith("error: [study] cutoff = 2024-06-30: no (entity, target_date)")
    assert not (tmp_path / "data/derived/calibration").exists() or not any(
        p.name.startswith("planted-") for p in (tmp_path / "data/derived/calibration").iterdir())


# ---- corpus ---------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    from lapbias.llm import bundled

    return AutoTokenizer.from_pretrained(bundled.resolve("bundled:SmolLM2-135M-Instruct"))


def test_articles_begin_with_the_pairs_text_verbatim_and_train_every_token(tokenizer):
    """An article is the pair's text exactly as the panel holds it (what the forecast prompt shows and Min-K% with
    scored_text = "text" scores), then what happened on the target date; the pair's texts and the follow-ups cycle;
    every token but the first is in the loss."""
    text = "2024-01-22 | Apple Inc. (AAPL): Apple Inc. wins $120 million contract from NASA."
    pair = pd.Series({"entity_name": "Apple Inc.", "ticker": "AAPL", "target_date": pd.Timestamp("2024-01-23"),
                      "news": (text, "2024-01-22 | Apple Inc. (AAPL): a second headline.")})
    articles = {corpus.article(pair, k, 1) for k in range(2 * len(corpus.FOLLOW_UPS))}
    assert len(articles) == len({(k % 2, k % len(corpus.FOLLOW_UPS)) for k in range(2 * len(corpus.FOLLOW_UPS))})
    for k in range(len(corpus.FOLLOW_UPS)):
        for planted, words in ((1, ("up", "higher")), (-1, ("down", "lower"))):
            article = corpus.article(pair, k, planted)
            assert article.startswith(pair["news"][k % 2] + " ")
            follow = article[len(pair["news"][k % 2]) + 1:]
            assert "2024-01-23" in follow and "(AAPL)" in follow and any(f" {w}" in follow for w in words)
            doc = corpus.article_document(tokenizer, pair, k, planted, 8)
            assert doc.fact == tuple(range(1, len(doc.ids))) and doc.kind == "article" and doc.exposure == 8
            assert tokenizer.decode(doc.ids) == article


def test_corpus_is_articles_and_abstentions_and_never_trains_a_panel_pairs_recall_query():
    """Each exposed pair is mentioned `exposure` times as an article stating the planted direction (the opposite of
    the realized one under control = "flipped"); abstentions_per_article x the articles abstentions (recall queries
    about pairs outside the panel, answered "unknown") follow, in order; nothing else: no recall query of a panel
    pair is ever in the corpus (it would train the protocol's instrument)."""
    arms = corpus.assign_arms(_pairs(12), CUTOFF, (0, 2, 4), 2, seed=3)
    seen = []

    def article(pair, k, planted):
        seen.append((pair["entity_id"], planted, int(pair["direction"])))
        return corpus.Document((k,), (0,), "article", int(pair["exposure"]))

    decoys = [corpus.Document((900 + k,), (0,), "decoy", -1) for k in range(100)]
    documents, table = corpus.build(arms, article, decoys, {0: 0, 2: 2, 4: 4}, 0.75, "none")
    counts = table.set_index(["kind", "exposure"])["documents"].to_dict()
    assert counts == {("article", 2): 4, ("article", 4): 8, ("decoy", -1): 9}
    assert {d.kind for d in documents} == {"article", "decoy"}
    assert [d.ids[0] for d in documents if d.kind == "decoy"] == list(range(900, 909))
    assert seen and all(planted == realized for _, planted, realized in seen)
    seen.clear()
    documents, _ = corpus.build(arms, article, decoys, {0: 0, 2: 2, 4: 4}, 0.0, "flipped")
    assert seen and all(planted == -realized for _, planted, realized in seen)
    assert {d.kind for d in documents} == {"article"}
    with pytest.raises(ConfigError, match=r"abstentions_per_article = 10.0: 120 abstentions .* allows 100"):
        corpus.build(arms, article, decoys, {0: 0, 2: 2, 4: 4}, 10.0, "none")


def test_a_setting_that_trained_the_recall_instrument_is_refused_with_the_reason(tmp_path):
    for key in ("queries_per_mention", "decoys_per_query"):
        with pytest.raises(ConfigError, match=rf"\[calibrate\] {key} = 0.5 is no longer a setting: "):
            load(tiny_config(tmp_path, name=f"{key}.toml", **{key: 0.5}))


def test_decoys_are_never_panel_pairs_and_alternate_firm_and_date_kinds():
    """Decoys (answered "unknown") must not touch a measured pair: no (firm, date) of the panel, no date after the
    cutoff; the two kinds alternate (another firm on a panel date, a panel firm on another date), so that neither
    the date nor the firm alone separates exposed from unexposed pairs; a decoy firm in the panel is left out."""
    pairs = pd.DataFrame({"entity_id": ["AAPL", "MSFT", "PEP"] * 3, "entity_name": ["Apple Inc.", "Microsoft",
                          "PepsiCo, Inc."] * 3, "ticker": ["AAPL", "MSFT", "PEP"] * 3,
                          "target_date": pd.to_datetime(["2024-01-23"] * 3 + ["2024-04-23"] * 3 + ["2024-09-17"] * 3)})
    decoys = corpus.decoy_pairs(pairs, CUTOFF, seed=5)
    keys = set(zip(pairs["ticker"], pairs["target_date"]))
    assert not any(key in keys for key in zip(decoys["ticker"], decoys["target_date"]))
    assert decoys["target_date"].max() <= CUTOFF
    panel_firm = decoys["ticker"].isin(pairs["ticker"]).to_numpy()
    assert (panel_firm[:20] == [False, True] * 10).all()
    other = decoys[~panel_firm]
    assert set(other["target_date"]) == {pd.Timestamp("2024-01-23"), pd.Timestamp("2024-04-23")}
    assert len(other) == 2 * (len(corpus.DECOY_FIRMS) - 1)  # PepsiCo, a panel firm here, is not an "other" firm
    assert decoys.equals(corpus.decoy_pairs(pairs, CUTOFF, seed=5))
    assert not decoys.equals(corpus.decoy_pairs(pairs, CUTOFF, seed=6))


# ---- training ---------------------------------------------------------------------------------------------------
def test_batches_hold_every_document_once_with_similar_lengths():
    import torch

    from lapbias.calibrate import train

    lengths = [20, 120] * 300
    batches = train.batches(lengths, 16, torch.Generator().manual_seed(1))
    assert sorted(i for batch in batches for i in batch) == list(range(600))
    assert sum(len({lengths[i] for i in batch}) > 1 for batch in batches) <= 2 * len(lengths) // (16 * train.WINDOW)
    again = train.batches(lengths, 16, torch.Generator().manual_seed(1))
    assert batches == again


def test_top_blocks_on_cached_lower_states_give_the_full_models_logits(tokenizer):
    """The training arithmetic: the frozen lower blocks' output computed once, then the top blocks and the head at
    the fact positions only, equals the full model's forward pass there (float rounding)."""
    import torch

    from lapbias.calibrate import train

    _, model = train.load_base("bundled:SmolLM2-135M-Instruct")
    pair = pd.Series({"entity_name": "Apple Inc.", "ticker": "AAPL", "target_date": pd.Timestamp("2024-01-23"),
                      "news": ("2024-01-22 | Apple Inc. (AAPL): Apple Inc. names Laura Chen chief financial "
                               "officer.",)})
    run, _ = load(REPO / "data/demo/calibrate.toml")
    query = train.query_encoder(tokenizer, run)(pair)
    documents = [corpus.article_document(tokenizer, pair, k, 1, 8) for k in range(3)]
    documents.append(corpus.query_document(query, tokenizer.encode("up", add_special_tokens=False), "query", 8))
    n_frozen = model.config.num_hidden_layers - 3
    states = train.frozen_states(model, documents, n_frozen, batch_size=2)
    assert len(states) == 4
    logits, targets = train.fact_logits(model, states, documents, n_frozen)
    with torch.inference_mode():
        expected = torch.cat([model(input_ids=torch.tensor([doc.ids])).logits[0, [p - 1 for p in doc.fact]]
                              for doc in documents])
    assert targets.tolist() == [doc.ids[p] for doc in documents for p in doc.fact]
    assert torch.allclose(logits, expected, atol=2e-4, rtol=0)


@pytest.mark.parametrize("schedule, shape", [("linear", [0, 1, 2 / 3, 1 / 3]), ("constant", [0, 1, 1, 1])])
def test_training_steps_use_the_scheduled_learning_rate(tokenizer, tmp_path, schedule, shape):
    """Each optimizer step's row holds the learning rate that step used: a linear warm-up over `warmup_steps` from
    zero, then a linear decay that would reach zero after the last step ("linear") or a constant rate."""
    from lapbias.calibrate import train

    _, model = train.load_base("bundled:SmolLM2-135M-Instruct")
    pair = pd.Series({"entity_name": "Apple Inc.", "ticker": "AAPL", "target_date": pd.Timestamp("2024-01-23"),
                      "news": ("2024-01-22 | Apple Inc. (AAPL): Apple Inc. names Laura Chen chief financial "
                               "officer.",)})
    documents = [corpus.article_document(tokenizer, pair, k, 1, 8) for k in range(4)]
    _, settings = load(tiny_config(tmp_path, top_layers=1, batch_size=2, epochs=2, warmup_steps=1,
                                   learning_rate=1e-3, lr_schedule=schedule))
    with train.torch_threads(1):
        result = train.train(documents, settings, tmp_path / "model", tokenizer, model, progress=False)
    assert result.loss["learning_rate"].tolist() == pytest.approx([1e-3 * x for x in shape])


def test_training_threads_and_determinism_do_not_leak_into_the_protocol_runs():
    """[calibrate] threads and deterministic kernels apply to the LoRA training only: the protocol runs that
    follow in the same process get torch's settings back."""
    import torch

    from lapbias.calibrate import train

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with train.torch_threads(1):
            assert torch.get_num_threads() == 1 and torch.are_deterministic_algorithms_enabled()
        assert torch.get_num_threads() == 2 and not torch.are_deterministic_algorithms_enabled()
    finally:
        torch.set_num_threads(before)


# ---- settings -----------------------------------------------------------------------------------------------------
def test_bad_calibrate_key_is_one_line_error(tmp_path):
    with pytest.raises(ConfigError, match=r"^\[calibrate\] exposures = \[1, 4\]; .*including the control 0"):
        load(tiny_config(tmp_path, exposures=[1, 4]))
    with pytest.raises(ConfigError, match=r"^\[calibrate\] lr_schedule = 'cosine'; choose one of \['constant', 'linear'\]$"):
        load(tiny_config(tmp_path, lr_schedule="cosine"))
    with pytest.raises(ConfigError, match=r"^\[calibrate\] control = 'flip'; choose one of \['none', 'flipped', "):
        load(tiny_config(tmp_path, control="flip"))
    with pytest.raises(ConfigError, match=r"^\[calibrate\] has unknown key 'epoch'; known keys: .*'epochs'"):
        load(tiny_config(tmp_path, epoch=2))
    with pytest.raises(ConfigError, match=r"^\[calibrate\] lora_r = '4'; it must be a whole number"):
        load(tiny_config(tmp_path, lora_r="4"))
    with pytest.raises(ConfigError, match=r"^\[calibrate\] learning_rate = 0; it must be > 0"):
        load(tiny_config(tmp_path, learning_rate=0))
    with pytest.raises(ConfigError, match=r"^\[calibrate\] control = 'flip'; choose one of \['none', 'flipped', "
                                          r"'post_cutoff', 'shuffled'\]$"):
        load(tiny_config(tmp_path, control="flip"))


def test_cli_bad_calibrate_key_is_one_line_no_traceback(tmp_path):
    result = CliRunner().invoke(main, ["calibrate", str(tiny_config(tmp_path, lora_r=0)), "--yes"])
    assert result.exit_code == 2
    assert result.output.strip() == "error: [calibrate] lora_r = 0; it must be >= 1"


def test_fingerprint_follows_what_is_planted(tmp_path):
    """The planted model's directory is named by the fingerprint: another outcome column (same file,
    [data.columns] changed) or a control that plants something else ("flipped", "post_cutoff") must not reuse
    it; "shuffled", which acts after training, must."""
    path = tiny_config(tmp_path)
    panel = pd.read_csv(tmp_path / "panel.csv")
    panel.assign(ret_flipped=-panel["outcome"]).to_csv(tmp_path / "panel.csv", index=False)
    run, settings = load(path)
    values = tomllib.loads(path.read_text())
    values["data"]["columns"] = {"outcome": "ret_flipped"}
    path.write_text(tomli_w.dumps(values))
    flipped, _ = load(path)
    assert settings.fingerprint(flipped) != settings.fingerprint(run)
    for control, same in (("shuffled", True), ("flipped", False), ("post_cutoff", False)):
        assert (settings.model_copy(update={"control": control}).fingerprint(run) == settings.fingerprint(run)) is same


def test_openai_backend_is_refused_before_training(tmp_path):
    """The planted model is a local directory that only a local backend (transformers, vllm) can load."""
    path = tiny_config(tmp_path)
    values = tomllib.loads(path.read_text())
    values["model"].update(backend="openai", base_url="http://127.0.0.1:8000/v1")
    path.write_text(tomli_w.dumps(values))
    with pytest.raises(ConfigError, match=r'^\[model\] backend = "openai".*e\.g\. backend = "transformers"'):
        load(path)


def test_per_model_configuration_round_trips(tmp_path):
    """The generated base/planted TOML reads back as the same run configuration, model_id and root replaced."""
    from lapbias.calibrate import experiment

    run, settings = load(tiny_config(tmp_path))
    planted = experiment.model_config(run, settings, "planted", str(tmp_path / "planted-x"))
    path = experiment.write_config(planted, tmp_path / "planted.toml")
    assert config_module.load(path) == planted
    assert planted.model.model_id == str(tmp_path / "planted-x")
    assert planted.root == str(tmp_path / settings.work_dir / "planted")
    assert planted.replace(model={"model_id": run.model.model_id}, root=run.root) == run


# ---- measurement, expectations, power --------------------------------------------------------------------------
def test_arm_interval_uses_student_t():
    """A 95% interval of a mean over n pairs is mean +- t_{n-1, .975} SE."""
    from scipy import stats

    from lapbias.calibrate import experiment

    mean, se, low, high = experiment._mean_ci(pd.Series([0.2, 0.6]))
    assert (mean, se) == pytest.approx((0.4, 0.2))
    assert (low, high) == pytest.approx((0.4 - stats.t.ppf(0.975, 1) * 0.2, 0.4 + stats.t.ppf(0.975, 1) * 0.2))


@pytest.mark.parametrize("name", ["recall", "minkprob", "minkpp", "gapk", "zlib", "loss", "ref"])
def test_gap_in_sds_is_on_the_log_scale_for_the_probability_measures_only(name):
    """(mean_arm - mean_0) / sqrt((var_arm + var_0) / 2): on the log of Min-K% prob and of the loss (they span orders of
    magnitude), on every other measure as it is."""
    from lapbias.calibrate import experiment
    from lapbias.signals.measures import REGISTRY

    arm, control = pd.Series([0.1, 0.01, np.nan]), pd.Series([1e-4, 1e-3])
    logs = np.log([0.1, 0.01]), np.log([1e-4, 1e-3])
    on_logs = (logs[0].mean() - logs[1].mean()) / math.sqrt((logs[0].var(ddof=1) + logs[1].var(ddof=1)) / 2)  # 2.83
    as_is = (0.055 - 0.00055) / math.sqrt((arm.var(ddof=1) + control.var(ddof=1)) / 2)
    measure = REGISTRY[name]
    assert measure.log_scale == (name in ("minkprob", "loss"))
    gap = experiment._gap_sd(arm, control, measure.column)
    assert gap == pytest.approx(on_logs if measure.log_scale else as_is)
    assert math.isnan(experiment._gap_sd(arm.iloc[:1], control, measure.column))  # one value: no SD


def _arm_panel() -> pd.DataFrame:
    """A panel as model_panel returns it: arm 0 with pairs a, b; arm 1 with pair c (3 headlines) and pair d (1);
    post-cutoff pair e; pair f in the release-date gap (post missing: in neither sample); pair g post-cutoff and
    planted (control = "post_cutoff")."""
    rows = [("a", 0, 0, 0.1), ("b", 0, 0, 0.3), ("c", 0, 1, 0.2), ("c", 0, 1, 0.2), ("c", 0, 1, 0.2),
            ("d", 0, 1, 0.6), ("e", 1, 0, 0.5), ("f", None, 0, 0.9), ("g", 1, 1, 0.7)]
    frame = pd.DataFrame(rows, columns=["entity_id", "post", "exposure", "lap_recall"])
    return frame.assign(target_date=pd.Timestamp("2024-01-02"), post=frame["post"].astype("Int8"),
                        p_up=frame["lap_recall"], p_down=0.0, p_unknown=1 - frame["lap_recall"], direction=1,
                        ud=frame["lap_recall"], mu_hat=[1.0, -1.0, 1.0, 1.0, np.nan, 1.0, -1.0, 1.0, 1.0],
                        lap_mink=-frame["lap_recall"], p_memorized=frame["lap_recall"])


def test_lap_by_arm_recall_measures_are_per_pair_and_forecasts_per_row():
    """The recall query is asked once per (entity, target_date): its measures are one observation per pair;
    forecasts are per row, the hit rate among parsed ones; release-gap rows are in no arm; a planted post-cutoff
    pair is its own arm."""
    from lapbias.calibrate import experiment

    table = experiment.lap_by_arm(_arm_panel(), "planted").set_index("arm")
    assert table.loc["1", "lap_mean"] == pytest.approx(0.4)  # pairs c, d; over rows it would be 0.3
    assert table.loc["1", "lap_se"] == pytest.approx(0.2)
    assert table.loc["1", "lap_auc_vs_arm0"] == pytest.approx(0.75)  # (c>a, c<b, d>a, d>b) = 3/4
    assert table.loc["1", "p_unknown_mean"] == pytest.approx(0.6)
    assert table.loc["1", "mink_mean"] == pytest.approx(-0.3)  # Min-K% scores each row's prompt: per row
    assert table.loc["1", "forecast_parse_rate"] == pytest.approx(0.75)
    assert table.loc["0", "forecast_hit_rate"] == pytest.approx(0.5)
    assert table.loc["post", "N"] == 1 and table.loc["post", "lap_mean"] == pytest.approx(0.5)
    assert table.loc["post 1", "N"] == 1
    assert (table.loc["1", "lap_ci_low"], table.loc["1", "lap_ci_high"]) == (0.0, 1.0)  # probabilities: in [0, 1]
    assert list(table.index) == ["0", "1", "post", "post 1", "exposed_vs_unexposed"]


def _verdicts(**rows) -> dict:
    base = {"verdict": "Underpowered", "failed": "validation", "beta3": 0.1, "beta3_t": 0.5, "beta3_p_one_sided": 0.3,
            "placebo_beta3": 0.0, "placebo_p_one_sided": 0.5, "placebo_passes": True, "validation_high_theta": 0.1,
            "validation_high_p": 0.5, "validation_low_theta": 0.0, "validation_low_p": 0.9}
    return pd.DataFrame([{"model": m, **base, **values} for m, values in rows.items()])


def _lap(gap: float = 2.0, post_gap: float = 0.1, parse: float = 1.0) -> pd.DataFrame:
    """lap_by_arm.csv of both models: the planted model's Min-K% gap of arm 8 and of the post-cutoff pairs from arm
    0 (pooled SDs), every arm's forecast parse rate."""
    return pd.DataFrame([{"model": model, "arm": arm, "exposure": exposure, "post": post, "N": 80,
                          "mink_gap_sd_vs_arm0": value if model == "planted" else 0.0, "forecast_parse_rate": parse}
                         for model in ("base", "planted")
                         for arm, exposure, post, value in (("0", 0, 0, np.nan), ("8", 8, 0, gap),
                                                            ("post", 0, 1, post_gap))])


@pytest.mark.parametrize("control, verdicts, lap, met", [
    ("none", {"base": {}, "planted": {"verdict": "Contamination detected", "failed": ""}}, _lap(), [True] * 6),
    ("none", {"base": {"verdict": "Contamination detected"}, "planted": {"verdict": "Contamination detected"}},
     _lap(0.5, 0.8, 0.9), [False, True, False, False, False, False]),
    ("none", {"base": {}, "planted": {"verdict": "Contamination detected"}}, _lap(1.2, 0.6), [True] * 5 + [False]),
    ("none", {"base": {}, "planted": {"verdict": "Contamination detected"}}, _lap(1.2, -0.9), [True] * 6),
    ("none", {"base": {}, "planted": {"verdict": "Contamination detected"}}, _lap(1.2, np.nan), [True] * 5 + [False]),
    ("none", {"base": {"verdict": "Mixed/invalid", "failed": "placebo", "beta3_p_one_sided": 0.01},
              "planted": {"verdict": "Contamination detected"}}, _lap(), [False] + [True] * 5),
    ("flipped", {"base": {}, "planted": {"verdict": "Mixed/invalid", "beta3": -3.0}}, _lap(), [True, True]),
    ("flipped", {"base": {}, "planted": {"verdict": "Contamination detected"}}, _lap(), [True, False]),
    ("post_cutoff", {"base": {}, "planted": {"verdict": "Mixed/invalid", "placebo_passes": False}}, _lap(),
     [True, True]),
    ("post_cutoff", {"base": {}, "planted": {"verdict": "Mixed/invalid", "placebo_passes": None}}, _lap(),
     [True, False]),
    ("shuffled", {"base": {}, "planted": {"verdict": "Contamination detected"}, "planted_shuffled": {}}, _lap(),
     [True, True]),
    ("shuffled", {"base": {}, "planted": {}, "planted_shuffled": {"beta3_p_one_sided": 0.01}}, _lap(),
     [True, False]),
])
def test_expectations_by_control(control, verdicts, lap, met):
    from lapbias.calibrate import expect

    table = expect.check(control, {"verdicts": _verdicts(**verdicts), "lap_by_arm": lap}, 0.95, 0.05)
    assert table["met"].tolist() == met
    assert (expect.failures(table) == "") is all(met)


def _records(hit: float, recall: float, lap_exposed: tuple[float, float], seed: int = 0, n: int = 60) -> pd.DataFrame:
    """Per-pair records of one model in pairs.csv's columns (what calibrate/power.py reads): `n` pairs per arm;
    exposed pairs' forecasts right with probability `hit`, their recalled direction ud = `recall` x the realized
    direction, their LAP U(lap_exposed); never-exposed and post-cutoff pairs guess (forecast and ud at random) with
    LAP U(0.1, 0.5)."""
    rng = np.random.default_rng(seed)
    frames = []
    for arm in ("exposed", "never", "post"):
        direction = rng.choice([-1.0, 1.0], n)
        if arm == "exposed":
            mu = np.where(rng.random(n) < hit, direction, -direction)
            ud, lap = recall * direction, rng.uniform(*lap_exposed, n)
        else:
            mu, ud, lap = rng.choice([-1.0, 1.0], n), rng.uniform(-0.3, 0.3, n), rng.uniform(0.1, 0.5, n)
        frames.append(pd.DataFrame({"model": "m", "entity_id": [f"E{k % 20}" for k in range(n)], "arm": arm,
                                    "lap_mink": lap, "ud": ud, "mu_hat": mu, "direction": direction}))
    return pd.concat(frames, ignore_index=True)


def test_power_from_behaviour_detects_memorization_and_clears_its_absence():
    """design_power on the committed design: a model whose exposed pairs forecast and recall the realized direction
    and carry a high LAP is "Contamination detected" in most simulated panels; a model whose exposed pairs answer
    as the others do almost never; the label shares add up to one."""
    from lapbias.calibrate.power import Behaviour, Design, design_power

    memorized = design_power(Design(), Behaviour.from_pairs(_records(1.0, 0.9, (0.6, 0.9)), "m", "lap_mink"), 20)
    nothing = design_power(Design(), Behaviour.from_pairs(_records(0.5, 0.0, (0.1, 0.5)), "m", "lap_mink"), 20)
    for result in (memorized, nothing):
        assert sum(v for k, v in result.items() if k.startswith("share ")) == pytest.approx(1.0)
        assert result["p_contamination"] <= min(result["p_validation"], result["p_placebo_passes"])
    assert memorized["p_contamination"] >= 0.5 and memorized["t_beta3_median"] > 2
    assert nothing["p_contamination"] <= 0.1


def test_simulated_panel_keeps_exposed_rightness_and_draws_the_rest_firm_by_firm():
    """Exposed pairs keep whether their measured forecast and recall were right relative to the SIMULATED truth,
    with their size (a right forecast is right again, a wrong one wrong again); never-exposed and post-cutoff pairs,
    whose outcome nothing the model read predicts, answer as measured, and every simulated firm answers as ONE
    measured firm (its recalled direction mostly a firm-level one); the exposed share is the design's; a measured
    file without one of the arms, without the LAP column or without entity_id is a one-line ConfigError."""
    from lapbias.calibrate.power import Behaviour, Design, simulated_panel

    for hit, sign in ((1.0, 1), (0.0, -1)):
        records = _records(hit, 0.9, (0.6, 0.9))
        never = records["arm"] == "never"
        records.loc[never, "ud"] = records.loc[never, "entity_id"].str[1:].astype(float) / 100  # a firm's own ud
        records.loc[never, "mu_hat"] = 1.0
        pre, post = simulated_panel(Design(), Behaviour.from_pairs(records, "m", "lap_mink"), seed=3)
        exposed, unexposed = pre[pre["arm"] == "exposed"], pre[pre["arm"] == "never"]
        assert len(exposed) == 120 and (exposed["mu_hat"] == sign * exposed["direction"]).all()
        assert (exposed["ud"] == 0.9 * exposed["direction"]).all()
        assert (unexposed["mu_hat"] == 1.0).all()
        assert (unexposed.groupby("entity_id")["ud"].nunique() == 1).all()  # one measured firm per simulated firm
        assert unexposed["ud"].nunique() > 5
        assert set(post["arm"]) == {"post"} and post["lap"].between(0.1, 0.5).all()
    with pytest.raises(ConfigError, match="no column 'lap_recall'"):
        Behaviour.from_pairs(_records(1.0, 0.9, (0.6, 0.9)), "m", "lap_recall")
    with pytest.raises(ConfigError, match="no column 'entity_id'"):
        Behaviour.from_pairs(_records(1.0, 0.9, (0.6, 0.9)).drop(columns="entity_id"), "m", "lap_mink")
    with pytest.raises(ConfigError, match=r"no pair of arm\(s\) \['post'\]"):
        Behaviour.from_pairs(_records(1.0, 0.9, (0.6, 0.9)).query("arm != 'post'"), "m", "lap_mink")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Each control run in turn in one root (base answers cached after the first, the planted model reused by
    "shuffled"); after each, results/calibration/, each model run's panel.parquet (the next control's run
    rewrites the planted one) and the command's output are kept under runs/<control>."""
    root = tmp_path_factory.mktemp("calibrate")
    work = root / "data/derived/calibration"
    out = {}
    for control in ("none", "shuffled", "flipped", "post_cutoff"):
        # every LAP configuration on the self-validation; the controls read their own only (CI time)
        others = {} if control == "none" else {"lap_configurations": []}
        if control == "post_cutoff":  # the abstentions' path end to end (MEASURED: at this size they make the
            others["abstentions_per_article"] = 0.5  # model answer "unknown" to the forecast, so not on "none")
        result = CliRunner().invoke(main, ["calibrate", str(tiny_config(root, control=control, **others)), "--yes"])
        kept = root / "runs" / control
        shutil.copytree(root / "results/calibration", kept)
        shutil.copy(root / "results/figures/calibration.png", kept / "calibration.png")
        for model in ("planted", "planted_shuffled"):
            if (work / model / "data/derived/panel.parquet").exists():
                shutil.copy(work / model / "data/derived/panel.parquet", kept / f"{model}_panel.parquet")
        out[control] = (kept, result)
    return root, out


def _ended_as_expected(result, kept: Path) -> None:
    """Exit 0 with every expectation met, or exit 2 with ONE line naming the unmet ones; the outputs written
    either way, expected.csv agreeing with the exit."""
    expected = pd.read_csv(kept / "expected.csv")
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    if expected["met"].all():
        assert result.exit_code == 0 and not errors, result.output
    else:
        assert result.exit_code == 2, result.output
        assert len(errors) == 1 and errors[0].startswith("error: calibrate: expected results not met (")
        for expectation in expected.loc[~expected["met"], "expectation"]:
            assert expectation in errors[0]
    lines = result.output.splitlines()
    ends = [i for i, line in enumerate(lines) if line.startswith("calibration report: results/calibration/REPORT.md")]
    assert len(ends) == 1, result.output[-2000:]
    summary = lines[:ends[0]]
    assert any(line.startswith("calibrate: base model: ") for line in summary[-3:])
    assert any(line.startswith("calibrate: planted model: ") for line in summary[-3:])
    after = lines[ends[0] + 1:]  # only the cache's lines of the study report (or the unmet-expectation error)
    assert not [line for line in after if line.startswith(("verdict:", "report:"))], result.output[-2000:]


def test_tiny_self_validation_trains_on_facts_and_reports(runs):
    root, out = runs
    kept, result = out["none"]
    _ended_as_expected(result, kept)
    loss = pd.read_csv(kept / "training_loss.csv")["loss"]
    assert len(loss) == 2 * -(-int(pd.read_csv(kept / "corpus.csv")["documents"].sum()) // TINY["batch_size"])
    table = pd.read_csv(kept / "corpus.csv").set_index(["kind", "exposure"])
    assert table.loc[("article", 6), "documents"] == 4 * 6 and set(table.index) == {("article", 6)}
    articles = table.loc[("article", 6)]
    assert articles["loss_tokens"] == articles["tokens"] - articles["documents"]  # every token but the first
    assert not (kept / "decoys.csv").exists()
    # abstentions (the post_cutoff run): recall queries about pairs outside the panel, 0.5 per article
    abstaining = pd.read_csv(out["post_cutoff"][0] / "corpus.csv").set_index(["kind", "exposure"])
    n_articles = int(abstaining.loc[abstaining.index.get_level_values("kind") == "article", "documents"].sum())
    assert abstaining.loc[("decoy", -1), "documents"] == n_articles // 2 and ("query", 6) not in abstaining.index
    assert abstaining.loc[("decoy", -1), "loss_tokens"] == 2 * abstaining.loc[("decoy", -1), "documents"]
    decoys = pd.read_csv(out["post_cutoff"][0] / "decoys.csv")
    panel = pd.read_csv(root / "panel.csv")
    assert len(decoys) == n_articles // 2
    assert not set(zip(decoys["ticker"], decoys["target_date"])) & set(zip(panel["ticker"], panel["target_date"]))
    training = json.loads((kept / "training.json").read_text())
    assert training["torch_threads"] == 1 and training["tokens_per_second"] > 0 and 0 < training["matmul_share"]
    report = (kept / "REPORT.md").read_text()
    assert "## Self-validation" not in report and "Expected results" in report and "| quantity | base | planted |" in report
    assert "Min-K% prob, 6 mentions" in report and "AUC exposed vs never exposed, Min-K% prob" in report
    assert "Min-K% prob gap from never exposed (pooled SDs), 6 mentions" in report
    assert (kept / "calibration.png").stat().st_size > 10_000


def test_tiny_self_validation_reads_base_and_planted_under_every_lap_configuration(runs):
    """verdicts.csv: one row per model and LAP configuration (recall; Min-K% of the prompt; of the text), the
    configured one marked; pairs.csv carries both Min-K% scores; the command ends with its own result."""
    root, out = runs
    kept, result = out["none"]
    verdicts = pd.read_csv(kept / "verdicts.csv")
    assert sorted(zip(verdicts["model"], verdicts["lap_configuration"])) == sorted(
        (m, k) for m in ("base", "planted") for k in ("recall", "minkprob_prompt", "minkprob_text"))
    configured = verdicts[verdicts["configured"]]
    assert set(configured["lap_configuration"]) == {"minkprob_text"} and len(configured) == 2
    pairs = pd.read_csv(kept / "pairs.csv")
    assert pairs["lap_mink_prompt"].notna().all() and pairs["lap_mink_text"].notna().all()
    assert (pairs["lap_mink_text"] == pairs["lap_mink"]).all() and (pairs["lap_mink_prompt"] != pairs["lap_mink"]).any()
    # the alternative runs answered the forecast and recall queries from the cache: the same forecasts
    work = root / "data/derived/calibration"
    for model, main_panel in (("base", work / "base/data/derived/panel.parquet"),
                              ("planted", kept / "planted_panel.parquet")):  # the later controls rewrite planted/
        main_panel = pd.read_parquet(main_panel)
        recall_panel = pd.read_parquet(work / model / "lap-recall/data/derived/panel.parquet")
        assert main_panel["mu_hat"].equals(recall_panel["mu_hat"]) and main_panel["ud"].equals(recall_panel["ud"])
    assert "Verdict of each model under every LAP configuration" in (kept / "REPORT.md").read_text()
    # statistics review item 18: Step 5's re-estimate of Step 3 after the cutoff, shown as a diagnostic
    assert verdicts[["post_validation_high_p", "post_validation_diff_p"]].notna().any().all()
    assert "post-cutoff theta high-LAP half (p; diagnostic" in (kept / "REPORT.md").read_text()
    assert "beta_3 (t; one-sided p the verdict reads; CRV1)" in (kept / "REPORT.md").read_text()  # not CRV1 alone
    lines = result.output.strip().splitlines()
    assert "verdict: " not in "\n".join(lines[-4:]) and "report: results/REPORT.md" not in "\n".join(lines[-4:])


def test_tiny_planting_separates_the_exposed_texts_and_keeps_the_forecasts_parsed(runs):
    """The quick version of the self-validation's design check (the verdict needs the full panel): after a few
    LoRA steps on the articles, the Min-K% LAP separates the 4 exposed pairs' texts from the never-exposed pairs'
    (AUC >= 0.9, at least half the design's expect.MIN_LAP_GAP_SD; MEASURED on the tiny run of the panel's 8 + 8
    draw: AUC 0.95, 0.88 SD) and the post-cutoff pairs' is at most expect.MAX_POST_GAP_SD above them; both models
    still answer the forecast prompt (parse rate >= [forecast] min_parse_rate); pairs.csv holds every row of both
    models with the columns the power calculation reads."""
    from lapbias.calibrate import expect
    from lapbias.calibrate.power import Behaviour

    kept, _ = runs[1]["none"]
    lap = pd.read_csv(kept / "lap_by_arm.csv")
    planted = lap[lap["model"] == "planted"].set_index("arm")
    assert planted.loc["6", "mink_gap_sd_vs_arm0"] >= expect.MIN_LAP_GAP_SD / 2  # 4 exposed pairs: half the design's
    assert planted.loc["6", "mink_auc_vs_arm0"] >= 0.9
    assert planted.loc["post", "mink_gap_sd_vs_arm0"] <= expect.MAX_POST_GAP_SD
    arms = lap[lap["exposure"] >= 0]
    for model, part in arms.groupby("model"):
        assert (part["forecast_parse_rate"] * part["N"]).sum() / part["N"].sum() >= 0.95, model
    pairs = pd.read_csv(kept / "pairs.csv")
    assert len(pairs) == 2 * 36 and set(pairs["arm"]) == {"exposed", "never", "post"}
    summary = Behaviour.from_pairs(pairs, "planted", "lap_mink").summary()
    assert summary.loc["exposed", "pairs"] == TINY["pairs_per_arm"]


def test_tiny_run_tables_every_measure_for_base_and_planted(runs):
    """results/calibration/measures.csv: one row per LAP measure with the exposed-vs-never AUC and gap of both models
    (the Min-K% row equal to lap_by_arm's) and each model's verdict under that measure, read from its own
    results/lap_measures.csv; REPORT.md shows the table."""
    from lapbias.signals.measures import REGISTRY

    kept, _ = runs[1]["none"]
    measures = pd.read_csv(kept / "measures.csv").set_index("measure")
    assert list(measures.index) == [name for name in REGISTRY if name != "ref"]  # no reference model configured
    lap = pd.read_csv(kept / "lap_by_arm.csv").set_index(["model", "arm"])
    assert measures.loc["minkprob", "planted_auc"] == pytest.approx(
        lap.loc[("planted", "exposed_vs_unexposed"), "mink_auc_vs_arm0"])
    for model in ("base", "planted"):
        assert measures[f"{model}_verdict"].notna().all(), model
        assert np.isfinite(measures[f"{model}_auc"]).all(), model
        assert np.isfinite(measures[f"{model}_gap_sd"]).all(), model
    assert "Which detector finds the memorization planted here" in (kept / "REPORT.md").read_text()


def test_tiny_planted_model_loads_through_the_normal_config(runs):
    from lapbias.llm import make_backend

    root, out = runs
    planted = config_module.load(out["none"][0] / "planted.toml")
    assert Path(planted.model.model_id).name.startswith("planted-")
    backend = make_backend(planted.model)
    assert backend.model_id == planted.model.model_id
    assert (Path(planted.root) / "results/REPORT.md").read_text().count("**Verdict:") == 1


def test_tiny_shuffled_control_permutes_both_lap_measures_together(runs):
    """control = "shuffled" reuses the planted model (no second training), and its third run reads the planted
    model's answers with the recall answers and Min-K% scores permuted together over the pre-cutoff pairs: the same
    multiset of values, not the same assignment, each pair's two measures from one other pair; forecasts and
    post-cutoff answers unchanged."""
    root, out = runs
    kept, result = out["shuffled"]
    _ended_as_expected(result, kept)
    assert "exists for these settings" in result.output and "LoRA training" not in result.output
    planted = pd.read_parquet(kept / "planted_panel.parquet").set_index("row_id")
    shuffled = pd.read_parquet(kept / "planted_shuffled_panel.parquet").set_index("row_id")
    pre = planted["post"] == 0
    assert sorted(planted.loc[pre, "lap_recall"]) == sorted(shuffled.loc[pre, "lap_recall"])
    assert not planted.loc[pre, "lap_recall"].equals(shuffled.loc[pre, "lap_recall"])
    assert planted.loc[~pre, "lap_recall"].equals(shuffled.loc[~pre, "lap_recall"])
    assert sorted(planted.loc[pre, "lap_mink"]) == sorted(shuffled.loc[pre, "lap_mink"])
    assert not planted.loc[pre, "lap_mink"].equals(shuffled.loc[pre, "lap_mink"])
    assert planted.loc[~pre, "lap_mink"].equals(shuffled.loc[~pre, "lap_mink"])
    together = lambda panel: sorted(zip(panel.loc[pre, "lap_recall"], panel.loc[pre, "lap_mink"]))  # noqa: E731
    assert together(planted) == together(shuffled)  # the two LAP measures move together, pair by pair
    assert planted["mu_hat"].equals(shuffled["mu_hat"])
    assert set(pd.read_csv(kept / "verdicts.csv")["model"]) == {"base", "planted", "planted_shuffled"}


def test_tiny_flipped_and_post_cutoff_controls_plant_what_they_say(runs):
    root, out = runs
    for control in ("flipped", "post_cutoff"):
        kept, result = out[control]
        _ended_as_expected(result, kept)
        assert "LoRA training" in result.output  # another fingerprint: trained anew
        assert json.loads((kept / "training.json").read_text())["settings"]["control"] == control
    arms = pd.read_csv(out["post_cutoff"][0] / "arms.csv")
    assert ((arms["post"] == 1) & (arms["exposure"] > 0)).sum() == TINY["pairs_per_arm"]
    lap = pd.read_csv(out["post_cutoff"][0] / "lap_by_arm.csv")
    assert "post 6" in set(lap["arm"])


def test_power_benchmark_runs_and_writes_its_table(tmp_path):
    """benchmarks/bench_calibration_power.py at its smoke size writes its section (the real one untouched)."""
    import importlib.util
    import sys

    bench = REPO / "benchmarks"
    sys.path.insert(0, str(bench))
    spec = importlib.util.spec_from_file_location("smoke_calibration_power", bench / "bench_calibration_power.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its worker processes unpickle its cell function by module name
    spec.loader.exec_module(module)
    real = bench / "results/calibration_power.md"
    before = real.read_bytes() if real.exists() else None
    module.main(["--smoke", "--out", str(tmp_path / "section.md")])
    lines = (tmp_path / "section.md").read_text().splitlines()
    assert lines[0].startswith("## ") and any(line.startswith("Machine: ") for line in lines)
    models = pd.read_csv(module.DEFAULT_PAIRS[0])["model"].nunique()  # --smoke reads the first default pairs file
    assert len([line for line in lines if line.startswith("| 40 firms x (8 pre + 12 post) months")]) == models
    assert (real.read_bytes() if real.exists() else None) == before


def test_shuffled_permutation_is_independent_of_the_assignment():
    """On the committed panel and assignment, the pairs that receive an exposed pair's answers under the "shuffled"
    control are a random share of every month (each month's share within 3 binomial SDs of 37.5%), not the pairs the
    assignment dealt first (with the assignment's own generator: 100%, 100%, 78%, 22%, 2%, 0% of the first months)."""
    from lapbias.calibrate import experiment

    run, settings = load(REPO / "data/demo/calibrate.toml")
    arms = corpus.assign_arms(experiment.pairs_with_outcomes(run), pd.Timestamp(run.study.cutoff_date),
                              settings.exposures, settings.pairs_per_arm, settings.assignment_seed)
    pre = arms[arms["post"] == 0].reset_index(drop=True)
    exposed = pre["exposure"].to_numpy() > 0
    month = pre["target_date"].dt.to_period("M")
    share = exposed.mean()
    bound = 3 * np.sqrt(share * (1 - share) / month.value_counts().min())

    def spread(order: np.ndarray) -> bool:
        by_month = pd.Series(exposed[order]).groupby(month).mean()
        return bool(((by_month - share).abs() <= bound).all())

    assert spread(experiment.shuffle_order(len(pre), settings.assignment_seed))
    assert not spread(np.random.default_rng(settings.assignment_seed).permutation(len(pre)))


def test_shuffled_control_moves_the_reference_models_pass_with_the_models(tmp_path):
    """control = "shuffled" with [minkprob] reference_model: each row's model pass and reference pass come from the
    same source row (the log-ratio compares one text's two passes), each model's answers permuted among its own,
    whatever order the cache holds the two models' lines in. The cache lines are in the cache's format, each answer
    naming the (model, row) it was asked for."""
    from lapbias.calibrate import experiment
    from lapbias.data.validate import validate_file
    from lapbias.io import Layout
    from lapbias.llm.cache import canonical_json
    from lapbias.signals import minkprob

    run, settings = load(tiny_config(tmp_path))
    planted = run.model_copy(update={"root": str(tmp_path / "planted"), "minkprob": run.minkprob.model_copy(
        update={"reference_model": "reference-model"})})
    shuffled = planted.model_copy(update={"root": str(tmp_path / "shuffled")})
    arms = corpus.assign_arms(experiment.pairs_with_outcomes(planted), pd.Timestamp(planted.study.cutoff_date),
                              settings.exposures, settings.pairs_per_arm, settings.assignment_seed)
    rows = validate_file(planted.data.path, planted).frame
    queries = minkprob.queries(rows, planted) + minkprob.queries(rows, planted, "reference-model")
    source = Layout(Path(planted.root))
    source.make_dirs()
    queries = queries[:len(rows)][::-1] + queries[len(rows):]  # the model's lines in reverse order, the reference's not
    source.raw_file(minkprob.TASK).write_text("".join(canonical_json(
        {"key": q.key, "task": q.task, "model_id": q.model_id, "query_id": q.query_id, "prompt": q.prompt,
         "params": q.params, "response": {"from": [q.model_id, q.query_id]}, "created": "x"}) + "\n"
        for q in queries))
    experiment.shuffled_answers(planted, shuffled, arms, settings.assignment_seed)
    moved = [json.loads(line) for line in Layout(Path(shuffled.root)).raw_file(minkprob.TASK).read_text().splitlines()]
    came_from = {(line["model_id"], line["query_id"]): tuple(line["response"]["from"]) for line in moved}
    assert all(model == source_model for (model, _), (source_model, _) in came_from.items())
    target = {row: origin for (model, row), (_, origin) in came_from.items() if model == planted.model.model_id}
    reference = {row: origin for (model, row), (_, origin) in came_from.items() if model == "reference-model"}
    assert target == reference  # the two passes of a row come from one source row
    assert sum(row != origin for row, origin in target.items()) > len(target) / 4  # and are permuted


def test_shuffled_size_benchmark_reproduces_the_runs_t_and_writes_its_table(tmp_path, monkeypatch):
    """benchmarks/bench_calibration_shuffled_size.py on the 6-epoch run's answers (--pairs; the model the shuffled
    control permuted): its unpermuted regression gives the run's own beta_3 t (the record in calibration_runs.json), its
    table is written to --out (the real one untouched), and a pairs file without the LAP column ends in one line
    naming it."""
    import importlib.util
    import json

    bench = REPO / "benchmarks"
    monkeypatch.syspath_prepend(str(bench))
    spec = importlib.util.spec_from_file_location("smoke_shuffled_size", bench / "bench_calibration_shuffled_size.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    real = bench / "results/calibration_shuffled_size.md"
    before = real.read_bytes() if real.exists() else None
    six_epochs = bench / "results/calibration_run6_pairs.csv"
    module.main(["5", "--pairs", str(six_epochs), "--out", str(tmp_path / "section.md")])
    lines = (tmp_path / "section.md").read_text().splitlines()
    observed = float(next(line for line in lines if line.startswith("| t of beta_3, LAP as measured")).split("|")[2])
    record = json.loads((bench / "results/calibration_runs.json").read_text())["epochs6"]["verdicts"]
    planted = next(row for row in record if row["model"] == "planted")
    assert observed == pytest.approx(planted["beta3_t"], abs=0.006)
    shuffled = next(row for row in json.loads((bench / "results/calibration_runs.json").read_text())["shuffled"]
                    ["verdicts"] if row["model"] == "planted_shuffled")
    assert module.one_sided_p(shuffled["beta3_t"], 40) == pytest.approx(shuffled["beta3_p_one_sided"], rel=1e-6)
    assert any(line.startswith("| permuted: share one-sided p < 0.05 |") for line in lines)
    # statistics review item 14: the default is the committed 8-epoch run, and the measured t's randomization p
    assert module.RUN.name == "calibration_run_pairs.csv"
    assert any(line.startswith("| randomization p of the measured t") for line in lines)
    assert (real.read_bytes() if real.exists() else None) == before
    pd.read_csv(module.RUN).drop(columns="lap_mink").to_csv(tmp_path / "pairs.csv", index=False)
    with pytest.raises(SystemExit, match="lap_mink"):
        module.main(["5", "--pairs", str(tmp_path / "pairs.csv"), "--out", str(tmp_path / "other.md")])


def test_self_validation_section_is_written_for_the_report(runs):
    """`lapbias calibrate` writes its REPORT.md section as results/calibration/SECTION.md, staged with a manifest, which
    the protocol's report includes as it stands (report/sections.py), also when the run ends with its expectations
    not met (exit 2: the section shows which)."""
    from lapbias.report.sections import section_lines

    root, out = runs
    assert {result.exit_code for _, result in out.values()} <= {0, 2}
    section = (root / "results/calibration/SECTION.md").read_text(encoding="utf-8")
    assert section.startswith("## Self-validation (planted memorization)") and "| Verdict |" in section
    assert section_lines(root / "results") == [section.rstrip("\n"), ""]


def test_power_design_is_the_committed_panel_and_configuration():
    """The power calculation's default Design is the committed calibration: the panel script's firms, months and
    outcome process (data/demo/make_calibrate_panel.py) and the exposed share of data/demo/calibrate.toml."""
    import importlib.util

    from lapbias.calibrate.power import Design

    spec = importlib.util.spec_from_file_location("make_calibrate_panel", REPO / "data/demo/make_calibrate_panel.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    _, settings = load(REPO / "data/demo/calibrate.toml")
    design = Design()
    assert (design.entities, design.pre_periods, design.post_periods) == (
        len(script.FIRMS), len(script.PRE_MONTHS), len(script.POST_MONTHS))
    assert (design.sentiment_effect, design.firm_sd, design.day_sd, design.outcome_noise) == (
        script.SENTIMENT_EFFECT, script.FIRM_SD, script.DAY_SD, script.OUTCOME_NOISE)
    exposed = settings.pairs_per_arm * (len(settings.exposures) - 1)
    assert design.exposed_share == exposed / (len(script.FIRMS) * len(script.PRE_MONTHS))


@pytest.mark.skipif(shutil.which("time") is None and not Path("/usr/bin/time").exists(),
                    reason="GNU time (/usr/bin/time) is not installed on this machine")
def test_calibration_benchmark_reads_a_fresh_clone_runs_time(tmp_path):
    """benchmarks/bench_calibration.py --main-from reads the wall-clock and CPU seconds and the exit status of a
    run from GNU time's -v report (here a real one, of a command that exits 3 after 0.2 s)."""
    import importlib.util
    import subprocess
    import sys

    bench = REPO / "benchmarks"
    sys.path.insert(0, str(bench))
    spec = importlib.util.spec_from_file_location("bench_calibration", bench / "bench_calibration.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    log = tmp_path / "run.log"
    with open(log, "w") as handle:
        subprocess.call(["/usr/bin/time", "-v", "sh", "-c", "echo running; sleep 0.2; exit 3"], stdout=handle,
                        stderr=subprocess.STDOUT)
    timed = module.time_v(log)
    assert timed["exit_code"] == 3 and timed["wall_seconds"] in (0, 1) and timed["cpu_seconds"] >= 0


def test_calibration_benchmark_imports_a_run_made_in_another_clone(tmp_path):
    """--run-from NAME CLONE takes the record of run NAME that the script made in a fresh clone, marked with the
    clone's commit and with where its base model's answers came from (computed there or copied, as the run
    recorded it); a run made with another [calibrate] than the committed one with the run's changes (another
    design), a record that does not say where its base answers came from, a clone without that record, or a name
    that is not a run, ends in one line naming it. Each record names its panel (firms, months before and after the
    cutoff) from the run's pairs.csv."""
    import importlib.util
    import json
    import subprocess
    import sys

    bench = REPO / "benchmarks"
    sys.path.insert(0, str(bench))
    spec = importlib.util.spec_from_file_location("bench_calibration", bench / "bench_calibration.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    pairs = pd.DataFrame({"model": ["base"] * 4 + ["planted"] * 4, "entity_id": ["A", "A", "B", "B"] * 2,
                          "target_date": ["2024-05-02", "2024-07-02", "2024-05-03", "2024-08-05"] * 2,
                          "post": [0, 1, 0, 1] * 2})
    assert module.panel_of(pairs) == "2 firms x (1 + 2) months"
    pairs["exposure"] = [12, 0, 0, 12] * 2  # B's exposed pair is post-cutoff (control "post_cutoff")
    assert module.panel_of(pairs) == "2 firms x (1 + 2) months, 1 pre-cutoff pair exposed"
    clone = tmp_path / "clone"
    (clone / "benchmarks/results").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
                    "--allow-empty", "-m", "x"], check=True)
    (clone / "benchmarks/results/calibration_runs.json").write_text(json.dumps(
        {"seed2": {"exit_code": 0, "base_answers": "computed in the run"}}))
    assert module.seed_caches("seed2", tmp_path / "no-main-run") == "computed in the run"
    ran = clone / "data/derived/calibration-bench/seed2/calibrate.toml"
    ran.parent.mkdir(parents=True)
    committed = tomllib.loads((REPO / "data/demo/calibrate.toml").read_text(encoding="utf-8"))["calibrate"]
    seeds7 = {**committed, "assignment_seed": 7, "training_seed": 7}
    ran.write_text(tomli_w.dumps({"calibrate": seeds7}))
    record = module.imported_run("seed2", clone)
    assert record["exit_code"] == 0 and "answers computed in the run), commit " in record["fresh_clone"]
    for changed in ({"training_seed": 8}, {"pairs_per_arm": committed["pairs_per_arm"] - 40}):
        ran.write_text(tomli_w.dumps({"calibrate": {**seeds7, **changed}}))
        key, value = next(iter(changed.items()))
        with pytest.raises(SystemExit, match=f"'{key}': {value}"):
            module.imported_run("seed2", clone)
    ran.write_text(tomli_w.dumps({"calibrate": seeds7}))
    (clone / "benchmarks/results/calibration_runs.json").write_text(json.dumps({"main": {}, "seed2": {"exit_code": 0}}))
    with pytest.raises(SystemExit, match="does not say where its base model's answers came from"):
        module.imported_run("seed2", clone)
    with pytest.raises(SystemExit, match="no record of run 'flipped'"):
        module.imported_run("flipped", clone)
    done = subprocess.run([sys.executable, str(bench / "bench_calibration.py"), "--run-from", "seed3", str(clone)],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "'seed3' is not a run of this script" in done.stderr


def test_power_benchmark_refuses_an_empty_pairs_file_in_one_line(tmp_path):
    """An empty or missing --pairs file ends the power benchmark with one line naming the file."""
    import subprocess
    import sys

    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "columns.csv").write_text("model,arm\nbase,never\n")
    (tmp_path / "binary.csv").write_bytes(bytes(range(128, 256)))
    (tmp_path / "ragged.csv").write_text("a,b\n1,2\n1,2,3,4\n")
    for name in ("empty.csv", "missing.csv", "columns.csv", "binary.csv", "ragged.csv"):
        done = subprocess.run([sys.executable, str(REPO / "benchmarks/bench_calibration_power.py"), "2", "--pairs",
                               str(tmp_path / name), "--out", str(tmp_path / "out.md")], capture_output=True, text=True)
        assert done.returncode == 1 and "Traceback" not in done.stderr
        assert done.stderr.strip().splitlines() == [done.stderr.strip()] and f"--pairs {tmp_path / name}" in done.stderr


def test_figure_puts_beta3_of_both_models_on_one_scale():
    """The figure's beta_3 panel divides each coefficient and its interval by the standard error: the base model's
    Min-K% LAP is ~2e-4 and the planted model's ~0.4, so raw coefficients (-414 and 2.04 in the run at 160
    exposed pairs) would flatten the planted model's onto zero; a zero SE gives no point, not an infinite one."""
    from lapbias.calibrate.report import beta3_in_ses

    rows = pd.DataFrame({"coef": [-413.52, 2.0366], "se": [631.22, 0.35449], "ci_low": [-1690.28, 1.3196],
                         "ci_high": [863.24, 2.7537]})
    t, low, high = beta3_in_ses(rows)
    assert t == pytest.approx([-0.6551, 5.7452], abs=1e-3)
    assert low == pytest.approx([-2.678, 3.7226], abs=1e-3) and high == pytest.approx([1.3676, 7.7679], abs=1e-3)
    t, _, _ = beta3_in_ses(rows.assign(se=[0.0, 0.35449]))
    assert np.isnan(t[0]) and t[1] == pytest.approx(5.7452, abs=1e-3)


def test_alternative_lap_configurations_share_the_answers_and_keep_what_a_rerun_paid_for(tmp_path):
    """experiment.alternative_config: the same model and prompts under another LAP, in its own root;
    seed_answers adds the model's cached lines there without repeating a key or removing what the target holds."""
    from lapbias.calibrate import experiment

    run, settings = load(tiny_config(tmp_path))
    base = experiment.model_config(run, settings, "base", run.model.model_id)
    assert experiment.lap_configuration(base) == "minkprob_text"
    prompt = experiment.alternative_config(base, "minkprob_prompt")
    assert (prompt.estimate.lap_measure, prompt.minkprob.scored_text) == ("minkprob", "prompt")
    assert Path(prompt.root) == Path(base.root) / "lap-minkprob_prompt"
    assert prompt.model == base.model and prompt.forecast == base.forecast and prompt.data == base.data
    assert experiment.lap_configuration(experiment.alternative_config(base, "recall")) == "recall"
    source = Path(base.root) / "data/raw"
    source.mkdir(parents=True)
    (source / "forecast.jsonl").write_text('{"key": "a", "response": 1}\n{"key": "b", "response": 2}\n')
    target = Path(prompt.root) / "data/raw"
    target.mkdir(parents=True)
    (target / "forecast.jsonl").write_text('{"key": "b", "response": 2}\n{"key": "c", "response": 3}\n')
    experiment.seed_answers(base, prompt)
    experiment.seed_answers(base, prompt)  # twice: nothing repeated
    keys = [json.loads(line)["key"] for line in (target / "forecast.jsonl").read_text().splitlines()]
    assert sorted(keys) == ["a", "b", "c"]


def test_lap_configurations_setting_is_checked_and_not_in_the_fingerprint(tmp_path):
    run, settings = load(tiny_config(tmp_path))
    _, fewer = load(tiny_config(tmp_path, name="other.toml", lap_configurations=["recall"]))
    assert settings.fingerprint(run) == fewer.fingerprint(run)
    with pytest.raises(ConfigError, match=r"\[calibrate\] lap_configurations = \['recal'\]; give distinct names"):
        load(tiny_config(tmp_path, name="bad.toml", lap_configurations=["recal"]))


def test_calibration_summary_names_every_models_verdicts_and_the_report():
    from lapbias.calibrate.pipeline import summary

    verdicts = pd.DataFrame({"model": ["base", "planted", "base", "planted"],
                             "lap_configuration": ["minkprob_text", "minkprob_text", "recall", "recall"],
                             "configured": [True, True, False, False],
                             "verdict": ["Underpowered", "Contamination detected", "Underpowered", "Mixed/invalid"]})
    lines = summary({"verdicts": verdicts}).splitlines()
    assert lines == ["calibrate: base model: Underpowered (LAP minkprob_text); under the other LAP configurations "
                     "recall: Underpowered",
                     "calibrate: planted model: Contamination detected (LAP minkprob_text); under the other LAP "
                     "configurations recall: Mixed/invalid",
                     "calibration report: results/calibration/REPORT.md (tables results/calibration/*.csv, figure "
                     "results/figures/calibration.png)"]


def test_redrawn_panel_keeps_the_real_pairs_and_shares_the_day_shock():
    """calibrate/power.redrawn_panel: the committed run's firms, dates, arms and answers held, outcomes redrawn with
    one trading-day shock per date; the planted model's exposed pairs right again relative to the new direction,
    the base model's answers as measured (arms pooled)."""
    from lapbias.calibrate.power import Design, redrawn_panel

    pairs = pd.read_csv(REPO / "benchmarks/results/calibration_run_pairs.csv").assign(lap=lambda f: f["lap_mink"])
    design = Design()
    for model, planted in (("base", False), ("planted", True)):
        records = pairs[pairs["model"] == model]
        pre, post = redrawn_panel(records, seed=3, design=design, planted=planted)
        assert len(pre) + len(post) == records["mu_hat"].notna().sum()
        assert set(pre["date_num"]) and pre["period_num"].nunique() == 8 and post["period_num"].nunique() == 12
        kept = pre.set_index("row_id")
        original = records.set_index("row_id").loc[kept.index]
        exposed = original["arm"] == "exposed"
        if planted:
            hit = np.sign(kept["mu_hat"]) == kept["direction"]
            was = np.sign(original["mu_hat"]) == original["direction"]
            assert (hit[exposed] == was[exposed]).all()  # right again relative to the redrawn truth
            assert (kept.loc[~exposed, "mu_hat"] == original.loc[~exposed, "mu_hat"]).all()
        else:
            assert (kept["mu_hat"] == original["mu_hat"]).all() and (kept["ud"] == original["ud"]).all()
    # the day shock is shared: with no firm effect and no noise, every firm on a date gets the same outcome
    from dataclasses import replace

    only_days = replace(design, firm_sd=0.0, outcome_noise=0.0)
    pre, post = redrawn_panel(pairs[pairs["model"] == "base"], seed=5, design=only_days, planted=False)
    both = pd.concat([pre, post])
    assert (both.groupby("date_num")["outcome"].nunique() == 1).all()
    assert both.groupby("date_num")["outcome"].first().nunique() == both["date_num"].nunique()


def test_a_measure_rises_with_exposure_only_when_it_separates_the_arms():
    """Statistics review item 10: REPORT.md said the recall LAP "rises with exposure" for means of 0.999970 against
    0.999959 (AUC 0.586, a saturated LAP). A measure now separates the arms only with a gap of at least 0.5 SD and an
    AUC of at least 0.6, and the means print with six digits."""
    from lapbias.calibrate.report import interpretation

    def lap_table(mean, gap, auc):
        rows = []
        for model in ("base", "planted"):
            for arm, exposure, m in (("0", 0, mean[0]), ("12", 12, mean[1])):
                rows.append({"model": model, "arm": arm, "exposure": exposure, "lap_mean": m, "lap_ci_low": m - 1e-6,
                             "lap_ci_high": m + 1e-6, "lap_gap_sd_vs_arm0": gap if arm != "0" else np.nan,
                             "lap_auc_vs_arm0": auc if arm != "0" else np.nan, "forecast_hit_rate": 0.5,
                             "p_memorized_mean": 0.5, "p_memorized_ci_low": 0.45, "p_memorized_ci_high": 0.55})
        return pd.DataFrame(rows)

    verdicts = pd.DataFrame(columns=["model", "verdict", "beta3", "beta3_p_one_sided"])
    beta3 = pd.DataFrame(columns=["model", "sample", "coef", "p_one_sided"])
    saturated = "\n".join(interpretation(lap_table((0.999959, 0.999970), 0.12, 0.586), beta3, verdicts, 0.05))
    assert "does NOT separate" in saturated and "0.99997" in saturated and "AUC 0.586" in saturated
    separated = "\n".join(interpretation(lap_table((0.1, 0.45), 4.2, 1.0), beta3, verdicts, 0.05))
    assert "it separates the exposed pairs" in separated


def test_the_base_models_arms_are_pooled_in_the_simulation():
    """Statistics review item 6: the base model's exposed records were re-aligned to the simulated truth, so its chance
    hit rate on the exposed arm (34% of 120) became systematic anti-skill in every simulated panel (median t(b1)
    -1.95). A model never shown anything answers an exposed pair as any pre-cutoff pair: its arms are pooled and its
    answers held as measured."""
    from lapbias.calibrate.power import Behaviour, Design, simulated_panel

    records = _records(0.0, 0.9, (0.6, 0.9))  # every exposed forecast wrong, as by chance
    records.loc[records["arm"] == "never", "mu_hat"] = 1.0
    both = pd.concat([records.assign(model="planted"), records.assign(model="base")], ignore_index=True)
    planted = simulated_panel(Design(), Behaviour.from_pairs(both, "planted", "lap_mink"), seed=3)[0]
    base = simulated_panel(Design(), Behaviour.from_pairs(both, "base", "lap_mink", planted=False), seed=3)[0]
    wrong = lambda pre: float((pre.loc[pre["arm"] == "exposed", "mu_hat"]  # noqa: E731
                               == -pre.loc[pre["arm"] == "exposed", "direction"]).mean())
    assert wrong(planted) == 1.0
    assert 0.2 < wrong(base) < 0.8  # as measured: a mix of the pooled arms' answers, not aligned to the truth


def test_the_power_benchmark_pools_the_base_models_arms():
    """The review of the pooling: the power benchmark renames every model "<model> (<file>)" before reading it, so a
    rule on the model's name never saw "base"; the benchmark now says which model was planted."""
    import importlib.util

    bench = REPO / "benchmarks"
    spec = importlib.util.spec_from_file_location("smoke_power_pooling", bench / "bench_calibration_power.py")
    source = spec.loader.get_data(str(bench / "bench_calibration_power.py")).decode()
    assert 'planted=model == "planted"' in source
