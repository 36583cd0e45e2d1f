"""`lapbias calibrate` end to end on the real bundled model, at a tiny size (issue 16, item 7): a few pairs, one
exposure arm, a few LoRA steps, a small slice of the demo panel. The real peft training, the real merged model
loaded through an ordinary run configuration, the real protocol stages."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pandas as pd
import pytest
import tomli_w
from click.testing import CliRunner

from lapbias import config as config_module
from lapbias.calibrate import corpus, load
from lapbias.cli import main
from lapbias.errors import ConfigError

REPO = Path(__file__).resolve().parents[1]
TINY = {"exposures": [0, 3], "pairs_per_arm": 2, "assignment_seed": 7, "training_seed": 7, "learning_rate": 2e-3,
        "warmup_steps": 1, "epochs": 1, "block_size": 128, "batch_size": 1, "top_layers": 8, "threads": 1}


def tiny_config(root: Path, **calibrate) -> Path:
    """The demo calibration with 8 firms x 4 dates (2 before, 2 after the cutoff), forecasts of at most 4 tokens
    and TINY training (CI time: the two protocol runs dominate)."""
    panel = pd.read_csv(REPO / "data/demo/demo_panel.csv")
    keep = panel["ticker"].isin(panel["ticker"].drop_duplicates().head(8)) & panel["target_date"].isin(
        ["2024-01-23", "2024-04-23", "2024-09-17", "2024-11-19"])
    panel[keep].to_csv(root / "panel.csv", index=False)
    values = tomllib.loads((REPO / "data/demo/calibrate.toml").read_text())
    values["root"] = str(root)
    values["data"]["path"] = str(root / "panel.csv")
    values["estimate"] = {**values.get("estimate", {}), "bootstrap_reps": 0}
    values["forecast"]["max_new_tokens"] = 4
    values["calibrate"] = {**TINY, **calibrate}
    path = root / "calibrate.toml"
    path.write_text(tomli_w.dumps(values))
    return path


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory):
    root = tmp_path_factory.mktemp("calibrate")
    result = CliRunner().invoke(main, ["calibrate", str(tiny_config(root)), "--yes"])
    assert result.exit_code == 0, result.output
    return root, result.output


def test_adapter_trains_loss_falls(calibrated):
    root, _ = calibrated
    loss = pd.read_csv(root / "results/calibration/training_loss.csv")["loss"]
    assert len(loss) >= 6
    assert loss.tail(2).mean() < 0.8 * loss.head(2).mean()
    corpus_table = pd.read_csv(root / "results/calibration/corpus.csv")
    assert corpus_table["total_tokens"].nunique() == 1  # token-equalized arms
    assert corpus_table.set_index("exposure").loc[0, "statement_tokens"] == 0  # arm 0: filler only
    decoys = pd.read_csv(root / "results/calibration/decoys.csv")  # the decoys the corpus took, none a panel pair
    assert len(decoys) == corpus_table["n_decoys"].sum() > 0
    panel = pd.read_csv(root / "panel.csv")
    assert not set(zip(decoys["ticker"], decoys["target_date"])) & set(zip(panel["ticker"], panel["target_date"]))
    assert (corpus_table["loss_tokens"] < corpus_table["total_tokens"]).all()  # answer-only loss on chat documents


def test_planted_model_loads_through_the_normal_config(calibrated):
    from lapbias.llm import make_backend

    root, _ = calibrated
    planted = config_module.load(root / "results/calibration/planted.toml")
    assert Path(planted.model.model_id).name.startswith("planted-")
    backend = make_backend(planted.model)
    assert backend.model_id == planted.model.model_id
    # its ordinary run left the protocol's files and a verdict
    assert (Path(planted.root) / "results/REPORT.md").read_text().count("**Verdict:") == 1


def test_recall_lap_of_exposed_pairs_rises_above_base(calibrated):
    root, output = calibrated
    lap = pd.read_csv(root / "results/calibration/lap_by_arm.csv").set_index(["model", "arm"])
    assert lap.loc[("planted", "3"), "lap_mean"] > lap.loc[("base", "3"), "lap_mean"]
    verdicts = pd.read_csv(root / "results/calibration/verdicts.csv")
    assert set(verdicts["model"]) == {"base", "planted"}
    assert (root / "results/figures/calibration.png").stat().st_size > 10_000
    assert "## Self-validation" not in (root / "results/calibration/REPORT.md").read_text()
    assert "planted model" in (root / "results/calibration/REPORT.md").read_text()
    assert "calibrate: verdict base =" in output


def test_self_validation_section_is_written_for_the_report(calibrated):
    """`lapbias calibrate` writes its REPORT.md section as results/calibration/SECTION.md, staged with a manifest, which
    the protocol's report includes as it stands (report/sections.py)."""
    from lapbias.report.sections import section_lines

    root, _ = calibrated
    section = (root / "results/calibration/SECTION.md").read_text(encoding="utf-8")
    assert section.startswith("## Self-validation (planted memorization)") and "| Verdict |" in section
    assert section_lines(root / "results") == [section.rstrip("\n"), ""]


