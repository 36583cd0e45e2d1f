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


def calibration_figure(panel: pd.DataFrame, path) -> None:
    """Recall against truth, one panel per series (rows) × value variant (columns), coloured by window, with
    the 45° line; a panel without parsed replies says so."""
    probed = panel[panel["variant"].isin(VALUE_VARIANTS)]
    names = sorted(probed["series"].unique()) or ["(none)"]
    variants = [v for v in VALUE_VARIANTS if v in set(probed["variant"])] or ["A"]
    figure, axes = plt.subplots(len(names), len(variants), figsize=(3.2 * len(variants), 3.0 * len(names)),
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
                low, high = part["truth"].min(), part["truth"].max()
                ax.plot([low, high], [low, high], color="grey", lw=0.8, ls="--")
            if parsed.empty:
                ax.text(0.5, 0.5, f"no parsed replies\n({len(part)} asked)", ha="center", va="center",
                        transform=ax.transAxes, fontsize=8)
            else:
                ax.legend(fontsize=6, loc="best")
            ax.set_title(f"{name}, variant {variant}", fontsize=9)
            ax.set_xlabel("published value", fontsize=8)
            ax.set_ylabel("model's recall", fontsize=8)
    figure.suptitle("NumLeak calibration: recall vs truth (45° line = exact recall)", fontsize=10)
    figure.tight_layout()
    atomic_write(path, lambda tmp: figure.savefig(tmp, format="png", dpi=110))
    plt.close(figure)


def parse_rate_figure(panel: pd.DataFrame, path) -> None:
    """Share of replies parsed, refused and unparsed by variant (stacked bars; §2's parse rate, App. K)."""
    order = [v for v in ("A", "B", "C", "D", "E", "fabricated_series", "fabricated_fund", "transmission")
             if v in set(panel["variant"])]
    shares = (panel.groupby("variant")["status"].value_counts(normalize=True).unstack(fill_value=0.0)
              .reindex(index=order, columns=["parsed", "refusal", "unparsed"], fill_value=0.0))
    counts = panel.groupby("variant").size().reindex(order)
    figure, axes = plt.subplots(figsize=(1.0 * len(order) + 3, 3.6))
    bottom = pd.Series(0.0, index=order)
    for status, color in (("parsed", "tab:green"), ("refusal", "tab:orange"), ("unparsed", "tab:grey")):
        axes.bar(order, shares[status], bottom=bottom, color=color, label=status)
        bottom += shares[status]
    axes.set_xticks(range(len(order)), [f"{v}\n(n = {counts[v]})" for v in order], fontsize=7)
    axes.set_ylabel("share of replies")
    axes.set_title("NumLeak parse rate by probe variant", fontsize=10)
    axes.legend(fontsize=7, loc="upper right")
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


def _value_table(summary: pd.DataFrame, variants: tuple[str, ...]) -> str:
    part = summary[summary["variant"].isin(variants)]
    table = pd.DataFrame({
        "series": part["series"], "variant": part["variant"], "window": part["window"], "n": part["n_queries"],
        "parse rate": [_fmt(*r) for r in part[["parse_rate", "parse_rate_lo", "parse_rate_hi"]].to_numpy()],
        "sign acc.": [_fmt(*r) for r in part[["sign_accuracy", "sign_accuracy_lo", "sign_accuracy_hi"]].to_numpy()],
        "Pearson r": [_fmt(*r) for r in part[["pearson_r", "pearson_lo", "pearson_hi"]].to_numpy()],
        "MAE": part["mae"],
        "within band": [_fmt(*r) for r in part[["within_band", "within_band_lo", "within_band_hi"]].to_numpy()],
        "band": part["band"], "shuffle p": part["shuffle_p"],
    })
    return to_markdown(table, list(table.columns))


def section(results: Path) -> list[str]:
    """The NumLeak section (Markdown lines) from results/leak/*.csv; [] when there is no summary."""
    results = Path(results)
    summary = _read(results, "summary")
    if summary is None:
        return []
    config_path = results / "leak" / "run_config.json"
    config = json.loads(config_path.read_text()) if config_path.exists() else {}
    leak, model = config.get("leak", {}), config.get("model", {})
    lines = [HEADING, "",
             f"Model `{model.get('model_id', '?')}` ({model.get('backend', '?')} backend), asked for the value of "
             f"public series at a date with no other context (NumLeak §2, App. O); series file "
             f"`{leak.get('path') or 'statsmodels macrodata (bundled)'}`; training cutoff {leak.get('cutoff', '?')} "
             f"(holdout = periods ending after it, App. I); {leak.get('n_dates', '?')} dates per window sampled "
             f"with seed {leak.get('seed', '?')} (`data/derived/leak/dates.csv`). Memorization shows as high values "
             "of all four metrics jointly (parse rate tracks refusal policy, not memory); shares carry Wilson 95% "
             "intervals, r a bootstrap 95% interval; `shuffle p` is the factor-shuffle null's one-sided p.", ""]
    if "holdout" not in set(summary["window"]):
        lines += [f"_No holdout dates: every probed period ends on or before the cutoff {leak.get('cutoff', '?')}, "
                  "so the pre-vs-holdout contrast (App. I) is not available for these series; probe a series that "
                  "extends past the cutoff for it._", ""]
    lines += ["### Value recall (Variant A) and its variants (B narrative, D step-by-step, E temperature 1)", "",
              _value_table(summary, ("A",)), "", _value_table(summary, ("B", "D", "E")), ""]
    spread = summary[summary["variant"] == "E"][["series", "window", "draw_spread", "draw_agree_within_band"]]
    if len(spread):
        lines += ["Variant E: mean |draw 1 − draw 2| and the share of dates whose draws agree within the band:", "",
                  to_markdown(spread, list(spread.columns)), ""]
    ranks = summary[summary["variant"] == "C"]
    if len(ranks):
        table = pd.DataFrame({"series": ranks["series"], "window": ranks["window"], "pairs": ranks["n_queries"],
                              "parse rate": [_fmt(*r) for r in ranks[["parse_rate", "parse_rate_lo",
                                                                       "parse_rate_hi"]].to_numpy()],
                              "rank accuracy": [_fmt(*r) for r in ranks[["rank_accuracy", "rank_accuracy_lo",
                                                                          "rank_accuracy_hi"]].to_numpy()]})
        lines += ["### Which of two dates was higher (Variant C, App. J; chance = 0.50)", "",
                  to_markdown(table, list(table.columns)), ""]
    controls = summary[summary["variant"].isin(["fabricated_series", "fabricated_fund"])]
    if len(controls):
        table = pd.DataFrame({"control": controls["variant"], "name": controls["series"], "n": controls["n_queries"],
                              "commit rate": [_fmt(*r) for r in controls[["parse_rate", "parse_rate_lo",
                                                                           "parse_rate_hi"]].to_numpy()],
                              "refusals": controls["n_refusal"]})
        lines += ["### Fabricated controls (App. K): series that do not exist", "",
                  "A model that commits to a number here is fabricating; commit rate = parse rate.", "",
                  to_markdown(table, list(table.columns)), ""]
    selectivity = _read(results, "selectivity")
    if selectivity is not None and len(selectivity):
        lines += ["### Selectivity across sibling series (App. C)", "",
                  "Pearson r of each series' Variant-A recall with each sibling's truth on the same dates; recall "
                  "of a memorized series tracks its own truth, not its siblings'.", "",
                  to_markdown(selectivity, list(selectivity.columns)), ""]
    entropy = _read(results, "entropy")
    if entropy is not None and len(entropy):
        lines += ["### Readout entropy (App. R)", "",
                  "Entropy in bits of the first answer token's top-k distribution plus a \"rest\" bucket (the "
                  "backend exposes the first position only; the paper averages two tokens).", "",
                  to_markdown(entropy, list(entropy.columns)), ""]
    ranking = _read(results, "ranking")
    if ranking is not None and len(ranking):
        lines += ["### Log-prob ranking of candidate values (App. T)", "",
                  "Five candidates per date (true, sign-flipped, adjacent date's true value, another series' value, "
                  "random decoy) ranked by length-normalised sequence log-prob; `loses_to_*` counts what wins when "
                  "the true value is not first.", "", to_markdown(ranking, list(ranking.columns)), ""]
    share = _read(results, "leakshare")
    if share is not None and len(share):
        columns = ["series", "signal", "window", "n_dates", "rho_signal_truth", "rho_residual_truth", "leakshare",
                   "rho_recall_truth", "ceiling", "note"]
        lines += ["### Leak attribution (App. N)", "",
                  "LeakShare = (ρ(S,F) − ρ(e,F)) / ρ(S,F), e = residual of the signal S on the model's own "
                  "recall M (Eq. 4); worst-case ceiling = min(1, |ρ(M,F)| / ρ(S,F)) (Eq. 3), an upper bound only, "
                  f"under the assumptions {share['ceiling_assumptions'].iloc[0]}. Both are our reconstructions of the "
                  "paper's formulas (lost in its text).", "", to_markdown(share.fillna({"note": ""}), columns), ""]
    notes_path = results / "leak" / "notes.txt"
    notes = notes_path.read_text().strip() if notes_path.exists() else ""
    if notes:
        lines += ["Notes: " + notes, ""]
    lines += ["![NumLeak calibration](figures/leak_calibration.png)", "",
              "![NumLeak parse rate](figures/leak_parse_rate.png)", "",
              "Sources: `results/leak/*.csv` (one row per series × variant × window in `summary.csv`), the probe "
              "panel `data/derived/leak/probes.parquet` and `probes.dta`, the raw replies `data/raw/leak.jsonl`.", ""]
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
