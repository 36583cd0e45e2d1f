"""The self-validation at full size: `lapbias calibrate` on the committed configuration (data/demo/calibrate.toml),
again with a second pair of seeds, under each negative control, the dose-response (0, 4, 16 articles per epoch)
and the design before (6 epochs).
Each run is the real command in a subprocess, in its own root under data/derived/calibration-bench/; the base
model's cached answers of the first run are copied into the others (the base model is the same everywhere), and
the planted model into the "shuffled" control's root (it plants what the first run planted). Wall-clock and CPU
seconds (the command's process and its children) and the load average are recorded for every run. Writes
benchmarks/results/calibration.md and the dose-response figure benchmarks/results/calibration_dose_response.png.

    python benchmarks/bench_calibration.py                 # every run (hours on 2 shared cores)
    python benchmarks/bench_calibration.py main flipped    # some of them (the others' sections are kept)
    python benchmarks/bench_calibration.py --main-from CLONE seed2 ...
        # "main" is the finished `make demo-calibrate` of a fresh clone at CLONE, timed by
        # `/usr/bin/time -v make demo-calibrate > run.log 2>&1` there: its results and time are recorded, its
        # data/derived/calibration becomes the cache the other runs copy from, and the named runs follow.
    python benchmarks/bench_calibration.py --run-from seed2 CLONE2
        # the record of `python benchmarks/bench_calibration.py seed2` made in another fresh clone
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pandas as pd
import tomli_w

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe, write_report  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / "data/derived/calibration-bench"
OUT = REPO / "benchmarks/results/calibration.md"
RECORD = REPO / "benchmarks/results/calibration_runs.json"
FIGURE = REPO / "benchmarks/results/calibration_dose_response.png"
RUNS = {
    "main": ("the committed configuration", {}),
    "seed2": ("the committed configuration, second seeds (assignment and training 7)",
              {"assignment_seed": 7, "training_seed": 7}),
    "flipped": ("negative control: the opposite of each realized direction planted", {"control": "flipped"}),
    "post_cutoff": ("negative control: 40 pre- and 40 post-cutoff pairs planted (two thirds of the main run's "
                    "training)", {"control": "post_cutoff", "pairs_per_arm": 40}),
    "shuffled": ("negative control: recall answers and Min-K% scores permuted over the pre-cutoff pairs after training",
                 {"control": "shuffled"}),
    "dose": ("dose-response: 0, 4, 16 articles per epoch, 40 pairs per exposed arm",
             {"exposures": [0, 4, 16], "pairs_per_arm": 40}),
    "epochs6": ("the design before: 6 epochs (810 steps) instead of 8", {"epochs": 6}),
    "articles": ("ablation: articles only, no recall-format document (queries_per_mention = 0; the committed "
                 "configuration since corpus version 6)", {}),
    "abstentions": ("articles, and recall queries about pairs outside the panel answered \"unknown\" (0.25 per "
                    "article)", {"abstentions_per_article": 0.25}),
    "abstentions_low": ("articles, and recall queries about pairs outside the panel answered \"unknown\" (0.05 per "
                        "article)", {"abstentions_per_article": 0.05}),
}


def config_for(name: str) -> Path:
    values = tomllib.loads((REPO / "data/demo/calibrate.toml").read_text(encoding="utf-8"))
    root = BENCH / name
    values["root"] = str(root)
    values["data"]["path"] = str(REPO / values["data"]["path"])
    values["calibrate"] = {**values.get("calibrate", {}), **RUNS[name][1]}
    root.mkdir(parents=True, exist_ok=True)
    path = root / "calibrate.toml"
    path.write_text(tomli_w.dumps(values), encoding="utf-8")
    return path


def seed_caches(name: str, main_work: Path = BENCH / "main/data/derived/calibration") -> str:
    """The first run's base-model answers (and, for "shuffled", its planted model and answers) copied in; returns
    where the run's base-model answers come from, for its record."""
    work = BENCH / name / "data/derived/calibration"
    if name == "main" or not (main_work / "base/data/raw").exists():
        return "computed in the run"
    shutil.copytree(main_work / "base/data/raw", work / "base/data/raw", dirs_exist_ok=True)
    if name == "shuffled":
        for planted in main_work.glob("planted-*"):
            shutil.copytree(planted, work / planted.name, dirs_exist_ok=True)
        shutil.copytree(main_work / "planted/data/raw", work / "planted/data/raw", dirs_exist_ok=True)
    return f"copied from the main run (commit {commit_of(main_work.parent.parent.parent)})"