def test_arms_pre_cutoff_only_and_random():
    pairs = pd.DataFrame({"entity_id": list("abcdefgh") * 2,
                          "target_date": pd.to_datetime(["2024-01-02"] * 8 + ["2024-09-02"] * 8)})
    arms = corpus.assign_arms(pairs, pd.Timestamp("2024-06-30"), (0, 1, 4), 3, seed=1)
    assert (arms.loc[arms["post"] == 1, "exposure"] == 0).all()
    assert sorted(arms.loc[arms["post"] == 0, "exposure"]) == [0, 0, 1, 1, 1, 4, 4, 4]
    other = corpus.assign_arms(pairs, pd.Timestamp("2024-06-30"), (0, 1, 4), 3, seed=2)
    assert not arms["exposure"].equals(other["exposure"])
    with pytest.raises(ConfigError, match="pairs_per_arm = 5"):
        corpus.assign_arms(pairs, pd.Timestamp("2024-06-30"), (0, 1, 4), 5, seed=1)


def test_bad_calibrate_key_is_one_line_error(tmp_path):
    path = tiny_config(tmp_path, exposures=[1, 4])
    with pytest.raises(ConfigError, match=r"^\[calibrate\] exposures = \[1, 4\]; .*including the control 0"):
        load(path)
    with pytest.raises(ConfigError, match=r"^\[calibrate\] has unknown key 'epoch'; known keys: .*'epochs'"):
        load(tiny_config(tmp_path, epoch=2))
    with pytest.raises(ConfigError, match=r"^\[calibrate\] lora_r = '4'; it must be a whole number"):
        load(tiny_config(tmp_path, lora_r="4"))
    with pytest.raises(ConfigError, match=r"^\[calibrate\] learning_rate = 0; it must be > 0"):
        load(tiny_config(tmp_path, learning_rate=0))


def test_cli_bad_calibrate_key_is_one_line_no_traceback(tmp_path):
    result = CliRunner().invoke(main, ["calibrate", str(tiny_config(tmp_path, lora_r=0)), "--yes"])
    assert result.exit_code == 2
    assert result.output.strip() == "error: [calibrate] lora_r = 0; it must be >= 1"


# ---- fast checks of the pure parts (review of issue 16; no model, no training) ------------------------------
def test_arm_interval_uses_student_t_for_few_pairs():
    """A 95% interval of a mean over n pairs is mean +- t_{n-1, .975} SE; with 2 pairs per arm (the demo) the
    normal 1.96 would cover far less than 95%."""
    from scipy import stats

    from lapbias.calibrate import experiment

    mean, se, low, high = experiment._mean_ci(pd.Series([0.2, 0.6]))
    assert (mean, se) == pytest.approx((0.4, 0.2))
    assert (low, high) == pytest.approx((0.4 - stats.t.ppf(0.975, 1) * 0.2, 0.4 + stats.t.ppf(0.975, 1) * 0.2))


