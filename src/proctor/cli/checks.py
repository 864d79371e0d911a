"""Argument checks that run before any heavy import (torch, transformers) and before a model loads.

Each check raises `ProctorError` with one line that names the option and what is wrong, so a typo costs
milliseconds, not the seconds it takes to import torch and load weights. Commands call `check_run_args`
(and the pieces, which the model-option registry can reuse) first thing.
"""

from __future__ import annotations

import difflib
import math
import os
import socket
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..models import registry
from ..util.errors import ProctorError

# every kind some dataset offers (kept import-free; each dataset then checks its own): proctor.data.prompts' three,
# MMLU-Pro's TIGER-Lab scripts (tiger-api, tiger-local) and lm-eval's task (lm-eval), GPQA's own variants
# (zero_shot_cot, five_shot_pool), simple-evals' (simple-evals), the code benchmarks' (completion, chat, lcb-generic:
# benchmarks/code_prompts); the kinds of the other built-ins come from their declarations
# (proctor.benchmarks.registry.declared_kinds)
PROMPT_KINDS = ("zero_shot", "chain_of_thought", "five_shot", "tiger-api", "tiger-local", "lm-eval", "simple-evals",
                "zero_shot_cot", "five_shot_pool", "completion", "chat", "lcb-generic")


def at_least(value: float | None, low: float, option: str) -> None:
    """`value` (when given) is a number, not NaN, and >= low."""
    if value is None:
        return
    if isinstance(value, float) and not math.isfinite(value):
        raise ProctorError(f"{option} must be a finite number, got {value}")
    if value < low:
        raise ProctorError(f"{option} must be at least {low:g}, got {value:g}")


def positive(value: float | None, option: str) -> None:
    """`value` (when given) is a finite number > 0."""
    if value is None:
        return
    if not math.isfinite(value) or value <= 0:
        raise ProctorError(f"{option} must be a number greater than 0, got {value}")


def choice(value: str | None, allowed: Sequence[str], option: str) -> None:
    """`value` (when given) is one of `allowed`; the message suggests the nearest."""
    if value is None or value in allowed:
        return
    raise ProctorError(f"{option}: unknown value {value!r}{_did_you_mean(value, allowed)}; "
                       f"choose from {', '.join(allowed)}")


def _did_you_mean(value: str, allowed: Iterable[str]) -> str:
    close = difflib.get_close_matches(value.lower(), list(allowed), n=1, cutoff=0.5)
    return f" (did you mean {close[0]}?)" if close else ""


def dataset_names(specs: Sequence[str], builtins: Sequence[str]) -> None:
    """Each spec is a built-in name or an existing path; an unknown name suggests the nearest built-in."""
    for spec in specs:
        if spec.strip().lower() in builtins or Path(spec).exists():
            continue
        hint = _did_you_mean(spec, builtins)
        raise ProctorError(f"{spec}: no such file or directory, and not a built-in benchmark{hint}; "
                           f"built-ins: {', '.join(builtins)}")


def readable_file(path: Path | None, option: str, *, allow_dir: bool = False) -> None:
    """`path` (when given) is an existing regular file (not a device or pipe; a directory only with `allow_dir`)."""
    if path is None:
        return
    if not path.exists():
        raise ProctorError(f"{path}: no such file ({option})")
    if not (path.is_file() or (allow_dir and path.is_dir())):
        raise ProctorError(f"{path}: not a regular file ({option})")
    if not os.access(path, os.R_OK):
        raise ProctorError(f"{path}: permission denied ({option})")


def model_spec(spec: str, option: str = "--model") -> None:
    """SCHEME:NAME with a scheme the backend registry knows (`proctor.models.registry.SCHEMES`, imported without a
    backend); an `hf:` path that does not exist says so before transformers loads."""
    scheme, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise ProctorError(f"{option} {spec!r} must look like SCHEME:NAME, with SCHEME one of {', '.join(registry.SCHEMES)}"
                           + _spec_hint(spec, registry.SCHEMES))
    if scheme not in registry.SCHEMES:
        raise ProctorError(f"{option} {spec!r}: unknown scheme {scheme!r}{_did_you_mean(scheme, registry.SCHEMES)}")
    if scheme == "hf":
        hf_location(rest, option)


