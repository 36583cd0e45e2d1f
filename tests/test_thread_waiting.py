"""torch's OpenMP threads wait passively when lapbias is loaded first (lapbias/__init__.py): one busy process beside
a 2-thread torch made every LoRA step 9x slower under OpenMP's spinning barrier (benchmarks/bench_contention.py).
Checked in fresh processes, where libgomp reads its settings when torch loads, on the real torch and libgomp."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _python(code: str, **env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "OMP_DISPLAY_ENV", "GOMP_SPINCOUNT")}
    return subprocess.run([sys.executable, "-c", code], env={**environment, **env}, capture_output=True, text=True,
                          check=True, timeout=300)


def test_libgomp_under_lapbias_waits_passively():
    """OMP_DISPLAY_ENV=VERBOSE makes libgomp print the settings it runs with when torch loads it: passive waiting is
    a spin count of 0 (libgomp's default spins 300,000 times at every barrier before it sleeps)."""
    out = _python("import lapbias, torch; torch.ones(2).sum()", OMP_DISPLAY_ENV="VERBOSE")
    assert "GOMP_SPINCOUNT = '0'" in out.stderr, out.stderr[-2000:]


def test_torch_loaded_before_lapbias_keeps_the_default_and_the_environment_says_so():
    out = _python("import torch, os; torch.ones(2).sum(); import lapbias; print(os.environ.get('OMP_WAIT_POLICY'))",
                  OMP_DISPLAY_ENV="VERBOSE")
    assert "GOMP_SPINCOUNT = '300000'" in out.stderr, out.stderr[-2000:]
    assert out.stdout.strip() == "None"  # not set after libgomp has read it: the environment tells the truth


def test_a_users_own_wait_policy_or_spin_count_is_kept():
    out = _python("import lapbias, os; print(os.environ['OMP_WAIT_POLICY'])", OMP_WAIT_POLICY="ACTIVE")
    assert out.stdout.strip() == "ACTIVE"
    out = _python("import lapbias, os, torch; torch.ones(2).sum(); print(os.environ.get('OMP_WAIT_POLICY'))",
                  GOMP_SPINCOUNT="300000", OMP_DISPLAY_ENV="VERBOSE")
    assert out.stdout.strip() == "None" and "GOMP_SPINCOUNT = '300000'" in out.stderr


def test_the_contention_benchmark_worker_runs_a_model_stage():
    """bench_contention.py's worker on the bundled model (3 Min-K% batches of 16), passive waiting."""
    env = {"PYTHONPATH": str(ROOT / "python"), "HF_HUB_OFFLINE": "1"}
    out = _python("import runpy, sys; sys.argv = ['bench_contention.py', '--worker', 'minkprob', 'passive', "
                  f"'--quick']; runpy.run_path({str(ROOT / 'benchmarks/bench_contention.py')!r}, "
                  "run_name='__main__')", **env)
    record = json.loads(out.stdout.strip().splitlines()[-1])
    assert record["count"] == 3 and record["seconds"] > 0 and record["unit"] == "batch of 16"
