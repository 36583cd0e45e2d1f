"""NumLeak replay: the paper's own released replies of the Anthropic models (Opus 4.7, Sonnet 4.6, Haiku 4.5) scored by
`lapbias leak --replies` (the stage function pipeline.score_replies) and set beside the numbers the paper prints.

Kotawala, "NumLeak: Public Numeric Benchmarks as Latent Labels in Foundation Models" (ICML 2026 MemFM workshop);
replies, ground truth and the authors' parser in the public repository akotawala10/NumLeak_ICML2026 (MIT licence):
experiments/results/*.jsonl, data/ff/*.csv, factor_leak/parse.py. Clone it and run

    python benchmarks/bench_numleak_replay.py --repo PATH/TO/NumLeak_ICML2026

(or set NUMLEAK_REPO). Each replay cell (a paper table's rows for one model) becomes a replies file in the
documented format (series, date, variant, prompt, reply, truth, date2, draw, truncated) and a lapbias project in a
temporary folder; the paper's numbers are typed in from its PDF (paper/numleak.pdf) with their table. Both parsers
are run: `paper` (the default, the authors' decisions) and `explicit_estimate` (the option). The authors' own parser
(factor_leak/parse.py, imported from the clone) is run on every Anthropic reply as well, to count the replies on
which lapbias's decision differs from it. Writes benchmarks/results/numleak_replay.md.

`--write-fixture PATH` writes the vendored regression table of tests/test_leak_replay.py instead: a seeded sample of
the Anthropic replies (up to 16 per file × model × variant, 8 for the long Variant B and D replies) in the replies
format, each with the authors' parse decision.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from machine import describe, write_report  # noqa: E402

from lapbias.leak import config as leak_config  # noqa: E402
from lapbias.leak import metrics, parse, pipeline  # noqa: E402
from lapbias.io import Layout  # noqa: E402

ANTHROPIC = {"claude-opus-4.7": "Opus 4.7", "claude-sonnet-4.6": "Sonnet 4.6", "claude-haiku-4.5": "Haiku 4.5"}
MAX_TOKENS = {"sweep.jsonl": {"A": 48, "B": 384, "C": 48}, "variant_d.jsonl": 512, "variant_e_temperature.jsonl": 48,
              "fabricated_expanded.jsonl": 64, "post_cutoff_holdout.jsonl": 64, "opus_baselines.jsonl": 48,
              "opus_factors.jsonl": 48, "camera_ready_multiseed.jsonl": 48, "multiseed.jsonl": 48,
              "transmission.jsonl": 24, "unrate_baseline.jsonl": 24, "cpi_baseline.jsonl": 24,
              "noaa_temperature.jsonl": 32, "variantc_forced_choice.jsonl": 32, "blind_query.jsonl": 48,
              "snp500_baseline.jsonl": 48, "nasdaq_baseline.jsonl": 48}
"""max_tokens of each file's run, from the authors' experiment scripts (a reply of that many output tokens ended
at the length limit)."""
LABELS = {"Mkt-RF": "the Fama-French market excess return (Mkt-RF) factor"}
CUTOFF = "2026-12-31"
"""After every probed month: the paper pools its tables over all months, except App. I's (cutoff 2024-12-31)."""

TOLERANCE = {"pearson_r": 0.02, "leakshare": 0.005, "rho_signal_truth": 0.02, "rho_residual_truth": 0.02,
             "mae": 0.02, "draw_spread": 0.005}
"""The targets: ±0.01 for shares (parse, hit, sign, rank rates), ±0.02 for r; counts exactly."""
TAB3 = {
    "claude-opus-4.7": {"Mkt-RF": (40, .68, 1.00, .99), "SMB": (40, .12, .78, .44), "HML": (40, .10, .68, .58),
                        "RMW": (38, .05, .47, .16), "CMA": (39, .10, .46, .12), "Mom": (39, .03, .41, -.35)},
    "claude-sonnet-4.6": {"Mkt-RF": (77, .34, .97, .98), "SMB": (72, .08, .61, -.25), "HML": (69, .03, .49, .48),
                          "RMW": (24, .04, .54, .14), "CMA": (25, .00, .60, .11), "Mom": (69, .01, .48, -.00)},
    "claude-haiku-4.5": {"Mkt-RF": (70, .17, .77, .68), "SMB": (70, .03, .61, .45), "HML": (70, .10, .64, .04),
                         "RMW": (70, .07, .44, -.34), "CMA": (68, .10, .50, -.16), "Mom": (69, .00, .46, -.25)},
}
"""App. C, Tab. 3 (Variant A): n parsed, within-25 bps, sign, Pearson r."""
TAB5 = {
    "claude-opus-4.7": [(40, .994, .600, .950), (40, .998, .675, 1.000), (40, .980, .525, .975),
                        (120, .992, .600, .975)],
    "claude-sonnet-4.6": [(38, .982, .447, .947), (39, .972, .333, .923), (40, .958, .275, .950),
                          (117, .970, .350, .940)],
    "claude-haiku-4.5": [(40, .742, .175, .700), (40, .694, .075, .750), (40, .237, .100, .750),
                         (120, .572, .117, .733)],
}
"""App. E, Tab. 5 (seeds 1-3, pooled; Mkt-RF): n parsed, r, within-25 bps, sign."""
TAB6 = {"claude-opus-4.7": (.747, .445), "claude-sonnet-4.6": (.450, .227), "claude-haiku-4.5": (-.021, -.133)}
"""App. E, Tab. 6: pooled r of SMB and Mom."""