def run(name: str, base_answers: str) -> dict:
    path = config_for(name)
    load_before, clock = os.getloadavg(), time.time()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = {**os.environ, "PYTHONPATH": str(REPO / "python"), "HF_HUB_OFFLINE": "1"}
    with open(BENCH / name / "calibrate.log", "w", encoding="utf-8") as log:
        code = subprocess.call([sys.executable, "-c", "from lapbias.cli import main; main()", "calibrate", str(path),
                                "--yes"], cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    record = {"name": name, "exit_code": code, "wall_seconds": round(time.time() - clock),
              "cpu_seconds": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime),
              "load_before": [round(x, 1) for x in load_before], "load_after": [round(x, 1) for x in os.getloadavg()],
              "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(clock)), "base_answers": base_answers,
              "machine": describe()}
    return collect(name, BENCH / name, record)


def time_v(log: Path) -> dict:
    """Wall-clock and CPU seconds and the exit status from the `/usr/bin/time -v` lines of a log."""
    values, text = {}, log.read_text(encoding="utf-8", errors="replace")
    for line in text.splitlines():
        key, _, value = line.strip().rpartition(": ")
        values[key] = value
    wanted = ("Elapsed (wall clock) time (h:mm:ss or m:ss)", "User time (seconds)", "System time (seconds)",
              "Exit status")
    if not all(key in values for key in wanted):
        raise SystemExit(f"{log}: no `/usr/bin/time -v` report (run `/usr/bin/time -v make demo-calibrate > run.log "
                         "2>&1` in the clone)")
    if "Command terminated by signal" in text:
        raise SystemExit(f"{log}: the command was killed by a signal; no run to record")
    clock = [float(x) for x in values[wanted[0]].split(":")]
    return {"wall_seconds": round(sum(x * 60 ** k for k, x in enumerate(reversed(clock)))),
            "cpu_seconds": round(float(values["User time (seconds)"]) + float(values["System time (seconds)"])),
            "exit_code": int(values["Exit status"])}


def commit_of(clone: Path) -> str:
    """The short hash of the commit checked out at `clone`."""
    return subprocess.check_output(["git", "-C", str(clone), "rev-parse", "--short", "HEAD"], text=True).strip()


def imported_main(clone: Path) -> dict:
    """The record of `make demo-calibrate` run on a fresh clone at `clone` (module docstring): its time from
    run.log, its load average from run.load (two lines: at the start and at the end, as /proc/loadavg prints
    them), its results."""
    load = [[round(float(x), 1) for x in line.split()[:3]]
            for line in (clone / "run.load").read_text(encoding="utf-8").splitlines()[:2]]
    timed = time_v(clone / "run.log")
    started = (clone / "run.log").stat().st_mtime - timed["wall_seconds"]
    record = {"name": "main", **timed, "load_before": load[0], "load_after": load[1],
              "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started)),
              "machine": describe(),
              "fresh_clone": f"`make demo-calibrate` on a fresh clone (install included), commit "
                             f"{commit_of(clone)}"}
    return collect("main", clone, record)


def collect(name: str, root: Path, record: dict) -> dict:
    """`record` with the run's result tables and training record read from its root."""
    results = root / "results/calibration"
    if (results / "pairs.csv").exists():
        record["panel"] = panel_of(pd.read_csv(results / "pairs.csv"))
    for table in ("verdicts", "lap_by_arm", "beta3_by_arm", "expected", "timing", "measures"):
        if (results / f"{table}.csv").exists():
            record[table] = pd.read_csv(results / f"{table}.csv").to_dict(orient="records")
    if (results / "training.json").exists():
        record["training"] = json.loads((results / "training.json").read_text(encoding="utf-8"))
    if name == "dose":
        draw_dose_figure(root)
    return record