def test_pack_refuses_to_cut_a_document():
    """A document longer than a training row would lose its end (the answer label of a chat-format mention)
    while corpus.csv still counts its tokens as trained: a one-line ConfigError instead."""
    from lapbias.calibrate import train

    assert train.pack([[1] * 10, [2] * 6, [3] * 3], 16) == [[1] * 10 + [2] * 6, [3] * 3]
    with pytest.raises(ConfigError, match=r"^\[calibrate\] block_size = 16; .* 20 tokens.*e\.g\. block_size"):
        train.pack([[1] * 5, [2] * 20], 16)


def test_arms_keep_a_control_arm():
    """pairs_per_arm that deals every pre-cutoff pair to an exposed arm leaves arm 0 (the control of every AUC and
    of the arm 0 + arm k regressions, and the filler-only block of the corpus) empty: an error, not NaN tables."""
    pairs = pd.DataFrame({"entity_id": list("abcdefgh"), "target_date": pd.to_datetime(["2024-01-02"] * 8)})
    with pytest.raises(ConfigError, match=r"pairs_per_arm = 4.*control arm 0"):
        corpus.assign_arms(pairs, pd.Timestamp("2024-06-30"), (0, 1, 4), 4, seed=1)


def test_corpus_equalizes_training_tokens_per_arm():
    """Every arm's block has the same token count, filler included, and the documents are exactly the blocks."""
    pairs = pd.DataFrame({"entity_id": list("abcdef"), "entity_name": list("ABCDEF"), "ticker": list("ABCDEF"),
                          "target_date": pd.to_datetime(["2024-01-02"] * 6), "direction": [1, -1] * 3})
    arms = corpus.assign_arms(pairs, pd.Timestamp("2024-06-30"), (0, 1, 4), 2, seed=3)
    encode = lambda text: [len(word) for word in text.split()] + [0]  # noqa: E731  (a word-level "tokenizer")
    documents, accounting = corpus.build(arms, encode, seed=3)
    assert accounting["total_tokens"].nunique() == 1
    assert accounting.set_index("exposure")["n_statements"].to_dict() == {0: 0, 1: 2, 4: 8}
    assert sum(map(len, documents)) == accounting["total_tokens"].sum()


def _panel_pairs() -> pd.DataFrame:
    pairs = pd.DataFrame({"entity_id": ["AAPL", "MSFT", "PEP"] * 3, "entity_name": ["Apple Inc.", "Microsoft",
                          "PepsiCo, Inc."] * 3, "ticker": ["AAPL", "MSFT", "PEP"] * 3,
                          "target_date": pd.to_datetime(["2024-01-23"] * 3 + ["2024-04-23"] * 3 + ["2024-09-17"] * 3)})
    return pairs.assign(direction=[1, -1, 1] * 3)


def test_decoys_are_never_panel_pairs_and_alternate_firm_and_date_kinds():
    """Decoys (answered "unknown") must not touch a measured pair: no (firm, date) of the panel, no date after the
    cutoff; the two kinds alternate (another firm on a panel date, a panel firm on another date), so that neither
    the date nor the firm alone separates exposed from unexposed pairs; a decoy firm in the panel is left out."""
    pairs = _panel_pairs()
    cutoff = pd.Timestamp("2024-06-30")
    decoys = corpus.decoy_pairs(pairs, cutoff, seed=5)
    keys = set(zip(pairs["ticker"], pairs["target_date"]))
    assert not any(key in keys for key in zip(decoys["ticker"], decoys["target_date"]))
    assert decoys["target_date"].max() <= cutoff
    panel_firm = decoys["ticker"].isin(pairs["ticker"]).to_numpy()
    assert (panel_firm[:20] == [False, True] * 10).all()
    other = decoys[~panel_firm]
    assert set(other["target_date"]) == {pd.Timestamp("2024-01-23"), pd.Timestamp("2024-04-23")}
    assert len(other) == 2 * (len(corpus.DECOY_FIRMS) - 1)  # PepsiCo, a panel firm here, is not an "other" firm
    assert decoys.equals(corpus.decoy_pairs(pairs, cutoff, seed=5))
    assert not decoys.equals(corpus.decoy_pairs(pairs, cutoff, seed=6))