def cells(rows: pd.DataFrame) -> list[dict]:
    """The replay cells: the rows scored together, the paper's numbers (series, variant, window) -> {metric: value},
    the band rule of the script that printed them ("<" strict or "<=" inclusive) and the cutoff."""
    out = []

    def pick(source, model=None, **equal):
        part = rows[rows["source"] == source]
        if model:
            part = part[part["model"] == model]
        for column, value in equal.items():
            part = part[part[column] == value]
        return part

    for model, factors in TAB3.items():
        part = (pd.concat([pick("opus_baselines.jsonl", model, probe="mktrf"), pick("opus_factors.jsonl", model)])
                if model == "claude-opus-4.7" else pick("sweep.jsonl", model, variant="A"))
        out.append({"table": "App. C, Tab. 3 (Variant A)", "model": model, "rows": part,
                    "rule": "<=" if model == "claude-opus-4.7" else "<", "paper": {
                        (f, "A", "pre"): dict(zip(("n_parsed", "within_band", "sign_accuracy", "pearson_r"), v))
                        for f, v in factors.items()}})
    for model, seeds in TAB5.items():
        for seed, values in enumerate(seeds[:3]):
            out.append({"table": f"App. E, Tab. 5 (Mkt-RF, seed {seed + 1})", "model": model,
                        "rows": pick("camera_ready_multiseed.jsonl", model, series="Mkt-RF", draw=seed), "rule": "<=",
                        "paper": {("Mkt-RF", "A", "pre"): dict(zip(("n_parsed", "pearson_r", "within_band",
                                                                     "sign_accuracy"), values))}})
        out.append({"table": "App. E, Tabs. 1, 5 and 6 (pooled seeds)", "model": model,
                    "rows": pick("camera_ready_multiseed.jsonl", model), "rule": "<=", "paper": {
                        ("Mkt-RF", "A", "pre"): dict(zip(("n_parsed", "pearson_r", "within_band", "sign_accuracy"),
                                                         seeds[3])),
                        ("SMB", "A", "pre"): {"pearson_r": TAB6[model][0]},
                        ("Mom", "A", "pre"): {"pearson_r": TAB6[model][1]}}})
    tab4 = {("claude-opus-4.7", "mktrf"): (1.00, .68, .986, 1.00), ("claude-opus-4.7", "blind"): (1.00, .68, .954, .98),
            ("claude-sonnet-4.6", "blind"): (.62, .20, .92, 1.00),
            ("claude-opus-4.7", "snp500"): (1.00, 1.00, 1.000, 1.00),
            ("claude-opus-4.7", "nasdaq"): (1.00, .88, .972, .93),
            ("claude-sonnet-4.6", "snp500"): (1.00, .85, .97, .95),
            ("claude-haiku-4.5", "snp500"): (1.00, .38, .59, .75)}  # parse, within-25 bps, r, sign (replies_of: truth)
    probes = {"mktrf": ("Mkt-RF", "Mkt-RF"), "blind": ("Mkt-RF", "blind U.S. market excess"),
              "snp500": ("S&P 500", "S&P 500"), "nasdaq": ("NASDAQ Composite", "NASDAQ Composite")}
    for (model, probe), values in tab4.items():
        part = pick("opus_baselines.jsonl", model, probe=probe) if model == "claude-opus-4.7" else \
            pick(f"{'blind_query' if probe == 'blind' else 'snp500_baseline'}.jsonl", model)
        series, name = probes[probe]
        out.append({"table": f"App. D, Tab. 4 ({name})", "model": model, "rows": part, "rule": "<=",
                    "paper": {(series, "A", "pre"): dict(zip(("parse_rate", "within_band", "pearson_r",
                                                              "sign_accuracy"), values))}})
    out.append({"table": "App. D, Tab. 4 (Mkt-RF, main sweep)", "model": "claude-sonnet-4.6",
                "rows": pick("sweep.jsonl", "claude-sonnet-4.6", variant="A", series="Mkt-RF"), "rule": "<",
                "paper": {("Mkt-RF", "A", "pre"): {"parse_rate": .88, "within_band": .34, "pearson_r": .98,
                                                   "sign_accuracy": .97}}})
    for source, series, table, values in (
            ("unrate_baseline.jsonl", "UNRATE", "App. F, Tab. 7 (UNRATE)",
             {"claude-sonnet-4.6": (30, 1.00, 1.000, 1.00), "claude-opus-4.7": (30, 1.00, 1.000, 1.00)}),
            ("cpi_baseline.jsonl", "CPI YoY", "App. G, Tab. 8 (CPI YoY)",
             {"claude-sonnet-4.6": (30, .97, .995, .93), "claude-opus-4.7": (30, 1.00, 1.000, 1.00)}),
            ("noaa_temperature.jsonl", "NOAA tavg", "App. H, Tab. 9 (NOAA °F; band 0.5 °F)",
             {"claude-sonnet-4.6": (30, .93, .993, .36, 1.58), "claude-opus-4.7": (30, 1.00, .450, .30, 9.17)})):
        for model, v in values.items():
            out.append({"table": table, "model": model, "rows": pick(source, model), "rule": "<=", "paper": {
                (series, "A", "pre"): dict(zip(("n_queries", "parse_rate", "pearson_r", "within_band", "mae"), v))}})
    holdout = {"claude-opus-4.7": ((40, 1.00, .99, .29, .68), (14, .57, .99, .44, .50)),
               "claude-sonnet-4.6": ((120, .99, .92, .98, .26), (14, .21, .98, .60, .33))}
    for model, (pre, post) in holdout.items():
        history = pick("opus_baselines.jsonl", model, probe="mktrf") if model == "claude-opus-4.7" else \
            pick("multiseed.jsonl", model, series="Mkt-RF")
        keys = ("n_queries", "parse_rate", "pearson_r", "mae", "within_band")
        out.append({"table": "App. I, Tab. 10 (recent-release holdout; cutoff 2024-12-31)", "model": model,
                    "rows": pd.concat([history, pick("post_cutoff_holdout.jsonl", model)]), "rule": "<=",
                    "cutoff": "2024-12-31", "paper": {("Mkt-RF", "A", "pre"): dict(zip(keys, pre)),
                                                       ("Mkt-RF", "A", "holdout"): dict(zip(keys, post))}})
    out.append({"table": "App. J, Tabs. 11-12 (Variant C, endorsement-aware parser)", "model": "claude-sonnet-4.6",
                "rows": pick("sweep.jsonl", "claude-sonnet-4.6", variant="C"), "rule": "<", "paper": {
                    ("Mkt-RF", "C", "pre"): {"n_parsed": 40, "parse_rate": .67, "rank_accuracy": .525},
                    ("HML", "C", "pre"): {"rank_accuracy": .655}, ("SMB", "C", "pre"): {"rank_accuracy": .475},
                    ("(all six)", "C", "pre"): {"parse_rate": .897}}})
    out.append({"table": "App. J (Variant C)", "model": "claude-haiku-4.5",
                "rows": pick("sweep.jsonl", "claude-haiku-4.5", variant="C"), "rule": "<",
                "paper": {("(all six)", "C", "pre"): {"parse_rate": 1 - .997}}})
    out.append({"table": "App. J, Tab. 11 (forced-choice rerun)", "model": "claude-sonnet-4.6",
                "rows": pick("variantc_forced_choice.jsonl", "claude-sonnet-4.6"), "rule": "<",
                "paper": {("Mkt-RF", "C", "pre"): {"parse_rate": 1.00, "rank_accuracy": .550}}})
    tab13 = {"claude-sonnet-4.6": (133, .910, .149, .776), "claude-haiku-4.5": (133, .602, .100, .702)}
    for model, values in tab13.items():
        out.append({"table": "App. J, Tab. 13 (Variant D, chain of thought)", "model": model,
                    "rows": pick("variant_d.jsonl", model), "rule": "<=", "paper": {
                        ("Mkt-RF", "D", "pre"): dict(zip(("n_queries", "parse_rate", "within_band", "pearson_r"),
                                                         values))}})
    out.append({"table": "App. J, Tab. 13 and text (Variant E, T = 1)", "model": "claude-sonnet-4.6",
                "rows": pick("variant_e_temperature.jsonl", "claude-sonnet-4.6"), "rule": "<=", "paper": {
                    ("Mkt-RF", "E", "pre"): {"n_queries": 176, "parse_rate": 1.000, "within_band": .382,
                                             "pearson_r": .983, "n_draw_pairs": 75, "draw_spread": .063,
                                             "draw_agree_within_band": .933}}})
    for model in ANTHROPIC:
        out.append({"table": "App. K, Tab. 14 (five fictional names × 12 months)", "model": model,
                    "rows": pick("fabricated_expanded.jsonl", model), "rule": "<",
                    "paper": {("(all five)", "fabricated", "pre"): {"n_queries": 60, "n_parsed": 0}}})
    for model, part in (("claude-sonnet-4.6", pick("sweep.jsonl", "claude-sonnet-4.6", variant="A", series="Mkt-RF")),
                        ("claude-opus-4.7", pick("opus_baselines.jsonl", "claude-opus-4.7", probe="mktrf"))):
        out.append({"table": "App. N, Eq. 4 (LeakShare on the transmission prompt)", "model": model, "rule": "<",
                    "rows": pd.concat([part, pick("transmission.jsonl", model)]), "paper": {
                        ("Mkt-RF", "leakshare", "all"): {
                            "rho_signal_truth": .74 if "sonnet" in model else .64, "rho_residual_truth": .02,
                            "leakshare": .999}}})
    for model in ("claude-sonnet-4.6", "claude-haiku-4.5"):
        out.append({"table": "Variant B (narrative; no printed table: the authors' parse.py on their replies)",
                    "model": model, "rows": pick("sweep.jsonl", model, variant="B"), "rule": "<", "paper": {}})
    return out


