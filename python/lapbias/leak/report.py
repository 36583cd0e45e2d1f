"""The NumLeak section of results/REPORT.md and the calibration figure, read back from results/leak/*.csv.

`section(results)` is what report/markdown.py includes when results/leak/ exists; `update_report` puts the same
section into an existing REPORT.md (replacing an older NumLeak section) or starts one, so `lapbias leak` alone
leaves a readable report.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import pandas as pd  # noqa: E402

from ..io import atomic_write, write_text  # noqa: E402
from ..report.tables import to_markdown  # noqa: E402
from .metrics import VALUE_VARIANTS  # noqa: E402

HEADING = "## NumLeak audit: numeric recall from a date alone"
COLORS = {"pre": "tab:red", "holdout": "tab:blue"}
UNIT_NAMES = {"degF": "°F", "degC": "°C", "index": "index points"}


def calibration_figure(panel: pd.DataFrame, path) -> None:
    """Recall against truth, one panel per series (rows) × value variant (columns), coloured by window, with
    the 45° line on equal axes (both axes span the same range, so the line is at 45°); a panel without parsed
    replies says so. Variant E's panel holds every draw."""
    probed = panel[panel["variant"].isin(VALUE_VARIANTS)]
    names = sorted(probed["series"].unique()) or ["(none)"]
    variants = [v for v in VALUE_VARIANTS if v in set(probed["variant"])] or ["A"]
    figure, axes = plt.subplots(len(names), len(variants), figsize=(3.2 * len(variants), 3.2 * len(names)),
                                squeeze=False)
    for r, name in enumerate(names):
        for c, variant in enumerate(variants):
            ax = axes[r][c]
            part = probed[(probed["series"] == name) & (probed["variant"] == variant)]
            parsed = part[part["status"] == "parsed"]
            for window, color in COLORS.items():
                points = parsed[parsed["window"] == window]
                if len(points):
                    ax.scatter(points["truth"], points["value"], s=18, color=color, alpha=0.75,
                               label=f"{window} (n = {len(points)})")
            if len(part):
                spread = pd.concat([part["truth"], parsed["value"]]).dropna()
                low, high = float(spread.min()), float(spread.max())
                pad = 0.05 * (high - low) or 0.5
                low, high = low - pad, high + pad
                ax.plot([low, high], [low, high], color="grey", lw=0.8, ls="--")
                ax.set_xlim(low, high)
                ax.set_ylim(low, high)
                ax.set_aspect("equal", adjustable="box")
            if parsed.empty:
                ax.text(0.5, 0.5, f"no parsed replies\n({len(part)} asked)", ha="center", va="center",
                        transform=ax.transAxes, fontsize=8)
            else:
                ax.legend(fontsize=6, loc="best")
            draws = " (all draws)" if variant == "E" else ""
            ax.set_title(f"{name}, variant {variant}{draws}", fontsize=9)
            ax.set_xlabel("published value", fontsize=8)
            ax.set_ylabel("model's recall", fontsize=8)
    figure.suptitle("NumLeak calibration: recall vs truth (dashed 45° line = exact recall)", fontsize=10)
    figure.tight_layout()
    atomic_write(path, lambda tmp: figure.savefig(tmp, format="png", dpi=110))
    plt.close(figure)


def parse_rate_figure(panel: pd.DataFrame, path) -> None:
    """Share of replies parsed, refused and unparsed by variant and window (stacked bars, windows side by side:
    App. I's contrast is the parse rate falling after the cutoff; §2's parse rate, App. K)."""
    order = [v for v in ("A", "B", "C", "D", "E", "fabricated_series", "fabricated_fund", "transmission")
             if v in set(panel["variant"])]
    windows = [w for w in ("pre", "holdout") if w in set(panel["window"])]
    cells = [(v, w) for v in order for w in windows if ((panel["variant"] == v) & (panel["window"] == w)).any()]
    figure, axes = plt.subplots(figsize=(0.8 * len(cells) + 3, 3.8))
    bottom = [0.0] * len(cells)
    for status, color in (("parsed", "tab:green"), ("refusal", "tab:orange"), ("unparsed", "tab:grey")):
        heights = [float((panel[(panel["variant"] == v) & (panel["window"] == w)]["status"] == status).mean())
                   for v, w in cells]
        axes.bar(range(len(cells)), heights, bottom=bottom, color=color, label=status)
        bottom = [b + h for b, h in zip(bottom, heights)]
    counts = [int(((panel["variant"] == v) & (panel["window"] == w)).sum()) for v, w in cells]
    axes.set_xticks(range(len(cells)), [f"{v}\n{w}\nn = {n}" for (v, w), n in zip(cells, counts)], fontsize=6)
    axes.set_ylabel("share of replies")
    axes.set_title("NumLeak parse rate by probe variant and window", fontsize=10)
    axes.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    figure.tight_layout()
    atomic_write(path, lambda tmp: figure.savefig(tmp, format="png", dpi=110))
    plt.close(figure)


