"""The time estimate against the time measured: `lapbias run CONFIG --dry-run`, then `lapbias run CONFIG --yes`,
on one machine under the same load, cold (nothing cached) and cached (every answer cached), on two studies with the
bundled SmolLM2-135M-Instruct (transformers, CPU, the demo's batch size 16):

- the demo panel (data/demo/demo_panel.csv, 234 valid rows, 702 queries);
- a 500-row study made here with data/demo/make_demo.py's firms and headline templates over 17 target dates (more
  dates than the demo's 8; fixed seed, so the same file every time).

Per study and case: the dry run's estimate of the whole run (and its range) against the wall time of the `lapbias
run --yes` process that follows it; for the cold case also each model stage's estimate (the one the dry run prints
and the stage's own confirmation repeats) against the seconds its batches took (the timings the stage records,
signals/timing.py). Each run is a fresh process; each study has its own root and timing record, so the cold case
starts from nothing. One repetition each (the 500-row cold run takes 10-25 minutes on 2 shared cores). Writes
benchmarks/results/time_estimate.md.

    .venv/bin/python benchmarks/bench_time_estimate.py          # both studies
    .venv/bin/python benchmarks/bench_time_estimate.py demo     # the demo only
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe, write_report  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "data" / "demo"
LAPBIAS = str(Path(sys.executable).with_name("lapbias"))
STUDY_DATES = ["2023-10-17", "2023-11-14", "2023-12-12", "2024-01-23", "2024-02-27", "2024-03-19", "2024-04-23",
               "2024-05-14", "2024-06-11", "2024-07-23", "2024-08-13", "2024-09-17", "2024-10-15", "2024-11-19",
               "2024-12-17", "2025-01-14", "2025-02-25"]
"""Tuesdays that are trading days, 9 on or before the bundled model's assumed cutoff (2024-06-30) and 8 after."""
SEED = 20261127


def _make_demo():
    spec = importlib.util.spec_from_file_location("make_demo", DEMO / "make_demo.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_study(path: Path) -> int:
    """The 500-row study: each firm of the demo on each of STUDY_DATES (3% of firm-dates left out), a headline from
    the demo's templates, an outcome as the demo simulates it; returns the number of rows."""
    demo = _make_demo()
    rng = np.random.default_rng(SEED)
    firm_effect, date_effect = rng.normal(0, 0.3, len(demo.FIRMS)), rng.normal(0, 0.8, len(STUDY_DATES))
    lines = [",".join(demo.COLUMNS)]
    for d, target in enumerate(STUDY_DATES):
        day = dt.date.fromisoformat(target)
        for f, (ticker, name, small) in enumerate(demo.FIRMS):
            if rng.random() < 0.03:
                continue
            template, sentiment = demo.HEADLINES[int(rng.integers(len(demo.HEADLINES)))]
            outcome = 0.4 * sentiment + firm_effect[f] + date_effect[d] + rng.normal(0, 1.5)
            text = template.format(name=name)
            lines.append(",".join([f"{ticker}-{day:%Y%m%d}", ticker, f'"{name}"', ticker, str(small), f'"{text}"',
                                   f"{demo.previous_trading_day(day):%Y-%m-%d}", target, f"{outcome:.4f}"]))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines) - 1


def config_for(folder: Path, data: Path) -> Path:
    text = (DEMO / "demo.toml").read_text(encoding="utf-8")
    text = text.replace('root = "."', f'root = "{folder / "run"}"').replace(
        'path = "data/demo/demo_panel.csv"', f'path = "{data}"')
    path = folder / "study.toml"
    path.write_text(text, encoding="utf-8")
    return path


def lapbias(args: list[str], env: dict) -> tuple[float, str, float, float]:
    """(wall seconds, stdout then stderr, load average before, after) of one `lapbias` process (the dry run's report
    is its stdout; a stage's announcements go to stderr)."""
    before = os.getloadavg()[0]
    start = time.perf_counter()
    done = subprocess.run([LAPBIAS, *args], env=env, capture_output=True, text=True, cwd=ROOT)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"lapbias {' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return seconds, done.stdout + "\n\n\n" + done.stderr, before, os.getloadavg()[0]


SECONDS = {"s": 1, "min": 60, "h": 3600}


def _seconds(text: str) -> float:
    number, unit = text.split()
    return float(number) * SECONDS[unit]


def estimate_of(line: str) -> tuple[float, float, float]:
    """(seconds, low, high) of 'about X (Y to Z)'."""
    amount = r"(\d+(?:\.\d+)? (?:s|min|h))"
    found = re.search(rf"about {amount} \({amount} to {amount}\)", line)
    return tuple(_seconds(found.group(i)) for i in (1, 2, 3))


def stage_seconds(cache_dir: Path) -> dict[str, float]:
    """Seconds of the batches each model stage asked in its last run (the timing record, signals/timing.py)."""
    record = json.loads((cache_dir / "probe_rates.json").read_text(encoding="utf-8"))
    return {key.split("|")[6]: sum(value["seconds"]) for key, value in record.items()}