def load_repo(repo: Path):
    """The authors' ground truth (factor_leak.ff_loader) and parser, imported from the clone."""
    sys.path.insert(0, str(repo))
    from factor_leak import ff_loader
    from factor_leak import parse as authors

    return ff_loader.load_all_factors(repo / "data" / "ff"), ff_loader.FACTOR_LONG_NAMES, authors


def records(repo: Path, name: str) -> list[dict]:
    path = repo / "experiments" / "results" / name
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def replies_of(repo: Path, truth: pd.DataFrame) -> pd.DataFrame:
    """Every Anthropic reply of the files the paper's tables come from, as rows of the replies format (and the file,
    the seed or probe, and the output-token count)."""
    rows = []

    def add(source, record, series, variant, month, **extra):
        if record.get("error") is not None or record["model_name"] not in ANTHROPIC:
            return
        limit = MAX_TOKENS[source][variant] if isinstance(MAX_TOKENS[source], dict) else MAX_TOKENS[source]
        rows.append({"model": record["model_name"], "series": series, "date": month, "variant": variant,
                     "prompt": record["prompt"], "reply": record["response"] or "",
                     "truncated": bool(record.get("output_tokens", 0) >= limit), "source": source, **extra})

    for r in records(repo, "sweep.jsonl"):
        q = r["query"]
        if r["error"] is None:
            add("sweep.jsonl", {**r, "model_name": q["model_name"]}, q["factor"], q["variant"], q["month"],
                **({"date2": q["month2"]} if q["variant"] == "C" else {}))
    for r in records(repo, "variant_d.jsonl"):
        add("variant_d.jsonl", r, r["factor"], "D", r["month"])
    for r in records(repo, "variant_e_temperature.jsonl"):
        add("variant_e_temperature.jsonl", r, r["factor"], "E", r["month"], draw=int(r["draw"]))
    for r in records(repo, "fabricated_expanded.jsonl"):
        kind = "fabricated_fund" if "Fund" in r["name"] else "fabricated_series"
        add("fabricated_expanded.jsonl", r, r["name"], kind, r["month"])
    for r in records(repo, "post_cutoff_holdout.jsonl"):
        add("post_cutoff_holdout.jsonl", r, "Mkt-RF", "A", r["month"], truth=r["truth"])
    for r in records(repo, "opus_baselines.jsonl"):
        series = {"mktrf": "Mkt-RF", "blind": "Mkt-RF", "snp500": "S&P 500", "nasdaq": "NASDAQ Composite"}[r["probe"]]
        add("opus_baselines.jsonl", r, series, "A", r["month"], probe=r["probe"],
            **({"truth": r["truth"]} if r.get("truth") is not None else {}))
    for r in records(repo, "opus_factors.jsonl"):
        add("opus_factors.jsonl", r, r["factor"], "A", r["month"], truth=r["truth"])
    for source in ("camera_ready_multiseed.jsonl", "multiseed.jsonl"):
        for r in records(repo, source):
            add(source, r, r["factor"], "A", r["month"], draw=int(r["seed"]) - 1)
    for r in records(repo, "transmission.jsonl"):
        add("transmission.jsonl", r, "", "transmission", r["month"])
    for source, series, column, unit in (("unrate_baseline.jsonl", "UNRATE", "truth", "percent"),
                                         ("cpi_baseline.jsonl", "CPI YoY", "truth", "percent"),
                                         ("noaa_temperature.jsonl", "NOAA tavg", "truth_f", "degF")):
        for r in records(repo, source):
            add(source, r, series, "A", r["month"], truth=r[column], unit=unit, frequency="month")
    # S&P 500 truth (Yahoo Finance ^GSPC, App. D): the Opus records carry it, on the months Sonnet and Haiku were
    # asked too; the NASDAQ months of Sonnet and Haiku are other months, whose truth is not released
    spx = {r["month"]: r["truth"] for r in records(repo, "opus_baselines.jsonl") if r["probe"] == "snp500"}
    for source, series in (("blind_query.jsonl", "Mkt-RF"), ("snp500_baseline.jsonl", "S&P 500"),
                           ("nasdaq_baseline.jsonl", "NASDAQ Composite")):
        for r in records(repo, source):
            truth = {"truth": spx[r["month"]]} if source.startswith("snp500") and r["month"] in spx else {}
            add(source, r, series, "A", r["month"], probe=source.split("_")[0], **truth)
    for r in records(repo, "variantc_forced_choice.jsonl"):
        add("variantc_forced_choice.jsonl", {**r, "month": r["month1"]}, "Mkt-RF", "C", r["month1"],
            date2=r["month2"])
    return pd.DataFrame(rows)


