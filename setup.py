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
        "transformers>=4.46,<5.20",
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
    ],
    extras_require={"test": ["pytest"]},
    entry_points={"console_scripts": ["lapbias=lapbias.cli:main"]},
)