def draw_dose_figure(root: Path) -> None:
    """FIGURE drawn by this version of lapbias.calibrate.report.figure from the dose run's tables at `root`."""
    from lapbias.calibrate.report import figure

    results = root / "results/calibration"
    if (results / "lap_by_arm.csv").exists() and (results / "beta3_by_arm.csv").exists():
        figure(pd.read_csv(results / "lap_by_arm.csv"), pd.read_csv(results / "beta3_by_arm.csv"), FIGURE)


def panel_of(pairs: pd.DataFrame) -> str:
    """The panel a run used, from its pairs.csv: firms, months before and after the cutoff, and (where the file
    has the exposure column) how many pre-cutoff (firm, date) pairs were exposed."""
    rows = pairs[pairs["model"] == pairs["model"].iloc[0]]
    months = pd.to_datetime(rows["target_date"]).dt.to_period("M")
    panel = (f"{rows['entity_id'].nunique()} firms x ({months[rows['post'] == 0].nunique()} + "
             f"{months[rows['post'] == 1].nunique()}) months")
    if "exposure" not in rows:
        return panel
    exposed = rows[(rows["exposure"] > 0) & (rows["post"] == 0)].drop_duplicates(["entity_id", "target_date"])
    return f"{panel}, {len(exposed)} pre-cutoff pair{'' if len(exposed) == 1 else 's'} exposed"


def _f(value, digits: int = 3) -> str:
    return "—" if value is None or pd.isna(value) else f"{value:.{digits}f}"


EARLIER_MACHINE = "2 cores (Intel(R) Xeon(R) Processor), Python 3.11.7, Linux"
"""The machine of the runs recorded before the record named its machine (2026-11-28 to 2026-12-01)."""


def _said(value) -> str:
    """A verdict cell: the text, or — where the run has none (NaN in the record)."""
    return "—" if value is None or (not isinstance(value, str) and pd.isna(value)) else str(value)


