"""GGUF causal LMs de-quantised once and kept as a ``transformers`` folder.

``transformers`` reads a GGUF file by parsing its metadata and de-quantising every tensor on each
``from_pretrained``: SmolLM2-135M-Instruct (Q4_1) takes about 40 s of one core, most of it parsing
the file three times (config, tokenizer, weights). :func:`dequantised_folder` does that once per
file and keeps the result (the config, the float32 weights as safetensors and the tokenizer) in the
cache folder; later loads read it in about half a second. Before the folder is published the
reloaded weights and tokenizer are compared with the de-quantised ones, so a cached model gives
the replies the GGUF file gives.

The key is the GGUF file's resolved path, size and modification time and the ``transformers``
version (its de-quantisation and tokenizer conversion). Cache folder: ``$MEMGYM_CACHE``, else
``$XDG_CACHE_HOME/memgym``, else ``~/.cache/memgym``; deleting it is always safe.
"""

from __future__ import annotations

import atexit
import copy
import functools
import hashlib
import os
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

from memgym.core.errors import ConfigError

CACHE_ENV = "MEMGYM_CACHE"
_PROBE = "Who owns the red mug? Ben's sister Ana uses it for tea. <|im_start|>user\nWhere is it?<|im_end|>"
"""Text whose token ids the reloaded tokenizer must reproduce (words, names, punctuation, markers)."""


def cache_root() -> Path:
    """``$MEMGYM_CACHE``, else ``$XDG_CACHE_HOME/memgym``, else ``~/.cache/memgym``."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "memgym"


def dequantised_folder(model_dir: str | Path, gguf_file: str, root: Path | None = None) -> Path:
    """The cached ``transformers`` folder (config, float32 safetensors, tokenizer) of the causal
    LM in ``model_dir/gguf_file``, written on first use (under ``root``, default :func:`cache_root`).

    Where the cache folder cannot be written, a warning says so and the model is de-quantised into
    a temporary folder kept for this process only.

    Raises:
        ConfigError: the GGUF file does not exist, or ``transformers`` cannot read it.
    """
    import transformers

    path = Path(model_dir) / gguf_file
    if not path.is_file():
        raise ConfigError(f"GGUF file '{path}' not found")
    stat = path.stat()
    identity = f"{path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}:{transformers.__version__}"
    folder = (root or cache_root()) / "gguf" / f"{path.stem}-{hashlib.sha256(identity.encode()).hexdigest()[:16]}"
    if folder.is_dir():
        return folder
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}."))
    except OSError as exc:  # read-only home: this process's own copy, removed when it exits
        warnings.warn(
            f"cannot write the GGUF cache {folder.parent} ({exc.strerror}); de-quantising {gguf_file} into a "
            f"temporary folder for this process only (set {CACHE_ENV} to a writable folder to keep it)",
            stacklevel=2,
        )
        return _process_copy(str(model_dir), gguf_file)
    try:
        _write(str(model_dir), gguf_file, staging)
        try:
            staging.rename(folder)  # atomic; another process may have published the same folder first
        except OSError:
            if not folder.is_dir():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder


@functools.cache
def _process_copy(model_dir: str, gguf_file: str) -> Path:
    """``gguf_file`` de-quantised into a temporary folder that is removed when this process exits."""
    folder = Path(tempfile.mkdtemp(prefix="memgym-gguf-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    _write(model_dir, gguf_file, folder)
    return folder


def _write(model_dir: str, gguf_file: str, staging: Path) -> None:
    """De-quantise ``gguf_file`` into ``staging`` and check that the folder reloads to the same model."""
    import safetensors.torch
    import transformers

    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(model_dir, gguf_file=gguf_file)
        model = transformers.AutoModelForCausalLM.from_pretrained(model_dir, gguf_file=gguf_file, dtype="float32")
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read GGUF file '{Path(model_dir) / gguf_file}': {exc}") from None
    # save_pretrained refuses a model loaded through the GGUF quantizer: the same files by hand
    config = copy.deepcopy(model.config)
    del config.quantization_config  # the weights below are plain float32
    config.save_pretrained(staging)
    model.generation_config.save_pretrained(staging)
    safetensors.torch.save_model(model, str(staging / "model.safetensors"), metadata={"format": "pt"})
    tokenizer.save_pretrained(staging)
    reloaded = transformers.AutoModelForCausalLM.from_pretrained(staging, dtype="float32")
    _check_same(model.state_dict(), reloaded.state_dict())
    again = transformers.AutoTokenizer.from_pretrained(staging)
    if again(_PROBE).input_ids != tokenizer(_PROBE).input_ids or again.chat_template != tokenizer.chat_template:
        raise RuntimeError(f"the tokenizer saved from {gguf_file} does not reproduce the GGUF tokenizer")


def _check_same(expected: dict[str, Any], found: dict[str, Any]) -> None:
    """Raise unless ``found`` holds every tensor of ``expected``, equal."""
    import torch

    for name, tensor in expected.items():
        if name not in found or not torch.equal(found[name], tensor):
            raise RuntimeError(f"the de-quantised weight {name} did not survive save and reload")