VENDOR_PREFIXES = {"gpt-": "openai", "o1": "openai", "o3": "openai", "o4": "openai", "claude": "anthropic"}


def _spec_hint(spec: str, schemes: Sequence[str]) -> str:
    """` (did you mean openai:gpt-4o?)` for `gpt-4o`, `openai/gpt-4o`, `anthropic/claude-…`; else ``."""
    head, slash, tail = spec.partition("/")
    if slash and head.lower() in schemes and tail:
        return f" (did you mean {head.lower()}:{tail}?)"
    for prefix, scheme in VENDOR_PREFIXES.items():
        if spec.lower().startswith(prefix):
            return f" (did you mean {scheme}:{spec}?)"
    if slash or Path(spec).is_dir():
        return f" (a local or Hub model: hf:{spec}; a server's model: openai:{spec} --base-url URL)"
    return ""


def _looks_like_path(name: str) -> bool:
    """A Hub id is NAME or ORG/NAME; anything rooted, relative-dotted, or deeper is a path."""
    return name.startswith(("/", ".", "~")) or name.endswith("/") or name.count("/") > 1


def hf_location(name: str, option: str = "--model") -> None:
    """A local directory must exist; a Hub id is tried only when it is not a path and the Hub is reachable."""
    path = Path(name).expanduser()
    if path.exists():
        if not path.is_dir():
            raise ProctorError(f"{option} hf:{name}: not a directory (an hf model is a directory with config.json)")
        return
    if _looks_like_path(name):
        raise ProctorError(f"{option} hf:{name}: no such directory")
    if _hub_offline(name):
        raise ProctorError(f"{option} hf:{name}: no directory {name!r} here, and the Hugging Face Hub cannot be "
                           "reached (offline); pass the path of a local model directory")


def _hub_offline(repo_id: str) -> bool:
    """True when `repo_id` is not in the local Hugging Face cache and the Hub is switched off (HF_HUB_OFFLINE)
    or cannot be reached within two seconds. Behind a proxy the Hub is assumed reachable."""
    if _in_hf_cache(repo_id):
        return False
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on"):
        return True
    if any(os.environ.get(v) for v in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")):
        return False
    host = os.environ.get("HF_ENDPOINT", "https://huggingface.co").split("://")[-1].split("/")[0]
    try:
        socket.create_connection((host.split(":")[0], 443), timeout=2).close()
    except OSError:
        return True
    return False


def _in_hf_cache(repo_id: str) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return False
    try:
        return isinstance(try_to_load_from_cache(repo_id, "config.json"), str)
    except ValueError:  # not a valid repo id
        return False


def check_run_args(*, datasets: Sequence[str], builtins: Sequence[str], model: str, judge: str | None,
                   mode: str | None, prompt: str | None, data_file: Path | None,
                   prompt_kinds: Sequence[str] = PROMPT_KINDS) -> None:
    """Everything `proctor run` can check of its own flags without importing a backend or reading a dataset
    (`prompt_kinds`: the built-ins' kinds plus those the spec benchmarks named declare); the backend's request
    limits: `check_request_limits`."""
    choice(mode, ("generate", "logprob"), "--mode")
    choice(prompt, prompt_kinds, "--prompt")
    readable_file(data_file, "--data-file", allow_dir=True)  # a directory of split files (test + validation)
    if data_file is None:
        dataset_names(datasets, builtins)
    model_spec(model)
    if judge is not None:
        model_spec(judge, "--judge")


def check_request_limits(concurrency: int | None, timeout: float | None, max_retries: int | None) -> None:
    """The backend's request limits `proctor run` was given (--concurrency, --timeout, --max-retries)."""
    at_least(concurrency, 1, "--concurrency")
    positive(timeout, "--timeout")
    at_least(max_retries, 0, "--max-retries")


__all__ = ["PROMPT_KINDS", "at_least", "check_request_limits", "check_run_args", "choice", "dataset_names", "hf_location",
           "model_spec", "positive", "readable_file"]