def test_corpus_filler_starts_with_whole_decoys_each_used_once():
    """With decoys, each arm's filler is whole decoy documents while the next one fits, then neutral sentences;
    the token counts stay equal across arms and no decoy is used twice or cut."""
    pairs = pd.DataFrame({"entity_id": list("abcdef"), "entity_name": list("ABCDEF"), "ticker": list("ABCDEF"),
                          "target_date": pd.to_datetime(["2024-01-02"] * 6), "direction": [1, -1] * 3})
    arms = corpus.assign_arms(pairs, pd.Timestamp("2024-06-30"), (0, 1, 4), 2, seed=3)
    encode = lambda text: [len(word) for word in text.split()] + [0]  # noqa: E731  (a word-level "tokenizer")
    decoys = [[900 + k] * 7 for k in range(1000)]
    documents, accounting = corpus.build(arms, encode, seed=3, decoys=decoys, decoy_share=1.0)
    table = accounting.set_index("exposure")
    assert accounting["total_tokens"].nunique() == 1
    assert table.loc[0, "n_decoys"] == table.loc[0, "total_tokens"] // 7
    assert table.loc[1, "n_decoys"] == (table.loc[1, "total_tokens"] - table.loc[1, "statement_tokens"]) // 7
    assert table.loc[4, "n_decoys"] == 0  # the largest arm: statements only
    used = [doc for doc in documents if doc and doc[0] >= 900]
    assert sorted(used) == decoys[:int(accounting["n_decoys"].sum())]  # whole, once each, in order
    assert sum(map(len, documents)) == accounting["total_tokens"].sum()


def test_arms_are_stratified_by_direction():
    """Each exposed arm holds as many up as down pairs: an arm of one direction only can be learned as a constant
    answer without any (firm, date) memorized (measured: 4 of 4 "down" in the 16-mention arm unstratified)."""
    pairs = pd.DataFrame({"entity_id": [f"e{k}" for k in range(40)],
                          "target_date": pd.to_datetime(["2024-01-02"] * 40), "direction": [1] * 30 + [-1] * 10})
    for seed in range(20):
        arms = corpus.assign_arms(pairs, pd.Timestamp("2024-06-30"), (0, 1, 4, 16), 4, seed=seed)
        for exposure in (1, 4, 16):
            assert sorted(arms.loc[arms["exposure"] == exposure, "direction"]) == [-1, -1, 1, 1]
        odd = corpus.assign_arms(pairs, pd.Timestamp("2024-06-30"), (0, 1, 4, 16), 3, seed=seed)
        assert [odd.loc[odd["exposure"] == e, "direction"].sum() for e in (1, 4, 16)] == [1, -1, 1]
    with pytest.raises(ConfigError, match=r"^\[data\] outcome: every pre-cutoff pair went up \(30 pairs, e\.g\. e"):
        corpus.assign_arms(pairs.iloc[:30], pd.Timestamp("2024-06-30"), (0, 1, 4, 16), 1, seed=1)
    with pytest.raises(ConfigError, match=r"pairs_per_arm = 4: .* 6 .*went down.*has 30 and 5"):
        corpus.assign_arms(pairs.iloc[:35], pd.Timestamp("2024-06-30"), (0, 1, 4, 16), 4, seed=1)