def _fmt(share: float, low: float, high: float) -> str:
    if share is None or (isinstance(share, float) and math.isnan(share)):
        return ""
    return f"{share:.2f} [{low:.2f}, {high:.2f}]" if not math.isnan(low) else f"{share:.2f}"


def _read(results: Path, name: str) -> pd.DataFrame | None:
    path = results / "leak" / f"{name}.csv"
    return pd.read_csv(path, keep_default_na=True) if path.exists() and path.stat().st_size > 1 else None


def _band_words(unit: str, width: float) -> str:
    return f"{width * 100:g} bps" if unit == "percent" else f"{width:g} {UNIT_NAMES.get(unit, unit)}"


def _value_table(summary: pd.DataFrame, variants: tuple[str, ...]) -> str:
    part = summary[summary["variant"].isin(variants)]
    sign = [_fmt(*r) + ("" if str(flag) in ("True", "nan") else " (level series)")
            for r, flag in zip(part[["sign_accuracy", "sign_accuracy_lo", "sign_accuracy_hi"]].to_numpy(),
                               part["sign_informative"])]
    table = pd.DataFrame({
        "series": part["series"], "variant": part["variant"], "window": part["window"], "n": part["n_queries"],
        "cut at limit": part["n_truncated"], "prompt's numbers": part["n_prompt_echo"],
        "parse rate": [_fmt(*r) for r in part[["parse_rate", "parse_rate_lo", "parse_rate_hi"]].to_numpy()],
        "sign acc.": sign,
        "Pearson r": [_fmt(*r) for r in part[["pearson_r", "pearson_lo", "pearson_hi"]].to_numpy()],
        "MAE": part["mae"],
        "within band": [_fmt(*r) + (f" ({_band_words(u, b)})" if r[0] == r[0] else "")
                        for r, u, b in zip(part[["within_band", "within_band_lo", "within_band_hi"]].to_numpy(),
                                           part["unit"], part["band"])],
        "within fine band": [_fmt(*r) + (f" ({_band_words(u, b)})" if r[0] == r[0] else "")
                             for r, u, b in zip(part[["within_fine_band", "within_fine_band_lo",
                                                      "within_fine_band_hi"]].to_numpy(), part["unit"],
                                                part["fine_band"])],
        "shuffle chance": part["shuffle_chance"], "shuffle p": part["shuffle_p"], "note": part["note"].fillna(""),
    })
    return to_markdown(table, list(table.columns))


def reading(summary: pd.DataFrame, model: str) -> str:
    """The section's first sentence: which series Variant A recalls beyond chance, read from the summary. A series
    "shows recall" when its Pearson r has a 95% interval above 0 and its within-band rate's interval lies above
    the factor-shuffle chance (above 0 without a sibling series); else the tables are machinery, not a finding."""
    recall = summary[summary["variant"] == "A"]
    if recall.empty:
        return "Reading: Variant A was not probed, so no recall can be read from this audit."
    chance = recall["shuffle_chance"].fillna(0.0)
    shown = recall[(recall["pearson_lo"] > 0) & (recall["within_band_lo"] > chance)]
    parsed, asked = int(recall["n_parsed"].sum()), int(recall["n_queries"].sum())
    echo = int(recall["n_prompt_echo"].sum())
    echoed = f", {echo} of them only the prompt's own example numbers" if echo else ""
    names = ", ".join(sorted(recall["series"].unique()))
    if shown.empty:
        return (f"Reading: `{model}` recalls none of the probed series ({names}): no series' Variant-A Pearson r has a "
                f"95% interval above 0 together with a within-band rate above chance ({parsed} of {asked} Variant-A "
                f"replies parsed{echoed}); the tables below show the machinery, not a finding.")
    found = "; ".join(f"{r.series} ({r.window}): r = {r.pearson_r:.2f} [{r.pearson_lo:.2f}, {r.pearson_hi:.2f}], "
                      f"within band {r.within_band:.2f} against chance {c:.2f}"
                      for r, c in zip(shown.itertuples(), chance[shown.index]))
    return (f"Reading: `{model}`'s Variant-A answers track the published values of {found}. Memorization shows as "
            "high values of all four metrics jointly, with refusal (not fabrication) on the controls below (§2).")


