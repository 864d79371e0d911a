"""One dtype policy for every local backend (`hf:` and `vllm:`): what `auto` means, decided by proctor.

The same checkpoint on the same device gets the same concrete dtype from both backends, so their numbers
agree and the manifest and cache identity name what ran (never `auto`):

* the CPU: float32 (whatever the checkpoint stores; half precision on a CPU is slow and loses digits);
* a GPU: the checkpoint's own dtype when it is float16 or bfloat16 (bfloat16 falls back to float16 on a
  GPU without bfloat16), else (a float32 or unknown checkpoint) bfloat16 where the GPU supports it, else float16.

An explicit dtype is used as given. vLLM receives the resolved dtype as `--dtype` (its own `auto` differs).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Literal

from ..util.errors import ProctorError

DtypeName = Literal["float32", "bfloat16", "float16"]
DTYPE_NAMES: tuple[DtypeName, ...] = ("float32", "bfloat16", "float16")
DtypeChoice = Literal["auto", "float32", "bfloat16", "float16"]
_HALF = ("float16", "bfloat16")


def resolve_dtype(requested: str, *, device: str, checkpoint: str | None, bf16_supported: bool) -> DtypeName:
    """The concrete dtype `requested` ("auto" or a dtype name) means on `device` ("cpu" or "cuda[:N]") for a
    checkpoint stored as `checkpoint` (None: unknown)."""
    if requested != "auto":
        return check_dtype(requested)
    if not device.startswith("cuda"):
        return "float32"
    if checkpoint == "float16" or (checkpoint == "bfloat16" and not bf16_supported):
        return "float16"
    return "bfloat16" if bf16_supported else "float16"


def check_dtype(name: str) -> DtypeName:
    """`name` if it is a dtype proctor loads weights in, else a ProctorError naming the choices."""
    for known in DTYPE_NAMES:
        if name == known:
            return known
    raise ProctorError(f"dtype must be auto, {', '.join(DTYPE_NAMES)}; got {name!r}")


def checkpoint_dtype(path: str) -> str | None:
    """The dtype a checkpoint's config.json says its weights are stored in (`torch_dtype`, or `dtype` in newer
    transformers; a multimodal model's `text_config`), from a local directory or the hub's local cache (no
    network); None when unknown."""
    data = _config(path)
    for block in (data, data.get("text_config") if isinstance(data, dict) else None):
        if isinstance(block, dict):
            value = block.get("torch_dtype") or block.get("dtype")
            if isinstance(value, str):
                return value.removeprefix("torch.")
    return None


def checkpoint_model_type(path: str) -> str | None:
    """config.json's `model_type` (`qwen2`, `llama`, …), found as `checkpoint_dtype` finds the file; None when
    unknown."""
    data = _config(path)
    value = data.get("model_type") if isinstance(data, dict) else None
    return value if isinstance(value, str) else None


def _config(path: str) -> object:
    """The checkpoint's config.json as parsed JSON; None when there is none or it cannot be read."""
    config = _config_path(path)
    if config is None:
        return None
    try:
        return json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None


def _config_path(path: str) -> Path | None:
    local = Path(path) / "config.json"
    if local.is_file():
        return local
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return None
    try:
        cached = try_to_load_from_cache(path, "config.json")
    except ValueError:  # not a repo id
        return None
    return Path(cached) if isinstance(cached, str) else None


def nvidia_bf16_supported() -> bool:
    """Whether every visible NVIDIA GPU supports bfloat16 (compute capability 8.0 or more), by nvidia-smi."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return False
    try:
        out = subprocess.run([smi, "--query-gpu=compute_cap", "--format=csv,noheader"], capture_output=True,
                             text=True, timeout=20, check=True).stdout
        caps = [float(line) for line in out.split()]
    except (OSError, subprocess.SubprocessError, ValueError):
        return False
    return bool(caps) and min(caps) >= 8.0