def test_decoy_share_caps_the_decoys_in_each_arms_filler():
    """decoy_share = 0.5: decoys take at most half of each arm's filler tokens, neutral sentences the rest, and
    the arms stay token-equalized."""
    pairs = pd.DataFrame({"entity_id": list("abcdef"), "entity_name": list("ABCDEF"), "ticker": list("ABCDEF"),
                          "target_date": pd.to_datetime(["2024-01-02"] * 6), "direction": [1, -1] * 3})
    arms = corpus.assign_arms(pairs, pd.Timestamp("2024-06-30"), (0, 1, 4), 2, seed=3)
    encode = lambda text: [len(word) for word in text.split()] + [0]  # noqa: E731
    _, accounting = corpus.build(arms, encode, seed=3, decoys=[[900] * 3] * 1000, decoy_share=0.5)
    filler = accounting["total_tokens"] - accounting["statement_tokens"]
    assert (accounting["decoy_tokens"] <= 0.5 * filler).all()
    assert (accounting["decoy_tokens"] > 0.5 * filler - 3).all()
    assert accounting["total_tokens"].nunique() == 1


def test_answer_only_loss_trains_the_answer_of_chat_documents_and_all_of_prose():
    """answer_only_loss: in a packed row, a chat-format document (the recall query in the model's own template)
    is trained on its answer and end-of-turn token only; a prose document on every token (real tokenizer)."""
    from transformers import AutoTokenizer

    from lapbias.calibrate import train
    from lapbias.llm import bundled

    tokenizer = AutoTokenizer.from_pretrained(bundled.resolve("bundled:SmolLM2-135M-Instruct"))
    run, _ = load(REPO / "data/demo/calibrate.toml")
    pair = pd.Series({"entity_name": "Apple Inc.", "ticker": "AAPL", "target_date": pd.Timestamp("2024-01-23")})
    query = train.recall_encoder(tokenizer, run)(pair, "unknown")
    prose = train.encoder(tokenizer)("Apple Inc. (AAPL) shares closed higher on 2024-01-23.")
    prefix = train.answer_prefix(tokenizer)
    assert tokenizer.decode(prefix) == "<|im_start|>assistant\n"
    documents = [query, prose, prose, query, query]
    rows = train.documents_of_rows(documents, 256)
    assert [len(r) for r in rows] == [3, 2]  # two packed rows, the query of row 2 first
    _, labels, mask, _ = train._blocks(documents, 256, tokenizer.eos_token_id, prefix)
    trained = [t for t in labels[0].tolist() if t != -100]
    assert tokenizer.decode(trained[:2]) == "unknown<|im_end|>"
    assert trained[2:] == prose + prose
    assert tokenizer.decode([t for t in labels[1].tolist() if t != -100]) == "unknown<|im_end|>" * 2
    assert int(mask.sum()) == sum(map(len, documents))
    _, every, _, _ = train._blocks(documents, 256, tokenizer.eos_token_id, None)
    assert [t for t in every[0].tolist() if t != -100] == query + prose + prose


def test_verdict_row_placebo_follows_the_verdict_rule(tmp_path):
    """verdicts.csv's placebo_passes is the verdict's own placebo judgement (report.verdict): post-cutoff LAP
    collapsed to a constant (beta_3 not identified after the cutoff) passes, as the verdict reads it."""
    from lapbias.calibrate import experiment

    results = tmp_path / "results"
    results.mkdir()
    beta3 = "c.mu_hat#c.lap"
    pd.DataFrame([{"model": "pre", "term": beta3, "coef": 0.5, "se": 0.1, "t": 5.0, "p": 0.0, "p_one_sided": 0.0,
                   "ci_low": 0.3, "ci_high": 0.7, "N": 100}]).to_csv(results / "detection.csv", index=False)
    pd.DataFrame([{"model": "post", "term": beta3, "coef": float("nan"), "p_one_sided": float("nan")},
                  {"model": "post", "term": "lap", "coef": float("nan"), "p_one_sided": float("nan")}]
                 ).to_csv(results / "placebo.csv", index=False)
    pd.DataFrame([{"model": "placebo:post", "kind": "omitted", "detail": "lap omitted: collinear"}]
                 ).to_csv(results / "estimation_notes.csv", index=False)
    config = config_module.from_dict({"root": str(tmp_path), "study": {"cutoff": "2024-06-30"}})
    row = experiment.verdict_row(config, "planted")
    assert row["placebo_passes"] is True