def section(records: dict[str, dict]) -> list[str]:
    lines = ["## Self-validation: planted memorization in SmolLM2-135M-Instruct", "",
             f"Machine: each run's own, named below the table where its record holds it (runs recorded before "
             f"machines were: {EARLIER_MACHINE}; this table written on {describe()}); shared with other jobs: the "
             "load average at each run's start and end is "
             "given, and CPU seconds (the command and its children, all threads) are the measure least distorted "
             "by them. Each run: `lapbias calibrate` on `data/demo/calibrate.toml` with the change named "
             "(benchmarks/bench_calibration.py).", "",
             "| run | panel | exit | verdict base | verdict planted | beta_3 (one-sided p) | theta high / low (p) | "
             "placebo one-sided p | expected results | wall s | CPU s | load start / end |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, record in records.items():
        verdicts = {row["model"]: row for row in record.get("verdicts", []) if row.get("configured", True)}
        planted = verdicts.get("planted_shuffled") or verdicts.get("planted", {})
        expected = record.get("expected", [])
        met = f"{sum(r['met'] for r in expected)} of {len(expected)} met" if expected else "—"
        lines.append(
            f"| {name}: {RUNS[name][0]} | {record.get('panel', '—')} | {record['exit_code']} | "
            f"{verdicts.get('base', {}).get('verdict', '—')} | "
            f"{planted.get('verdict', '—')}{' (shuffled answers)' if 'planted_shuffled' in verdicts else ''} | "
            f"{_f(planted.get('beta3'), 3)} ({_f(planted.get('beta3_p_one_sided'), 4)}) | "
            f"{_f(planted.get('validation_high_theta'), 2)} ({_f(planted.get('validation_high_p'), 4)}) / "
            f"{_f(planted.get('validation_low_theta'), 2)} ({_f(planted.get('validation_low_p'), 4)}) | "
            f"{_f(planted.get('placebo_p_one_sided'), 4)} | {met} | {record['wall_seconds']} | "
            f"{record['cpu_seconds']} | {record['load_before'][0]} / {record['load_after'][0]} |")
    lines += [f"\n{name}: {record['fresh_clone']}, started {record['started']}"
              + (f", on {record['machine']}" if record.get("machine") else "") + "." for name, record in records.items()
              if record.get("fresh_clone")]
    lines += ["", "By arm (planted model; base model in parentheses): mean recall LAP, P(memorized label), "
              "P(unknown), forecast hit rate and parse rate, with the recall LAP's 95% interval.", "",
              "| run | arm | pairs | recall LAP [95% CI] | P(memorized label) | P(unknown) | forecast hit rate | "
              "parse rate | AUC recall LAP / Min-K% |", "|---|---|---|---|---|---|---|---|---|"]
    for name, record in records.items():
        lap = pd.DataFrame(record.get("lap_by_arm", []))
        if lap.empty:
            continue
        shown = "planted_shuffled" if "planted_shuffled" in set(lap["model"]) else "planted"
        base = lap[lap["model"] == "base"].set_index("arm")
        for _, row in lap[(lap["model"] == shown) & (lap["arm"] != "exposed_vs_unexposed")].iterrows():
            b = base.loc[row["arm"]] if row["arm"] in base.index else None
            lines.append(
                f"| {name} | {row['arm']} | {int(row['N_pairs'])} | {_f(row['lap_mean'])} [{_f(row['lap_ci_low'])}, "
                f"{_f(row['lap_ci_high'])}] ({_f(None if b is None else b['lap_mean'])}) | "
                f"{_f(row['p_memorized_mean'])} ({_f(None if b is None else b['p_memorized_mean'])}) | "
                f"{_f(row['p_unknown_mean'])} | {_f(row['forecast_hit_rate'], 2)} "
                f"({_f(None if b is None else b['forecast_hit_rate'], 2)}) | {_f(row['forecast_parse_rate'], 3)} | "
                f"{_f(row.get('lap_auc_vs_arm0'), 2)} / {_f(row.get('mink_auc_vs_arm0'), 2)} |")
    measured = {name: pd.DataFrame(record["measures"]) for name, record in records.items() if record.get("measures")}
    if measured:
        lines += ["", "Per LAP measure (results/calibration/measures.csv): which detector finds the memorization "
                  "planted here. AUC and gap in pooled SDs (log scale for Min-K% prob and the loss) of every exposed "
                  "against the never-exposed pre-cutoff pairs, planted model (base in parentheses), and each "
                  "model's verdict with LAP = that measure (its own Steps 3-5; beta_3's one-sided p as the verdict "
                  "reads it). \"planted\" is the shuffled control's planted_shuffled run where the run is that "
                  "control; — a measure that model's run did not estimate.", "",
                  "| run | measure | AUC planted (base) | gap SD planted (base) | beta_3 planted (p) | verdict base | "
                  "verdict planted |", "|---|---|---|---|---|---|---|"]
        for name, table in measured.items():
            planted = "planted_shuffled" if "planted_shuffled_verdict" in table else "planted"
            for _, row in table.iterrows():
                lines.append(
                    f"| {name} | {row['measure']} | {_f(row.get(f'{planted}_auc'))} ({_f(row.get('base_auc'))}) | "
                    f"{_f(row.get(f'{planted}_gap_sd'), 2)} ({_f(row.get('base_gap_sd'), 2)}) | "
                    f"{_f(row.get(f'{planted}_beta3'), 3)} ({_f(row.get(f'{planted}_p_one_sided'), 4)}) | "
                    f"{_said(row.get('base_verdict'))} | {_said(row.get(f'{planted}_verdict'))} |")
    dose = records.get("dose")
    if dose:
        beta3 = pd.DataFrame(dose.get("beta3_by_arm", []))
        beta3 = beta3[beta3["model"] == "planted"]
        lines += ["", "Dose-response, detection beta_3 on arm 0 + arm k of the planted model (95% interval):", "",
                  "| sample | beta_3 | 95% CI | one-sided p | N |", "|---|---|---|---|---|"]
        for _, row in beta3.iterrows():
            lines.append(f"| {row['sample']} | {_f(row.get('coef'))} | [{_f(row.get('ci_low'))}, "
                         f"{_f(row.get('ci_high'))}] | {_f(row.get('p_one_sided'), 4)} | {_f(row.get('N'), 0)} |")
        lines += ["", "![Dose-response: LAP, P(memorized label) and beta_3 by exposure]"
                  "(results/calibration_dose_response.png)"]
    lines += ["", "Training (planted model of each run): steps, CPU seconds, tokens per second and their FLOP rate "
              "against the machine's matmul throughput measured just before training.", "",
              "| run | steps | training s (CPU s) | tokens/s | GFLOP/s | matmul GFLOP/s | share |",
              "|---|---|---|---|---|---|---|"]
    for name, record in records.items():
        t = record.get("training")
        if t:
            lines.append(f"| {name} | {t['steps']} | {t['training_seconds']} ({t['training_cpu_seconds']}) | "
                         f"{t['tokens_per_second']:.0f} | {t['flops_per_second'] / 1e9:.1f} | "
                         f"{t['matmul_flops_per_second'] / 1e9:.1f} | {t['matmul_share']:.0%} |")
    return lines


def imported_run(name: str, clone: Path) -> dict:
    """The record of run `name` made by this script in a fresh clone at `clone` (`python
    benchmarks/bench_calibration.py NAME` there), marked with the clone's commit and with where its base model's
    answers came from (computed there, or copied from the main run that `--main-from` imported there). Refused
    when the run's [calibrate] is not the committed one with the run's changes (another design). The dose-response
    figure comes along with the dose run."""
    try:
        records = json.loads((clone / RECORD.relative_to(REPO)).read_text(encoding="utf-8"))
        record = records[name]
        ran = tomllib.loads((clone / BENCH.relative_to(REPO) / name / "calibrate.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError) as err:
        raise SystemExit(f"--run-from {name} {clone}: no record of run {name!r} there ({err})")
    committed = tomllib.loads((REPO / "data/demo/calibrate.toml").read_text(encoding="utf-8")).get("calibrate", {})
    wanted, settings = {**committed, **RUNS[name][1]}, ran.get("calibrate", {})
    differ = {key: settings.get(key) for key in wanted.keys() | settings.keys()
              if settings.get(key) != wanted.get(key)}
    if differ:
        raise SystemExit(f"--run-from {name} {clone}: that run's [calibrate] {differ} is not the committed "
                         f"configuration with {RUNS[name][1]} (another version of the run)")
    if "base_answers" not in record:
        raise SystemExit(f"--run-from {name} {clone}: its record does not say where its base model's answers came "
                         "from (a run of an earlier version of this script)")
    record["fresh_clone"] = (f"`python benchmarks/bench_calibration.py {name}` on a fresh clone (the base model's "
                             f"answers {record['base_answers']}), commit {commit_of(clone)}")
    if name == "dose":
        draw_dose_figure(clone / BENCH.relative_to(REPO) / name)
    return record


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"runs to make, of {', '.join(RUNS)} (default: all)")
    parser.add_argument("--main-from", type=Path, metavar="CLONE",
                        help="a fresh clone that ran `/usr/bin/time -v make demo-calibrate > run.log 2>&1`")
    parser.add_argument("--run-from", nargs=2, action="append", default=[], metavar=("NAME", "CLONE"),
                        help="a fresh clone that ran `python benchmarks/bench_calibration.py NAME`")
    args = parser.parse_args(argv)
    names = args.names
    for name in names + [name for name, _ in args.run_from]:
        if name not in RUNS:
            parser.error(f"{name!r} is not a run of this script (runs: {', '.join(RUNS)})")
    records = json.loads(RECORD.read_text(encoding="utf-8")) if RECORD.exists() else {}
    main_work = BENCH / "main/data/derived/calibration"
    if args.main_from:
        clone = args.main_from.resolve()
        records["main"], main_work = imported_main(clone), clone / "data/derived/calibration"
    for name, clone in args.run_from:
        records[name] = imported_run(name, Path(clone).resolve())
    RECORD.write_text(json.dumps(records, indent=1, default=str) + "\n", encoding="utf-8")
    if not names and not (args.main_from or args.run_from):
        names = list(RUNS)
    for name in names:
        print(f"== calibrate {name}", flush=True)
        records[name] = run(name, seed_caches(name, main_work))
        RECORD.write_text(json.dumps(records, indent=1, default=str) + "\n", encoding="utf-8")
    write_report(OUT, section({name: records[name] for name in RUNS if name in records}))


if __name__ == "__main__":
    main()