def authors_decision(authors, row) -> str:
    """The authors' parse of one reply: the value, the month picked (Variant C), or "" for none."""
    if row["variant"] == "C":
        return authors.parse_comparative(row["reply"], row["date"], row["date2"]) or ""
    value = authors.parse_numeric(row["reply"]) if row["reply"] else None
    return "" if value is None else repr(float(value))


def lapbias_decision(row, parser: str = "paper") -> str:
    if row["variant"] == "C":
        picked = parse.parse_choice(row["reply"], row["date"], row["date2"], "month")
        return "" if not picked.parsed else (row["date"] if picked.value == 0 else row["date2"])
    unit = row.get("unit") if isinstance(row.get("unit"), str) else "percent"
    stamp = pd.Timestamp(row["date"] + "-01")
    words = (f"{stamp:%B %Y}", row["date"], str(stamp.year))
    value = parse.parse_value(row["reply"], unit, words, parser, bool(row["truncated"]))
    return repr(value.value) if value.parsed else ""


def series_file(truth: pd.DataFrame, names: dict, path: Path) -> None:
    frames = []
    for factor in ("Mkt-RF", "SMB", "HML", "RMW", "CMA", "Mom"):
        column = truth[factor].dropna()
        frames.append(pd.DataFrame({"series": factor, "date": [f"{p}-01" for p in column.index.astype(str)],
                                    "value": column.to_numpy(), "label": f"the Fama-French {names[factor]} factor",
                                    "unit": "percent"}))
    pd.concat(frames).to_csv(path, index=False)