def _truncation(summary: pd.DataFrame) -> str:
    counts = summary.groupby("variant")[["n_truncated", "n_length_unknown", "n_queries", "n_cut_unparsed",
                                         "n_prompt_echo", "n_parsed", "n_unread_number"]].sum()
    echo = ""
    if counts["n_prompt_echo"].sum():
        echo = (f" {int(counts['n_prompt_echo'].sum())} of {int(counts['n_parsed'].sum())} parsed values are only "
                "numbers the prompt itself writes (its format example, column `prompt's numbers`): echoes of the "
                "question, counted as the paper counts them but not recall.")
    if counts["n_length_unknown"].sum() == counts["n_queries"].sum():
        return ("Whether replies ended at the answer-length limit is not known for these replies (no `truncated` "
                "record)." + echo + _unread(counts))
    shares = ", ".join(f"{v} {int(r.n_truncated)}/{int(r.n_queries)}" for v, r in counts.iterrows())
    text = (f"Replies that ended at the answer-length limit: {int(counts['n_truncated'].sum())} of "
            f"{int(counts['n_queries'].sum())} ({shares}).")
    cut = int(counts["n_cut_unparsed"].sum())
    if cut:
        text += (f" {cut} of them ended before any value: their rows' parse rates are lower bounds (the `note` "
                 "column), not evidence that the model declined.")
    unknown = int(counts["n_length_unknown"].sum())
    if unknown:
        text += f" For {unknown} replies it is not known."
    return text + echo + _unread(counts)


def _unread(counts: pd.DataFrame) -> str:
    unread = counts["n_unread_number"]
    if not unread.sum():
        return ""
    shares = ", ".join(f"{v} {int(n)}" for v, n in unread[unread > 0].items())
    return (f" {int(unread.sum())} replies hold a number the parser does not read ({shares}): a bare number in a reply "
            "over 30 characters (or beyond the plausibility bound) is no value by the authors' rules, so they count "
            "as unparsed, as the paper counts them, but they are not refusals: the parse and commit rates of their "
            "rows are lower bounds on the share of replies that give a number (the `note` column, the panel's "
            "`unread_number`).")


