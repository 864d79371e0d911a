"""Reasoning models: truncation as its own outcome, the settings each backend can send, `--extra-body`.

Pure functions the runner and the CLI call (issue 15):

- `is_truncated(gen)`: the model stopped on its token limit (`finish_reason` "length" for OpenAI-compatible
  servers and hf, "max_tokens" for Anthropic) or its thought never closed (`<think>` without `</think>`).
  A truncated generation has no answer: nothing is extracted from the middle of a thought.
- `TruncatedAs`: what accuracy does with truncated samples (`--truncated-as wrong|excluded`).
- `unsupported_settings(backend, settings)`: the settings a backend cannot send, so a run refuses them
  before it starts instead of silently ignoring them.
- `parse_extra_body(text)`: `--extra-body JSON` as a JSON object, or a clear error.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any

from ..core.model import Generation, GenerationSpec
from ..models.registry import BACKENDS
from ..util.errors import ProctorError
from .extract import split_reasoning

LENGTH_FINISH_REASONS = frozenset({"length", "max_tokens", "model_context_window_exceeded"})
ANTHROPIC_MIN_THINKING_BUDGET = 1024


class TruncatedAs(StrEnum):
    """How accuracy treats a truncated sample: counted `wrong` (the default) or `excluded` from it."""

    WRONG = "wrong"
    EXCLUDED = "excluded"

    @classmethod
    def parse(cls, value: str) -> TruncatedAs:
        try:
            return cls(value.strip().lower())
        except ValueError:
            raise ProctorError(f"--truncated-as must be wrong or excluded, not {value!r}") from None


DEFAULT_TRUNCATED_AS = TruncatedAs.WRONG


def is_truncated(gen: Generation) -> bool:
    """True when the generation hit its token limit or left a think block open (never for error records)."""
    if gen.error is not None:
        return False
    if gen.finish_reason is not None and gen.finish_reason.lower() in LENGTH_FINISH_REASONS:
        return True
    return split_reasoning(gen.text).unclosed


def answer_text(gen: Generation) -> str | None:
    """The text answers are extracted from: the final answer with any think block removed, or None when
    the generation is truncated (there is no answer to extract)."""
    if is_truncated(gen):
        return None
    return split_reasoning(gen.text).answer


def unsupported_settings(backend: str, settings: GenerationSpec) -> list[str]:
    """Problems with `settings` for `backend` (the spec prefix: openai, anthropic, hf…); empty when fine."""
    allowed = BACKENDS[backend].settings if backend in BACKENDS else frozenset()
    set_fields = [k for k in settings.as_dict() if k in _REASONING_FIELDS]
    problems = [f"{backend}: backend cannot send {_flag(k)}" for k in set_fields if k not in allowed]
    budget = settings.thinking_budget
    if backend == "anthropic" and budget is not None:
        if budget < ANTHROPIC_MIN_THINKING_BUDGET:
            problems.append(f"--thinking-budget must be at least {ANTHROPIC_MIN_THINKING_BUDGET} tokens, got {budget}")
        if settings.max_tokens is not None and budget >= settings.max_tokens:
            problems.append(f"--thinking-budget ({budget}) must be below --max-tokens ({settings.max_tokens}): "
                            "the thought and the answer share that limit")
        if settings.top_k is not None:
            problems.append("--top-k cannot be combined with extended thinking (--thinking-budget)")
    return problems


_REASONING_FIELDS = frozenset({"reasoning_effort", "enable_thinking", "thinking_budget", "top_k", "min_p",
                               "presence_penalty", "frequency_penalty", "system", "extra_body"})


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def parse_extra_body(text: str | None) -> dict[str, Any]:
    """`--extra-body` as a JSON object (empty when not given); anything else is a ProctorError."""
    if text is None or not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise ProctorError(f"--extra-body: not valid JSON at line {e.lineno} column {e.colno}: {e.msg}") from None
    if not isinstance(value, dict):
        raise ProctorError(f"--extra-body must be a JSON object, got {type(value).__name__}")
    return value