def score(rows: pd.DataFrame, series: Path, parser: str, work: Path, cutoff: str = CUTOFF):
    """One replay cell through the stage function (pipeline.score_replies): its LeakResult."""
    root = Path(tempfile.mkdtemp(dir=work))
    replies = root / "replies.jsonl"
    columns = ["model", "series", "date", "variant", "prompt", "reply", "truth", "date2", "draw", "truncated",
               "unit", "frequency"]
    with replies.open("w") as handle:
        for row in rows.to_dict("records"):
            handle.write(json.dumps({k: row[k] for k in columns if k in row and not _missing(row[k])}) + "\n")
    names = sorted(set(rows["series"]) & {"Mkt-RF", "SMB", "HML", "RMW", "CMA", "Mom"})
    run = leak_config.from_dict({"root": str(root), "leak": {
        "path": str(series), "series": names or ["Mkt-RF"], "cutoff": cutoff, "parser": parser,
        **({"transmission_series": "Mkt-RF"} if (rows["variant"] == "transmission").any() else {})}})
    layout = Layout(root)
    layout.make_dirs()
    return pipeline.score_replies(run, layout, str(replies))


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value))


def main() -> int:
    arguments = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = os.environ.get("NUMLEAK_REPO", str(HERE.parent.parent / "NumLeak_ICML2026"))
    arguments.add_argument("--repo", default=default)
    arguments.add_argument("--write-fixture", default="")
    arguments.add_argument("--revision", default="", help="the clone's commit, when it is not a git work tree")
    arguments.add_argument("--out", default=str(HERE / "results" / "numleak_replay.md"))
    options = arguments.parse_args()
    repo = Path(options.repo)
    if not (repo / "experiments" / "results" / "sweep.jsonl").exists():
        print(f"skipped: no clone of akotawala10/NumLeak_ICML2026 at {repo} (--repo PATH or NUMLEAK_REPO)")
        return 0
    truth, names, authors = load_repo(repo)
    rows = replies_of(repo, truth)
    if options.write_fixture:
        return write_fixture(rows, truth, authors, Path(options.write_fixture))
    revision = options.revision or _revision(repo)
    return replay(rows, truth, names, authors, revision, Path(options.out))


def _revision(repo: Path) -> str:
    import subprocess

    done = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() or "an unknown commit"


def measured(result, key: tuple, metric: str, rule: str) -> float:
    """lapbias's number for one of the paper's: the summary row (series, variant, window), the LeakShare row, or a
    pooled count over all series of a variant; within-band under the rule of the script that printed it."""
    series, variant, window = key
    summary = result.tables["summary"]
    if variant == "leakshare":
        return float(result.tables["leakshare"].set_index("window").loc[window, metric])
    if series.startswith("(all"):
        part = summary[summary["variant"].str.startswith(variant)]
        return float(part["n_parsed"].sum() / part["n_queries"].sum()) if metric == "parse_rate" else \
            float(part[metric].sum())
    row = summary[(summary["series"] == series) & (summary["variant"] == variant) & (summary["window"] == window)]
    if row.empty:
        return float("nan")
    if metric in ("within_band", "draw_agree_within_band") and rule == "<=":
        # the script's own comparison on lapbias's parsed values: |error| <= band on the float difference, as the
        # script computes it (|4.03 - 3.78| is 0.25000000000000044 there, a miss)
        panel = result.panel
        part = panel[(panel["series"] == series) & (panel["variant"] == variant) & (panel["window"] == window)
                     & (panel["status"] == "parsed")]
        band = float(row["band"].iloc[0])
        if metric == "within_band":
            return float(((part["value"] - part["truth"]).abs() <= band).mean())
        both = part.pivot_table(index="period", columns="draw", values="value", aggfunc="first").dropna()
        return float(((both.iloc[:, 0] - both.iloc[:, 1]).abs() <= band).mean())
    return float(row[metric].iloc[0])