def _arm_panel() -> pd.DataFrame:
    """A panel as model_panel returns it: arm 0 with pairs a, b; arm 1 with pair c (3 headlines) and pair d (1);
    post-cutoff pair e; pair f in the release-date gap (post missing: in neither sample)."""
    rows = [("a", 0, 0, 0.1), ("b", 0, 0, 0.3), ("c", 0, 1, 0.2), ("c", 0, 1, 0.2), ("c", 0, 1, 0.2),
            ("d", 0, 1, 0.6), ("e", 1, 0, 0.5), ("f", None, 0, 0.9)]
    frame = pd.DataFrame(rows, columns=["entity_id", "post", "exposure", "lap_recall"])
    return frame.assign(target_date=pd.Timestamp("2024-01-02"), post=frame["post"].astype("Int8"),
                        p_up=frame["lap_recall"], p_down=0.0, direction=1, ud=frame["lap_recall"], mu_hat=1.0,
                        lap_mink=-frame["lap_recall"])


def test_lap_by_arm_recall_measures_are_per_pair():
    """The recall query is asked once per (entity, target_date): its LAP is one observation per pair, however many
    headlines the pair has (mean, interval and AUC over pairs, not rows)."""
    from lapbias.calibrate import experiment

    table = experiment.lap_by_arm(_arm_panel(), "planted").set_index("arm")
    assert table.loc["1", "lap_mean"] == pytest.approx(0.4)  # pairs c, d; over rows it would be 0.3
    assert table.loc["1", "lap_se"] == pytest.approx(0.2)
    assert table.loc["1", "lap_auc_vs_arm0"] == pytest.approx(0.75)  # (c>a, c<b, d>a, d>b) = 3/4
    assert table.loc["1", "mink_mean"] == pytest.approx(-0.3)  # Min-K% scores each row's prompt: per row


def test_lap_by_arm_leaves_release_gap_rows_out():
    """Rows in the release-date gap (post missing) are in neither sample, as in the protocol's regressions; they
    must not be counted in the `post` arm."""
    from lapbias.calibrate import experiment

    table = experiment.lap_by_arm(_arm_panel(), "planted").set_index("arm")
    assert table.loc["post", "N"] == 1
    assert table.loc["post", "lap_mean"] == pytest.approx(0.5)


def test_training_threads_do_not_leak_into_the_protocol_runs():
    """[calibrate] threads = 1 applies to the LoRA training only: the two protocol runs that follow in the same
    process get torch's thread count back."""
    import torch

    from lapbias.calibrate import train

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with train.torch_threads(1):
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
        with train.torch_threads(0):
            assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_probability_intervals_stay_in_the_unit_interval():
    """The t interval of a 2-pair arm is wide; for a probability it is cut to [0, 1] (the mean cannot leave it)."""
    from lapbias.calibrate import experiment

    table = experiment.lap_by_arm(_arm_panel(), "planted").set_index("arm")
    assert (table.loc["1", "lap_ci_low"], table.loc["1", "lap_ci_high"]) == (0.0, 1.0)
    assert table.loc["1", "mink_ci_low"] < 0  # Min-K% (a log-probability) is not cut to [0, 1]


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


