"""Model stages beside a competing process: LoRA training steps, Min-K% batches and forecast generation on the bundled
SmolLM2-135M-Instruct with torch's 2 threads, each alone and beside one busy single-threaded process, under
OpenMP's default waiting (threads spin at every barrier before they sleep) and under the passive waiting that
lapbias sets when it is imported before torch (`OMP_WAIT_POLICY=PASSIVE`, lapbias/__init__.py).

Why waiting matters: torch's CPU kernels run in OpenMP parallel regions that end in a barrier. When another process
holds one of the two cores, the thread that reaches the barrier first spins on its core while the other thread waits
for a core to run on, so each of the thousands of small regions of a 135M model's step can cost a scheduler time
slice. A passive thread gives its core up at once.

Each configuration runs in its own process (libgomp reads its settings when torch is loaded), in one run, on the
same texts; the competitor is `python -c "while True: pass"`, started before and stopped after the measurement.

    .venv/bin/python benchmarks/bench_contention.py          # every configuration (~10 min on 2 cores, run alone)
    .venv/bin/python benchmarks/bench_contention.py --quick  # fewer steps and batches (the test suite's smoke test)

Writes benchmarks/results/contention.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks/results/contention.md"
MODEL = "bundled:SmolLM2-135M-Instruct"
WORKLOADS = ("training", "minkprob", "forecast")
POLICIES = {"default": "OpenMP's default (torch imported before lapbias)",
            "passive": "lapbias's OMP_WAIT_POLICY=PASSIVE (lapbias imported first)"}
BOUND = 2.0
"""The most a stage may slow down beside one competing single-threaded process."""


def texts(n: int) -> list[str]:
    """The demo panel's headlines, cycled to `n`."""
    import pandas as pd

    lines = pd.read_csv(ROOT / "data/demo/demo_panel.csv")["text"].astype(str).tolist()
    return [lines[i % len(lines)] for i in range(n)]


def worker(workload: str, policy: str, quick: bool) -> dict:
    """Time one workload in this process; `policy` decides whether torch is loaded before lapbias."""
    if policy == "default":
        os.environ.pop("OMP_WAIT_POLICY", None)
        import torch  # noqa: F401  (loaded first: libgomp initialised without lapbias's setting)
    elif policy.startswith("spin"):  # libgomp spins this many times at a barrier, then sleeps
        os.environ["GOMP_SPINCOUNT"] = policy[len("spin"):]
    import lapbias  # noqa: F401  (sets OMP_WAIT_POLICY=PASSIVE unless torch was loaded already or it is set)
    import torch

    torch.set_num_threads(2)
    from lapbias.llm.transformers_backend import TransformersBackend

    if workload == "training":
        from lapbias.calibrate.corpus import Document
        from lapbias.calibrate.settings import CalibrateSettings
        from lapbias.calibrate.train import load_base, torch_threads, train

        tokenizer, model = load_base(MODEL)
        steps = 6 if quick else 24
        documents = [Document(tuple(ids), tuple(range(1, len(ids))), "article", 12)
                     for ids in tokenizer(texts(16 * steps), add_special_tokens=False)["input_ids"]]
        settings = CalibrateSettings(epochs=1, batch_size=16, top_layers=8, warmup_steps=2, threads=2)
        out = ROOT / f"data/derived/contention-{os.getpid()}"
        with torch_threads(2):
            result = train(documents, settings, out, tokenizer, model, progress=False)
        import shutil

        shutil.rmtree(out, ignore_errors=True)
        return {"unit": "step", "count": len(result.loss), "seconds": result.seconds}
    backend = TransformersBackend(MODEL, batch_size=16)
    batches = 3 if quick else 12
    if workload == "minkprob":
        items = texts(16 * batches)
        backend.prompt_logprobs(items[:16])  # warm-up
        clock = time.perf_counter()
        backend.prompt_logprobs(items)
        return {"unit": "batch of 16", "count": batches, "seconds": time.perf_counter() - clock}
    from lapbias.llm.base import chat

    batches = max(1, batches // 4)
    chats = [chat(f"{text}\n\nWill the stock go up or down? Answer with one word: up or down.")
             for text in texts(16 * batches)]
    backend.generate(chats[:16], max_new_tokens=2)  # warm-up
    clock = time.perf_counter()
    backend.generate(chats, max_new_tokens=16)
    return {"unit": "batch of 16", "count": batches, "seconds": time.perf_counter() - clock}


def measure(workload: str, policy: str, competitors: int, quick: bool) -> dict:
    """One configuration in a fresh process, with `competitors` busy processes beside it."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python"), "HF_HUB_OFFLINE": "1"}
    env.pop("OMP_WAIT_POLICY", None)
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(competitors)]
    try:
        out = subprocess.run([sys.executable, __file__, "--worker", workload, policy] + (["--quick"] if quick else []),
                             env=env, capture_output=True, text=True, check=True).stdout
    finally:
        for process in busy:
            process.kill()
            process.wait()
    record = json.loads(out.strip().splitlines()[-1])
    return {**record, "per_unit": record["seconds"] / record["count"]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker", nargs=2, metavar=("WORKLOAD", "POLICY"), help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="fewer steps and batches")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--policies", nargs="+", default=list(POLICIES), help="default, passive or spin<N>")
    parser.add_argument("--workloads", nargs="+", default=list(WORKLOADS))
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(*args.worker, args.quick)))
        return
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from machine import describe, write_report

    load = os.getloadavg()
    rows = []
    for workload in args.workloads:
        for policy in args.policies:
            alone, beside = (measure(workload, policy, n, args.quick) for n in (0, 1))
            rows.append((workload, policy, alone, beside))
            print(f"{workload:9s} {policy:8s} alone {alone['per_unit']:.3f} s/{alone['unit']}, beside one busy "
                  f"process {beside['per_unit']:.3f} s ({beside['per_unit'] / alone['per_unit']:.2f}x)", flush=True)
    lines = ["## Model stages beside a competing process", "",
             f"Machine: {describe()}; load average before the run {load[0]:.1f}; torch 2 threads; "
             f"{'quick run' if args.quick else 'full run'} ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}). "
             "Each cell: seconds per unit alone, beside one busy single-threaded process, and the ratio (at most "
             f"{BOUND:g}x required). Policies: " + "; ".join(f"{k}: {POLICIES.get(k, f'GOMP_SPINCOUNT={k[4:]}')}"
                                                           for k in args.policies) + ".", "",
             "| stage | waiting | alone (s per unit) | beside one busy process | slowdown | within " f"{BOUND:g}x |",
             "|---|---|---|---|---|---|"]
    for workload, policy, alone, beside in rows:
        ratio = beside["per_unit"] / alone["per_unit"]
        lines.append(f"| {workload} ({alone['count']} {alone['unit']}s) | {policy} | {alone['per_unit']:.3f} | "
                     f"{beside['per_unit']:.3f} | {ratio:.2f}x | {'yes' if ratio <= BOUND else 'NO'} |")
    write_report(args.out, lines)


if __name__ == "__main__":
    main()