def _cell(value, count: bool = False) -> str:
    if isinstance(value, str):
        return value
    if value != value:
        return "–"
    return f"{value:.0f}" if count or (float(value).is_integer() and abs(value) > 1) else f"{value:.3f}"


def _target(metric: str, paper: float, ours: float) -> str:
    if ours != ours:
        return "missing"
    if metric.startswith("n_"):
        return "yes" if round(ours) == round(paper) else f"no ({ours - paper:+.0f})"
    tolerance = TOLERANCE.get(metric, 0.01) + 0.005  # the paper prints 2-3 decimals: its rounding is allowed for
    return "yes" if abs(ours - paper) <= tolerance else f"no ({ours - paper:+.3f})"


def agreement(rows: pd.DataFrame, authors) -> list[str]:
    """Parse decisions of lapbias (default parser) against the authors' parse.py on every Anthropic reply."""
    frame = rows.assign(authors=[authors_decision(authors, r) for r in rows.to_dict("records")],
                        lapbias=[lapbias_decision(r) for r in rows.to_dict("records")],
                        explicit=[lapbias_decision(r, "explicit_estimate") for r in rows.to_dict("records")])
    lines = ["| file | variant | replies | ended at the length limit | same decision as parse.py | differ | "
             "explicit_estimate differs from parse.py |", "|---|---|---|---|---|---|---|"]
    for (source, variant), part in frame.groupby(["source", "variant"], sort=True):
        same = int((part["authors"] == part["lapbias"]).sum())
        lines.append(f"| {source} | {variant} | {len(part)} | {int(part['truncated'].sum())} | {same} | "
                     f"{len(part) - same} | {int((part['authors'] != part['explicit']).sum())} |")
    total = int((frame["authors"] == frame["lapbias"]).sum())
    lines.append(f"| all | | {len(frame)} | {int(frame['truncated'].sum())} | {total} | {len(frame) - total} | "
                 f"{int((frame['authors'] != frame['explicit']).sum())} |")
    return lines


def narrative(rows: pd.DataFrame, truth: pd.DataFrame, authors, result, parser: str) -> list[dict]:
    """Variant B per factor: lapbias's numbers and those of the authors' parse.py on the same replies."""
    out = []
    summary = result.tables["summary"]
    for factor, part in rows.groupby("series"):
        values = [authors.parse_numeric(r) if r else None for r in part["reply"]]
        truths = truth[factor].reindex(pd.PeriodIndex(part["date"], freq="M")).to_numpy()
        parsed = np.array([v is not None for v in values])
        x = np.array([v for v in values if v is not None], float)
        y = truths[parsed]
        row = summary[(summary["series"] == factor) & (summary["variant"] == "B")].iloc[0]
        out.append({"series": factor, "parser": parser, "parse_rate": row["parse_rate"],
                    "authors_parse_rate": parsed.mean(), "pearson_r": row["pearson_r"],
                    "authors_pearson_r": float(np.corrcoef(x, y)[0, 1]) if len(x) > 2 else float("nan"),
                    "within_band": row["within_band"],
                    "authors_within_band": float(metrics.within(x, y, 0.25).mean()) if len(x) else float("nan")})
    return out