def measure(name: str, data: Path, folder: Path) -> dict:
    folder.mkdir(parents=True)
    config = config_for(folder, data)
    env = {**os.environ, "LAPBIAS_CACHE_DIR": str(folder / "timing"), "HF_HUB_OFFLINE": "1"}
    out = {"name": name}
    for case in ("cold", "cached"):
        dry_seconds, dry, load0, _ = lapbias(["run", str(config), "--dry-run"], env)
        total_line = next(line for line in dry.splitlines() if line.strip().startswith("total"))
        out["rows"] = int(re.search(r"dry run of `lapbias run`: ([\d,]+) rows", dry).group(1).replace(",", ""))
        stages = {}
        for stage in ("forecast", "recall", "minkprob"):
            line = next(line for line in dry.splitlines() if line.startswith(f"  {stage} "))
            left = int(re.search(r"(\d[\d,]*) of", line).group(1).replace(",", ""))
            stages[stage] = {"left": left, "estimate": estimate_of(line) if left else (0.0, 0.0, 0.0)}
        run_seconds, run, _, load1 = lapbias(["run", str(config), "--yes"], env)
        if case == "cold":
            for stage, measured in stage_seconds(folder / "timing").items():
                stages[stage]["measured"] = measured
                announced = re.search(rf"{stage}: \d+ queries to ask \(\d+ of \d+ already cached\); estimated time "
                                      r"(about [^)]*\))", run)
                stages[stage]["announced"] = announced.group(1) if announced else "(none)"
        out[case] = {"dry_seconds": dry_seconds, "estimate": estimate_of(total_line), "measured": run_seconds,
                     "load": (load0, load1), "stages": stages, "dry_output": dry.partition("\n\n\n")[0]}
        print(f"{name} {case}: estimate {out[case]['estimate']}, measured {run_seconds:.1f} s, load {load0:.1f} -> "
              f"{load1:.1f}", flush=True)
    return out


def _fmt(seconds: float) -> str:
    return f"{seconds / 60:.1f} min" if seconds >= 120 else f"{seconds:.0f} s"


def report(results: list[dict], started: tuple, ended: tuple) -> list[str]:
    lines = ["## Time estimate (`lapbias run --dry-run` against `lapbias run --yes`)", "",
             f"Machine: {describe()}; load average {started[0]:.1f} / {started[1]:.1f} (1 / 5 min) when the benchmark "
             f"started, {ended[0]:.1f} / {ended[1]:.1f} when it ended (other jobs share these cores; estimate and "
             f"measurement ran back to back under the same load, the load average at each shown). Bundled "
             "SmolLM2-135M-Instruct, transformers backend, CPU, float32, batch size 16; the demo's configuration. "
             "Written by `benchmarks/bench_time_estimate.py`, one repetition each.", "",
             "| study | case | dry run's estimate (range) | measured `lapbias run --yes` | measured / estimate | "
             "within 2x | load average (dry run, end of run) | dry run itself |",
             "|---|---|---|---|---|---|---|---|"]
    for result in results:
        for case in ("cold", "cached"):
            r = result[case]
            estimate, low, high = r["estimate"]
            ratio = r["measured"] / estimate
            lines.append(f"| {result['name']} ({result['rows']} rows) | {case} | {_fmt(estimate)} ({_fmt(low)} "
                         f"to {_fmt(high)}) | {_fmt(r['measured'])} | {ratio:.2f} | "
                         f"{'yes' if 0.5 <= ratio <= 2 else 'NO'} | {r['load'][0]:.1f}, {r['load'][1]:.1f} | "
                         f"{_fmt(r['dry_seconds'])} |")
    lines += ["", "Each model stage, cold: the queries left after the dry run's probe (32 per stage, kept in the "
              "cache), the dry run's estimate for them, the stage's own estimate before it asked (the same function, from the "
              "dry run's timings), and the seconds its batches took:", "",
              "| study | stage | queries left | dry run's estimate (range) | stage's own estimate | measured | "
              "measured / estimate |", "|---|---|---|---|---|---|---|"]
    for result in results:
        for stage, s in result["cold"]["stages"].items():
            estimate, low, high = s["estimate"]
            lines.append(f"| {result['name']} | {stage} | {s['left']} | {_fmt(estimate)} ({_fmt(low)} to "
                         f"{_fmt(high)}) | {s.get('announced', '')} | {_fmt(s.get('measured', 0.0))} | "
                         f"{s.get('measured', 0.0) / estimate:.2f} |")
    lines += ["", "The dry run's own time is the cost of the estimate: loading the model and asking 3 x 32 queries "
              "(which the run then does not ask again), plus validating and probing the estimate stage. Before this "
              "estimate, the dry run probed 4 queries per stage and scaled tokens per second: on a 486-row study "
              "under load it said 2.3 h for a run of 47 minutes, and 2.3 h again with every answer cached (35 s); "
              "the forecast stage's own figure (from the model's size) said 7.6 min for 25 min."]
    last = results[-1]
    lines += ["", f"The dry run's output, cold, {last['name']}:", "", "```",
              *last["cold"]["dry_output"].strip().splitlines(), "```"]
    return lines


def main(selection: list[str]) -> None:
    started = os.getloadavg()
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-time-estimate-") as work:
        work = Path(work)
        if not selection or "demo" in selection:
            results.append(measure("demo", DEMO / "demo_panel.csv", work / "demo"))
        if not selection or "500" in selection:
            data = work / "study_500.csv"
            print(f"500-row study: {write_study(data)} rows in {data}", flush=True)
            results.append(measure("500-row study", data, work / "study"))
    ended = os.getloadavg()
    write_report(ROOT / "benchmarks" / "results" / "time_estimate.md", report(results, started, ended))


if __name__ == "__main__":
    main(sys.argv[1:])