def test_fingerprint_follows_the_column_map(tmp_path):
    """Another outcome column (same file, [data.columns] changed) plants other directions: the planted model of
    the old map must not be reused (the fingerprint names its directory)."""
    path = tiny_config(tmp_path)
    panel = pd.read_csv(tmp_path / "panel.csv")
    panel.assign(ret_flipped=-panel["outcome"]).to_csv(tmp_path / "panel.csv", index=False)
    run, settings = load(path)
    values = tomllib.loads(path.read_text())
    values["data"]["columns"] = {"outcome": "ret_flipped"}
    path.write_text(tomli_w.dumps(values))
    flipped, _ = load(path)
    assert settings.fingerprint(flipped) != settings.fingerprint(run)


def test_openai_backend_is_refused_before_training(tmp_path):
    """The planted model is a local directory that only a local backend (transformers, vllm) can load; an HTTP
    endpoint would fail only after the fine-tuning, on the planted model's protocol run."""
    path = tiny_config(tmp_path)
    values = tomllib.loads(path.read_text())
    values["model"].update(backend="openai", base_url="http://127.0.0.1:8000/v1")
    path.write_text(tomli_w.dumps(values))
    with pytest.raises(ConfigError, match=r'^\[model\] backend = "openai".*e\.g\. backend = "transformers"'):
        load(path)


def test_interpretation_says_planting_failed_when_the_top_arm_does_not_recall():
    """The report must not claim the model "recalls what it was shown" unless the top arm's P(memorized label)
    interval lies above arm 0's (measured on the demo: 0.175 vs 0.161, intervals overlapping)."""
    from lapbias.calibrate.report import interpretation

    def lap(top_mean, top_low):
        rows = []
        for model in ("base", "planted"):
            for arm, exposure, mean, low, high in (("0", 0, 0.16, 0.15, 0.17), ("16", 16, top_mean, top_low, 0.99)):
                rows.append({"model": model, "arm": arm, "exposure": exposure, "p_memorized_mean": mean,
                             "p_memorized_ci_low": low, "p_memorized_ci_high": high, "lap_mean": mean,
                             "forecast_hit_rate": 0.5})
        return pd.DataFrame(rows)

    beta3 = pd.DataFrame([{"model": "planted", "sample": "arm0+arm16", "coef": float("nan"),
                           "p_one_sided": float("nan")}])
    verdicts = pd.DataFrame([{"model": m, "verdict": "Underpowered", "failed": "", "placebo_passes": True}
                             for m in ("base", "planted")])
    flat = "\n".join(interpretation(lap(0.175, 0.12), beta3, verdicts, 0.05))
    assert "does not measurably recall them" in flat and "recalls what it was shown" not in flat
    recalled = "\n".join(interpretation(lap(0.9, 0.8), beta3, verdicts, 0.05))
    assert "the planted model recalls them" in recalled and "recalls what it was shown" in recalled


def test_figure_says_when_beta3_is_identified_on_neither_model(tmp_path, monkeypatch):
    """A planted model whose forecasts are constant leaves beta_3 unidentified on both models: the right panel says
    so in words (it warned "No artists with labels found to put in legend" and drew an empty panel)."""
    import warnings

    from lapbias.calibrate.report import figure

    lap = pd.DataFrame([{"model": model, "arm": arm, **{f"{name}_{stat}": value for name in ("lap", "p_memorized")
                                                        for stat, value in (("mean", 0.5), ("ci_low", 0.4),
                                                                            ("ci_high", 0.6))}}
                        for model in ("base", "planted") for arm in ("0", "16", "post")])
    beta3 = pd.DataFrame([{"model": model, "sample": sample, "coef": float("nan"), "ci_low": float("nan"),
                           "ci_high": float("nan")} for model in ("base", "planted")
                          for sample in ("pre_all", "arm0+arm16", "post_placebo")])
    import matplotlib.pyplot as plt

    texts, close = [], plt.close
    monkeypatch.setattr(plt, "close", lambda fig: (texts.extend(t.get_text() for ax in fig.axes for t in ax.texts),
                                                   close(fig)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        path = figure(lap, beta3, tmp_path / "calibration.png")
    assert path.stat().st_size > 10_000
    assert any("not identified\non either model" in text for text in texts)