def replay(rows: pd.DataFrame, truth: pd.DataFrame, names: dict, authors, revision: str, out: Path) -> int:
    started, cpu = time.time(), resource.getrusage(resource.RUSAGE_SELF)
    work = Path(tempfile.mkdtemp(prefix="numleak_replay_"))
    series = work / "ff_factors.csv"
    series_file(truth, names, series)
    table = ["| paper table | model | series | variant | window | metric | paper | lapbias | lapbias, "
             "explicit_estimate | within target |", "|---|---|---|---|---|---|---|---|---|---|"]
    narratives, shuffle, edges = [], [], []
    for cell in cells(rows):
        results = {parser: score(cell["rows"], series, parser, work, cell.get("cutoff", CUTOFF))
                   for parser in ("paper", "explicit_estimate")}
        for key, values in cell["paper"].items():
            for metric, paper in values.items():
                ours = measured(results["paper"], key, metric, cell["rule"])
                count = metric.startswith("n_")
                other = measured(results["explicit_estimate"], key, metric, cell["rule"])
                shown = metric + (" (≤ band, as the script that printed it)" if cell["rule"] == "<=" and
                                  metric.startswith(("within", "draw_agree")) else "")
                table.append(f"| {cell['table']} | {ANTHROPIC[cell['model']]} | {key[0]} | {key[1]} | {key[2]} | "
                             f"{shown} | {_cell(paper, count)} | {_cell(ours, count)} | {_cell(other, count)} | "
                             f"{_target(metric, paper, ours)} |")
                if metric == "within_band" and cell["rule"] == "<=":
                    strict = measured(results["paper"], key, metric, "<")
                    table.append(f"| | | | | | within_band (strict <, lapbias's rule) | | {_cell(strict)} | | |")
                    if strict != ours:
                        edges.append(f"{cell['table']}, {ANTHROPIC[cell['model']]}, {key[0]} {key[1]}: "
                                     f"{ours:.3f} (≤) against {strict:.3f} (<)")
        if cell["table"].startswith("Variant B"):
            for parser, result in results.items():
                narratives += [{"model": ANTHROPIC[cell["model"]], **r}
                               for r in narrative(cell["rows"], truth, authors, result, parser)]
        if cell["table"].startswith("App. C") and cell["model"] == "claude-sonnet-4.6":
            summary = results["paper"].tables["summary"]
            shuffle = summary[summary["variant"] == "A"][["series", "within_band", "shuffle_chance", "shuffle_p"]]
    used = resource.getrusage(resource.RUSAGE_SELF)
    seconds = used.ru_utime + used.ru_stime - cpu.ru_utime - cpu.ru_stime
    load = os.getloadavg()
    lines = ["## NumLeak replay: the paper's Anthropic replies through `lapbias leak --replies`", "",
             f"Machine: {describe()}; {seconds:.0f} s CPU time ({time.time() - started:.0f} s wall, load average "
             f"{load[0]:.1f} / {load[1]:.1f}: other jobs shared the cores) for {len(rows)} replies in "
             f"{len(cells(rows))} replay cells, each scored twice (parser `paper` and `explicit_estimate`).",
             f"Source: akotawala10/NumLeak_ICML2026 at {revision} (experiments/results/*.jsonl, data/ff/*.csv; the "
             "paper's numbers typed from paper/numleak.pdf). `python benchmarks/bench_numleak_replay.py --repo PATH`.",
             "", "### Parse decisions against the authors' parser (factor_leak/parse.py), every Anthropic reply", ""]
    lines += agreement(rows, authors)
    lines += ["", "### The paper's printed numbers and lapbias's", "",
              "Targets: counts exact, shares within ±0.01 and r within ±0.02 of the printed value (plus half a unit "
              "of its last printed decimal). Within-band rates are compared under the rule of the script that "
              "printed them: several of the authors' scripts count |error| ≤ 0.25, §2 and factor_leak/metrics.py "
              "count |error| < 0.25 (lapbias's rule, shown on the line below such a row).", ""] + table
    if len(shuffle):
        lines += ["", "### Factor-shuffle null, Sonnet 4.6 (§3 (i): \"a factor-shuffle null is ∼19× lower than "
                  "observed Sonnet×Mkt-RF recall\")", "", to_markdown(shuffle)]
    if narratives:
        lines += ["", "### Variant B (narrative): no printed table; the authors' parse.py on the same replies", "",
                  to_markdown(pd.DataFrame(narratives))]
    write_report(out, lines + [""] + explained(rows, edges, shuffle, narratives))
    return 0


def to_markdown(frame: pd.DataFrame) -> str:
    columns = list(frame.columns)
    body = ["| " + " | ".join(_cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns), *body])


def write_fixture(rows: pd.DataFrame, truth: pd.DataFrame, authors, path: Path) -> int:
    """The vendored regression table (module docstring): replies format plus `source` and the authors' decision."""
    generator = np.random.default_rng(20260423)
    keep = rows[~rows["source"].isin(["snp500_baseline.jsonl", "nasdaq_baseline.jsonl"])
                & ~((rows["source"] == "opus_baselines.jsonl") & rows["probe"].isin(["snp500", "nasdaq"]))]
    parts = []
    for (source, model, variant), part in keep.groupby(["source", "model", "variant"], sort=True):
        take = min(len(part), 8 if variant in ("B", "D") else 16)
        parts.append(part.iloc[np.sort(generator.choice(len(part), take, replace=False))])
    sample = pd.concat(parts)
    factors = set(truth.columns)
    with path.open("w") as handle:
        for row in sample.to_dict("records"):
            out = {k: row[k] for k in ("model", "series", "date", "variant", "prompt", "reply", "truth", "date2",
                                       "draw", "truncated", "unit", "frequency", "source") if k in row
                   and not _missing(row[k])}
            if row["series"] in factors and "truth" not in out:
                out["truth"] = float(truth.loc[pd.Period(row["date"], freq="M"), row["series"]])
                if row["variant"] == "C":
                    out["truth2"] = float(truth.loc[pd.Period(row["date2"], freq="M"), row["series"]])
            out["authors"] = authors_decision(authors, row)
            handle.write(json.dumps(out, ensure_ascii=False) + "\n")
    print(f"{len(sample)} replies -> {path} ({path.stat().st_size / 1024:.0f} KB)")
    return 0