def section(results: Path) -> list[str]:
    """The NumLeak section (Markdown lines) from results/leak/*.csv; [] when there is no summary."""
    results = Path(results)
    summary = _read(results, "summary")
    if summary is None:
        return []
    if "n_unread_number" not in summary:  # a summary written before lapbias counted them
        summary["n_unread_number"] = 0
    config_path = results / "leak" / "run_config.json"
    config = json.loads(config_path.read_text()) if config_path.exists() else {}
    leak, model = config.get("leak", {}), config.get("model", {})
    name = (config.get("replies_model") or "not named") if "replies" in config else model.get("model_id", "?")
    asked = (f"Replies read from `{config['replies']}` (model `{name}`), collected elsewhere and scored here with "
             "no model queried" if "replies" in config else
             f"Model `{name}` ({model.get('backend', '?')} backend), asked for the value of public series at a date "
             "with no other context (NumLeak §2, App. O)")
    lines = [HEADING, "", reading(summary, name), "",
             f"{asked}; series file `{leak.get('path') or 'statsmodels macrodata (bundled)'}`; training cutoff "
             f"{leak.get('cutoff', '?')} (holdout = periods ending after it, App. I); parser "
             f"`{leak.get('parser', '?')}` "
             f"(docs/leak.md). Memorization shows as high values of all four metrics jointly (sign, r, MAE, "
             "within-band; parse rate tracks refusal policy, not memory); shares carry Wilson 95% intervals, r a "
             "bootstrap 95% interval; within-band is strict (|error| < band); `shuffle chance` is the factor-shuffle "
             "null (the date kept, the series swapped for a sibling's estimate) of the within-band rate and `shuffle "
             "p` its one-sided p; sign accuracy leaves out zero truths and is marked for level series, where any "
             "answer of the right sign scores.", "", _truncation(summary), ""]
    if "holdout" not in set(summary["window"]):
        lines += [f"_No holdout dates: every probed period ends on or before the cutoff {leak.get('cutoff', '?')}, "
                  "so the pre-vs-holdout contrast (App. I) is not available for these series; probe a series that "
                  "extends past the cutoff for it._", ""]
    notes_path = results / "leak" / "notes.txt"
    notes = notes_path.read_text().strip().splitlines() if notes_path.exists() else []
    lines += [f"_Note: {note}._" for note in notes] + ([""] if notes else [])
    lines += ["### Value recall (Variant A) and its variants (B narrative, D step-by-step, E temperature 1)", "",
              _value_table(summary, ("A",)), "", _value_table(summary, ("B", "D", "E")), ""]
    spread = summary[summary["variant"] == "E"][["series", "window", "n_draw_pairs", "draw_spread",
                                                 "draw_agree_within_band"]]
    if len(spread):
        lines += ["Variant E (both draws pooled above): mean |draw 1 − draw 2| and the share of dates whose draws "
                  "agree within the band:", "", to_markdown(spread, list(spread.columns)), ""]
    ranks = summary[summary["variant"] == "C"]
    if len(ranks):
        table = pd.DataFrame({"series": ranks["series"], "window": ranks["window"], "pairs": ranks["n_queries"],
                              "cut at limit": ranks["n_truncated"],
                              "parse rate": [_fmt(*r) for r in ranks[["parse_rate", "parse_rate_lo",
                                                                       "parse_rate_hi"]].to_numpy()],
                              "rank accuracy": [_fmt(*r) for r in ranks[["rank_accuracy", "rank_accuracy_lo",
                                                                          "rank_accuracy_hi"]].to_numpy()]})
        lines += ["### Which of two dates was higher (Variant C, App. J; chance = 0.50)", "",
                  to_markdown(table, list(table.columns)), ""]
    controls = summary[summary["variant"].isin(["fabricated_series", "fabricated_fund"])]
    if len(controls):
        commit = []
        for row in controls.itertuples():
            rate = _fmt(row.parse_rate, row.parse_rate_lo, row.parse_rate_hi)
            if row.n_prompt_echo:
                rate += f" ({row.n_prompt_echo} only the prompt's example numbers)"
            if row.n_cut_unparsed and row.n_cut_unparsed == row.n_queries - row.n_parsed - row.n_refusal and \
                    row.n_parsed == 0 and row.n_refusal == 0:
                rate = f"not measured: all {row.n_queries} replies cut at the length limit before a value"
            elif row.n_cut_unparsed:
                rate += f" (lower bound: {row.n_cut_unparsed} cut before a value)"
            if row.n_unread_number:
                rate += (f" by the parser; {row.n_unread_number} of {row.n_queries} replies hold a number it does not "
                         "read: a lower bound")
            commit.append(rate)
        table = pd.DataFrame({"control": controls["variant"], "name": controls["series"], "window": controls["window"],
                              "n": controls["n_queries"], "commit rate": commit, "refusals": controls["n_refusal"]})
        lines += ["### Fabricated controls (App. K): series that do not exist", "",
                  "A model that commits to a number here is fabricating; commit rate = parse rate. Asked in the pre "
                  "window only.", "", to_markdown(table, list(table.columns)), ""]
    selectivity = _read(results, "selectivity")
    if selectivity is not None and len(selectivity):
        lines += ["### Selectivity across sibling series (App. C)", "",
                  "Pearson r of each series' Variant-A recall with each sibling's truth on the same dates; recall "
                  "of a memorized series tracks its own truth, not its siblings'.", "",
                  to_markdown(selectivity, list(selectivity.columns)), ""]
    famous, gradient = _read(results, "famous"), _read(results, "cutoff_gradient")
    if famous is not None or gradient is not None:
        lines += ["### Temporal controls (§2, diagnostic ii)", ""]
    if famous is not None:
        lines += ["Variant A on the famous periods (`[leak] famous_dates`) against the other probed periods; lift = "
                  "famous − other within-band rate.", "", to_markdown(famous, list(famous.columns)), ""]
    if gradient is not None:
        lines += ["Variant A against the distance to the cutoff (years from the period's end to the cutoff, "
                  "negative after it): OLS slopes of the within-band rate and the parse rate per year over the "
                  "distinct distances (at least 3).", "", to_markdown(gradient, list(gradient.columns)), ""]
    entropy = _read(results, "entropy")
    if entropy is not None and len(entropy):
        tokens = sorted({t.split(" x")[0] for cell in entropy["first_tokens"].dropna() for t in cell.split(", ")})
        caveat = "" if entropy["n_value_first"].sum() else (
            f" **In no reply is the first token part of a number** (first tokens: {', '.join(tokens[:5])}): the "
            "entropies measure the preamble, not a value readout, and `mean_entropy_bits` is empty.")
        lines += ["### Readout entropy (App. R)", "",
                  "Entropy in bits of the first answer token's top-5 distribution plus a \"rest\" bucket (App. R's "
                  "top-5; the backend exposes the first position only, where the paper averages the sign and the "
                  "first numeric chunk). `mean_entropy_bits` averages the replies whose first token is a sign or a "
                  "digit (`n_value_first`), `mean_entropy_all` every reply." + caveat, "",
                  to_markdown(entropy, list(entropy.columns)), ""]
    ranking = _read(results, "ranking")
    if ranking is not None and len(ranking):
        lines += ["### Log-prob ranking of candidate values (App. T)", "",
                  "Five candidates per date (true, sign-flipped, adjacent date's true value, another series' value, "
                  "random decoy) ranked by length-normalised sequence log-prob; `mean_gap` = mean (true − best "
                  "other) log-prob (Tab. 18; positive = the true value wins); `loses_to_*` counts what wins when "
                  "the true value is not first.", "", to_markdown(ranking, list(ranking.columns)), ""]
    share = _read(results, "leakshare")
    if share is not None and len(share):
        columns = ["series", "signal", "window", "n_dates", "rho_signal_truth", "rho_residual_truth", "leakshare",
                   "rho_recall_truth", "ceiling", "note"]
        lines += ["### Leak attribution (App. N)", "",
                  "LeakShare = 1 − ρ(e,F)² / ρ(S,F)² (Eq. 4), e = residual of the signal S on the model's own "
                  "recall M; worst-case ceiling = min(1, |ρ(M,F)| / ρ(S,F)) (Eq. 3), an upper bound only, under the "
                  f"assumptions {share['ceiling_assumptions'].iloc[0]}.", "",
                  to_markdown(share.fillna({"note": ""}), columns), ""]
    lines += ["![NumLeak calibration: recall against the published value per series and variant, pre-cutoff dates "
              "red, holdout blue, dashed 45° line on equal axes](figures/leak_calibration.png)", "",
              "![NumLeak parse rate: parsed, refused and unparsed replies per variant and window]"
              "(figures/leak_parse_rate.png)", "",
              "Sources: `results/leak/*.csv` (one row per series × variant × window in `summary.csv`), the probe "
              "panel `data/derived/leak/probes.parquet` and `probes.dta`"
              + (", the replies file named above." if "replies" in config else
                 ", the raw replies `data/raw/leak.jsonl`."), ""]
    return lines


def update_report(results: Path, run=None) -> Path:
    """Put the NumLeak section into results/REPORT.md, replacing an earlier one, or start the file."""
    path = Path(results) / "REPORT.md"
    text = "\n".join(section(results))
    if path.exists():
        current = path.read_text(encoding="utf-8")
        start = current.find(HEADING)
        if start >= 0:  # replaced where it stands
            end = current.find("\n## ", start + len(HEADING))
            updated = current[:start] + text + ("\n" + current[end + 1:] if end >= 0 else "")
        else:
            updated = current.rstrip("\n") + "\n\n" + text
    else:
        updated = "# lapbias report\n\n" + text
    write_text(path, updated.rstrip("\n") + "\n")
    return path