def explained(rows: pd.DataFrame, edges: list[str], shuffle: pd.DataFrame, narratives: list[dict]) -> list[str]:
    """The differences from the printed numbers, each with the count that explains it (computed here)."""
    e = rows[rows["source"] == "variant_e_temperature.jsonl"]
    unparsed = e[[not parse.parse_value(r, "percent").parsed for r in e["reply"]]]
    late = int((unparsed["date"] >= "2025-01").sum())
    ratio = ""
    if len(shuffle):
        mkt = shuffle.set_index("series").loc["Mkt-RF"]
        ratio = (f" Here the observed within-25-bps rate {mkt['within_band']:.3f} is "
                 f"{mkt['within_band'] / mkt['shuffle_chance']:.1f}× the null's {mkt['shuffle_chance']:.4f} "
                 "(1,000 draws; the null is random, and the paper's draws are not ours).")
    c = rows[(rows["source"] == "sweep.jsonl") & (rows["variant"] == "C")]
    cut_a = rows[(rows["source"] == "sweep.jsonl") & (rows["variant"] == "A") & rows["truncated"]]
    b = {(n["model"], n["parser"]): n for n in narratives if n["series"] == "Mkt-RF"}
    sonnet, explicit = b.get(("Sonnet 4.6", "paper"), {}), b.get(("Sonnet 4.6", "explicit_estimate"), {})
    printed = {"claude-sonnet-4.6": .95, "claude-haiku-4.5": .93}
    untrue = rows[rows["source"] == "nasdaq_baseline.jsonl"]
    rates = []
    for model, part in untrue.groupby("model"):
        rate = np.mean([parse.parse_value(r, "percent").parsed for r in part["reply"]])
        rates.append(f"{ANTHROPIC[model]} {rate:.3f} (printed {printed[model]:.2f})")
    return [
        "### Differences explained", "",
        f"- **App. J, Tab. 13, Variant E parse rate 1.000 printed, 0.864 here.** {len(unparsed)} of {len(e)} replies "
        f"carry no value under the authors' parser as well ({late} of them on 2025–26 months, refused: \"I don't "
        "have access to the Fama-French factor data for April 2025 ...\"; one is the refusal followed by the "
        "sentinel -999.99, which stays a refusal). The printed r (0.983) and within-25 bps (0.382) are those of "
        f"the {len(e) - len(unparsed)} parsed replies and are reproduced; the printed parse rate is not the "
        "authors' parser's either.",
        "- **Within-band rule.** §2 and factor_leak/metrics.py define within-25 bps as |error| < 0.25 (App. C, "
        "Tab. 3's Sonnet and Haiku rows, Tab. 1); the scripts behind Tabs. 4, 5, 7-10, 13 and App. C's Opus rows "
        "use ≤ 0.25. lapbias reports the strict rate (and 5 bps beside it); the table compares each printed number "
        "under its own script's rule, on the float difference as the script computes it (|4.03 − 3.78| is "
        "0.25000000000000044, a miss under ≤: Tab. 4's Opus blind probe prints 27/40 = 0.68), and shows lapbias's "
        "strict rate below it (the error rounded to 9 decimals, so an error of exactly 0.25 is a miss whatever the "
        "float rounding). They differ on: " + ("; ".join(edges) if edges else "none") + ".",
        "- **§3 (i), factor-shuffle null \"∼19× lower\" than Sonnet's Mkt-RF recall.**" + ratio,
        f"- **Replies cut at the length limit.** The authors' 48-token cap cut {int(c['truncated'].sum())} of "
        f"{len(c)} Variant-C replies (App. J's parse decisions are read from what is left) and "
        f"{len(cut_a)} of the sweep's Variant-A replies ("
        f"{sum(not parse.parse_value(r).parsed for r in cut_a['reply'])} "
        "of them carry no value); lapbias flags them and reports the share per variant.",
        "- **Variant B** has no printed table; with the paper parser lapbias reproduces the authors' parse.py "
        f"on every reply (Sonnet Mkt-RF parse rate {sonnet.get('parse_rate', float('nan')):.3f}, r "
        f"{sonnet.get('pearson_r', float('nan')):.3f}). The mean of every percentage in a narrative reads a refusal "
        "with context numbers as a value (\"the market rose roughly +37% for the full year 1975\" → 37.0); the "
        "`explicit_estimate` option reads the number after \"best estimate\" first (Sonnet Mkt-RF r "
        f"{explicit.get('pearson_r', float('nan')):.3f}) and changes no decision of the other variants (first table).",
        "- **Not reproduced (no truth released):** Tab. 4's NASDAQ rows of Sonnet 4.6 and Haiku 4.5 (their truth is "
        "Yahoo Finance closes, not in the repository: Opus 4.7's S&P 500 and NASDAQ records carry it, and Sonnet and "
        "Haiku were asked Opus's S&P 500 months, so those rows are in the table above); their parse rates by "
        "lapbias's parser: " + "; ".join(rates) + ". Tab. 16 (GPT-5.4 only) and Tab. 18 (a fine-tuned Qwen) hold "
        "no Anthropic replies.",
    ]


if __name__ == "__main__":
    sys.exit(main())
